"""fabricplan benchmarks (issue 8): one command, a table, a JSON file.

    python bench/run.py            # everything: ~10-15 min on 2 cores
    python bench/run.py --quick    # shipped examples + the 100k and 200k scenarios, one run each

Every measurement is a fresh process (`bench/worker.py`, or the real `python -m solver` command
under /usr/bin/time), so import time and peak memory are the user's. Medians over --runs.
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

# issue 19 targets (2 cores, medians)
TARGET_SHIPPED_E2E_S = 1.0  # a shipped dense example, `fabricplan solve` end to end (JSON + workbook)
TARGET_HELP_S = 0.15  # `fabricplan --help`
TARGET_BIG_E2E_S = 2.0  # the MoE examples and the >= 100,000-GPU example, end to end
TARGET_MOE_4X_K10_S = 5.0  # a MoE scenario on the 4x catalog with every fabric family, K = 10
TARGET_SPEEDUP = 10.0  # over exhaustive enumeration, on every case of >= 1M combinations
TARGET_SWEEP_S = 60.0  # the 100-point growth sweep with --jobs 2
TARGET_PEAK_MB = 500.0
BIG_SHIPPED = ("deepseek-v3", "qwen3-235b-a22b", "frontier-100k")  # held to TARGET_BIG_E2E_S


# ------------------------------------------------------------------------------- processes


def _python(*args: str) -> list[str]:
    return [sys.executable, *args]


def _run_json(cmd: list[str], timeout_s: float) -> tuple[dict | None, float, str]:
    """Run a worker; return (its JSON, wall seconds, error text). None on timeout or failure."""
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None, time.perf_counter() - t0, "timeout"
    wall_s = time.perf_counter() - t0
    if proc.returncode != 0:
        return None, wall_s, (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]
    return json.loads(proc.stdout.strip().splitlines()[-1]), wall_s, ""


def _run_timed(cmd: list[str], timeout_s: float) -> tuple[float | None, float | None, str]:
    """Run a shell command under /usr/bin/time; return (wall s, peak RSS MB, error)."""
    with tempfile.NamedTemporaryFile(suffix=".time", delete=False) as f:
        tfile = f.name
    full = [TIME_BIN, "-f", "%e %M", "-o", tfile, *cmd] if os.path.exists(TIME_BIN) else cmd
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(full, cwd=ROOT, capture_output=True, text=True, timeout=timeout_s)
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


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# ------------------------------------------------------------------------------- one case


def measure_case(case: dict, runs: int, enum_timeout_s: float, tmp: Path) -> dict:
    """Solve K=1 (phases), K=10, the real CLI end to end, and the exhaustive enumeration."""
    path, cats = case["path"], _catalog_args(case.get("catalogs"))
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

    cli = []
    for _ in range(runs):
        wall_s, peak_mb, err = _run_timed(_python("-m", "solver", "solve", str(path), *cats, "--json",
                                                  str(tmp / f"{case['name']}.json"), "--xlsx",
                                                  str(tmp / f"{case['name']}.xlsx")), 600)
        if err:
            row["errors"].append(f"cli: {err}")
            break
        cli.append(wall_s)
        peaks.append(peak_mb)
    row["cli_e2e_s"] = _median(cli)
    row["peak_rss_mb"] = max([p for p in peaks if p is not None], default=None)

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


def measure_sweep(tmp: Path, name: str = "sweep-growth", points: int = 24, timeout_s: float = 900) -> dict:
    """A growth sweep through the real CLI with --jobs 2 (bench/scenarios/<name>.yaml)."""
    row = {"scenario": f"{name} ({points} pts, --jobs 2)", "series": "sweep", "errors": []}
    path = HERE / "scenarios" / f"{name}.yaml"
    wall_s, peak_mb, err = _run_timed(_python("-m", "solver", "sweep", str(path), "--jobs", "2",
                                              "--json", str(tmp / f"{name}.json"), "--xlsx", str(tmp / f"{name}.xlsx"),
                                              "--plot", str(tmp / f"{name}.png")), timeout_s)
    row["sweep_s"], row["peak_rss_mb"] = wall_s, peak_mb
    if err:
        row["errors"].append(f"sweep: {err}")
        row["sweep_note"] = err
    return row


def measure_help(runs: int) -> dict:
    """`fabricplan --help` (python -m solver --help) wall time, median of `runs`."""
    row = {"scenario": "--help", "series": "help", "errors": []}
    times = []
    for _ in range(max(3, runs)):
        wall_s, peak_mb, err = _run_timed(_python("-m", "solver", "--help"), 60)
        if err:
            row["errors"].append(f"help: {err}")
            break
        times.append(wall_s)
        row["peak_rss_mb"] = peak_mb
    row["help_s"] = _median(times)
    return row


# ------------------------------------------------------------------------------- cases


def cases(quick: bool, tmp: Path) -> list[dict]:
    out = [{"name": p.stem, "path": p.relative_to(ROOT), "series": "shipped"}
           for p in sorted((ROOT / "scenarios").glob("*.yaml"))]
    scale = [("dense-1k", False), ("dense-10k", False), ("dense-100k", True), ("fabric-100k", True),
             ("fabric-200k", True)]
    if quick:
        scale = [("dense-100k", True), ("fabric-200k", True)]
    for name, skip in scale:
        out.append({"name": name, "path": (HERE / "scenarios" / f"{name}.yaml").relative_to(ROOT),
                    "series": "scale", "skip_enum": skip})
    if not quick:
        overlay = synth_catalog.write_overlay(tmp)
        out.append({"name": "dense-1k @4x catalog", "path": (HERE / "scenarios" / "dense-1k.yaml").relative_to(ROOT),
                    "series": "catalog", "catalogs": [str(DEFAULT_CATALOG), str(overlay)]})
        out.append({"name": "moe-families @4x catalog", "series": "catalog", "skip_enum": True,
                    "path": (HERE / "scenarios" / "moe-families.yaml").relative_to(ROOT),
                    "catalogs": [str(DEFAULT_CATALOG), str(overlay)]})
    return out


# ------------------------------------------------------------------------------- targets


def targets(rows: list[dict]) -> list[dict]:
    """Target vs measured, pass/fail (None measured = not measured)."""
    shipped = [r for r in rows if r["series"] == "shipped" and r["scenario"] not in BIG_SHIPPED]
    big = [r for r in rows if r["scenario"] in BIG_SHIPPED]
    moe4x = next((r for r in rows if r["scenario"] == "moe-families @4x catalog"), {})
    sweep = next((r for r in rows if r["series"] == "sweep" and "100" in r["scenario"]), {})
    helped = next((r for r in rows if r["series"] == "help"), {})
    peak = max([r["peak_rss_mb"] for r in rows if r.get("peak_rss_mb")], default=None)

    def worst(group, key):
        vals = [r.get(key) for r in group if r.get(key) is not None]
        return max(vals) if vals else None

    out = [
        ("shipped dense example, `fabricplan solve` end to end (worst)", TARGET_SHIPPED_E2E_S,
         worst(shipped, "cli_e2e_s"), "s"),
        ("`fabricplan --help`", TARGET_HELP_S, helped.get("help_s"), "s"),
        ("MoE examples and frontier-100k, end to end (worst)", TARGET_BIG_E2E_S, worst(big, "cli_e2e_s"), "s"),
        ("MoE on the 4x catalog, all families, K = 10 (whole process)", TARGET_MOE_4X_K10_S,
         moe4x.get("k10_process_s"), "s"),
        ("100-point growth sweep, --jobs 2", TARGET_SWEEP_S, sweep.get("sweep_s"), "s"),
        ("peak memory (any process)", TARGET_PEAK_MB, peak, "MB"),
    ]
    res = [{"target": name, "limit": lim, "measured": val, "unit": unit,
            "pass": None if val is None else val <= lim} for name, lim, val, unit in out]
    # A pinned evaluate example (a handful of points) is no search: enumeration trivially wins there.
    compared = [r for r in rows if r.get("speedup_k10") is not None and (r.get("combinations") or 0) >= 100]
    slower = [r["scenario"] for r in compared if r["speedup_k10"] < 1]
    res.append({"target": "optimizer (K=10) never slower than enumeration", "limit": 1.0,
                "measured": min((r["speedup_k10"] for r in compared), default=None), "unit": "× (min speedup)",
                "pass": None if not compared else not slower, "note": ", ".join(slower)})
    million = [r for r in compared if (r.get("combinations") or 0) >= 1_000_000]
    short = [r["scenario"] for r in million if r["speedup_k10"] < TARGET_SPEEDUP]
    res.append({"target": "≥ 10× over enumeration on cases of ≥ 1M combinations", "limit": TARGET_SPEEDUP,
                "measured": min((r["speedup_k10"] for r in million), default=None), "unit": "× (min speedup)",
                "pass": None if not million else not short, "note": ", ".join(short)})
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
                  _f(r.get("total_s")), _f(r.get("cli_e2e_s")), enum, agree, _f(r.get("k10_total_s")),
                  _f(r.get("speedup_k10"), "{:.2g}×"), _f(r.get("sweep_s")) if r["series"] == "sweep" else "–",
                  _f(r.get("peak_rss_mb"), "{:.0f}"))
    console = Console(width=220)
    console.print(t)
    tt = Table(title="issue 19 targets")
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
    ap = argparse.ArgumentParser(description="fabricplan benchmarks (issues 8, 19)")
    ap.add_argument("--quick", action="store_true", help="shipped examples + the 100k scenario, one run each, no sweep")
    ap.add_argument("--runs", type=int, help="runs per measurement (median; default 3, --quick 1)")
    ap.add_argument("--enum-timeout", type=float, help="seconds per exhaustive enumeration (default 300, --quick 60)")
    ap.add_argument("--json", default=str(HERE / "results.json"), help="results file (default bench/results.json)")
    ap.add_argument("--only", help="run only cases whose name contains this text")
    args = ap.parse_args(argv)
    runs = args.runs or (1 if args.quick else 3)
    enum_timeout_s = args.enum_timeout or (60.0 if args.quick else 300.0)
    tmp = Path(tempfile.mkdtemp(prefix="fabricplan-bench-"))
    t0 = time.perf_counter()
    rows = []
    try:
        for case in cases(args.quick, tmp):
            if args.only and args.only not in case["name"]:
                continue
            print(f"… {case['name']}", file=sys.stderr, flush=True)
            rows.append(measure_case(case, runs, enum_timeout_s, tmp))
        if not args.only:
            rows.append(measure_help(runs))
        if not args.quick and not args.only:
            print("… sweeps", file=sys.stderr, flush=True)
            rows.append(measure_sweep(tmp))
            rows.append(measure_sweep(tmp, "sweep-100", 100))
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
