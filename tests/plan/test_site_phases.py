"""A site's energisation phases applied to a plan's periods (issue 43b, SPEC §6.3; solver/plan/site_phases.py).

HiGHS solves the real plan MILP and the answer equals the exhaustive enumeration of plans (the ledger's
prices) to the cent. Toy catalog of tests/plan/test_plan.py, PUE 1, switches and NICs at 0 W: 2026 needs a
4 ms step (cheap-box 32 × 2 kW = 64 kW, slow-box 32 × 1 kW = 32 kW, fast-box 8 × 5 kW = 40 kW), 2027 a 2 ms
step (cheap-box 64 × 2 = 128 kW, slow-box 64 × 1 = 64 kW, fast-box 16 × 5 = 80 kW). Without a site the
plan keeps cheap-box: 64 · $5,000 + $1,000 = $321,000.
"""
from __future__ import annotations

import copy

import pytest
from test_plan import TOY, TWO_PERIODS

import solver
from solver.errors import InputError
from solver.plan.oracle import enumerate_plans
from solver.plan.periods import plan_periods
from solver.plan.run import solve_plan
from solver.plan.site_phases import period_date

COOLING = [dict(type="liquid", pue=1.0, rack_kw_max=100, source="test")]


def _plan(catalog, phases, headroom: float = 1.0):
    doc = {**copy.deepcopy(TOY), "plan": {"periods": copy.deepcopy(TWO_PERIODS), "start_year": 2026},
           "site": dict(power=phases, cooling=COOLING, peak_to_average=headroom)}
    spec = plan_periods(solver.load_scenario(doc), catalog)
    return spec, solve_plan(spec, catalog)


def _check(spec, catalog, out, platform: str, usd: float, caps_kw: list[float]) -> None:
    assert out.status == "optimal"
    assert [d.architecture.platform for d in out.designs] == [platform, platform]
    assert out.ledger.objective_usd == pytest.approx(usd)
    plans = enumerate_plans(spec, catalog)
    assert round(out.ledger.objective_usd, 2) == plans[0][0]
    # each period's design fits the power energised by its start, checked on the design itself
    for d, cap in zip(out.designs, caps_kw, strict=True):
        assert d.cost.facility_power_kw <= cap + 1e-9


def test_period_dates():
    assert period_date(2026, 1, 0) == "2026-01" and period_date(2026, 0.5, 1) == "2026-07"
    assert period_date(2026, 1.5, 3) == "2030-07"


def test_phases_cap_each_period(toy_catalog):
    """50 kW in 2026, 100 kW from 2027: cheap-box (64 kW in 2026) is out; fast-box 40 then 80 kW,
    16 · 30,000 + 1,000 = $481,000, beats slow-box 64 · 10,000 + 1,000 = $641,000."""
    spec, out = _plan(toy_catalog, [dict(energised="2026", power_mw=0.05), dict(energised="2027", power_mw=0.1)])
    _check(spec, toy_catalog, out, "fast-box", 481_000, [50, 100])
    assert [p.scenario.constraints.facility_power_kw for p in spec.periods] == pytest.approx([50, 100])
    assert any("2027-01: site power 0.1 MW" in n for n in spec.notes)


def test_a_phase_energised_after_the_period_starts_does_not_count(toy_catalog):
    """The 100 kW phase comes in 2027-06, after the 2027 period starts (2027-01): 2027 has 50 kW, where
    fast-box (80 kW) and slow-box (64 kW) do not fit: no plan. Headroom 1.25 on 130 kW from 2027 leaves
    104 kW: fast-box (80 kW) fits, cheap-box (128 kW) does not: $481,000."""
    spec, out = _plan(toy_catalog, [dict(energised="2026", power_mw=0.05), dict(energised="2027-06", power_mw=0.1)])
    assert out.status != "optimal" and not enumerate_plans(spec, toy_catalog)
    spec, out = _plan(toy_catalog, [dict(energised="2026", power_mw=0.0625), dict(energised="2027", power_mw=0.13)],
                      headroom=1.25)
    _check(spec, toy_catalog, out, "fast-box", 481_000, [50, 104])


def test_no_power_by_the_first_period_is_a_located_error(toy_catalog):
    with pytest.raises(InputError, match="no site power is energised by 2026-01"):
        _plan(toy_catalog, [dict(energised="2026-06", power_mw=1)])
