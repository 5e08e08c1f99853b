"""The design space's cost bound (`design_space.bound.CostBound`, issue 26): a layout's dominance scan stops where
every point's cost lower bound is over UB_K, the K-th best cost over ranking identities among the designs found so
far. Hand-worked on the toy catalog (tests/optimize/test_optimizer.py's arithmetic: $5,000 / $10,000 / $30,000 boxes,
one $1,000 switch, free NICs and cables, feasible at d = 32 / 32 / 8 for a 4 ms target), then checked against the
exhaustive enumeration and against the unbounded space on shipped scenarios."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml
from conftest import enumerated_designs

import solver
from solver import costing
from solver.design_space import build_design_space, dominated_by_fat_tree
from solver.design_space.bound import CENT_USD, COST_REL
from solver.optimize.data import model_data, points
from solver.optimize.frontier import lowered_target
from solver.optimize.ranking import best_distinct, k_best
from solver.optimize.ties import admissible_design
from solver.results import Design
from tests.optimize.test_optimizer import toy  # the toy scenario whose arithmetic test_optimizer works by hand

ROOT = Path(__file__).resolve().parents[2]


def _scenario(doc: dict):
    return solver.load_scenario(copy.deepcopy(doc)).scenario


def _summary(design: Design) -> tuple:
    return design.architecture.platform, design.layout.dp, round(design.objective_usd, 2)


def _limit(kth_usd: float) -> float:
    return kth_usd * (1 + COST_REL) + CENT_USD


# ------------------------------------------------------------------------------ by hand


def test_the_point_lower_bound_by_hand(toy_catalog):
    """fast-box on 8 domains: 8 units · $30,000 (its NIC is included, the switch and cables are fabric counts,
    at zero) = $240,000; with its energy (5 kW each, PUE 1, 5 years, $0.10/kWh): + 5 · 8,760 · 40 · 0.1 = $175,200."""
    cat = toy_catalog
    parts = costing.parts_for(cat, cat.by_id("platforms")["fast-box"], cat.by_id("nics")["toy-nic"],
                              cat.by_id("switches")["toy-switch"], 1)
    assert costing.point_lower_bound_usd(parts, 8, 0, 8, 0.0, {}) == pytest.approx(240_000.0)
    assert costing.point_lower_bound_usd(parts, 8, 0, 8, 0.1, {}) == pytest.approx(264_000.0)  # + 10 % contingency
    assert costing.point_lower_bound_usd(parts, 8, 0, 8, 0.0, {}, (1.0, 5.0, 0.1)) == pytest.approx(415_200.0)


def test_k1_cuts_the_dearer_boxes_by_hand(toy_catalog):
    """K = 1. cheap-box is scanned first (the least $ per TFLOP/s) and its first feasible point, d = 32 for
    $161,000, sets UB_1. fast-box's LBs are 30,000·d over d = 1, 2, 4, 8, 16, 32, 64: over UB_1 from d = 8
    ($240,000), and nothing below d = 8 meets 4 ms: all 4 points from d = 8 on are cut. slow-box's (10,000·d)
    are over it from d = 32: 2 points cut. The answer is unchanged."""
    sc = _scenario(toy())
    space = build_design_space(sc, toy_catalog, "dominated", one_layout_per_cost=True, top_k=1)
    assert space.pruned["cost_bound"] == 4 + 2
    assert space.bound.limit_usd == pytest.approx(_limit(161_000.0), rel=1e-15)
    [(cost, arch, layout)] = space.bound.best.values()
    assert (arch.platform, layout.dp, cost) == ("cheap-box", 32, 161_000.0)
    assert [s.perf.platform for s in space.shapes] == ["cheap-box"]
    unbounded = build_design_space(sc, toy_catalog, "dominated", one_layout_per_cost=True)
    assert "cost_bound" not in unbounded.pruned and len(unbounded.shapes) == 3
    assert [_summary(d) for d in solver.solve(toy(), toy_catalog, top_k=1).designs] == [("cheap-box", 32, 161_000.0)]


def test_k2_keeps_the_second_box_and_cuts_the_third_by_hand(toy_catalog):
    """K = 2: UB_2 is unknown until fast-box's d = 8 ($241,000) is found, so nothing of it is cut; slow-box's LBs
    are over $241,000 from d = 32 ($320,000): 2 points cut. Ranked: cheap-box $161,000, fast-box $241,000."""
    space = build_design_space(_scenario(toy()), toy_catalog, "dominated", one_layout_per_cost=True, top_k=2)
    assert space.pruned["cost_bound"] == 2
    assert space.bound.limit_usd == pytest.approx(_limit(241_000.0), rel=1e-15)
    assert [_summary(d) for d in solver.solve(toy(), toy_catalog, top_k=2).designs] == [
        ("cheap-box", 32, 161_000.0), ("fast-box", 8, 241_000.0)]


def test_a_tco_bound_is_set_by_tco(toy_catalog):
    """TCO, K = 1, cheap-box and fast-box: cheap-box is scanned first, $441,320 of TCO. fast-box's d = 8 has an LB
    of $415,200 (above) and a TCO of $416,200: kept, and it is the answer. A bound set by capex ($161,000) would
    have cut it."""
    doc = toy(objective="tco", constraints=dict(platforms=["cheap-box", "fast-box"]))
    space = build_design_space(_scenario(doc), toy_catalog, "dominated", one_layout_per_cost=True, top_k=1)
    assert space.bound.limit_usd == pytest.approx(_limit(416_200.0), rel=1e-15)
    assert [_summary(d) for d in solver.solve(doc, toy_catalog, top_k=1).designs] == [("fast-box", 8, 416_200.0)]


def test_a_design_over_a_cap_does_not_set_the_bound(toy_catalog):
    """A facility power cap below cheap-box's 64 kW (32 boxes of 2 kW at d = 32, more at every larger d): its points
    meet the target but are no design, so none can set UB_1 (the build has no power cut of its own: only the bound's
    cap check keeps them out). With a $250,000 budget fast-box ($241,000) is the second design; the budget cut
    (capex LBs over $250,000: slow-box from d = 32, fast-box from d = 16, cheap-box from d = 64) leaves the cost bound
    nothing to cut."""
    doc = toy(constraints=dict(facility_power_kw=50, platforms=["cheap-box"]))
    space = build_design_space(_scenario(doc), toy_catalog, "dominated", one_layout_per_cost=True, top_k=1)
    assert space.bound.best == {} and space.bound.limit_usd == float("inf")
    doc = toy(constraints=dict(budget_usd=250_000), objective="capex")
    space = build_design_space(_scenario(doc), toy_catalog, "dominated", one_layout_per_cost=True, top_k=2)
    assert [_summary(d) for d in solver.solve(doc, toy_catalog, top_k=2).designs] == [
        ("cheap-box", 32, 161_000.0), ("fast-box", 8, 241_000.0)]
    assert (space.pruned["caps"], space.pruned["cost_bound"]) == (2 + 3 + 1, 0)


def test_distinct_by_platform_counts_platforms(toy_catalog):
    """With `--distinct-by platform` UB_K is over platforms: the same K = 2 as by architecture here (one switch,
    one NIC), and the ranking is the enumeration's."""
    space = build_design_space(_scenario(toy()), toy_catalog, "dominated", top_k=2, distinct_by="platform")
    assert set(space.bound.best) == {("cheap-box",), ("fast-box",)}
    result = solver.solve(toy(), toy_catalog, top_k=2, distinct_by="platform")
    expected = best_distinct(sorted(enumerated_designs(_scenario(toy()), toy_catalog), key=Design.sort_key), 2,
                             "platform")
    assert [_summary(d) for d in result.designs] == [_summary(d) for d in expected]


# ------------------------------------------------------------------------------ shipped scenarios

SHIPPED = ["llama3-70b", "deepseek-v3", "gpt3-175b", "expand-owned-h100"]  # dense, MoE, deep PP, owned parts
CUTS = {"llama3-70b", "deepseek-v3", "gpt3-175b"}  # expand-owned-h100's owned servers make every LB small: no cut


@pytest.fixture(scope="module")
def spaces(default_catalog):
    out = {}
    for name in SHIPPED:
        sc = solver.load_scenario(ROOT / "scenarios" / f"{name}.yaml").scenario
        build = dict(one_layout_per_cost=True)
        out[name] = (build_design_space(sc, default_catalog, "dominated", top_k=sc.top_k, **build),
                     build_design_space(sc, default_catalog, "dominated", **build), sc.top_k)
    return out


@pytest.mark.parametrize("name", SHIPPED)
def test_every_design_that_sets_the_bound_is_one_the_model_offers(name, spaces):
    """Each identity's best cost the bound keeps is the evaluator's cost of a design of that identity the ranking
    accepts (`admissible_design`: memory, target, caps, allowed tiers) and the model offers (not dominated by the fat
    tree, on the fewest tiers that hold its nodes: `optimize.data.points`)."""
    bounded, _, _ = spaces[name]
    assert bounded.bound.best
    data = model_data(bounded)
    offered = {(data.archs[a].arch, bounded.shapes[i].layout(bounded.shapes[i].d_values[j]))
               for (i, j, a) in points(data)}
    for key, (cost, arch, layout) in bounded.bound.best.items():
        design = admissible_design(bounded, arch, layout)
        assert design is not None
        assert design.identity == key and design.objective_usd == pytest.approx(cost, rel=1e-12)
        assert not dominated_by_fat_tree(bounded.scenario, bounded.catalog, arch, layout.domains,
                                         bounded.architectures, {}, layout.gpus_per_domain_used)
        if (arch, layout) not in offered:  # a point the one-per-cost rule left out: a twin on as many domains is in
            assert any(a == arch and lay.domains == layout.domains for a, lay in offered)


@pytest.mark.parametrize("name", SHIPPED)
def test_the_bound_cuts_points_and_changes_no_ranked_design(name, spaces):
    bounded, unbounded, k = spaces[name]
    assert (bounded.pruned.get("cost_bound", 0) > 0) == (name in CUTS) and bounded.points <= unbounded.points
    with_bound, without = k_best(bounded, k).designs, k_best(unbounded, k).designs
    assert [(d.label, d.layout, round(d.objective_usd, 2)) for d in with_bound] == \
        [(d.label, d.layout, round(d.objective_usd, 2)) for d in without]
    assert with_bound[-1].objective_usd <= bounded.bound.limit_usd  # UB_K is an upper bound on the K-th best


def test_a_bounded_build_s_scan_starts_serve_an_unbounded_build(default_catalog):
    """A scan the bound stopped records its stop as the segment's start: a later build at a lower target that
    reads the memo (the next faster design; here without a bound, which reads every start) equals one from
    scratch."""
    sc = solver.load_scenario(ROOT / "scenarios" / "llama3-70b.yaml").scenario
    first = build_design_space(sc, default_catalog, "dominated", top_k=1)
    assert first.pruned["cost_bound"] > 0
    lower = lowered_target(sc, sc.target_step_time_s() * 0.9)
    again, fresh = (build_design_space(lower, default_catalog, "dominated", memo=m) for m in (first.memo, None))
    assert [(s.key, s.d_values, s.step_time_s) for s in again.shapes] == \
        [(s.key, s.d_values, s.step_time_s) for s in fresh.shapes]


def test_a_seed_sets_the_bound_before_the_scan_by_hand(toy_catalog, monkeypatch):
    """K = 1 seeded with fast-box d = 8 ($241,000): UB_1 is known when the first platform's scan starts (unseeded it
    is not); cheap-box's d = 32 ($161,000) then lowers it, and the answer is the same."""
    from solver.design_space import build

    limits: list[float] = []
    scan = build._platform_shapes

    def record(ctx, *args):
        limits.append(ctx.bounds.bound.limit_usd)
        return scan(ctx, *args)

    sc = _scenario(toy())
    fast = solver.solve(toy(constraints=dict(platforms=["fast-box"])), toy_catalog, top_k=1).designs[0]
    monkeypatch.setattr(build, "_platform_shapes", record)
    seeded = build_design_space(sc, toy_catalog, "dominated", top_k=1, seed=((fast.architecture, fast.layout),))
    assert limits[0] == pytest.approx(_limit(241_000.0), rel=1e-15)
    limits.clear()
    unseeded = build_design_space(sc, toy_catalog, "dominated", top_k=1)
    assert limits[0] == float("inf")
    assert seeded.bound.limit_usd == unseeded.bound.limit_usd == pytest.approx(_limit(161_000.0), rel=1e-15)


def test_a_seed_the_scenario_does_not_accept_is_not_counted(toy_catalog):
    """A seed is costed and judged like any offered point: fast-box d = 8 ($241,000) over a $200,000 budget does not
    set the bound."""
    doc = toy(constraints=dict(budget_usd=200_000, platforms=["slow-box", "fast-box"]))
    fast = solver.solve(toy(constraints=dict(platforms=["fast-box"])), toy_catalog, top_k=1).designs[0]
    space = build_design_space(_scenario(doc), toy_catalog, "dominated", top_k=1,
                               seed=((fast.architecture, fast.layout),))
    assert space.bound.best == {} and space.bound.offered >= 1


@pytest.mark.parametrize("name, pin", [("llama3-70b", {}), ("llama3-70b", {"above_pod_oversubscription": 2})])
def test_the_next_faster_design_seeded_by_the_ranked_designs_equals_the_unseeded(name, pin, default_catalog):
    """`frontier.next_faster` seeds its design space's bound with the solve's ranked designs that meet the lowered
    target: more is cut, the answer is the same. With a pinned oversubscribed tier above the pods the next faster
    design is solved, like the solve, on 3 tiers (`data.with_pod_tiers`)."""
    from solver.optimize import frontier

    doc = yaml.safe_load((ROOT / "scenarios" / f"{name}.yaml").read_text(encoding="utf-8"))
    doc["pin"] = {**doc.get("pin", {}), **pin}
    ls = solver.load_scenario(doc)
    result = solver.solve(ls, default_catalog, top_k=5)
    lowered_s = result.designs[0].perf.step_time_s * (1 - frontier.FRONTIER_REL)
    seed = frontier._faster_ranked(result, lowered_s)
    assert seed
    lowered = frontier.lowered_target(ls.scenario, lowered_s)
    models = [frontier.FrontierModel(lowered, default_catalog, frontier.Deadline(None), prune="dominated", seed=s)
              for s in (seed, ())]
    assert models[0].space.pruned.get("cost_bound", 0) > models[1].space.pruned.get("cost_bound", 0)
    found = [m.cheapest_faster(None)[0] for m in models]
    assert found[0] is not None and found[1] is not None
    assert (found[0].label, found[0].layout, round(found[0].objective_usd, 2)) == \
        (found[1].label, found[1].layout, round(found[1].objective_usd, 2))
    if pin:
        assert found[0].tiers == 3 and all(d.tiers == 3 for d in result.designs)
    nf = frontier.next_faster(result, ls, default_catalog)
    assert nf["found"] and nf["design_id"] == frontier.design_id(found[0])


def test_the_budget_cut_by_hand(toy_catalog):
    """A $200,000 budget (K = 1): capex LBs of 30,000·d (fast-box), 10,000·d (slow-box) and 5,000·d (cheap-box) are
    over it from d = 8, 32 and 64: 4 + 2 + 1 points are dropped unevaluated, counted under "caps" (a build that is
    not for a ranking keeps them). The answer is cheap-box's d = 32, $161,000."""
    doc = toy(constraints=dict(budget_usd=200_000))
    bounded = build_design_space(_scenario(doc), toy_catalog, "dominated", one_layout_per_cost=True, top_k=1)
    plain = build_design_space(_scenario(doc), toy_catalog, "dominated", one_layout_per_cost=True)
    assert (bounded.pruned["caps"], plain.pruned["caps"]) == (7, 0)
    assert [_summary(d) for d in solver.solve(doc, toy_catalog, top_k=1).designs] == [("cheap-box", 32, 161_000.0)]


def test_the_budget_cut_reads_capex_lower_bounds_only(toy_catalog):
    """A TCO scenario's budget is judged on capex: the TCO bound's lower bounds (energy too) would cut designs within
    the budget, so a budget cut asked of it is refused (the build makes a capex bound for the cut)."""
    from solver.design_space import architectures
    from solver.design_space.bound import CostBound

    sc = _scenario(toy(objective="tco", constraints=dict(budget_usd=200_000)))
    archs = architectures(sc, toy_catalog)
    with pytest.raises(ValueError, match="objective='capex'"):
        CostBound(sc, toy_catalog, archs, 1).budget_cut(archs[0].perf, [1, 2], None, None)
    assert CostBound(sc, toy_catalog, archs, 1, objective="capex").budget_cut(archs[0].perf, [], None, None) == 0


def test_fastest_within_a_budget_equals_the_enumeration(toy_catalog):
    """`fastest` (prune level `points`, no cost bound) within $500,000: the points over the budget are dropped in
    the design space, and the three fastest designs are the enumeration's."""
    doc = toy(objective="fastest", target={"step_time_s": None}, constraints=dict(budget_usd=500_000))
    sc = _scenario(doc)
    space = build_design_space(sc, toy_catalog, "points", top_k=3)
    assert space.pruned["caps"] > 0
    result = solver.solve(doc, toy_catalog, top_k=3)
    expected = best_distinct(sorted(enumerated_designs(sc, toy_catalog), key=Design.sort_key), 3)
    assert [_summary(d) for d in result.designs] == [_summary(d) for d in expected]
    assert [d.perf.step_time_s for d in result.designs] == pytest.approx([d.perf.step_time_s for d in expected])
