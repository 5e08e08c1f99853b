"""Reliability round 2 (issue 18): no wrong answer with exit 0, bounded time and memory, hostile
text, and the smaller items. docs/reliability.md lists every fault class with its test here (R2).

Expected numbers are worked out by hand from the shipped catalog (catalogs/default.yaml) in the
comments; every test here failed on main before the fix it checks (docs/reliability.md says how).
"""
from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import GPT3_6_7B
from reliability_helpers import DEFAULT, catalog_entry, tiny_scenario, write_yaml  # noqa: F401

from solver import api, inputs
from solver.errors import InputError, UsageError
from solver.sweep.plan import plan_sweep
from solver.sweep.run import run_points

REPO = Path(__file__).resolve().parent.parent
H100_PRICE_USD = 255_240  # catalogs/default.yaml, platforms: hgx-h100 unit_price_usd


# ------------------------------------------------------------------------------------ helpers





def h100_quote(path: Path, price_usd: float) -> Path:
    """An override catalog that re-prices the hgx-h100 platform."""
    plat = catalog_entry("platforms", "hgx-h100")
    plat["unit_price_usd"] = price_usd
    return write_yaml(path, {"name": "quote", "platforms": [plat]})


def run_cli(*args, timeout_s: float = 180, cwd: Path = REPO, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout_s, **kwargs)


def assert_clean_exit(proc: subprocess.CompletedProcess, code: int) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "internal error" not in proc.stderr


def compute_line(row: dict) -> dict:
    return next(line for line in row["design"]["bom"] if line["category"] == "compute")


# ------------------------------------------------------------- 1. stale catalog in a sweep


def _sweep_twice_with_an_edit(tmp_path: Path, executor: str) -> tuple[list[dict], list[dict]]:
    """Sweep B = 8, 16 with the H100 quoted at $200,000, edit the quote to $300,000 in place, plan
    and sweep again in the same process (and, for Dask, on the same long-lived workers)."""
    quote = h100_quote(tmp_path / "quote.yaml", 200_000)
    ls = api.load_scenario(tiny_scenario())
    runs = []
    for price_usd in (200_000, 300_000):
        h100_quote(quote, price_usd)
        cat = api.catalog_for(ls, [inputs.default_catalog_path(), quote])
        plan = plan_sweep(ls, cat, ["workload.global_batch_size=8,16"])
        runs.append(run_points(plan, executor=executor))
    return runs[0], runs[1]


def _assert_new_prices(before: list[dict], after: list[dict]) -> None:
    # Each point is one 8-GPU node (tp = cp = pp = 1, d ≤ 8 meets 1.0 s): one platform at the quoted
    # price, and nothing else depends on it (contingency 0), so capex moves by exactly $100,000.
    for old, new in zip(before, after):
        assert old["status"] == new["status"] == "optimal"
        assert old["nodes"] == new["nodes"] == 1
        assert compute_line(old)["unit_price_usd"] == 200_000
        assert compute_line(new)["unit_price_usd"] == 300_000
        assert new["capex_usd"] - old["capex_usd"] == pytest.approx(100_000, abs=0.01)


def test_sweep_rerun_in_one_process_sees_an_edited_catalog(tmp_path):
    before, after = _sweep_twice_with_an_edit(tmp_path, "local")
    _assert_new_prices(before, after)


def test_sweep_rerun_on_a_local_cluster_sees_an_edited_catalog(tmp_path):
    distributed = pytest.importorskip("distributed")
    import dask

    dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        address = cluster.scheduler_address.replace("tcp://", "dask://")
        before, after = _sweep_twice_with_an_edit(tmp_path, address)
    _assert_new_prices(before, after)


# ---------------------------------------------------- 10. relative --catalog paths under Dask


def test_relative_catalog_path_under_dask_is_resolved_in_the_client(tmp_path):
    # The CLI runs in tmp_path with `--catalog quote.yaml` (relative); the Dask workers run in this
    # test's cwd, where no quote.yaml exists. Both points must be solved with the quote's price.
    distributed = pytest.importorskip("distributed")
    import dask

    h100_quote(tmp_path / "quote.yaml", 200_000)
    write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        executor = cluster.scheduler_address.replace("tcp://", "dask://")
        proc = run_cli("sweep", "sc.yaml", "--catalog", inputs.default_catalog_path(), "--catalog", "quote.yaml",
                       "--vary", "workload.global_batch_size=8,16", "--executor", executor, "--json", "s.json",
                       "--xlsx", "s.xlsx", "--plot", "s.png", cwd=tmp_path)
    assert_clean_exit(proc, 0)
    report = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert [p["status"] for p in report["points"]] == ["optimal", "optimal"]
    assert [compute_line(p)["unit_price_usd"] for p in report["points"]] == [200_000, 200_000]


# ------------------------------------------------- 2. a time limit that stops the K-best search


def _stop_at_third_solve(monkeypatch):
    """Real HiGHS for the first two K-best solves; the third stops as a time limit does when HiGHS
    has no incumbent yet (status time_limit, no solution). Everything above the adapter is real."""
    from solver.optimize import highs

    real = highs.HighsAdapter.solve
    calls = []

    def limited(self, model, time_limit_s=None):
        calls.append(1)
        out = real(self, model, time_limit_s)
        if len(calls) == 3:
            return highs.SolveOutcome("time_limit", None, None, None, out.solve_time_s, "maxTimeLimit")
        return out

    monkeypatch.setattr(highs.HighsAdapter, "solve", limited)


def test_time_limit_that_stops_k_best_is_not_reported_optimal(tmp_path, monkeypatch, capsys):
    # llama3-70b has at least 5 distinct designs (its shipped top 5). A time limit that stops the
    # third solve leaves 2 designs, both proven (their solves were optimal): status time_limit,
    # exit 0 (docs: a result with a warning), and no claim that only 2 designs exist.
    from solver import cli

    _stop_at_third_solve(monkeypatch)
    out = tmp_path / "r.json"
    code = cli.main(["solve", str(REPO / "scenarios" / "llama3-70b.yaml"), "--json", str(out), "--no-xlsx",
                     "--time-limit", "60"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["status"] == "time_limit"
    assert len(data["designs"]) == 2
    assert data["design_space"]["search"] == {"complete": False, "designs_found": 2, "designs_proven": 2,
                                              "stopped_in": "K-best"}
    text = " ".join((captured.out + captured.err).split())  # rich wraps long lines
    err = " ".join(captured.err.split())
    assert "only 2 distinct designs exist" not in text
    assert "2 of 5 designs found, all proven the best in order" in err and "time limit" in err


@pytest.mark.parametrize("limit_s", [0.2, 0.5, 1.0])
def test_real_time_limit_never_claims_fewer_designs_exist(limit_s):
    # Without a limit llama3-70b yields 5 distinct designs, so whatever a real limit stops on,
    # "optimal" must come with all 5 and no result may say fewer exist.
    ls = api.load_scenario(REPO / "scenarios" / "llama3-70b.yaml")
    try:
        result = api.solve(ls, time_limit_s=limit_s)
    except api.SolverFailure as exc:
        assert "time limit" in str(exc)
        return
    assert not any("distinct designs exist" in w for w in result.warnings)
    if result.status == "optimal":
        assert len(result.designs) == 5
    else:
        assert result.status in ("time_limit", "feasible")
        assert result.warnings


# --------------------------------------------- 3. designs named in infeasibility explanations


def evaluate_named(scenario: dict, design, catalog):
    """Re-evaluate a named design independently: the same scenario with every decision pinned,
    through `api.evaluate` (the path `fabricplan evaluate` takes)."""
    sc = copy.deepcopy(scenario)
    a, lay = design.architecture, design.layout
    sc["pin"] = {"platform": a.platform, "nic": a.nic, "rails_per_node": a.rails_per_node, "switch": a.switch,
                 "oversubscription": a.oversubscription, "fabric": a.fabric,
                 "above_pod_oversubscription": a.above_pod_oversubscription, "tiers": design.tiers, "tp": lay.tp, "cp": lay.cp, "pp": lay.pp, "vp": lay.vp,
                 "dp": lay.dp, "microbatch_size": lay.microbatch_size, "gpus_per_domain_used": lay.gpus_per_domain_used}
    ls = api.load_scenario(sc)
    return api.evaluate(ls, catalog), ls.scenario


def check_explanation(scenario: dict, catalog) -> str | None:
    """Solve; if infeasible, every design the explanation names passes evaluate with its claim."""
    from solver.design_space import build_design_space
    from solver.optimize import diagnose
    from solver.results import within_caps

    ls = api.load_scenario(copy.deepcopy(scenario))
    result = api.solve(ls, catalog, top_k=1)
    if result.status != "infeasible":
        return None
    explained = diagnose.explain(build_design_space(ls.scenario, catalog))
    assert explained.text == result.explanation
    for design, claim in explained.named:
        again, sc = evaluate_named(scenario, design, catalog)
        assert again.perf.step_time_s == pytest.approx(design.perf.step_time_s, rel=1e-12)
        assert again.cost.gpus == design.cost.gpus
        assert f"{again.perf.step_time_s:.3g} s" in explained.text or f"{again.cost.gpus:,}" in explained.text
        assert again.label in explained.text
        if claim == diagnose.FASTEST_WITHIN_CAPS:
            assert within_caps(again, sc.constraints, sc.pin), (again.label, again.cost.gpus, explained.text)
            assert again.perf.fits_memory
        else:
            assert claim == diagnose.MEETS_TARGET and again.meets_target, explained.text
    return result.explanation


def test_explanation_for_llama3_70b_at_0_45_s_names_a_design_within_max_gpus(default_catalog):
    # Issue 18: at 0.45 s the explanation named an NVL72 design that buys 18,432 GPUs under the
    # 16,384 cap (it counted GPUs used). Under the v1 step model the fastest design within the cap,
    # found independently (see the issue), reached 0.4614 s; physics v2 (issue 13) times every
    # design slower, so the number is not fixed here: check_explanation re-evaluates the named
    # design and checks it buys at most 16,384 GPUs, and no 18,432-GPU design may be named.
    scenario = yaml.safe_load((REPO / "scenarios" / "llama3-70b.yaml").read_text(encoding="utf-8"))
    scenario["target"] = {"step_time_s": 0.45}
    text = check_explanation(scenario, default_catalog)
    assert text is not None
    assert "within max_gpus = 16,384 the fastest design reaches" in text
    assert "18,432 GPUs bought" not in text


SHIPPED = ["llama3-70b.yaml", "llama3-405b.yaml", "gpt3-175b.yaml", "capped-budget-power.yaml"]
# (scenario, target divided by, caps divided by): a target no layout meets; a target and caps that
# leave layouts but no design within the caps (the soft-cap re-solve); both tightened.
TIGHTENED = ([(name, 20, 1) for name in SHIPPED] + [(name, 5, 4) for name in SHIPPED]
             + [("llama3-70b.yaml", 5, 2), ("llama3-405b.yaml", 5, 1), ("capped-budget-power.yaml", 5, 1)])


@pytest.mark.parametrize("name, target_div, caps_div", TIGHTENED)
def test_every_design_an_explanation_names_passes_evaluate(name, target_div, caps_div, default_catalog):
    # Each shipped example with its target divided by target_div and its max_gpus, budget and
    # power cap divided by caps_div (max_gpus 16,384 where the example has none): every case is
    # infeasible, and every design its explanation names passes evaluate with what it claims.
    scenario = yaml.safe_load((REPO / "scenarios" / name).read_text(encoding="utf-8"))
    scenario["target"] = {"step_time_s": scenario["target"]["step_time_s"] / target_div}
    con = scenario.setdefault("constraints", {})
    con["max_gpus"] = con.get("max_gpus", 16_384) // caps_div
    for cap in ("budget_usd", "facility_power_kw"):
        if cap in con:
            con[cap] = con[cap] / caps_div
    text = check_explanation(scenario, default_catalog)
    assert text is not None, "the tightened example still has a design"
    assert "cannot be met" in text or "needs" in text


@pytest.mark.parametrize("space", ["b200-nvl72-capped", "a100-h200-power"])
def test_fastest_design_within_caps_equals_enumeration(space, default_catalog):
    # The spaces of tests/optimize/test_optimizer.py: NVL72 racks bought whole under a 512-GPU cap,
    # and a 53.5 kW facility power cap. The fastest design within the caps found by the diagnosis
    # equals the enumeration's (every point evaluated, target lifted): same step time, same cost.
    from solver.design_space import build_design_space
    from solver.optimize import diagnose, oracle

    docs = {
        "b200-nvl72-capped": dict(
            name="exact-b200", workload=dict(model=GPT3_6_7B, global_batch_size=1024), target=dict(step_time_s=3.0),
            constraints=dict(platforms=["hgx-b200", "gb200-nvl72"], max_gpus=512, nic_configurations="any", rails_per_node=[1, 4]),
            parallelism=dict(tp=[2, 4, 8], cp=1, pp=[1, 2, 4], vp=1, microbatch_size=1)),
        "a100-h200-power": dict(
            name="exact-a100", capex_scope="compute_fabric_only",  # the 53.5 kW cap was worked out without site lines
            workload=dict(model=GPT3_6_7B, global_batch_size=512), target=dict(step_time_s=6.0),
            constraints=dict(platforms=["dgx-a100", "hgx-h200"], nic_configurations="any", rails_per_node=[2, 4], oversubscription=[1, 2],
                             facility_power_kw=53.5),
            parallelism=dict(tp=[4, 8], cp=1, pp=[1, 2], vp=1, microbatch_size=[1, 2])),
    }
    sc = api.load_scenario(docs[space]).scenario
    every = oracle.enumerate_designs(sc, default_catalog, target_step_time_s=diagnose.RELAXED_TARGET_S)
    expected = min(every, key=lambda d: (d.perf.step_time_s, d.objective_usd))
    found = diagnose.fastest_within_caps(build_design_space(sc, default_catalog))
    assert found is not None
    assert found.perf.step_time_s == pytest.approx(expected.perf.step_time_s, rel=1e-12)
    assert round(found.objective_usd, 2) == round(expected.objective_usd, 2)


# ---------------------------------------------------- 6. the time limit bounds the whole solve


def synthetic_catalog(folder: Path, copies: int) -> Path:
    """bench/synth_catalog.py's overlay with `copies` perturbed copies of every platform and NIC
    (copies = 10: 99 platforms and 44 NICs; 110: 999 and 444), written by yaml.safe_dump."""
    sys.path.insert(0, str(REPO / "bench"))
    from synth_catalog import write_overlay

    return write_overlay(folder, copies=copies)


def test_time_limit_bounds_design_space_and_model_build(tmp_path):
    # dense-1k on the default catalog plus 10 copies of every platform and NIC: 2.2 million combinations. The
    # limit is a quarter of the time the same solve takes without one on this machine (a fixed limit stops
    # cutting anything once the machine is fast enough: the sixth pass of issue 26 brought this solve from
    # ≈ 40 s to ≈ 1 s), so the design space, which takes most of it, is always cut short. The whole solve ends
    # within the limit plus one HiGHS floor and the evaluation of what was found (a second and a half of slack
    # for a loaded machine), with an honest status.
    from solver.optimize import ranking  # noqa: F401 - Pyomo imported before the clock starts, as in solve

    overlay = synthetic_catalog(tmp_path, 10)
    cat = api.catalog_for(api.load_scenario(REPO / "bench" / "scenarios" / "dense-1k.yaml"),
                          [inputs.default_catalog_path(), overlay])
    start = time.perf_counter()
    whole = api.solve(api.load_scenario(REPO / "bench" / "scenarios" / "dense-1k.yaml"), cat)
    limit = max(0.05, round((time.perf_counter() - start) / 4, 3))
    assert whole.status == "optimal" and whole.stats["search"]["complete"] is True
    ls = api.load_scenario(REPO / "bench" / "scenarios" / "dense-1k.yaml")
    start = time.perf_counter()
    try:
        result = api.solve(ls, cat, time_limit_s=limit)
    except api.SolverFailure as exc:
        assert f"within the {limit:g} s time limit" in str(exc)
        result = None
    assert time.perf_counter() - start < limit + 1.5
    if result is not None:
        assert result.status == "time_limit"
        assert result.stats["search"]["complete"] is False
        assert result.stats["search"]["designs_proven"] == 0  # the design space was cut short
        for d in result.designs:
            assert d.meets_target and d.perf.fits_memory


RSS_PROBE = """
import resource, sys
from solver.cli import main
code = main(sys.argv[1:])
print(f"peak_rss_kb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", file=sys.stderr)
sys.exit(code)
"""


def test_time_limit_on_a_thousand_platform_catalog_bounds_time_and_memory(tmp_path):
    # 999 platforms and 444 NICs: before issue 18, `--time-limit 2` ran ≈ 10 minutes and peaked at
    # 1.03 GB. Now: loading the 0.9 MB catalog (outside the limit) + at most ≈ 3 s of solving, and
    # a peak resident set under 1 GB (ru_maxrss of the CLI process itself).
    overlay = synthetic_catalog(tmp_path, 110)
    proc = subprocess.run([sys.executable, "-c", RSS_PROBE, "solve", str(REPO / "bench" / "scenarios" / "dense-1k.yaml"),
                           "--catalog", str(inputs.default_catalog_path()), "--catalog", str(overlay),
                           "--time-limit", "2", "--json", str(tmp_path / "r.json"), "--no-xlsx"],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode in (0, 3), proc.stderr
    assert "Traceback" not in proc.stderr
    peak_kb = int(proc.stderr.rsplit("peak_rss_kb=", 1)[1].split()[0])
    assert peak_kb < 1_000_000
    if proc.returncode == 0:
        data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
        assert data["status"] == "time_limit"
        assert data["timings_s"]["total_s"] < 3.5
    else:
        assert "within the 2 s time limit" in proc.stderr


# --------------------------------------------------------------------- 12. smaller input items


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_time_limit_must_be_a_positive_finite_number(tmp_path, value):
    proc = run_cli("solve", REPO / "scenarios" / "llama3-70b.yaml", "--time-limit", value, "--json", tmp_path / "r.json",
                   "--no-xlsx")
    assert_clean_exit(proc, 2)
    assert "--time-limit must be a positive number of seconds" in proc.stderr
    assert not (tmp_path / "r.json").exists()


def test_time_limit_nan_is_refused_by_the_api_too():
    with pytest.raises(UsageError, match="time-limit"):
        api.solve(tiny_scenario(), time_limit_s=float("nan"))


def test_nesting_deeper_than_the_recursion_limit_is_a_located_error(tmp_path):
    # 5,000 nested flow lists: PyYAML's composer recursed past Python's limit and the error said
    # "1:1: YAML error: maximum recursion depth exceeded". Now the line and column of the node
    # that goes deeper than 50 levels: line 2 ("description: " is 13 characters, the 51st "[" is
    # at column 13 + 51 = 64).
    bad = tmp_path / "deep.yaml"
    bad.write_text("name: x\ndescription: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        inputs.load_catalog([bad])
    assert str(info.value) == f"{bad}:2:64: nesting deeper than 50 levels: flatten the structure"


def test_catalog_written_by_safe_dump_with_shared_lists_loads(tmp_path):
    # yaml.safe_dump writes an anchor for every list object used twice, and an alias at each
    # reuse: 300 platforms sharing one `compatible_nics` list give 299 aliases (over the old
    # budget of 100) while the expanded file is small. It must load.
    nics = ["cx7-ndr"]
    plats = []
    for i in range(300):
        p = catalog_entry("platforms", "hgx-h100")
        p.update(id=f"h100-copy-{i}", compatible_nics=nics)
        plats.append(p)
    path = tmp_path / "copies.yaml"
    path.write_text(yaml.safe_dump({"name": "copies", "platforms": plats}, sort_keys=False), encoding="utf-8")
    assert path.read_text(encoding="utf-8").count("*id") >= 299
    cat = inputs.load_catalog([inputs.default_catalog_path(), path])
    assert len(cat.platforms) == len(DEFAULT["platforms"]) + 300


# ------------------------------------------------------- 5. input size and type before reading


def _limit_memory_to_2_gb() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def validate_bounded(path: Path) -> subprocess.CompletedProcess:
    """`validate PATH` in a child limited to 2 GB of address space and 20 s: reading the input
    whole (before issue 18) fails one way or the other instead of eating the machine."""
    try:
        return run_cli("validate", path, timeout_s=20, preexec_fn=_limit_memory_to_2_gb)
    except subprocess.TimeoutExpired:
        pytest.fail(f"validate {path} did not finish in 20 s")


@pytest.mark.parametrize("kind", ["dev_zero", "fifo", "sparse_3_gb"])
def test_input_type_and_size_are_checked_before_reading(tmp_path, kind):
    if kind == "dev_zero":
        path, expected = Path("/dev/zero"), "/dev/zero:1:1: is a device, not a YAML file"
    elif kind == "fifo":
        path = tmp_path / "pipe.yaml"
        os.mkfifo(path)  # nobody ever writes: opening it for reading blocks forever
        expected = f"{path}:1:1: is a named pipe (FIFO), not a YAML file"
    else:
        path = tmp_path / "sparse.yaml"
        with path.open("wb") as fh:
            fh.truncate(3 * 10**9)  # 3 GB of holes: no disk used, 3.0 GB when read
        expected = f"{path}:1:1: file is 3000.0 MB; the limit is 10 MB"
    start = time.perf_counter()
    proc = validate_bounded(path)
    assert_clean_exit(proc, 2)
    assert expected in proc.stderr
    assert time.perf_counter() - start < 15


# ----------------------------------------------- 4. outputs committed as a set; honest Ctrl-C


def solve_tiny(folder: Path, capsys, **changes) -> tuple[int, str]:
    from solver import cli

    write_yaml(folder / "sc.yaml", tiny_scenario(**changes))
    code = cli.main(["solve", str(folder / "sc.yaml"), "--json", str(folder / "r.json"), "--xlsx", str(folder / "r.xlsx")])
    return code, capsys.readouterr().err


def test_ctrl_c_during_the_workbook_write_keeps_the_earlier_json_and_says_so(tmp_path, monkeypatch, capsys):
    # Run 1 writes r.json and r.xlsx. Run 2 (a cheaper platform price, so a different JSON) is
    # interrupted while its workbook is being saved: the earlier JSON and workbook must both stay,
    # and "earlier output files are unchanged" must be true. Before issue 18 the new JSON was
    # already in place.
    from openpyxl.workbook.workbook import Workbook

    assert solve_tiny(tmp_path, capsys)[0] == 0
    before = {name: (tmp_path / name).read_bytes() for name in ("r.json", "r.xlsx")}

    def interrupted_save(self, filename):
        Path(filename).write_bytes(b"PK\x03\x04 half a workbook")
        raise KeyboardInterrupt

    monkeypatch.setattr(Workbook, "save", interrupted_save)
    code, err = solve_tiny(tmp_path, capsys, target={"step_time_s": 2.0})
    assert code == 130
    assert "earlier output files are unchanged" in err
    assert {name: (tmp_path / name).read_bytes() for name in ("r.json", "r.xlsx")} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "r.xlsx", "sc.yaml"]  # no temp files


def test_ctrl_c_after_the_outputs_are_written_does_not_claim_they_are_unchanged(tmp_path, monkeypatch, capsys):
    from rich.console import Console

    real_print = Console.print

    def print_then_interrupt(self, *objects, **kwargs):
        if objects and isinstance(objects[0], str) and objects[0].startswith("wrote "):
            raise KeyboardInterrupt
        return real_print(self, *objects, **kwargs)

    monkeypatch.setattr(Console, "print", print_then_interrupt)
    code, err = solve_tiny(tmp_path, capsys)
    assert code == 130
    assert "unchanged" not in err
    assert "interrupted after writing" in " ".join(err.split()) and "r.json" in err


def test_infeasible_resolve_removes_the_earlier_workbook(tmp_path, capsys):
    # Run 1 is feasible (JSON + workbook). Run 2 of the same scenario name is infeasible (a 1 µs
    # target): its JSON says infeasible, so the earlier workbook, which lists designs, must go.
    assert solve_tiny(tmp_path, capsys)[0] == 0
    assert (tmp_path / "r.xlsx").exists()
    code, _ = solve_tiny(tmp_path, capsys, target={"step_time_s": 1e-6})
    assert code == 1
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["status"] == "infeasible"
    assert not (tmp_path / "r.xlsx").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "sc.yaml"]


def _sweep_twice_interrupted(tmp_path, capsys, interrupt) -> None:
    """A finished sweep, then the same sweep again with `interrupt()` (monkeypatching) making the plot
    step raise KeyboardInterrupt: exit 130 and the earlier JSON, workbook and PNG stay together."""
    from solver import cli

    write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    args = ["sweep", str(tmp_path / "sc.yaml"), "--vary", "workload.global_batch_size=8,16", "--json",
            str(tmp_path / "s.json"), "--xlsx", str(tmp_path / "s.xlsx"), "--plot", str(tmp_path / "s.png")]
    assert cli.main(args) == 0
    before = {name: (tmp_path / name).read_bytes() for name in ("s.json", "s.xlsx", "s.png")}
    files = sorted(p.name for p in tmp_path.iterdir())
    capsys.readouterr()
    interrupt()
    assert cli.main(args + ["--vary", "target.step_time_s=2"]) == 130
    assert "earlier output files are unchanged" in capsys.readouterr().err
    assert {name: (tmp_path / name).read_bytes() for name in ("s.json", "s.xlsx", "s.png")} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == files  # no temporary file left behind


def test_ctrl_c_during_the_sweep_plot_keeps_the_earlier_set(tmp_path, monkeypatch, capsys):
    # The plot drawn in this process (no plot process could be started, reports/side_process.py),
    # interrupted mid-save (before issue 18, JSON and workbook were replaced).
    from matplotlib.figure import Figure

    from solver.reports.side_process import SideProcess

    def interrupted_savefig(self, fname, *a, **k):
        Path(fname).write_bytes(b"\x89PNG half")
        raise KeyboardInterrupt

    def interrupt():
        monkeypatch.setattr(SideProcess, "start", classmethod(lambda cls, kind: None))
        monkeypatch.setattr(Figure, "savefig", interrupted_savefig)

    _sweep_twice_interrupted(tmp_path, capsys, interrupt)


def test_ctrl_c_while_the_side_process_draws_keeps_the_earlier_set(tmp_path, monkeypatch, capsys):
    # Ctrl-C while this process waits for the plot process (issue 26): the plot process is stopped
    # before the temporary PNG it may be writing is removed.
    from solver.reports import side_process
    from solver.reports.side_process import SideProcess

    stopped = []
    real_stop = SideProcess.stop

    def interrupted_receive(self):
        raise KeyboardInterrupt

    def stop(self):
        stopped.append(self.kind)
        real_stop(self)

    def interrupt():
        monkeypatch.setattr(side_process, "worth_a_process", lambda kind: True)  # as in a fresh command
        monkeypatch.setattr(SideProcess, "receive", interrupted_receive)
        monkeypatch.setattr(SideProcess, "stop", stop)

    _sweep_twice_interrupted(tmp_path, capsys, interrupt)
    # the workbook process being waited on is stopped first (by write_alongside); on the way out every side process
    # (the workbook's and the plot's, issue plan) is stopped again by side_process, before temporary files go
    assert stopped[0] == "sweep_workbook"
    assert sorted(set(stopped)) == ["sweep", "sweep_workbook"]
    assert stopped.count("sweep") >= 1 and stopped.count("sweep_workbook") >= 2


# ------------------------------------------------------------------------------ 13. durability


def fsync_log(monkeypatch) -> list[str]:
    """Record what every os.fsync flushes, by the path of its descriptor."""
    calls: list[str] = []
    real = os.fsync

    def logged(fd):
        calls.append(os.readlink(f"/proc/self/fd/{fd}"))
        return real(fd)

    monkeypatch.setattr(os, "fsync", logged)
    return calls


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc to name descriptors")
def test_atomic_write_fsyncs_the_file_before_the_rename_and_the_folder_after(tmp_path, monkeypatch):
    from solver.reports.json import write_json

    calls = fsync_log(monkeypatch)
    renames: list[tuple[str, str]] = []
    real_replace = os.replace

    def logged_replace(src, dst):
        renames.append((str(src), str(dst)))
        calls.append(f"rename -> {dst}")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", logged_replace)
    target = tmp_path / "r.json"
    write_json({"a": 1}, target)
    assert len(renames) == 1
    temp = renames[0][0]
    assert calls == [temp, f"rename -> {target}", str(tmp_path)]


@pytest.mark.skipif(not Path("/proc/self/fd").exists(), reason="needs /proc to name descriptors")
def test_every_sweep_row_is_fsynced_as_it_is_appended(tmp_path, monkeypatch):
    ls = api.load_scenario(tiny_scenario())
    plan = plan_sweep(ls, api.catalog_for(ls), ["workload.global_batch_size=8,16,32"])
    calls = fsync_log(monkeypatch)
    results = tmp_path / "s.points.jsonl"
    run_points(plan, results_path=results)
    assert calls.count(str(results)) >= 3  # one per appended row (the header is written atomically)


def test_ctrl_c_during_the_renames_lands_after_the_whole_set(tmp_path, monkeypatch):
    # SIGINT arrives between the first and the second rename of a set: both files are replaced,
    # then KeyboardInterrupt is raised (the set is never half old, half new).
    from solver import files as io

    (tmp_path / "a.json").write_text("old a")
    (tmp_path / "b.xlsx").write_text("old b")
    real_replace = os.replace
    renames = []

    def replace_then_signal(src, dst):
        real_replace(src, dst)
        renames.append(dst)
        if len(renames) == 1:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # a Python handler would run here, between the two renames

    monkeypatch.setattr(os, "replace", replace_then_signal)
    with pytest.raises(KeyboardInterrupt):
        with io.output_set():
            with io.atomic_path(tmp_path / "a.json") as tmp:
                tmp.write_text("new a")
            with io.atomic_path(tmp_path / "b.xlsx") as tmp:
                tmp.write_text("new b")
    assert (tmp_path / "a.json").read_text() == "new a"
    assert (tmp_path / "b.xlsx").read_text() == "new b"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.xlsx"]


# -------------------------------------------------------------- 11. the sweep's results file


def tiny_sweep_args(folder: Path, *extra) -> list[str]:
    write_yaml(folder / "sc.yaml", tiny_scenario())
    return ["sweep", str(folder / "sc.yaml"), "--vary", "workload.global_batch_size=8,16,32", "--json",
            str(folder / "s.json"), "--xlsx", str(folder / "s.xlsx"), "--plot", str(folder / "s.png"), *extra]


def test_results_file_that_is_a_directory_fails_before_solving(tmp_path):
    (tmp_path / "s.points.jsonl").mkdir()
    proc = run_cli(*tiny_sweep_args(tmp_path))
    assert_clean_exit(proc, 2)
    assert f"{tmp_path / 's.points.jsonl'}: is a directory" in " ".join(proc.stderr.split())
    assert "point(s) on" not in proc.stderr  # the sweep never started
    assert not (tmp_path / "s.json").exists()


NOT_ROWS = ['[]', '5', '"text"', 'null', '{"foo": 1}', '{"index": "x", "status": "optimal"}',
            '{"index": 99, "status": "optimal"}', '{"index": 0}']


def test_resume_skips_lines_that_are_json_but_not_rows(tmp_path, capsys):
    # Eight lines that are valid JSON but not rows of this sweep (not objects, no index, an index
    # of no point, no status or checksum): --resume used to crash on them (exit 3, internal error).
    from solver import cli

    args = tiny_sweep_args(tmp_path)
    assert cli.main(args) == 0
    reference = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    results = tmp_path / "s.points.jsonl"
    header = results.read_text(encoding="utf-8").splitlines()[0]
    results.write_text(header + "\n" + "\n".join(NOT_ROWS) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert cli.main(args + ["--resume"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "resuming: 0 of 3 point(s) already done, 3 to solve (8 line(s) of the results file damaged" in err
    final = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert [(p["index"], p["capex_usd"]) for p in final["points"]] == [(p["index"], p["capex_usd"]) for p in reference["points"]]


def test_resume_solves_an_edited_row_again(tmp_path, capsys):
    # Point 0's capex edited in the results file (338,790 → 1.00): the checksum no longer matches,
    # so --resume solves point 0 again and reports the real capex; points 1 and 2 are reused.
    from solver import cli

    args = tiny_sweep_args(tmp_path)
    assert cli.main(args) == 0
    results = tmp_path / "s.points.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[1])
    assert row["index"] == 0
    true_capex = row["capex_usd"]
    row["capex_usd"] = 1.0
    lines[1] = json.dumps(row, separators=(",", ":"))
    results.write_text("\n".join(lines) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert cli.main(args + ["--resume"]) == 0
    assert "resuming: 2 of 3 point(s) already done, 1 to solve" in " ".join(capsys.readouterr().err.split())
    final = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert final["points"][0]["capex_usd"] == true_capex != 1.0


def test_temp_files_of_killed_runs_are_cleaned(tmp_path, capsys):
    # Temp names carry the writer's pid: one of a dead process (pid 2^22 + 1 is above Linux's
    # default pid_max, so never alive), one of an older version (no pid) two hours old, and one of
    # this live test process, which must be left alone (it could be a concurrent writer).
    from solver import cli

    dead = tmp_path / f".s.json.{2**22 + 1}.abcd1234.tmp"
    legacy = tmp_path / ".s.xlsx.k2j4h5g6.tmp"
    live = tmp_path / f".s.png.{os.getpid()}.zzzz9999.tmp"
    for path in (dead, legacy, live):
        path.write_bytes(b"half")
    old = time.time() - 7200
    os.utime(legacy, (old, old))
    assert cli.main(tiny_sweep_args(tmp_path)) == 0
    assert not dead.exists() and not legacy.exists()
    assert live.exists()


def test_concurrent_resume_of_the_same_sweep_is_refused(tmp_path):
    # Run A solves a 33-point growth sweep (≈ 0.1–0.2 s a point since issue 26's fifth pass: 17 points took 2.5 s,
    # about what run B needs to start); run B, started on the same
    # outputs while A holds the results file, must stop at once instead of solving every point again.
    args = ["sweep", REPO / "scenarios" / "growth-sweep.yaml", "--vary", "workload.global_batch_size=2048:6144:128",
            "--json", tmp_path / "s.json", "--xlsx", tmp_path / "s.xlsx", "--plot", tmp_path / "s.png"]
    first = subprocess.Popen([sys.executable, "-m", "solver", *map(str, args)], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        results = tmp_path / "s.points.jsonl"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and first.poll() is None and len(point_rows(results)) < 1:
            time.sleep(0.01)
        assert first.poll() is None, "run A ended before run B could start"
        start = time.perf_counter()
        second = run_cli(*args, "--resume")
        assert time.perf_counter() - start < 20
        assert_clean_exit(second, 2)
        assert "another run of this sweep is writing" in " ".join(second.stderr.split())
        out, err = first.communicate(timeout=180)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == 0, err
    rows = point_rows(tmp_path / "s.points.jsonl")
    assert sorted(r["index"] for r in rows) == list(range(33))  # each point once: B added nothing
    assert not (tmp_path / "s.points.jsonl.lock").exists()


def point_rows(results: Path) -> list[dict]:
    if not results.exists():
        return []
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)[1:]
    return [json.loads(line) for line in lines if line.endswith("\n")]


# --------------------------------------------------------------- 7. orphaned pool workers


def children_of(pid: int) -> list[int]:
    """Live child processes of `pid` (from /proc)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.append(int(entry.name))
    return out


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process table from /proc")
def test_pool_workers_exit_when_the_sweep_process_is_killed(tmp_path):
    # `sweep --jobs 2` over 32 dense-10k points (about 0.9 s of CPU each since issue 26's fifth pass: eight points
    # were done within the 3 s below). Once both spawn workers
    # are inside a solve (points are still left to solve), SIGKILL only the main process (as the OOM killer or a parent's timeout does).
    # The workers and multiprocessing's resource tracker must all be gone within 5 s, so the pipes
    # they inherited reach end of file. Before issue 18 each worker finished its point (and the
    # next queued one) first.
    batches = ",".join(str(4096 + 512 * k) for k in range(32))
    args = ["sweep", REPO / "bench" / "scenarios" / "dense-10k.yaml", "--vary", f"workload.global_batch_size={batches}",
            "--jobs", "2", "--json", tmp_path / "s.json", "--xlsx", tmp_path / "s.xlsx", "--plot", tmp_path / "s.png"]
    proc = subprocess.Popen([sys.executable, "-m", "solver", *map(str, args)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    helpers: list[int] = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            helpers = children_of(proc.pid)
            if len(helpers) >= 3:  # the resource tracker and two workers
                break
            time.sleep(0.05)
        assert proc.poll() is None and len(helpers) >= 3, "the pool did not start"
        time.sleep(3)  # the workers import the solver and start their first point
        assert len(point_rows(tmp_path / "s.points.jsonl")) < 24, "the sweep nearly finished before the kill"
        proc.kill()
        killed = time.monotonic()
        proc.communicate(timeout=30)  # end of file on stdout and stderr: nobody holds them any more
        eof_s = time.monotonic() - killed
        while time.monotonic() - killed < 5 and any(alive(pid) for pid in helpers):
            time.sleep(0.05)
        assert [pid for pid in helpers if alive(pid)] == []
        assert eof_s < 5
    finally:
        for pid in [proc.pid, *helpers]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


# -------------------------------------------------------------------- 8, 9. hostile text

# Rich markup that raises ([/] closes nothing), markup that makes a hyperlink, an OSC 8 hyperlink
# and a CSI colour as raw escape sequences, and mathtext for matplotlib (a fraction, and "$x^$",
# which mathtext cannot parse).
HOSTILE = ("evil [/] [link=http://evil.invalid]click[/link] \x1b]8;;http://evil.invalid\x07osc\x1b]8;;\x07 "
           "\x1b[31mred\x1b[0m $\\frac{1}{0}$ $x^$")


def hostile_catalog(folder: Path) -> Path:
    plat = catalog_entry("platforms", "hgx-h100")
    plat["name"] = HOSTILE
    plat["price_source"] = HOSTILE
    nic = catalog_entry("nics", "cx7-ndr")
    nic["name"] = HOSTILE
    gpu = catalog_entry("gpus", "h100-sxm")
    gpu["name"] = HOSTILE
    return write_yaml(folder / "evil.yaml", {"name": "evil", "description": HOSTILE, "gpus": [gpu], "platforms": [plat],
                                            "nics": [nic]})


def assert_literal(proc: subprocess.CompletedProcess) -> None:
    """Exit 0; no escape character reached the output; the markup was printed as text."""
    assert_clean_exit(proc, 0)
    text = proc.stdout + proc.stderr
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text
    flat = "".join(text.split())  # tables wrap long cells over lines (and may cut a long word with "…")
    assert "[/]" in flat and "[link=http://evil.invalid]" in flat
    assert "\\x1b]8;;http://evil.invalid" in flat  # shown, not executed


def test_hostile_catalog_names_print_literally_in_catalog(tmp_path):
    evil = hostile_catalog(tmp_path)
    assert_literal(run_cli("catalog", "--catalog", inputs.default_catalog_path(), "--catalog", evil))


def test_hostile_catalog_names_print_literally_in_evaluate(tmp_path):
    evil = hostile_catalog(tmp_path)
    sc = tiny_scenario(pin={"platform": "hgx-h100", "nic": "cx7-ndr", "rails_per_node": 1, "switch": "qm9700",
                            "tp": 1, "cp": 1, "pp": 1, "vp": 1, "dp": 8, "microbatch_size": 1})
    write_yaml(tmp_path / "sc.yaml", sc)
    proc = run_cli("evaluate", tmp_path / "sc.yaml", "--catalog", inputs.default_catalog_path(), "--catalog", evil,
                   "--json", tmp_path / "e.json", "--xlsx", tmp_path / "e.xlsx")  # nothing written under outputs/
    assert_literal(proc)
    assert (tmp_path / "e.json").exists()


def test_hostile_model_name_in_a_sweep_prints_and_plots_literally(tmp_path):
    # A named model of a sweep is the point's label: in the terminal table and on the plot's axis.
    # Before issue 18 rich raised on "[/]" after the sweep finished, and matplotlib's mathtext on
    # "$x^$" (after the JSON and workbook were written).
    from PIL import Image

    evil = hostile_catalog(tmp_path)
    sc = tiny_scenario()
    sc["sweep"] = {"models": [{"name": HOSTILE, "model": sc["workload"]["model"]},
                              {"name": "plain", "model": {**sc["workload"]["model"], "layers": 4}}]}
    write_yaml(tmp_path / "sc.yaml", sc)
    proc = run_cli("sweep", tmp_path / "sc.yaml", "--catalog", inputs.default_catalog_path(), "--catalog", evil,
                   "--json", tmp_path / "s.json", "--xlsx", tmp_path / "s.xlsx", "--plot", tmp_path / "s.png")
    assert_literal(proc)
    assert Image.open(tmp_path / "s.png").format == "PNG"


def test_plot_text_is_literal(tmp_path, small_report):
    # The tick label of a point named "… $\frac{1}{0}$ $x^$" is drawn as those characters (mathtext
    # would draw a fraction, and raise on "$x^$"); a title "$x$" is drawn as "$x$", not as an italic x.
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.text import Text

    from solver.reports.plot import write_plot

    drawn: list[str] = []
    real_draw = Text.draw

    def record(self, renderer):
        drawn.append(self.get_text())
        assert not self._preprocess_math(self.get_text())[1], self.get_text()  # no mathtext
        return real_draw(self, renderer)

    report = copy.deepcopy(small_report)
    report["scenario"] = "$x$"
    for p in report["points"]:
        p["labels"] = {k: HOSTILE for k in p["labels"]}
    import unittest.mock

    with unittest.mock.patch.object(Text, "draw", record):
        write_plot(report, tmp_path / "p.png")
    assert any("$\\frac{1}{0}$" in t.replace("\\$", "$") for t in drawn)


@pytest.fixture(scope="module")
def small_report() -> dict:
    from solver.sweep.summary import sweep_report

    ls = api.load_scenario(tiny_scenario())
    plan = plan_sweep(ls, api.catalog_for(ls), vary=["workload.global_batch_size=8,16"])
    return sweep_report(plan, run_points(plan))


def test_control_characters_in_an_unknown_key_do_not_reach_the_terminal(tmp_path):
    # The located error names the key path; a key holding an escape sequence used to be printed raw.
    sc = tiny_scenario()
    sc["constraints"]["\x1b]8;;http://evil.invalid\x07max_gpus"] = 5
    write_yaml(tmp_path / "sc.yaml", sc)
    proc = run_cli("validate", tmp_path / "sc.yaml")
    assert_clean_exit(proc, 2)
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert "constraints.\\x1b]8;;http://evil.invalid\\x07max_gpus: unknown key" in proc.stderr
