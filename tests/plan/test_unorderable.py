"""A comparison whose period can order nothing is known infeasible without its MILP (issue 47s, speed): the
`plan/run.py` pre-check `unorderable_period` against the plan MILP itself on the shipped 5-year plan, whose
from-scratch comparisons of 2029-2031 come after every lifecycle window closed (catalogs/default.yaml `lifecycle:`:
GB200 NVL72 and B200 orderable until 2027-06, GB300 NVL72 until 2028-12; docs/sources.md [K1]-[K4]; the scenario's
own comment: "nothing in the catalog can be ordered after 2028")."""
from __future__ import annotations

from pathlib import Path

import pytest

import solver
from solver import api
from solver.plan.periods import plan_periods
from solver.plan.run import period_models, solve_plan, unorderable_period

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture(scope="module")
def shipped():
    ls = solver.load_scenario(ROOT / "scenarios" / "plan-5-years.yaml")
    catalog = api.catalog_for(ls)
    spec = plan_periods(ls, catalog)
    models = period_models(spec, catalog)
    assert not isinstance(models, str)
    return spec, catalog, models


def test_the_periods_after_every_window_are_found_and_the_milp_agrees(shipped):
    spec, catalog, models = shipped
    labels = [str(period.label) for period in spec.periods]
    assert labels == ["2026", "2027", "2028", "2029", "2030", "2031"]
    for p, period in enumerate(spec.periods):
        alone = spec.only([period], "keep_one")
        found = unorderable_period(alone, [models[p]])
        # 2026-2028 start before GB300 NVL72's window closes (end of 2028); 2029-2031 after every window
        assert (found is not None) == (period.label in ("2029", "2030", "2031")), period.label
        milp = solve_plan(alone, catalog, models=[models[p]])  # no `solves`: the MILP decides, no pre-check
        assert milp.status == ("infeasible" if found is not None else "optimal"), period.label
        if found is not None:  # the comparison's answer with the pre-check is the MILP's, word for word
            quick = solve_plan(alone, catalog, models=[models[p]], solves=1)
            assert (quick.status, quick.explanation) == (milp.status, milp.explanation)


def test_the_whole_plan_and_the_up_front_comparison_are_never_cut_short(shipped):
    spec, _, models = shipped
    # every period up to 2031 can use what was bought by 2028: the plan as a whole has no unorderable period
    assert unorderable_period(spec, models) is None


def test_owned_inventory_turns_the_pre_check_off(shipped):
    spec, _, models = shipped
    alone = spec.only([spec.periods[-1]], "keep_one")
    assert unorderable_period(alone, [models[-1]]) == 0
    owning = spec.only([spec.periods[-1]], "keep_one")
    owning.owned = {"gb300-nvl72": 1}
    assert unorderable_period(owning, [models[-1]]) is None  # owned units may cover the need: the MILP decides
