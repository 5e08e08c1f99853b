"""The planner's ranking modes (issue 17, SPEC §7): `objective: fastest`, `--distinct-by platform`,
equal-cost ties, and infeasibility that says what the caps and pins can buy.

HiGHS solves the real model; every answer is checked against the exhaustive enumeration
(`oracle.enumerate_designs`: every point of the unpruned space evaluated one by one, no model, no
pruning) — same identities, same step times, same costs to the cent.
"""
from __future__ import annotations

import copy

import pytest
from conftest import GPT3_6_7B, enumerated_designs

import solver
from solver.api import solve
from solver.optimize import oracle
from solver.optimize.ranking import same_speed

# GPT-3 6.7B (Brown et al. 2020, Table 2.1): L, h, heads; f = 4h; V = 51200 padded.
LAYOUTS = dict(tp=[2, 4, 8], cp=1, pp=[1, 2, 4], vp=1, microbatch_size=1)

# "What does $20M buy?": Blackwell 8-GPU nodes against NVL72 racks, 1 or 4 rails, no target.
FASTEST = dict(name="fastest-20m", workload=dict(model=GPT3_6_7B, global_batch_size=1024),
               constraints=dict(platforms=["hgx-b200", "gb200-nvl72", "hgx-h100"], nic_configurations="any", rails_per_node=[1, 4],
                                budget_usd=20e6),
               parallelism=LAYOUTS, objective="fastest")
# The same space ranked by capex at a 3 s target: best design per platform.
CHEAPEST = dict(name="cheapest-3s", workload=dict(model=GPT3_6_7B, global_batch_size=1024),
                target=dict(step_time_s=3.0),
                constraints=dict(platforms=["hgx-b200", "gb200-nvl72", "hgx-h100"], nic_configurations="any", rails_per_node=[1, 4],
                                 max_gpus=1024),
                parallelism=LAYOUTS)
K = 4


def _load(doc: dict, **update):
    data = copy.deepcopy(doc)
    data.update(update)
    return solver.load_scenario(data)


def _same(designs, expected) -> None:
    assert [d.identity for d in designs] == [d.identity for d in expected]
    assert [round(d.objective_usd, 2) for d in designs] == [round(d.objective_usd, 2) for d in expected]
    assert [d.perf.step_time_s for d in designs] == pytest.approx([d.perf.step_time_s for d in expected], rel=1e-9)


@pytest.fixture(scope="module")
def fastest_enumerated(default_catalog):
    return enumerated_designs(_load(FASTEST).scenario, default_catalog)


@pytest.mark.parametrize("distinct_by", ["architecture", "platform", "layout"])
def test_fastest_equals_enumeration(distinct_by, default_catalog, fastest_enumerated):
    """The K fastest distinct designs within $20M: least step time first, the cheapest of equally
    fast designs; the same as ranking the enumeration by hand (oracle.best_fastest)."""
    expected = oracle.best_distinct(fastest_enumerated, K, distinct_by)
    assert len(expected) >= 3 and expected[0].objective == "fastest"
    result = solve(_load(FASTEST), default_catalog, top_k=K, distinct_by=distinct_by)
    assert result.status == "optimal"
    _same(result.designs, expected)
    steps = [d.perf.step_time_s for d in result.designs]
    assert steps == sorted(steps)  # ranked by speed
    assert all(d.cost.capex_usd <= 20e6 for d in result.designs)
    assert [d.rank for d in result.designs] == list(range(1, len(expected) + 1))


def test_fastest_is_the_fastest_affordable_design(fastest_enumerated):
    """No design within the budget is faster than the first, and of those equally fast, none is
    cheaper — read straight off the enumeration, without the ranking code."""
    best = oracle.best_fastest(fastest_enumerated, 1)[0]
    fastest_s = min(d.perf.step_time_s for d in fastest_enumerated)
    assert same_speed(best.perf.step_time_s, fastest_s)
    assert best.cost.capex_usd == min(d.cost.capex_usd for d in fastest_enumerated
                                      if same_speed(d.perf.step_time_s, fastest_s))


def test_fastest_with_a_bigger_budget_is_no_slower(default_catalog):
    """Monotone: $40M buys a design at least as fast as $20M does (every $20M design is in it)."""
    small = solve(_load(FASTEST), default_catalog, top_k=1).designs[0]
    constraints = {**FASTEST["constraints"], "budget_usd": 40e6}
    big = solve(_load(FASTEST, constraints=constraints), default_catalog, top_k=1).designs[0]
    assert big.perf.step_time_s <= small.perf.step_time_s * (1 + 1e-12)
    assert big.cost.capex_usd <= 40e6


def test_distinct_by_platform_equals_enumeration(default_catalog):
    """--distinct-by platform: the best (cheapest) design of each platform, cheapest platform first."""
    ls = _load(CHEAPEST)
    expected = oracle.best_distinct(enumerated_designs(ls.scenario, default_catalog), K, "platform")
    result = solve(ls, default_catalog, top_k=K, distinct_by="platform")
    assert result.status == "optimal"
    assert [d.architecture.platform for d in result.designs] == [d.architecture.platform for d in expected]
    assert len({d.architecture.platform for d in result.designs}) == len(result.designs) == 3  # three allowed
    _same(result.designs, expected)


_BY_LAYOUT: dict = {}


def cheapest_by_layout(catalog):
    """solve(CHEAPEST, top_k=8, distinct_by="layout"), solved once per catalog for this file and
    tests/optimize/test_layout_ties.py, which check different properties of the same ranking."""
    hit = _BY_LAYOUT.get(id(catalog))
    if hit is None or hit[0] is not catalog:
        hit = _BY_LAYOUT[id(catalog)] = (catalog, solve(_load(CHEAPEST), catalog, top_k=8, distinct_by="layout"))
    return hit[1]


def test_equal_cost_ranks_the_faster_layout_first(default_catalog):
    """At equal cost (to the cent) the faster layout ranks first (SPEC §7, issue 17). Layouts on the
    same number of domains of one architecture cost exactly the same, so the space has such ties."""
    ls = _load(CHEAPEST)
    result = cheapest_by_layout(default_catalog)
    expected = oracle.best_distinct(enumerated_designs(ls.scenario, default_catalog), 8, "layout")
    assert [round(d.objective_usd, 2) for d in result.designs] == [round(d.objective_usd, 2) for d in expected]
    ties = [(a, b) for a, b in zip(result.designs, result.designs[1:])
            if round(a.objective_usd, 2) == round(b.objective_usd, 2)]
    assert ties, "the space must contain equal-cost layouts"
    assert all(a.perf.step_time_s <= b.perf.step_time_s for a, b in ties)


def test_fastest_without_a_cap_is_an_input_error():
    with pytest.raises(solver.InputError) as info:
        _load(FASTEST, constraints={"platforms": ["hgx-b200"]})
    assert "objective: fastest needs a cap" in str(info.value)


def test_a_budget_too_small_for_the_target_says_what_it_buys(default_catalog):
    """capex at a 0.25 s target with $20M: infeasible; the explanation names what $20M buys — the
    fastest design within the budget, which the enumeration of the same space without a target
    finds (oracle, objective fastest)."""
    constraints = {**CHEAPEST["constraints"], "budget_usd": 20e6}
    constraints.pop("max_gpus")
    ls = _load(CHEAPEST, constraints=constraints, target={"step_time_s": 0.25})
    result = solve(ls, default_catalog, top_k=1)
    assert result.status == "infeasible"
    fast = _load(FASTEST)
    reach = oracle.best_fastest(enumerated_designs(fast.scenario, default_catalog), 1)[0]
    assert reach.perf.step_time_s > 0.25  # so the target is out of reach within $20M
    assert "budget_usd: the cheapest design meeting the 0.25 s target" in result.explanation
    assert f"within budget_usd = $20,000,000 the fastest design reaches {reach.perf.step_time_s:.3g} s" in result.explanation
    assert reach.label in result.explanation


def test_pinned_nodes_that_miss_the_target_report_the_step_time_reached(default_catalog):
    """pin.nodes = 8 HGX B200 nodes (64 GPUs) at a 1 s target: the explanation gives the fastest
    step time on 8 nodes, the enumeration's fastest design with the same pin and no target."""
    constraints = {**CHEAPEST["constraints"], "platforms": ["hgx-b200"]}
    ls = _load(CHEAPEST, constraints=constraints, target={"step_time_s": 1.0}, pin={"nodes": 8})
    result = solve(ls, default_catalog, top_k=1)
    assert result.status == "infeasible"
    fast = _load(FASTEST, constraints={**constraints, "budget_usd": 1e12}, pin={"nodes": 8})
    reach = oracle.best_fastest(enumerated_designs(fast.scenario, default_catalog), 1)[0]
    assert reach.cost.job_nodes == 8 and reach.perf.step_time_s > 1.0
    assert "pin.nodes = 8: no design on 8 nodes meets the 1 s target" in result.explanation
    assert f"the fastest reaches {reach.perf.step_time_s:.3g} s per step" in result.explanation
