"""The optimiser equals exhaustive enumeration at every prune level on scenarios/expand-owned-h100.yaml.

The three prune levels disagreed there (dominated: "infeasible"; points: a $240.2M 3-tier fat tree; none: a
$224.7M 2-tier multi-plane design). Each level's design space held the multi-plane point (tp 8 · cp 2 · pp 2 ·
vp 2 · dp 128 on 512 DGX H100 + 10 spares); the models differed, and HiGHS's presolve aggregator solved two of
them wrongly (optimize/highs.py). The reference here is the enumeration (optimize/oracle.py: every point
evaluated one by one, no model) and HiGHS with presolve off, never a number copied from the optimiser.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest
import yaml

import solver
from solver.design_space import build_design_space
from solver.errors import ConsistencyError
from solver.optimize import data as data_module
from solver.optimize import model as milp
from solver.optimize.data import model_data, points
from solver.optimize.highs import PRESOLVE_RULES_OFF, HighsAdapter, SolveOutcome
from solver.optimize.oracle import best_distinct, enumerate_designs
from solver.optimize.ranking import _check_first_against_evaluated, prune_points_over_caps
from solver.optimize.solve import solve

EXPAND = "scenarios/expand-owned-h100.yaml"


@pytest.fixture(scope="module")
def catalog():
    return solver.load_catalog()


@pytest.fixture(scope="module")
def expand():
    return solver.load_scenario(EXPAND)


def _ranked(result) -> list[tuple[str, float]]:
    return [(d.label, round(d.objective_usd, 2)) for d in result.designs]


def test_expand_owned_h100_same_k_best_at_every_prune_level_as_the_enumeration(catalog, expand):
    # Only 2 architectures exist (dgx-h100 · 8×cx7-ndr · qm9700, fat tree and multi-plane), so K = 5 asks
    # for all of them; the enumeration's 2 distinct best are the reference.
    oracle = [(d.label, round(d.objective_usd, 2)) for d in best_distinct(enumerate_designs(expand.scenario, catalog), 5)]
    assert len(oracle) == 2
    assert "multi-plane" in oracle[0][0]  # reusing the owned switches as leaves beats a 3-tier fat tree
    for prune in ("none", "points", "dominated"):
        result = solve(expand, catalog, top_k=5, prune=prune)
        assert result.status == "optimal", prune
        assert _ranked(result) == oracle, prune


def test_adapter_solves_the_dominated_model_as_highs_without_presolve(catalog, expand):
    """The model that presolve with the aggregator declared infeasible: the adapter's answer equals HiGHS's
    with presolve off (no reduction at all), a feasible design."""
    space = build_design_space(expand.scenario, catalog, "dominated", one_layout_per_cost=True)
    model = milp.build_model(prune_points_over_caps(model_data(space)))
    outcome = HighsAdapter().solve(model)
    assert outcome.status == "optimal"

    from pyomo.contrib.solver.common.factory import SolverFactory

    reference = SolverFactory("highs").solve(model, rel_gap=0.0, abs_gap=1e-6, raise_exception_on_nonoptimal_result=False,
                                             load_solutions=False, solver_options={"presolve": "off"})
    assert reference.incumbent_objective == pytest.approx(outcome.objective, rel=1e-9)


def test_the_aggregator_is_the_rule_switched_off():
    # HiGHS's PresolveRuleType: 0 empty row, 1 singleton row, 2 redundant row, 3 empty column, 4 fixed column,
    # 5 dominated column, 6 forcing row, 7 forcing column, 8 free column substitution, 9 doubleton equation,
    # 10 dependent equations, 11 dependent free columns, 12 aggregator, 13 parallel rows and columns.
    assert PRESOLVE_RULES_OFF == 1 << 12 == 4096


def _outcome(status: str, objective: float | None = None) -> SolveOutcome:
    return SolveOutcome(status, objective, objective, 0.0 if objective is not None else None, 0.0, "")


def test_a_first_solve_contradicting_an_evaluated_design_is_an_error():
    # Hand-made: the bound pruning evaluated a $100 design meeting every requirement.
    cheap = SimpleNamespace(label="cheap", objective_usd=100.0)
    dear = SimpleNamespace(label="dear", objective_usd=120.0)
    with pytest.raises(ConsistencyError, match="infeasible"):
        _check_first_against_evaluated(SimpleNamespace(outcomes=[_outcome("infeasible")], designs=[]), [cheap])
    with pytest.raises(ConsistencyError, match="optimal"):  # $120 "proven optimal" while $100 is feasible
        _check_first_against_evaluated(SimpleNamespace(outcomes=[_outcome("optimal", 120.0)], designs=[dear]), [cheap])
    # $100 proven optimal with $100 and $120 evaluated: consistent; so is a time-limited incumbent
    _check_first_against_evaluated(SimpleNamespace(outcomes=[_outcome("optimal", 100.0)], designs=[cheap]), [cheap, dear])
    _check_first_against_evaluated(SimpleNamespace(outcomes=[_outcome("feasible", 120.0)], designs=[dear]), [cheap])


def test_the_models_dominance_uses_each_points_own_gpus_per_domain(catalog, monkeypatch):
    """A 64-of-72 GB200 NVL72 layout keeps (72 − 64) / 4 = 2 spare trays in every rack, so its spares (and the
    costs the fat-tree dominance compares) are not the full rack's: the model must ask with the point's G_u,
    as the design space and the enumeration do."""
    sc = solver.load_scenario({
        "name": "nvl72-gu", "workload": yaml.safe_load(open(EXPAND))["workload"],
        "target": {"step_time_s": 6.0},
        "constraints": {"platforms": ["gb200-nvl72"], "max_gpus": 4096},
        "parallelism": {"tp": [4], "cp": [1], "pp": [4], "vp": [1], "microbatch_size": [1]},
    })
    space = build_design_space(sc.scenario, catalog, "points")
    data = model_data(space)
    seen: list = []
    real = data_module.dominated_by_fat_tree

    def spy(scenario, cat, arch, domains, archs, cache, gpus_per_domain_used=None):
        seen.append(gpus_per_domain_used)
        return real(scenario, cat, arch, domains, archs, cache, gpus_per_domain_used)

    monkeypatch.setattr(data_module, "dominated_by_fat_tree", spy)
    points(data)
    used = {s.gpus_per_domain_used for s in space.shapes}
    assert seen and None not in seen
    assert set(seen) <= used
