"""Retire and resell (issue 43b, SPEC §6.3; solver/plan/resale.py): with plan.resale_fraction r each cluster's
hardware is sold at the end of the last period it runs, at r × catalog price × that period's price factor.

HiGHS solves the real plan MILP; the ledger prices the same plan and the exhaustive enumeration of plans
(priced by the ledger) agrees to the cent. Toy catalog of tests/plan/test_plan.py: cheap-box $5,000 (32 nodes at
4 ms, 64 at 2 ms), slow-box $10,000 (32, 64), fast-box $30,000 (8, 16), one $1,000 switch, NICs and cables free.
"""
from __future__ import annotations

import copy

import pytest
from conftest import DATA
from test_plan import TOY, TWO_PERIODS

import solver
from solver.plan.oracle import enumerate_plans
from solver.plan.periods import plan_periods
from solver.plan.run import solve_plan


def _plan(catalog, resale: float | None, architectures: str = "keep_one", rate: float = 0.0):
    plan = {"periods": copy.deepcopy(TWO_PERIODS), "architectures": architectures, "discount_rate": rate,
            "start_year": 2026}
    if resale is not None:
        plan["resale_fraction"] = resale
    spec = plan_periods(solver.load_scenario({**copy.deepcopy(TOY), "plan": plan}), catalog)
    return spec, solve_plan(spec, catalog)


def _agrees(spec, catalog, out, usd: float) -> list:
    assert out.status == "optimal"
    assert out.ledger.objective_usd == pytest.approx(usd, abs=0.01)
    plans = enumerate_plans(spec, catalog)
    assert plans[0][0] == pytest.approx(round(usd, 2), abs=0.01)
    return plans


def test_keep_one_sells_everything_at_the_end(toy_catalog):
    """r = 0.5: cheap-box, 32 bought in 2026 and 32 in 2027 plus the switch ($321,000), all sold at the end of
    2027 for 0.5 · 321,000 = $160,500: net $160,500 (fast-box 0.5 · 481,000, slow-box 0.5 · 641,000 cost more)."""
    spec, out = _plan(toy_catalog, 0.5)
    assert [d.architecture.platform for d in out.designs] == ["cheap-box", "cheap-box"]
    assert out.ledger.capex_usd == pytest.approx(321_000)
    assert [p.resale_usd for p in out.ledger.periods] == pytest.approx([0, 160_500])
    _agrees(spec, toy_catalog, out, 160_500)
    # without resale nothing is sold (the shipped behaviour)
    spec, out = _plan(toy_catalog, None)
    assert out.ledger.resale_usd == 0 and out.ledger.objective_usd == pytest.approx(321_000)


def test_resale_makes_the_move_pay(tmp_path):
    """cheap-box orderable from 2027; allow_second, 10 %/year, r = 0.9.
    Keep fast-box: 8 + switch in 2026 ($241,000), 8 more in 2027 (240,000 / 1.1), 16 and the switch sold at the
    end of 2027 (0.9 · 481,000 / 1.1): 241,000 + 218,181.82 − 393,545.45 = $65,636.36.
    Move: fast-box for 2026, sold at its end (0.9 · 241,000), then cheap-box 64 + switch in 2027, sold at its end:
    24,100 + 32,100 / 1.1 = $53,281.82, the optimum (slow-box first: 32,100 + 29,181.82 = $61,281.82).
    Without resale the plan keeps fast-box: 241,000 + 240,000 / 1.1 = $459,181.82."""
    layer = tmp_path / "lc.yaml"
    layer.write_text("name: lc\nlifecycle:\n  - {id: cheap-box, available_from: '2027', source: test}\n", encoding="utf-8")
    cat = solver.load_catalog([DATA / "toy-catalog.yaml", layer])
    spec, out = _plan(cat, 0.9, "allow_second", 0.10)
    assert [d.architecture.platform for d in out.designs] == ["fast-box", "cheap-box"]
    assert [p.resale_usd for p in out.ledger.periods] == pytest.approx([216_900, 288_900])
    plans = _agrees(spec, cat, out, 24_100 + 32_100 / 1.1)
    keep_fast = [t for t in plans if [d.architecture.platform for d in t[1]] == ["fast-box", "fast-box"]]
    assert min(t[0] for t in keep_fast) == pytest.approx(241_000 + 240_000 / 1.1 - 0.9 * 481_000 / 1.1, abs=0.01)
    spec, out = _plan(cat, None, "allow_second", 0.10)
    assert [d.architecture.platform for d in out.designs] == ["fast-box", "fast-box"]
    _agrees(spec, cat, out, 241_000 + 240_000 / 1.1)


def test_resale_fraction_is_checked():
    doc = {**copy.deepcopy(TOY), "plan": {"periods": 2, "resale_fraction": 1.2}}
    with pytest.raises(solver.errors.InputError, match="resale_fraction"):
        solver.load_scenario(doc)


def test_report_shows_generations_and_resale(tmp_path, toy_catalog):
    """JSON: per period the platforms it can order beside what it runs, and the resale; totals net of resale.
    Workbook: a Generations sheet with the same, its discounted total net of resale = $160,500 (by hand above)."""
    from openpyxl import load_workbook

    from solver.plan.run import run_plan
    from solver.reports.plan_excel import write_plan_workbook

    doc = {**copy.deepcopy(TOY), "plan": {"periods": copy.deepcopy(TWO_PERIODS), "start_year": 2026,
                                          "resale_fraction": 0.5}}
    report = run_plan(solver.load_scenario(doc), toy_catalog, compare=False).to_dict()
    assert [p["orderable_platforms"] for p in report["periods"]] == [["slow-box", "cheap-box", "fast-box"]] * 2
    assert [p["platform"] for p in report["periods"]] == ["cheap-box", "cheap-box"]
    assert [p["resale_usd"] for p in report["periods"]] == pytest.approx([0, 160_500])
    tot = report["totals"]
    assert (tot["resale_usd"], tot["discounted_gross_usd"], tot["discounted_usd"]) == pytest.approx((160_500, 321_000, 160_500))
    path = write_plan_workbook(report, tmp_path / "plan.xlsx")
    ws = load_workbook(path)["Generations"]
    cells = {ws.cell(r, 1).value: [ws.cell(r, c).value for c in (2, 3)] for r in range(1, ws.max_row + 1)}
    assert cells["Platforms it can order"] == ["slow-box, cheap-box, fast-box"] * 2
    assert cells["Resold at the end of the period (USD)"] == [0, 160_500]
    net = load_workbook(path, data_only=True)["Generations"]
    row = next(r for r in range(1, net.max_row + 1) if net.cell(r, 1).value == "Discounted total, net of resale (USD)")
    assert net.cell(row, 2).value == pytest.approx(160_500)
