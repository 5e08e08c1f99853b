"""Infeasible serving scenarios are explained: which requirement, by how much (SPEC §7). The numbers are checked
against the fleet space itself (the fewest GPUs any fleet meeting the rows needs, by enumeration)."""
from __future__ import annotations

import solver
from solver.design_space.serving import build_fleet_space
from solver.optimize.serving_model import Caps
from solver.optimize.serving_oracle import _totals, fleets
from solver.optimize.serving_solve import solve_fleet

from .fleet_scenarios import scenario


def test_max_gpus_names_the_fewest_gpus_any_fleet_needs():
    cat = solver.load_catalog()
    free = solver.load_scenario(scenario()).scenario
    fewest = min(_totals(f)["gpus"] for f in fleets(build_fleet_space(free, cat, prune=False)))
    r = solve_fleet(scenario(**{"constraints.max_gpus": int(fewest) - 1}), cat)
    assert r.status == "infeasible" and not r.designs
    assert f"needs {fewest:,.0f} GPUs: max_gpus is {int(fewest) - 1:,}" in r.explanation


def test_budget_names_the_cheapest_fleet():
    cat = solver.load_catalog()
    free = solver.load_scenario(scenario()).scenario
    cheapest = min(_totals(f)["capex"] for f in fleets(build_fleet_space(free, cat, prune=False)))
    r = solve_fleet(scenario(**{"constraints.budget_usd": 100_000.0}), cat)
    assert f"the cheapest fleet meeting the traffic and the SLOs costs ${cheapest:,.0f}: budget_usd is $100,000" \
        in r.explanation


def test_unreachable_tpot_names_the_fastest_replica():
    r = solve_fleet(scenario(**{"serving.slo.tokens_per_s_per_user": 100_000}))
    assert r.status == "infeasible"
    assert "the TPOT target of 0.0 ms" in r.explanation and "is missed by every allowed replica" in r.explanation


def test_tpot_needing_bigger_replicas_than_max_gpus():
    """Only 8-GPU replicas meet a tight TPOT, and max_gpus is 4: 'needs ≥ 8 GPUs per decode replica: max_gpus is 4'."""
    cat = solver.load_catalog()
    sc = scenario(**{"serving.slo.tokens_per_s_per_user": None, "serving.slo.tpot_p90_ms": None})
    space = build_fleet_space(solver.load_scenario(sc).scenario, cat, prune=False)
    by_tp = {}
    for o in space.options:
        if o.role == "decode":
            by_tp[o.layout.tp] = min(by_tp.get(o.layout.tp, 1.0), o.tpot_s)
    # a TPOT target between the best tp=4 and the best tp=8 decode replica
    target_ms = (by_tp[4] + by_tp[8]) / 2 * 1000
    assert by_tp[8] < by_tp[4]
    r = solve_fleet(scenario(**{"serving.slo.tokens_per_s_per_user": None, "serving.slo.tpot_p90_ms": target_ms,
                                "constraints.max_gpus": 4, "serving.disaggregation": "on"}), cat)
    assert r.status == "infeasible"
    assert "needs ≥ 8 GPUs per decode replica" in r.explanation and "max_gpus is 4" in r.explanation


def test_unpruned_and_pruned_spaces_have_the_same_cheapest_fleet():
    cat = solver.load_catalog()
    sc = solver.load_scenario(scenario()).scenario
    full, pruned = build_fleet_space(sc, cat, prune=False), build_fleet_space(sc, cat)
    assert len(pruned.options) < len(full.options)
    best = [min(_totals(f)["capex"] for f in fleets(s)) for s in (full, pruned)]
    assert best[0] == best[1]
    assert Caps().max_gpus is None
