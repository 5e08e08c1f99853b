"""Issue 28 item 7, the small things: a facility power given in MW is warned, margins of a design that
misses its target (or has none) are said in words, counts print without ".0", "1 rail" is singular,
tables at 80 columns never cut a number (sweep and plan; see also tests/test_rentals.py for solve).
"""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import yaml
from test_planner_cli import run_in_pty

import solver
from solver import api
from solver.inputs.plausibility import plausibility_warnings
from solver.inputs.yaml_safe import read_yaml
from solver.reports.terminal import margins_sentence

DATA = Path(__file__).resolve().parent / "data"

ROOT = Path(__file__).resolve().parent.parent
BASE = yaml.safe_load((ROOT / "scenarios" / "llama3-70b.yaml").read_text(encoding="utf-8"))
PIN = {"platform": "hgx-h100", "nic": "cx7-ndr", "rails_per_node": 8, "switch": "qm9700", "tp": 8, "cp": 1, "pp": 4,
       "vp": 1, "dp": 64, "microbatch_size": 1}


def _scenario(tmp_path: Path, **changes) -> Path:
    data = copy.deepcopy(BASE)
    data.update(changes)
    path = tmp_path / "sc.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_facility_power_in_mw_is_warned_at_its_line(tmp_path):
    path = _scenario(tmp_path, constraints={"max_gpus": 16384, "facility_power_kw": 20})
    warnings = plausibility_warnings(solver.load_scenario(path))
    # 20 kW / 1.6 kW per GPU = 12.5: "about 12 GPUs"
    hits = [w for w in warnings if "facility_power_kw" in w]
    assert len(hits) == 1 and "about 12 GPUs" in hits[0] and "20 MW as 20000" in hits[0]
    line = next(i for i, text in enumerate(path.read_text().splitlines(), start=1) if "facility_power_kw" in text)
    assert hits[0].startswith(f"{path}:{line}:")
    # a small lab of 64 GPUs may well run on 20 kW... of 64 × 1.6 = 102 kW: not warned, it may be a partial room
    small = _scenario(tmp_path, constraints={"max_gpus": 64, "facility_power_kw": 20})
    assert not [w for w in plausibility_warnings(solver.load_scenario(small)) if "facility_power_kw" in w]


def test_margins_of_a_missed_target_are_words_not_nan(tmp_path):
    path = _scenario(tmp_path, target={"step_time_s": 1.0}, pin=PIN)
    ls = solver.load_scenario(path)
    design = solver.evaluate(ls, api.catalog_for(ls))
    text = margins_sentence(design)
    # step ≈ 5.9 s against 1 s: slack (1 − 5.9) / 1 = −490 %; "misses the target by" the positive figure
    assert "nan" not in text and "1000" not in text
    assert text.startswith("margins: none: the step time misses the target by")
    assert f"{-design.margins['slack_fraction']:.1%}" in text
    gpus = next(b for b in design.binding if b["name"] == "memory_fit")
    assert ".0 of" not in json.dumps(design.binding)
    assert gpus["text"].startswith("memory per GPU")


def test_counts_without_decimals_in_binding_text(tmp_path):
    # without the hot spares bought by default (they would add 6 spare nodes: this test is about how counts print)
    path = _scenario(tmp_path, pin=PIN, constraints={"max_gpus": 16384, "max_racks": 1000},
                     reliability={"spares": False})
    ls = solver.load_scenario(path)
    design = solver.evaluate(ls, api.catalog_for(ls))
    texts = {b["name"]: b["text"] for b in design.binding}
    # tp 8 · pp 4 · dp 64 = 2,048 GPUs = 256 nodes · 8 of 16,384: 12.5 % prints as 12 % (half to even)
    assert texts["max_gpus"] == "GPUs 2,048 of 16,384 (12%)"
    assert ".0 of" not in texts["max_racks"] and texts["max_racks"].endswith("of 1,000 (" + texts["max_racks"].split("(")[1])


def test_one_rail_is_singular(tmp_path):
    from solver.reports.terminal import differs_from_first

    # nic_configurations: any: 1 rail per H100 node is no reference NIC configuration, which the default design
    # space alone holds since issue 24 (this test is about how "1 rail" prints)
    path = _scenario(tmp_path, constraints={"max_gpus": 16384, "platforms": ["hgx-h100"], "rails_per_node": [1, 8],
                                            "nic_configurations": "any"})
    ls = solver.load_scenario(path)
    result = solver.solve(ls, api.catalog_for(ls), top_k=5)
    texts = [differs_from_first(d, result.designs[0]) for d in result.designs[1:]]
    # the fourth design keeps #1's NIC on 1 rail instead of 8: "1 rail; layout …"
    assert any(t.startswith("1 rail;") for t in texts) and not any("1 rails" in t for t in texts)


def test_sweep_and_plan_tables_at_80_columns_show_money_whole(tmp_path):
    screen = run_in_pty(["sweep", ROOT / "scenarios" / "llama3-70b.yaml", "--vary", "workload.global_batch_size=512,1024",
                         "--json", "s.json", "--no-xlsx", "--no-plot"], 80, tmp_path)
    report = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    for point in report["points"]:
        assert f"${point['capex_usd']:,.0f}" in screen  # the capex column is never dropped nor cut
    table = [line for line in screen.splitlines() if line[:1] in "│┃┏┡└"]
    assert all(len(line) <= 80 for line in table)


def _fastest(budget: float, batch: int | None = None, **changes):
    # the solver's reader: `train_tokens: 15.0e12` is a number, as on the command line
    data = read_yaml(ROOT / "scenarios" / "budget-60m-fastest.yaml").data
    data["constraints"]["budget_usd"] = budget
    if batch is not None:
        data["workload"]["global_batch_size"] = batch
    data.update(changes)
    ls = solver.load_scenario(data)
    cat = api.catalog_for(ls)
    return ls, cat, solver.solve(ls, cat, top_k=1)


def test_what_40m_buys_says_why_it_spends_less():
    from solver.optimize.budget import budget_note

    ls, cat, result = _fastest(40e6)
    d = result.designs[0]
    note = budget_note(ls.scenario, cat, result)
    assert note is not None and d.cost.capex_usd < 0.9 * 40e6
    # the 1,024-sequence batch at microbatch 1: dp must divide 1,024, so after dp the next size is 2·dp
    lay = d.layout
    assert lay.microbatch_size == 1 and f"after dp = {lay.dp:,} is {2 * lay.dp:,}" in note
    found = re.search(r"costs \$([\d,]+)", note)
    assert found is not None and float(found.group(1).replace(",", "")) > 40e6  # why the rest is not spent


def test_when_the_batch_is_the_limit_the_note_says_so():
    from solver.optimize.budget import budget_note

    # 64 sequences at microbatch 1, tp 8, no pipeline: at most dp = 64 (512 GPUs), whatever the budget
    ls, cat, result = _fastest(1e9, batch=64, parallelism={"tp": [8], "cp": [1], "pp": [1], "vp": [1],
                                                           "microbatch_size": [1]})
    assert result.designs[0].layout.dp == 64
    note = budget_note(ls.scenario, cat, result)
    assert note is not None and "the batch is the limit" in note and "dp = 64" in note


def test_an_impossible_target_limited_by_the_batch_does_not_suggest_more_gpus():
    data = copy.deepcopy(BASE)
    data["workload"]["global_batch_size"] = 64
    data["target"] = {"step_time_s": 0.5}
    data["parallelism"] = {"tp": [8], "cp": [1], "pp": [1], "vp": 1, "microbatch_size": [1]}
    data["constraints"] = {"platforms": ["hgx-h100"]}
    ls = solver.load_scenario(data)
    result = solver.solve(ls, api.catalog_for(ls), top_k=1)
    # tp 8 and no pipeline: 64 sequences at microbatch 1 give at most dp = 64, one microbatch per replica
    assert result.status == "infeasible"
    assert "the batch is the limit" in result.explanation and "dp = 64" in result.explanation
    assert "allow more GPUs" not in result.explanation


def test_the_expansion_example_comment_quotes_what_the_run_gives():
    path = ROOT / "scenarios" / "expand-owned-h100.yaml"
    text = path.read_text(encoding="utf-8")
    found = re.search(r"#   capex\s+= \$([\d,]+)", text)
    assert found is not None
    ls = solver.load_scenario(path)
    best = solver.solve(ls, api.catalog_for(ls), top_k=1).designs[0]
    assert round(best.cost.capex_usd) == int(found.group(1).replace(",", ""))
    assert f"{best.perf.step_time_s:.2f} s" in text and f"{best.cost.gpus:,} GPUs" in text
    # the lines of the comment add up to the capex (hot spares and site lines since issues 24-25; issue 42: spares
    # not cabled, twin-port node optics, UFM, servers, node cables, management racks):
    # 168,000,000 + 3,750,000 + 9,200,000 + 4,300,800 + 4,997,120 + 1,785,000 + 5,679,270 + 1,145,000
    # + 22,900,000 = 221,757,190; and each line is its count × price
    assert 3_584 * 100 + 2 * 1_792 * 1_100 == 4_300_800 and 4_096 * 120 + 2 * 2_048 * 1_100 == 4_997_120
    assert 56 * 50_000 + 28 * 30_000 + 28 * 10_000 + 14 * 15_000 + 4 * 40_000 + 5 * 20_000 + 1_832 * 700 \
        + 458 * 15 == 5_679_270 and 119 * 15_000 == 1_785_000 and 184 * 50_000 == 9_200_000
    assert 168_000_000 + 3_750_000 + 9_200_000 + 4_300_800 + 4_997_120 + 1_785_000 + 5_679_270 + 1_145_000 \
        + 22_900_000 == 221_757_190


def test_the_sweep_plot_never_joins_two_models_points():
    from solver.reports.plot import plot_series

    report = {"axes": [{"name": "model", "kind": "model"}, {"name": "workload.global_batch_size", "kind": "list"}]}
    points = [{"labels": {"model": m, "workload.global_batch_size": b}} for m in ("70b", "405b") for b in (1024, 2048)]
    solved = list(enumerate(points))
    series = plot_series(report, solved)
    # two models × two batch sizes: two lines of two points each, each line one model's
    assert [name for name, _ in series] == ["70b", "405b"]
    assert all(len(group) == 2 and len({p["labels"]["model"] for _, p in group}) == 1 for _, group in series)
    # one axis of models alone: one line through the models (nothing to split)
    assert len(plot_series({"axes": report["axes"][:1]}, solved)) == 1


def _table_lines(screen: str) -> list[str]:
    return [line for line in screen.splitlines() if line[:1] in "│┃┏┡└┗┣"]


def test_compare_evaluate_and_plan_at_80_and_120_columns(tmp_path):
    evaluate = _scenario(tmp_path, pin=PIN, target={"step_time_s": 8.0})  # the pinned layout runs 5.9 s
    for columns in (80, 120):
        screen = run_in_pty(["compare", ROOT / "scenarios" / "rent-or-buy.yaml", ROOT / "scenarios" / "llama3-70b.yaml",
                             ROOT / "scenarios" / "expand-owned-h100.yaml", "--json", "c.json"], columns, tmp_path)
        data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
        for s in data["scenarios"]:
            assert f"${s['designs'][0]['capex_usd']:,.0f}" in screen  # whole, on one line
        assert all(len(line) <= columns for line in _table_lines(screen))
        screen = run_in_pty(["evaluate", evaluate, "--json", "e.json", "--no-xlsx"], columns, tmp_path)
        design = json.loads((tmp_path / "e.json").read_text(encoding="utf-8"))["designs"][0]
        assert f"{design['capex_usd']:,.2f}" in screen  # the BOM total
        assert all(len(line) <= columns for line in _table_lines(screen))
        screen = run_in_pty(["plan", DATA / "plan-idle-owned.yaml", "--json", "p.json", "--no-xlsx", "--no-plot",
                             "--no-compare"], columns, tmp_path)
        plan = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
        for period in plan["periods"]:
            assert f"${period['capex_usd']:,.0f}" in screen and f"{period['label']}: idle 64 × dgx-h100" in screen
        assert all(len(line) <= columns for line in _table_lines(screen))
        if columns == 80:
            assert "not shown" in screen  # the plan's caption names what 80 columns leave out


def test_catalog_tables_at_80_and_120_columns_are_whole(tmp_path):
    cat = solver.load_catalog()
    for columns in (80, 120):
        screen = run_in_pty(["catalog"], columns, tmp_path)
        tops = [line for line in screen.splitlines() if line.startswith("┏")]
        # GPUs, platforms, NICs and switches, links, racks, NIC configurations and site lines (issue 24), rentals:
        # 8 tables, none cropped
        assert len(tops) == 8 and all(line.rstrip().endswith("┓") for line in tops)
        assert "…" not in screen
        for plat in cat.platforms:  # every platform's price, whole
            assert f"${plat.unit_price_usd:,.0f}" in screen
        for rental in cat.rentals:
            assert f"{rental.usd_per_gpu_hour:,.2f}" in screen
