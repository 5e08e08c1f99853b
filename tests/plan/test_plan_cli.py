"""`fabricplan plan` end to end (issue 16): exit codes, located input errors with nothing written, the
JSON, the PNG, and the Plan workbook whose live formulas LibreOffice recalculates to the JSON's totals.

The toy catalog and plan are worked out in tests/plan/test_plan.py: cheap-box buys 32 nodes and the
$1,000 switch ($161,000), then 32 more nodes ($160,000); total $321,000 (no discount).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest
import yaml
from conftest import DATA

from solver.reports.plan_excel import ROW, plan_cells

needs_soffice = pytest.mark.skipif(shutil.which("soffice") is None and not os.environ.get("CI"),
                                   reason="LibreOffice (soffice) not installed; CI always runs these")

TOY = dict(name="toy-plan", workload=dict(model=dict(layers=1, hidden_size=256, ffn_hidden_size=256, ffn_type="gelu",
                                                     attention_heads=1, vocab_size=2048, seq_len=256),
                                          global_batch_size=64, activation_recompute="none"),
           target=dict(step_time_s=0.004), overlap=dict(tp=1, cp=1, pp=1, dp=1),
           parallelism=dict(tp=1, cp=1, pp=1, vp=1, microbatch_size=1),
           plan=dict(periods=[{"label": "year one", "set": {"target.step_time_s": 0.004}},
                              {"label": "year two", "set": {"target.step_time_s": 0.002}}]))


def _write(tmp_path: Path, doc: dict, name: str = "plan.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver", *args, "--no-default-catalog", "--catalog", str(DATA / "toy-catalog.yaml")],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300)


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    work = tmp_path_factory.mktemp("plan-cli")
    path = _write(work, TOY)
    run = _cli(work, "plan", str(path), "--json", "p.json", "--xlsx", "p.xlsx", "--plot", "p.png")
    return work, run


def test_plan_cli_writes_json_workbook_and_png(planned):
    work, run = planned
    assert run.returncode == 0, run.stderr
    assert "year two" in run.stdout and "discounted total $321,000" in run.stdout
    report = json.loads((work / "p.json").read_text())
    assert report["schema"] == "fabricplan.plan/1"
    assert [round(p["capex_usd"]) for p in report["periods"]] == [161_000, 160_000]
    assert report["totals"]["discounted_usd"] == pytest.approx(321_000)
    assert (work / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ws = openpyxl.load_workbook(work / "p.xlsx")["Plan"]
    assert str(ws.cell(row=ROW["capex"], column=2).value).startswith("=")
    assert str(ws[plan_cells()["discounted_total"]].value).startswith("=SUM(")


def _recalc(paths: list[Path], profile: Path) -> list[openpyxl.Workbook]:
    """The workbooks recalculated by LibreOffice, all in one start (soffice converts every file it is given)."""
    out = paths[0].parent / "recalc"
    subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--calc", "--convert-to", "xlsx",
                    "--outdir", str(out), *map(str, paths)], check=True, capture_output=True, timeout=180)
    for path in paths:
        assert (out / path.name).exists(), "soffice exits 0 even when it could not load the file"
    return [openpyxl.load_workbook(out / path.name, data_only=True) for path in paths]


@needs_soffice
@pytest.mark.libreoffice
def test_plan_workbook_recalculates_to_the_json_and_follows_edits(planned):
    """LibreOffice's totals equal the JSON's; halving period two's compute price factor in the sheet
    halves its 32 · $5,000 purchase: 161,000 + 80,000 = $241,000."""
    work, run = planned
    assert run.returncode == 0, run.stderr
    report = json.loads((work / "p.json").read_text())
    book = openpyxl.load_workbook(work / "p.xlsx")
    book["Plan"].cell(row=ROW["factor:compute"], column=3).value = 0.5
    book.save(work / "edited.xlsx")
    written, edited_book = _recalc([work / "p.xlsx", work / "edited.xlsx"], work / "lo-profile")
    ws = written["Plan"]
    for p, period in enumerate(report["periods"]):
        assert ws.cell(row=ROW["capex"], column=2 + p).value == pytest.approx(period["capex_usd"], abs=0.01)
        assert ws.cell(row=ROW["discounted"], column=2 + p).value == pytest.approx(period["discounted_usd"], abs=0.01)
    assert ws[plan_cells()["discounted_total"]].value == pytest.approx(report["totals"]["discounted_usd"], abs=0.01)
    edited = edited_book["Plan"]  # period two's compute price factor halved
    assert edited[plan_cells()["discounted_total"]].value == pytest.approx(241_000, abs=0.01)


def test_validate_counts_the_plan_periods(tmp_path):
    run = _cli(tmp_path, "validate", str(_write(tmp_path, TOY)))
    assert run.returncode == 0, run.stderr
    assert "valid scenario and a 2-period plan" in run.stdout


def _fails(tmp_path: Path, doc: dict) -> str:
    path = _write(tmp_path, doc)
    run = _cli(tmp_path, "plan", str(path), "--json", "p.json", "--xlsx", "p.xlsx", "--plot", "p.png")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "Traceback" not in run.stderr
    assert not any((tmp_path / f).exists() for f in ("p.json", "p.xlsx", "p.png")), "nothing is written"
    return run.stderr.replace(str(path), "plan.yaml")


def test_bad_growth_path_is_located(tmp_path):
    doc = {**TOY, "plan": {"periods": 3, "growth": [{"path": "workload.global_batch_sise", "factor": 1.5}]}}
    err = _fails(tmp_path, doc)
    assert "plan.yaml:" in err and "plan.growth[0].path: no field 'global_batch_sise' in workload" in err


def test_period_that_is_not_a_valid_scenario_is_located(tmp_path):
    doc = {**TOY, "plan": {"periods": [{"set": {"target.step_time_s": 0.004}},
                                       {"set": {"workload.global_batch_size": 0}}]}}
    err = _fails(tmp_path, doc)
    assert "plan.periods[1]: period 1 (workload.global_batch_size = 0) is not a valid scenario: " \
           "workload.global_batch_size: Input should be greater than or equal to 1" in err


def test_unknown_price_category(tmp_path):
    err = _fails(tmp_path, {**TOY, "plan": {"periods": [{"price_factors": {"gpus": 0.8}}]}})
    assert "plan.periods[0].price_factors.gpus: Input should be 'compute', 'nic', 'switch', 'link', 'rack' or 'extra'" in err


def test_non_whole_value_for_an_integer_field(tmp_path):
    err = _fails(tmp_path, {**TOY, "plan": {"periods": [{"set": {"workload.global_batch_size": 64.5}}]}})
    assert ("plan.periods[0].set.workload.global_batch_size: workload.global_batch_size is an integer field; "
            "64.5 is not whole") in err


def test_scenario_without_a_plan_block(tmp_path):
    doc = {k: v for k, v in TOY.items() if k != "plan"}
    err = _fails(tmp_path, doc)
    assert "plan.yaml:1:1: plan: the scenario has no `plan:` block: add one" in err


def test_purchase_year_after_the_plan_start(tmp_path):
    doc = {**TOY, "inventory": {"cheap-box": {"count": 4, "purchase_year": 2030}},
           "plan": {**TOY["plan"], "start_year": 2026}}
    err = _fails(tmp_path, doc)
    assert "inventory.cheap-box.purchase_year: bought after the plan starts (plan.start_year = 2026)" in err


def test_a_period_without_any_design_exits_1_with_the_reason(tmp_path):
    """Period two caps GPUs at 4: even fast-box needs 16 at 2 ms."""
    doc = {**TOY, "plan": {"periods": [{"set": {"target.step_time_s": 0.004}},
                                       {"label": "tight", "set": {"target.step_time_s": 0.002,
                                                                  "constraints.max_gpus": 4}}]}}
    run = _cli(tmp_path, "plan", str(_write(tmp_path, doc)), "--json", "p.json", "--no-xlsx", "--plot", "p.png")
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads((tmp_path / "p.json").read_text())
    assert report["status"] == "infeasible"
    assert report["explanation"].startswith("period tight: the target step time of 0.002 s cannot be met")
