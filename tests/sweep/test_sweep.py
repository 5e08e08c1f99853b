"""Sweeps (issue 7, SPEC §9): point generation, execution back-ends, resume, reports and outputs.

The solver-backed tests use a Llama-3-8B-shaped model on narrow allow-lists, so each point solves in
well under a second; expected solver outputs come from independent `solve` runs, never from the
sweep code itself. Everything else (values, rounding, increments, cost per unit) is worked by hand.
"""
from __future__ import annotations

import copy
import json
import math
import struct

import pytest
from conftest import REPO
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import solver
from solver.api import catalog_for
from solver.cli import main
from solver.errors import UsageError
from solver.reports.sweep_excel import write_sweep_workbook
from solver.sweep import run as sweep_run
from solver.sweep.plan import plan_sweep
from solver.sweep.run import run_points, solve_point
from solver.sweep.summary import increments, point_summary, switch_points

BASE = {
    "name": "sweep-test",
    "workload": {
        "model": {"layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "attention_heads": 32,
                  "kv_heads": 8, "vocab_size": 128256, "seq_len": 8192},
        "global_batch_size": 256,
    },
    "target": {"step_time_s": 10.0},
    "constraints": {"platforms": ["hgx-h100", "dgx-b200"], "nics": ["cx7-ndr"], "oversubscription": [1]},
    "parallelism": {"tp": [1, 2], "cp": [1], "pp": [1, 2], "vp": [1], "microbatch_size": [1]},
}


def loaded(extra: dict | None = None):
    data = copy.deepcopy(BASE)
    data.update(extra or {})
    ls = solver.load_scenario(data)
    return ls, catalog_for(ls)


def without_timing(rows: list[dict]) -> list[dict]:
    """Rows minus wall-clock and solver timings (they differ between runs by nature)."""
    out = []
    for r in rows:
        r = {k: v for k, v in r.items() if k != "wall_s"}
        out.append(json.loads(json.dumps(r)))
    return out


# ------------------------------------------------------------------------------ point values


def test_growth_values_by_hand():
    ls, cat = loaded()
    plan = plan_sweep(ls, cat, ["workload.global_batch_size=x1.5^3"])
    # 256 · 1.5^k for k = 0..3: 256, 384, 576, 864 (all whole, so no rounding note)
    assert [t["values"]["workload.global_batch_size"] for t in plan.tasks] == [256, 384, 576, 864]
    assert plan.notes == []
    assert [t["scenario"]["workload"]["global_batch_size"] for t in plan.tasks] == [256, 384, 576, 864]
    assert all(t["scenario"]["top_k"] == 1 for t in plan.tasks)


def test_integer_field_is_rounded_half_up_and_said_so():
    ls, cat = loaded({"workload": {**BASE["workload"], "global_batch_size": 100}})
    plan = plan_sweep(ls, cat, ["workload.global_batch_size=x1.5^3"])
    # 100 · 1.5^k = 100, 150, 225, 337.5 → 337.5 rounds half up to 338
    assert [t["values"]["workload.global_batch_size"] for t in plan.tasks] == [100, 150, 225, 338]
    assert plan.notes and "rounded" in plan.notes[0]


def test_range_includes_stop_and_product_vs_zip():
    ls, cat = loaded()
    flags = ["target.step_time_s=8:10:1", "workload.global_batch_size=256,512,768"]
    product = plan_sweep(ls, cat, flags, "product")
    zipped = plan_sweep(ls, cat, flags, "zip")
    # range 8:10:1 → 8, 9, 10 (stop included); product 3 × 3 = 9 points, zip pairs them: 3 points
    assert len(product.tasks) == 9
    assert [(t["values"]["target.step_time_s"], t["values"]["workload.global_batch_size"]) for t in zipped.tasks] == \
        [(8.0, 256), (9.0, 512), (10.0, 768)]
    assert product.tasks[1]["values"] == {"target.step_time_s": 8.0, "workload.global_batch_size": 512}


def test_named_models_step_through_shapes():
    small = {**BASE["workload"]["model"], "layers": 16}
    ls, cat = loaded({"sweep": {"models": [{"name": "8B-16L", "model": small, "global_batch_size": 128},
                                           {"name": "8B", "model": BASE["workload"]["model"]}]}})
    plan = plan_sweep(ls, cat)
    assert [t["values"]["model"] for t in plan.tasks] == ["8B-16L", "8B"]
    assert plan.tasks[0]["scenario"]["workload"]["model"]["layers"] == 16
    assert plan.tasks[0]["scenario"]["workload"]["global_batch_size"] == 128
    assert plan.tasks[1]["scenario"]["workload"]["global_batch_size"] == 256  # the base value stays


@pytest.mark.parametrize("flag, words", [
    ("workload.global_batchsize=1,2", "no field 'global_batchsize'"),
    ("workload.precision=1,2", "Input should be 'bf16', 'fp8' or 'fp4'"),  # a word field: each value is checked (fp4: serving, issue 40)
    ("workload.precision=x2^3", "takes words: list them"),
    ("workload.flash_attention=1", "yes/no"),
    ("workload.global_batch_size=fast", "'fast' is not a number"),
    ("workload.global_batch_size=1:2:3:4", "--vary expects"),
    ("workload.global_batch_size=0,256", "not a valid scenario"),
    ("constraints.max_gpus=x2^3", "growth starts from the scenario's value"),
])
def test_bad_flags_are_usage_errors(flag, words):
    ls, cat = loaded()
    with pytest.raises(UsageError, match=words):
        plan_sweep(ls, cat, [flag])


# ----------------------------------------------------------------------------- hand-made rows


def _row(index, value, arch, gpus, nodes, switches, racks, capex):
    return {"index": index, "values": {"x": value}, "labels": {"x": str(value)}, "status": "optimal",
            "architecture": arch, "gpus": gpus, "nodes": nodes, "switches": switches, "racks": racks, "capex_usd": capex}


def test_switch_points_and_increments_by_hand():
    rows = [_row(0, 1, "A", 64, 8, 2, 3, 3_000_000.0),
            _row(1, 2, "A", 128, 16, 6, 5, 5_900_000.0),
            {"index": 2, "values": {"x": 3}, "labels": {"x": "3"}, "status": "infeasible", "reason": "too big"},
            _row(3, 4, "B", 144, 36, 9, 4, 7_000_000.0),
            _row(4, 5, "B", 288, 72, 18, 8, 13_500_000.0)]
    switches = switch_points(rows)
    # the solved sequence is A, A, B, B: one change, at index 3 (the infeasible point is skipped)
    assert [(s["index"], s["from"], s["to"]) for s in switches] == [(3, "A", "B")]
    inc = increments(rows)
    # only consecutive solved pairs with the same architecture: (0→1) and (3→4)
    assert [(i["from_index"], i["to_index"]) for i in inc] == [(0, 1), (3, 4)]
    # 128 − 64 = 64 GPUs, 16 − 8 = 8 nodes, 6 − 2 = 4 switches, 5 − 3 = 2 racks, 5.9M − 3.0M = 2.9M
    assert (inc[0]["added_gpus"], inc[0]["added_nodes"], inc[0]["added_switches"], inc[0]["added_racks"]) == (64, 8, 4, 2)
    assert inc[0]["capex_delta_usd"] == pytest.approx(2_900_000.0)
    # 288 − 144 = 144 GPUs; 13.5M − 7.0M = 6.5M
    assert inc[1]["added_gpus"] == 144 and inc[1]["capex_delta_usd"] == pytest.approx(6_500_000.0)


def test_cost_per_unit_of_work_by_hand():
    design = {"architecture": "A", "platform": "p", "gpus": 1000, "nodes": 125, "racks": 10, "step_time_s": 8.0,
              "target_step_time_s": 9.0, "mfu": 0.4, "capex_usd": 400e6, "tco_usd": 500e6,
              "flops_per_step": {"model": 4.0e19},
              "fabric": {"family": "fat-tree", "leaf_switches": 8, "spine_switches": 4, "core_switches": 0}}
    scenario = {"workload": {"global_batch_size": 2000, "model": {"seq_len": 8000}}, "tco": {"years": 5.0}}
    s = point_summary(design, scenario)
    # tokens per step = 2000 · 8000 = 16e6; throughput = 16e6 / 8 = 2e6 tokens/s
    assert s["tokens_per_step"] == 16_000_000
    # sustained model PFLOP/s = 4e19 / 8 / 1e15 = 5000 → $400e6 / 5000 = $80,000 per PFLOP/s
    assert s["capex_usd_per_pflop_s"] == pytest.approx(80_000.0)
    # tokens over 5 years = 2e6 · 5 · 365 · 86400 = 3.1536e14 = 3.1536e8 million → $500e6 / 3.1536e8 = $1.58549
    # (the year of the TCO's energy, 8,760 h: docs/model.md; 365.25 days before issue 47s)
    assert s["tco_usd_per_million_tokens"] == pytest.approx(1.58549, rel=1e-5)
    assert s["switches"] == 12  # 8 leaf + 4 spine + 0 core


# ----------------------------------------------------------------------------- solver-backed


def test_points_equal_individual_solves():
    ls, cat = loaded()
    plan = plan_sweep(ls, cat, ["workload.global_batch_size=256,384", "target.step_time_s=8,12"])
    rows = run_points(plan)
    assert len(rows) == 4
    for row in rows:
        variant = copy.deepcopy(BASE)  # built here, independently of the sweep code
        variant["workload"]["global_batch_size"] = row["values"]["workload.global_batch_size"]
        variant["target"]["step_time_s"] = row["values"]["target.step_time_s"]
        best = solver.solve(variant, cat, top_k=1).designs[0]
        assert row["architecture"] == best.label
        assert row["capex_usd"] == pytest.approx(best.cost.capex_usd, rel=1e-12)
        assert row["gpus"] == best.cost.gpus and row["nodes"] == best.cost.nodes
        assert row["step_time_s"] == pytest.approx(best.perf.step_time_s, rel=1e-12)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=st.sampled_from([128, 192, 256]), factor=st.sampled_from([2, 3]), steps=st.integers(1, 3))
def test_capex_non_decreasing_along_pure_growth(start, factor, steps):
    """More tokens per step at the same step time never costs less (no caps bind).

    Integer factors keep each batch a multiple of the previous one, so the previous point's
    layout family stays available; with e.g. 1.5× growth divisibility of B by dp·mbs could
    (in principle) break monotonicity, which is not a property of the model.
    """
    ls, cat = loaded({"workload": {**BASE["workload"], "global_batch_size": start}})
    plan = plan_sweep(ls, cat, [f"workload.global_batch_size=x{factor}^{steps}"])
    rows = run_points(plan)
    capex = [r["capex_usd"] for r in rows]
    assert all(r["status"] == "optimal" for r in rows)
    assert all(b >= a - 1e-6 for a, b in zip(capex, capex[1:])), capex


def test_process_pool_and_dask_agree():
    distributed = pytest.importorskip("distributed")
    import dask

    ls, cat = loaded()
    plan = plan_sweep(ls, cat, ["workload.global_batch_size=256,384,512,640"])
    pooled = run_points(plan, jobs=2)
    dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        host_port = cluster.scheduler_address.replace("tcp://", "")
        on_dask = run_points(plan, executor=f"dask://{host_port}")
    assert [r["index"] for r in pooled] == [0, 1, 2, 3]  # point order, whatever finished first
    assert without_timing(pooled) == without_timing(on_dask)


def test_resume_computes_only_the_missing_points(tmp_path, monkeypatch):
    ls, cat = loaded()
    plan = plan_sweep(ls, cat, ["workload.global_batch_size=256,384,512"])
    full = run_points(plan, results_path=tmp_path / "full.points.jsonl")
    # an interrupted run: the header, point 0 done, then a line torn mid-write
    # (point 0's line is copied from the full run's file: rows carry their checksum, issue 18)
    partial = tmp_path / "run.points.jsonl"
    header = {"sweep_hash": plan.sweep_hash, "points": 3}
    row_0 = (tmp_path / "full.points.jsonl").read_text(encoding="utf-8").splitlines()[1]
    assert json.loads(row_0)["index"] == 0
    partial.write_text(json.dumps(header) + "\n" + row_0 + "\n" + '{"index": 1, "sta', encoding="utf-8")
    solved = []
    real = solve_point
    monkeypatch.setattr(sweep_run, "solve_point", lambda task: solved.append(task["index"]) or real(task))
    resumed = run_points(plan, results_path=partial, resume=True)
    assert solved == [1, 2]
    assert without_timing(resumed) == without_timing(full)
    lines = partial.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 4 and json.loads(lines[0])["sweep_hash"] == plan.sweep_hash  # header + 3 points


def test_resume_refuses_a_results_file_from_another_sweep(tmp_path):
    ls, cat = loaded()
    plan = plan_sweep(ls, cat, ["workload.global_batch_size=256,384"])
    other = plan_sweep(ls, cat, ["workload.global_batch_size=256,512"])
    assert plan.sweep_hash != other.sweep_hash
    path = tmp_path / "r.points.jsonl"
    path.write_text(json.dumps({"sweep_hash": other.sweep_hash}) + "\n", encoding="utf-8")
    with pytest.raises(UsageError, match="different sweep"):
        run_points(plan, results_path=path, resume=True)


def test_infeasible_point_is_recorded_and_others_go_on():
    ls, cat = loaded({"constraints": {**BASE["constraints"], "max_gpus": 40}})
    # 256 sequences needed 16 B200s above; 2048 needs 8× the work (≈ 128 GPUs) but max_gpus is 40
    plan = plan_sweep(ls, cat, ["workload.global_batch_size=256,2048"])
    rows = run_points(plan)
    assert rows[0]["status"] == "optimal"
    assert rows[1]["status"] == "infeasible" and rows[1]["reason"]


# --------------------------------------------------------------------------------------- CLI


SCENARIO_YAML = """\
name: cli-sweep
workload:
  model: {layers: 32, hidden_size: 4096, ffn_hidden_size: 14336, attention_heads: 32, kv_heads: 8, vocab_size: 128256, seq_len: 8192}
  global_batch_size: 256
target: {step_time_s: 10.0}
constraints: {platforms: [hgx-h100, dgx-b200], nics: [cx7-ndr], oversubscription: [1]}
parallelism: {tp: [1, 2], cp: [1], pp: [1, 2], vp: [1], microbatch_size: [1]}
sweep:
  parameters:
    - path: workload.global_batch_size
      growth: {factor: 2, steps: 2}
"""


def test_invalid_sweep_path_exits_2_with_file_and_line(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text(SCENARIO_YAML.replace("path: workload.global_batch_size", "path: workload.batch"), encoding="utf-8")
    code = main(["sweep", str(path), "--json", str(tmp_path / "o.json")])
    err = capsys.readouterr().err
    assert code == 2
    # line 10 of SCENARIO_YAML is "    - path: workload.batch"; the key `path` starts at column 7
    assert f"{path}:10:7: sweep.parameters[0].path: no field 'batch' in workload" in err
    assert not (tmp_path / "o.json").exists()


def test_validate_checks_the_sweep_block(tmp_path, capsys):
    # `fabricplan validate` reports the same located error as `sweep`, without solving anything
    path = tmp_path / "bad.yaml"
    path.write_text(SCENARIO_YAML.replace("path: workload.global_batch_size", "path: workload.batch"), encoding="utf-8")
    assert main(["validate", str(path)]) == 2
    assert f"{path}:10:7: sweep.parameters[0].path: no field 'batch' in workload" in capsys.readouterr().err
    good = tmp_path / "good.yaml"
    good.write_text(SCENARIO_YAML, encoding="utf-8")
    assert main(["validate", str(good)]) == 0
    # growth {factor: 2, steps: 2} gives 3 points (the base value and two doublings)
    assert "3-point sweep" in capsys.readouterr().out


def test_bad_vary_flag_exits_2(tmp_path, capsys):
    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO_YAML, encoding="utf-8")
    assert main(["sweep", str(path), "--vary", "workload.global_batch_size", "--json", str(tmp_path / "o.json")]) == 2
    assert "--vary expects PATH=" in capsys.readouterr().err


def test_cli_writes_json_workbook_and_png(tmp_path, capsys):
    from openpyxl import load_workbook

    path = tmp_path / "s.yaml"
    path.write_text(SCENARIO_YAML, encoding="utf-8")
    out = tmp_path / "out"
    code = main(["sweep", str(path), "--json", str(out / "s.json"), "--xlsx", str(out / "s.xlsx"),
                 "--plot", str(out / "s.png")])
    assert code == 0
    report = json.loads((out / "s.json").read_text(encoding="utf-8"))
    # growth 2× for 2 steps from 256: 256, 512, 1024
    assert [p["values"]["workload.global_batch_size"] for p in report["points"]] == [256, 512, 1024]
    assert report["schema"] == "fabricplan.sweep/1"
    assert (out / "s.points.jsonl").exists()
    png = (out / "s.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])  # IHDR: 10 × 5.5 in at 110 dpi
    assert (width, height) == (1100, 605)
    wb = load_workbook(out / "s.xlsx")
    assert wb.sheetnames == ["Sweep", "Charts", "BOM by point", "Increments", "Assumptions"]
    ws = wb["Sweep"]
    # a growth sweep is laid out by year k (value = 256 · 2^k): header row 4, year 2 in row 7
    assert [ws["A4"].value, ws["B4"].value] == ["year", "global_batch_size"]
    assert [ws["A7"].value, ws["B7"].value] == [2, 1024]
    assert len(wb["Charts"]._charts) == 2
    assert "cli-sweep: sweep of 3 point(s)" in capsys.readouterr().out  # the table's title, on stdout


def test_workbook_marks_switch_points_and_neutralises_formulas(tmp_path):
    from openpyxl import load_workbook

    rows = [_row(0, 1, "A", 64, 8, 2, 3, 3e6), _row(1, 2, "=HYPERLINK(1)", 128, 16, 6, 5, 6e6)]
    for r in rows:
        r.update(step_time_s=9.0, mfu=0.4, tco_usd=r["capex_usd"] * 1.2, capex_usd_per_pflop_s=1.0,
                 tco_usd_per_million_tokens=1.0, design={"fabric": {"links": {"node_leaf": 10}},
                                                         "bom": [{"category": "compute", "extended_usd": r["capex_usd"]}]})
    report = {"scenario": "s", "axes": [{"name": "x", "kind": "float"}], "points": rows,
              "switch_points": switch_points(rows)}
    write_sweep_workbook(report, tmp_path / "w.xlsx")
    wb = load_workbook(tmp_path / "w.xlsx")
    ws = wb["Sweep"]
    headers = [c.value for c in ws[4]]
    arch = ws.cell(row=6, column=headers.index("architecture (or why none)") + 1)
    assert arch.value == "=HYPERLINK(1)" and arch.data_type == "s"  # stored as text, not as a formula
    # the change from A to =HYPERLINK(1) at x = 2 is listed under the table, as text
    changes = [r for r in ws.iter_rows(values_only=True) if r[0] == 2 and isinstance(r[1], str) and "→" in r[1]]
    assert changes == [(2, "A → =HYPERLINK(1)") + (None,) * (len(headers) - 2)]
    # and the Charts data marks capex at that point only (x = 1: no change)
    charts = load_workbook(tmp_path / "w.xlsx", data_only=True)["Charts"]
    marks = {r[0]: r[4] for r in charts.iter_rows(min_row=23, values_only=True) if r[0] is not None}
    assert marks == {1: None, 2: 6e6}


def test_shipped_growth_sweep_plans_six_points():
    root = REPO
    ls = solver.load_scenario(root / "scenarios" / "growth-sweep.yaml")
    plan = plan_sweep(ls, catalog_for(ls))
    # 2048 · 1.5^k, k = 0..5: 2048, 3072, 4608, 6912, 10368, 15552 sequences of 8192 tokens
    assert [t["values"]["workload.global_batch_size"] for t in plan.tasks] == [2048, 3072, 4608, 6912, 10368, 15552]
    assert math.isclose(15552 / 2048, 1.5 ** 5)
