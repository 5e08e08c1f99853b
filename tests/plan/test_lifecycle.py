"""Parts that age (issue 43, SPEC §6.3): the catalog's lifecycle windows and price trends in a plan.

HiGHS solves the real plan MILP; every answer equals the exhaustive enumeration of plans
(`solver.plan.oracle`, priced by the ledger) to the cent, and the hand-worked numbers below use the toy
catalog of tests/plan/test_plan.py (cheap-box $5,000, 32 nodes at 4 ms and 64 at 2 ms; one $1,000
switch; slow-box $10,000; fast-box $30,000, 8 then 16 nodes).
"""
from __future__ import annotations

import copy

import pytest
from conftest import DATA
from test_plan import TOY, TWO_PERIODS

import solver
from solver.errors import InputError
from solver.inputs.lifecycle_schema import year_of
from solver.plan.lifecycle import orderable
from solver.plan.oracle import enumerate_plans
from solver.plan.periods import plan_periods
from solver.plan.run import solve_plan


def _catalog(tmp_path, entries: str):
    layer = tmp_path / "lifecycle.yaml"
    layer.write_text("name: lc\nlifecycle:\n" + entries, encoding="utf-8")
    return solver.load_catalog([DATA / "toy-catalog.yaml", layer])


def _plan(catalog, architectures: str = "keep_one", rate: float = 0.0, start_year: int | None = 2026):
    plan = {"periods": copy.deepcopy(TWO_PERIODS), "architectures": architectures, "discount_rate": rate}
    if start_year is not None:
        plan["start_year"] = start_year
    spec = plan_periods(solver.load_scenario({**copy.deepcopy(TOY), "plan": plan}), catalog)
    out = solve_plan(spec, catalog)
    return spec, out


def _bought(out, key: str) -> list[int]:
    return [sum(x.quantity for x in ps.purchases if x.key == key) for ps in out.ledger.periods]


def _equals_enumeration(spec, catalog, out) -> None:
    plans = enumerate_plans(spec, catalog)
    assert out.status == "optimal" and plans
    assert round(out.ledger.objective_usd, 2) == plans[0][0]


def test_window_arithmetic():
    assert year_of("2027") == 2027.0 and year_of("2027-07") == pytest.approx(2027.5)
    entry = solver.inputs.lifecycle_schema.Lifecycle(id="x", available_from="2025-07", orderable_until="2026",
                                                    source="test")
    assert not orderable(entry, 2024.0, 2025.0)       # opens mid-2025
    assert orderable(entry, 2025.0, 2026.0) and orderable(entry, 2026.0, 2027.0)  # 2026 is its last year
    assert not orderable(entry, 2027.0, 2028.0)


def test_a_part_that_stops_being_orderable_is_bought_before(tmp_path):
    """cheap-box orderable until 2026: the 64 nodes 2027 needs are all bought in 2026 (same $321,000
    without discount: 64 · $5,000 + the $1,000 switch), never in 2027."""
    cat = _catalog(tmp_path, "  - {id: cheap-box, orderable_until: '2026', source: test}\n")
    spec, out = _plan(cat)
    assert [d.architecture.platform for d in out.designs] == ["cheap-box", "cheap-box"]
    assert _bought(out, "cheap-box") == [64, 0]
    # the generations each period can order, in the plan's notes (JSON)
    assert [n for n in spec.notes if "orderable" in n] == ["2026: orderable platforms slow-box, cheap-box, fast-box",
                                                           "2027: orderable platforms slow-box, fast-box"]
    assert out.ledger.objective_usd == pytest.approx(321_000)
    _equals_enumeration(spec, cat, out)
    # at 10 % a year it is still the cheapest: fast-box 241,000 + 240,000 / 1.1 = 459,181.82 > 321,000
    spec, out = _plan(cat, rate=0.10)
    assert _bought(out, "cheap-box") == [64, 0] and out.ledger.objective_usd == pytest.approx(321_000)
    _equals_enumeration(spec, cat, out)


def test_a_part_not_yet_available_is_not_bought_early(tmp_path):
    """cheap-box from 2027: 2026 runs on another box; allow_second moves to cheap-box in 2027. By hand:
    2026 slow-box 32 · 10,000 + 1,000 = 321,000 (fast-box 8 · 30,000 + 1,000 = 241,000 is cheaper), 2027
    cheap-box 64 · 5,000 + 1,000 = 321,000 new, or fast-box 8 more = 240,000: keep fast-box, $481,000."""
    cat = _catalog(tmp_path, "  - {id: cheap-box, available_from: '2027', source: test}\n")
    spec, out = _plan(cat, "allow_second")
    assert out.designs[0].architecture.platform != "cheap-box"
    assert _bought(out, "cheap-box")[0] == 0
    assert out.ledger.objective_usd == pytest.approx(481_000)
    _equals_enumeration(spec, cat, out)


def test_a_price_trend_replaces_the_category_factor(tmp_path):
    """cheap-box −50 % a year: 32 in 2026 at $5,000 and 32 in 2027 at $2,500 (factor 0.5), even though the
    plan's category change would keep it at $5,000: 161,000 + 80,000 = $241,000."""
    cat = _catalog(tmp_path, "  - {id: cheap-box, price_change_per_year: -0.5, source: test, is_estimate: true}\n")
    spec, out = _plan(cat)
    assert _bought(out, "cheap-box") == [32, 32]
    factors = [x.price_factor for ps in out.ledger.periods for x in ps.purchases if x.key == "cheap-box"]
    assert factors == [1.0, 0.5]
    assert out.ledger.objective_usd == pytest.approx(241_000)
    _equals_enumeration(spec, cat, out)


def test_no_start_year_no_windows_and_a_note(tmp_path):
    cat = _catalog(tmp_path, "  - {id: cheap-box, orderable_until: '2026', source: test}\n")
    spec, out = _plan(cat, start_year=None)
    assert spec.lifecycle is None and any("start_year" in n for n in spec.notes)
    assert _bought(out, "cheap-box") == [32, 32]


def test_a_window_no_plan_can_meet_is_infeasible_and_says_why(tmp_path):
    cat = _catalog(tmp_path, "".join(f"  - {{id: {b}, orderable_until: '2025', source: test}}\n"
                                     for b in ("cheap-box", "slow-box", "fast-box")))
    _, out = _plan(cat)
    assert out.status == "infeasible" and "lifecycle" in out.explanation


def test_a_lifecycle_entry_needs_a_source(tmp_path):
    with pytest.raises(InputError):
        _catalog(tmp_path, "  - {id: cheap-box, orderable_until: '2026'}\n")


def test_a_lifecycle_entry_naming_no_part_is_a_located_error(tmp_path):
    with pytest.raises(InputError) as exc:
        _catalog(tmp_path, "  - {id: cheap-bx, orderable_until: '2026', source: test}\n")
    assert "lifecycle.yaml:3" in str(exc.value) and "no part or GPU" in str(exc.value)
