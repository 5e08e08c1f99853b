"""fabricplan benchmarks (issues 8, 19, 26): one command, a table, a JSON file.

    python bench/run.py            # everything: ~30-40 min on 2 cores
    python bench/run.py --quick    # shipped examples, the 5-year plan and the shipped 6-point sweep, one run each

Every measurement is a fresh process (`bench/worker.py`, or the real `python -m solver` command),
so import time and peak memory are the user's. Children run with bytecode caching on (the
environment's PYTHONDONTWRITEBYTECODE is removed and `solver/` is compiled first, as an installed
package has its .pyc files). Wall time is `time.perf_counter` around each child; `/usr/bin/time`
only reports peak RSS (its elapsed time is unreliable on some VMs). Medians over --runs.
Results: a rich table on stdout and bench/results.json (git-ignored).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import synth_catalog  # noqa: E402

DEFAULT_CATALOG = ROOT / "catalogs" / "default.yaml"
TIME_BIN = "/usr/bin/time"

# issue 26 targets (2 cores, medians)
TARGET_SHIPPED_E2E_S = 1.0  # every shipped example, `fabricplan solve` end to end with JSON + workbook
TARGET_HELP_S = 0.15  # `fabricplan --help`
TARGET_SPEEDUP = 10.0  # over exhaustive enumeration (K = 10), on every case of >= 1M combinations
TARGET_SWEEP_S = 30.0  # the 100-point growth sweep with --jobs 2 (JSON + workbook + plot)
TARGET_PLAN_S = 5.0  # `fabricplan plan scenarios/plan-5-years.yaml` with its comparisons, JSON + workbook + plot
TARGET_PEAK_MB = 500.0  # any process the bench runs (enumeration excepted)
TARGET_10M_S = 10.0  # the 10M-combination case, `fabricplan solve` end to end
TEN_MILLION_CASE = "moe-10m @4x catalog"
PLAN_SCENARIO = Path("scenarios") / "plan-5-years.yaml"
SHIPPED_SWEEP = Path("scenarios") / "growth-sweep.yaml"


# ------------------------------------------------------------------------------- processes


def _python(*args: str) -> list[str]:
    return [sys.executable, *args]


def child_env() -> dict[str, str]:
    """The environment of every process the bench runs: this one's, with bytecode caching on."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_package() -> None:
    """Write the .pyc files of `solver/` (and the bench) once, before anything is timed."""
    subprocess.run(_python("-m", "compileall", "-q", "solver", "bench"), cwd=ROOT, env=child_env(),
                   capture_output=True, check=False)


def _run_json(cmd: list[str], timeout_s: float) -> tuple[dict | None, float, str]:
    """Run a worker; return (its JSON, wall seconds, error text). None on timeout or failure."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t0, "timeout"
    wall_s = time.perf_counter() - t0
    if proc.returncode != 0:
        return None, wall_s, (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall_s, ""


def _run_timed(cmd: list[str], timeout_s: float) -> tuple[float | None, float | None, str]:
    """Run a command (under /usr/bin/time for its peak RSS); return (perf_counter wall s, peak RSS MB, error)."""
    with tempfile.NamedTemporaryFile(suffix=".time", delete=False) as f:
        tfile = f.name
    full = [TIME_BIN, "-f", "%e %M", "-o", tfile, *cmd] if os.path.exists(TIME_BIN) else cmd
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(full, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None, None, "timeout"
    wall_s = time.perf_counter() - t0
    peak_mb = None
    try:
        peak_mb = float(Path(tfile).read_text().split()[-1]) / 1024.0  # %M is KiB
    except (OSError, ValueError, IndexError):
        pass
    os.unlink(tfile)
    if proc.returncode not in (0, 1):  # 1 = valid but infeasible: still a completed solve
        return wall_s, peak_mb, (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    return wall_s, peak_mb, ""


def _catalog_args(catalogs: list[str] | None) -> list[str]:
    return [a for c in (catalogs or []) for a in ("--catalog", str(c))]


def _timed_runs(row: dict, label: str, cmd: list[str], runs: int, timeout_s: float) -> tuple[float | None, float | None]:
    """Run a command `runs` times (`_run_timed`); (median wall s, largest peak RSS MB). The first failure is
    recorded in row["errors"] as "<label>: <error>" and ends the runs."""
    times, peaks = [], []
    for _ in range(runs):
        wall_s, peak_mb, err = _run_timed(cmd, timeout_s)
        if err:
            row["errors"].append(f"{label}: {err}")
            break
        times.append(wall_s)
        peaks.append(peak_mb)
    return _median(times), max([p for p in peaks if p is not None], default=None)


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# ------------------------------------------------------------------------------- one case


def measure_case(case: dict, runs: int, enum_timeout_s: float, tmp: Path) -> dict:
    """Solve K=1 (phases), K=10, the real CLI end to end, and the exhaustive enumeration."""
    path, cats = case["path"], _catalog_args(case.get("catalogs"))
    runs = min(runs, case.get("max_runs", runs))
    row = {"scenario": case["name"], "series": case["series"], "path": str(path), "errors": []}
    solves = []
    for _ in range(runs):
        out, wall_s, err = _run_json(_python("bench/worker.py", "solve", str(path), "--top", "1", *cats), 600)
        if out is None:
            row["errors"].append(f"solve: {err}")
            break
        out["process_wall_s"] = wall_s
        solves.append(out)
    if solves:
        first = solves[0]
        row.update(gpus=first["gpus"], architecture=first["architecture"], objective_usd=first["objective_usd"],
                   status=first["status"], **first["stats"], pruned=first["pruned"])
        for key in ("import_s", "load_s", "design_space_s", "build_s", "solve_s", "report_s", "total_s",
                    "process_wall_s"):
            row[key] = _median([s.get(key) for s in solves])
    peaks = [s["peak_rss_mb"] for s in solves]

    k10 = []
    for _ in range(runs):
        out, wall_s, err = _run_json(_python("bench/worker.py", "solve", str(path), "--top", "10", *cats), 600)
        if out is None:
            row["errors"].append(f"k10: {err}")
            break
        out["process_wall_s"] = wall_s
        k10.append(out)
        peaks.append(out["peak_rss_mb"])
    row["k10_total_s"] = _median([s["total_s"] for s in k10])
    row["k10_process_s"] = _median([s["process_wall_s"] for s in k10])
    row["k10_solve_s"] = _median([s["solve_s"] for s in k10])

    row["cli_e2e_s"], peak_mb = _timed_runs(row, "cli", _python("-m", "solver", "solve", str(path), *cats, "--json",
                                                             str(tmp / f"{case['name']}.json"), "--xlsx",
                                                             str(tmp / f"{case['name']}.xlsx")), runs, 600)
    row["peak_rss_mb"] = max([p for p in [*peaks, peak_mb] if p is not None], default=None)

    _measure_enumeration(row, case, path, cats, enum_timeout_s, k10)
    return row


def _measure_enumeration(row: dict, case: dict, path: Path, cats: list, enum_timeout_s: float, k10: list) -> None:
    """The exhaustive enumeration of the same space (unless skipped), agreement and speedups, into `row`."""
    row["enum_s"], row["enum_note"], row["agree"] = None, "", None
    if case.get("skip_enum"):
        row["enum_note"] = "skipped"
    else:
        out, wall_s, err = _run_json(_python("bench/worker.py", "enumerate", str(path), "--top", "10", *cats),
                                     enum_timeout_s)
        if out is None:
            row["enum_note"] = f">{enum_timeout_s:g} s (timed out)" if err == "timeout" else f"error: {err}"
            row["enum_lower_bound_s"] = enum_timeout_s if err == "timeout" else None
        else:
            row["enum_s"] = out["enumerate_s"]
            row["feasible_designs"] = out["feasible_designs"]
            row["agree"] = bool(k10) and out["best"] == k10[0]["best"]
            if row["peak_rss_mb"] is not None:
                row["enum_peak_rss_mb"] = out["peak_rss_mb"]
    enum_ref = row["enum_s"] or row.get("enum_lower_bound_s")
    if enum_ref and row.get("k10_total_s"):
        row["speedup_k10"] = enum_ref / row["k10_total_s"]  # a lower bound when enumeration timed out
    if enum_ref and row.get("total_s"):
        row["speedup_k1"] = enum_ref / row["total_s"]


def measure_sweep(tmp: Path, path: Path, points: int, runs: int = 1, timeout_s: float = 900) -> dict:
    """A growth sweep through the real CLI with --jobs 2, JSON + workbook + plot; median of `runs`."""
    name = path.stem
    row = {"scenario": f"{name} ({points} pts, --jobs 2)", "series": "sweep", "path": str(path), "points": points,
           "errors": []}
    row["sweep_s"], row["peak_rss_mb"] = _timed_runs(row, "sweep", _python(
        "-m", "solver", "sweep", str(path), "--jobs", "2", "--json", str(tmp / f"{name}.json"),
        "--xlsx", str(tmp / f"{name}.xlsx"), "--plot", str(tmp / f"{name}.png")), runs, timeout_s)
    if row["errors"]:
        row["sweep_note"] = row["errors"][-1].removeprefix("sweep: ")
    return row


def measure_plan(tmp: Path, runs: int, path: Path = PLAN_SCENARIO, timeout_s: float = 600) -> dict:
    """`fabricplan plan` end to end with its comparison solves, JSON + workbook + plot (as the command
    writes by default); median of `runs`."""
    row = {"scenario": f"{path.stem} (plan)", "series": "plan", "path": str(path), "errors": []}
    row["cli_e2e_s"], row["peak_rss_mb"] = _timed_runs(row, "plan", _python(
        "-m", "solver", "plan", str(path), "--json", str(tmp / "plan.json"), "--xlsx", str(tmp / "plan.xlsx"),
        "--plot", str(tmp / "plan.png")), runs, timeout_s)
    return row


def measure_commands(tmp: Path, quick: bool, runs: int, only: str | None) -> list[dict]:
    """`--help`, the plan and the sweeps (those whose name contains `only`, if given). --quick: the shipped
    6-point growth sweep; full run: that, the 24-point and the 100-point bench sweeps."""
    rows = []
    if not only or only in "--help":
        rows.append(measure_help(runs))
    if not only or only in PLAN_SCENARIO.stem:
        print("… plan", file=sys.stderr, flush=True)
        rows.append(measure_plan(tmp, runs))
    sweeps = [(SHIPPED_SWEEP, 6)]
    if not quick:
        sweeps += [((HERE / "scenarios" / "sweep-growth.yaml").relative_to(ROOT), 24),
                   ((HERE / "scenarios" / "sweep-100.yaml").relative_to(ROOT), 100)]
    for path, points in sweeps:
        if not only or only in path.stem:
            print(f"… sweep {path.stem}", file=sys.stderr, flush=True)
            rows.append(measure_sweep(tmp, path, points, runs))
    return rows


def measure_help(runs: int) -> dict:
    """`fabricplan --help` (python -m solver --help) wall time, median of `runs`."""
    row = {"scenario": "--help", "series": "help", "errors": []}
    row["help_s"], row["peak_rss_mb"] = _timed_runs(row, "help", _python("-m", "solver", "--help"), max(3, runs), 60)
    return row


# ------------------------------------------------------------------------------- cases


def cases(quick: bool, tmp: Path) -> list[dict]:
    """Every shipped example; the full run adds the scale series and the 4x-catalog cases (the 10M one)."""
    out = [{"name": p.stem, "path": p.relative_to(ROOT), "series": "shipped"}
           for p in sorted((ROOT / "scenarios").glob("*.yaml"))]
    if quick:
        return out
    scale = [("dense-1k", False), ("dense-10k", False), ("dense-100k", True), ("fabric-100k", True),
             ("fabric-200k", True)]
    for name, skip in scale:
        out.append({"name": name, "path": (HERE / "scenarios" / f"{name}.yaml").relative_to(ROOT),
                    "series": "scale", "skip_enum": skip})
    overlay = synth_catalog.write_overlay(tmp)
    four_x = [str(DEFAULT_CATALOG), str(overlay)]
    out.append({"name": "dense-1k @4x catalog", "path": (HERE / "scenarios" / "dense-1k.yaml").relative_to(ROOT),
                "series": "catalog", "catalogs": four_x})
    out.append({"name": "moe-families @4x catalog", "series": "catalog", "skip_enum": True,
                "path": (HERE / "scenarios" / "moe-families.yaml").relative_to(ROOT), "catalogs": four_x})
    # one run per measurement: its enumeration (cut at --enum-timeout) gives the speed-up's lower bound
    out.append({"name": TEN_MILLION_CASE, "series": "catalog", "max_runs": 1,
                "path": (HERE / "scenarios" / "moe-10m.yaml").relative_to(ROOT), "catalogs": four_x})
    return out


# ------------------------------------------------------------------------------- targets


def _worst(group: list[dict], key: str) -> tuple[float | None, str]:
    """The largest `key` of the rows that have it, and the name of that row."""
    have = [r for r in group if r.get(key) is not None]
    top = max(have, key=lambda r: r[key], default=None)
    return (None, "") if top is None else (top[key], top["scenario"])


def _over(group: list[dict], key: str, limit: float) -> str:
    """The rows whose `key` exceeds `limit`, named with their values."""
    return ", ".join(f"{r['scenario']} {r[key]:.2f}" for r in group if r.get(key) is not None and r[key] > limit)


def _limit_targets(rows: list[dict]) -> list[dict]:
    """The targets that are an upper limit on one measured value."""
    shipped = [r for r in rows if r["series"] == "shipped"]
    sweep = next((r for r in rows if r["series"] == "sweep" and r.get("points") == 100), {})
    plan = next((r for r in rows if r["series"] == "plan"), {})
    ten_m = next((r for r in rows if r["scenario"] == TEN_MILLION_CASE), {})
    helped = next((r for r in rows if r["series"] == "help"), {})
    worst_shipped, _ = _worst(shipped, "cli_e2e_s")
    peak, peak_of = _worst(rows, "peak_rss_mb")
    combos = f"{ten_m['combinations']:,} combinations" if ten_m.get("combinations") else "combinations not measured"
    out = [
        ("every shipped example, `fabricplan solve` end to end with JSON + workbook (worst)", TARGET_SHIPPED_E2E_S,
         worst_shipped, "s", _over(shipped, "cli_e2e_s", TARGET_SHIPPED_E2E_S)),
        ("`fabricplan --help`", TARGET_HELP_S, helped.get("help_s"), "s", ""),
        ("100-point growth sweep, --jobs 2, JSON + workbook + plot", TARGET_SWEEP_S, sweep.get("sweep_s"), "s", ""),
        ("plan-5-years with its comparison solves, JSON + workbook + plot", TARGET_PLAN_S, plan.get("cli_e2e_s"), "s",
         ""),
        ("peak memory (any process but the enumeration)", TARGET_PEAK_MB, peak, "MB", peak_of),
        ("10M-combination case, `fabricplan solve` end to end", TARGET_10M_S, ten_m.get("cli_e2e_s"), "s", combos),
    ]
    return [{"target": name, "limit": lim, "measured": val, "unit": unit, "note": note,
             "pass": None if val is None else val <= lim} for name, lim, val, unit, note in out]


def targets(rows: list[dict]) -> list[dict]:
    """Target vs measured, pass/fail (None measured = not measured)."""
    res = _limit_targets(rows)
    # A pinned evaluate example (a handful of points) is no search: enumeration trivially wins there.
    compared = [r for r in rows if r.get("speedup_k10") is not None and (r.get("combinations") or 0) >= 100]
    slower = [r["scenario"] for r in compared if r["speedup_k10"] < 1]
    res.append({"target": "optimizer (K=10) never slower than enumeration", "limit": 1.0,
                "measured": min((r["speedup_k10"] for r in compared), default=None), "unit": "× (min speedup)",
                "pass": None if not compared else not slower, "note": ", ".join(slower)})
    million = [r for r in compared if (r.get("combinations") or 0) >= 1_000_000]
    short = [r["scenario"] for r in million if r["speedup_k10"] < TARGET_SPEEDUP]
    bounds = [f"{r['scenario']}: ≥ {r['speedup_k10']:.2g}× (enumeration cut at {r['enum_lower_bound_s']:g} s)"
              for r in million if r.get("enum_lower_bound_s")]
    res.append({"target": "≥ 10× over enumeration (K = 10) on every case of ≥ 1M combinations", "limit": TARGET_SPEEDUP,
                "measured": min((r["speedup_k10"] for r in million), default=None), "unit": "× (min speedup)",
                "pass": None if not million else not short,
                "note": "; ".join(([f"below: {', '.join(short)}"] if short else []) + bounds)})
    series = sorted((r for r in compared if r["series"] in ("shipped", "scale")), key=lambda r: r["combinations"])
    grows = all(b["speedup_k10"] >= a["speedup_k10"] for a, b in zip(series, series[1:]))
    res.append({"target": "speedup grows with the space (by combinations)", "limit": None,
                "measured": " → ".join(f"{r['speedup_k10']:.2g}" for r in series), "unit": "×",
                "pass": None if len(series) < 2 else grows})
    agree = [r["agree"] for r in rows if r.get("agree") is not None]
    res.append({"target": "optimizer and enumeration agree (K=10, to the cent)", "limit": None,
                "measured": f"{sum(agree)}/{len(agree)}", "unit": "", "pass": None if not agree else all(agree)})
    return res


# ------------------------------------------------------------------------------- output


def _f(v, fmt="{:.2f}"):
    return "–" if v is None else fmt.format(v)


def print_tables(rows: list[dict], tgt: list[dict]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title="fabricplan benchmarks (medians; seconds)", show_lines=False)
    cols = ["scenario", "GPUs", "combos", "shapes", "vars", "cons", "import", "load", "space", "build", "solve",
            "report", "total", "CLI e2e", "enum", "agree", "K=10", "speedup", "sweep", "peak MB"]
    for c in cols:
        t.add_column(c, justify="left" if c == "scenario" else "right")
    for r in rows:
        enum = r.get("enum_note") or _f(r.get("enum_s"))
        enum = _f(r.get("enum_s")) if r.get("enum_s") is not None else (r.get("enum_note") or "–")
        agree = "–" if r.get("agree") is None else ("yes" if r["agree"] else "NO")
        t.add_row(r["scenario"], _f(r.get("gpus"), "{:,}"), _f(r.get("combinations"), "{:,}"),
                  _f(r.get("shapes_kept"), "{:,}"), _f(r.get("model_variables"), "{:,}"),
                  _f(r.get("model_constraints"), "{:,}"), _f(r.get("import_s")), _f(r.get("load_s")),
                  _f(r.get("design_space_s")), _f(r.get("build_s")), _f(r.get("solve_s")), _f(r.get("report_s"), "{:.3f}"),
                  _f(r.get("total_s")), _f(r.get("cli_e2e_s", r.get("help_s"))), enum, agree, _f(r.get("k10_total_s")),
                  _f(r.get("speedup_k10"), "{:.2g}×"), _f(r.get("sweep_s")) if r["series"] == "sweep" else "–",
                  _f(r.get("peak_rss_mb"), "{:.0f}"))
    console = Console(width=220)
    console.print(t)
    tt = Table(title="issue 26 targets")
    for c in ("target", "limit", "measured", "pass"):
        tt.add_column(c)
    for x in tgt:
        meas = x["measured"] if isinstance(x["measured"], str) else _f(x["measured"])
        ok = "n/a" if x["pass"] is None else ("PASS" if x["pass"] else "FAIL")
        sign = "≥" if x["unit"].startswith("×") else "≤"
        tt.add_row(x["target"], "" if x["limit"] is None else f"{sign} {x['limit']:g} {x['unit']}",
                   f"{meas} {x['unit']}".strip() + (f" ({x['note']})" if x.get("note") else ""), ok)
    console.print(tt)
    for r in rows:
        for e in r.get("errors", []):
            console.print(f"[red]{r['scenario']}: {e}[/red]")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="fabricplan benchmarks (issues 8, 19, 26)")
    ap.add_argument("--quick", action="store_true",
                    help="shipped examples, the 5-year plan and the shipped 6-point sweep, one run each")
    ap.add_argument("--runs", type=int, help="runs per measurement (median; default 3, --quick 1)")
    ap.add_argument("--enum-timeout", type=float, help="seconds per exhaustive enumeration (default 300, --quick 60)")
    ap.add_argument("--json", default=str(HERE / "results.json"), help="results file (default bench/results.json)")
    ap.add_argument("--only", help="run only the cases, plan and sweeps whose name contains this text")
    args = ap.parse_args(argv)
    runs = args.runs or (1 if args.quick else 3)
    enum_timeout_s = args.enum_timeout or (60.0 if args.quick else 300.0)
    tmp = Path(tempfile.mkdtemp(prefix="fabricplan-bench-"))
    compile_package()
    t0 = time.perf_counter()
    rows = []
    try:
        for case in cases(args.quick, tmp):
            if args.only and args.only not in case["name"]:
                continue
            print(f"… {case['name']}", file=sys.stderr, flush=True)
            rows.append(measure_case(case, runs, enum_timeout_s, tmp))
        rows += measure_commands(tmp, args.quick, runs, args.only)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    tgt = targets(rows)
    print_tables(rows, tgt)
    doc = {"schema": "fabricplan.bench/1", "python": sys.version.split()[0], "cpus": os.cpu_count(),
           "runs": runs, "enum_timeout_s": enum_timeout_s, "quick": args.quick,
           "wall_s": time.perf_counter() - t0, "rows": rows, "targets": tgt}
    Path(args.json).write_text(json.dumps(doc, indent=2, default=str))
    print(f"written {args.json}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
