"""Ranking: the K best distinct designs by no-good cuts, with exact bound pruning of
architectures before the loop and every returned design checked against the evaluator."""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from .. import costing
from ..design_space import DesignSpace, one_tier_allowed
from ..errors import ConsistencyError
from ..results import Design, make_design, within_caps
from . import model as milp
from .data import ModelData, model_data, points, unbuildable_error
from .highs import HighsAdapter, SolveOutcome

SAME_SPEED_REL = 1e-9  # `fastest`: step times within this relative distance are equally fast (then cheapest wins)


def same_speed(step_s: float, fastest_s: float) -> bool:
    """Whether a design of step time `step_s` is as fast as the fastest, `fastest_s` (SPEC §7 `fastest`:
    ties go to the cheaper design; the enumeration uses the same rule)."""
    return step_s <= fastest_s * (1 + SAME_SPEED_REL) + 1e-12


def k_best(space: DesignSpace, k: int, distinct_by: str = "architecture", time_limit_s: float | None = None,
           progress: Callable[[int, int], None] | None = None) -> tuple[list[Design], list[SolveOutcome], dict]:
    """Solve, cut the found identity off, solve again — K times or until infeasible. `fastest`
    solves twice per rank: the least step time, then the least cost among designs as fast."""
    timings: dict[str, float] = {}
    start = time.perf_counter()
    data = model_data(space)
    if not data.archs:
        raise unbuildable_error(space, data)
    fastest = data.objective == "fastest"
    data = _prune_points_over_caps(data)
    timings["points_over_caps"] = len(data.over_caps)
    if fastest:  # the bounds are on step time
        data, pruned = _prune_slow_points(space, data, k, distinct_by)
        timings["points_slower_than_k_designs"] = pruned
        pruned = 0
    else:
        data, pruned = _prune_by_bounds(space, data, k, distinct_by)
    timings["architectures_pruned_by_bounds"] = pruned
    model = milp.build_model(data)
    timings["build_s"] = time.perf_counter() - start
    adapter = HighsAdapter(time_limit_s=time_limit_s)
    deadline = None if time_limit_s is None else time.perf_counter() + time_limit_s
    designs, outcomes = [], []
    for index in range(k):
        def remaining() -> float | None:
            return None if deadline is None else max(0.05, deadline - time.perf_counter())

        outcome = adapter.solve(model, time_limit_s=remaining())
        outcomes.append(outcome)
        if not outcome.has_solution:
            break
        choice = milp.decode(model)
        if fastest:
            choice, outcome = _cheapest_as_fast(model, adapter, choice, index, remaining())
            outcomes.append(outcome)
        designs.append(_design_of(space, data, choice, proven=outcome.status == "optimal"))
        milp.add_no_good(model, choice, distinct_by, index)
        if progress:
            progress(index + 1, k)
        if deadline is not None and time.perf_counter() >= deadline:
            break
    timings["solve_s"] = adapter.total_time_s
    timings["model_variables"] = model.nvariables()
    timings["model_constraints"] = model.nconstraints()
    if not fastest:  # `fastest` comes out in rank order; equal-speed ties were settled by cost
        designs.sort(key=Design.sort_key)
    for rank, d in enumerate(designs, 1):
        d.rank = rank
    return designs, outcomes, timings


def _cheapest_as_fast(model, adapter: HighsAdapter, choice: milp.Choice, index: int,
                      time_limit_s: float | None) -> tuple[milp.Choice, SolveOutcome]:
    """The second stage of `fastest`: among the designs as fast as `choice` (same_speed), the
    cheapest; then the step-time objective is restored for the next rank."""
    import pyomo.environ as pyo

    fastest_s = model.data.space.shapes[choice.shape_index].step_time_s[_d_index(model, choice)]
    row = milp.bound_step_time(model, fastest_s * (1 + SAME_SPEED_REL) + 1e-12, index)
    model.objective.deactivate()
    model.cost_objective = pyo.Objective(expr=model.total_capex_musd, sense=pyo.minimize)
    try:
        outcome = adapter.solve(model, time_limit_s=time_limit_s)
        cheaper = milp.decode(model) if outcome.has_solution else choice
    finally:
        model.del_component(model.cost_objective)
        model.objective.activate()
        row.deactivate()
    return cheaper, outcome


def _d_index(model, choice: milp.Choice) -> int:
    return model.data.space.shapes[choice.shape_index].d_values.index(choice.d)


def _lower_bound_usd(data: ModelData, a: int, units: int, spares: int, nodes: int) -> float:
    """LB of one point: the bill-of-materials table with every fabric and rack count at zero (all
    prices and powers are ≥ 0, so no design of the point costs less)."""
    ad = data.archs[a]
    q = costing.Quantities(units=units - spares, spare_units=spares, nodes=nodes)
    lines = costing.bom_lines(ad.parts, q)
    cost = costing.lines_capex_usd(lines, data.contingency_fraction)
    if data.objective == "tco":
        cost += costing.energy_usd(data.pue * costing.lines_power_kw(lines), data.years, data.usd_per_kwh)
    return cost


def _prune_points_over_caps(data: ModelData) -> ModelData:
    """Exact: drop each point whose compute alone breaks a cap — GPUs bought > max_gpus, or the
    bill-of-materials table with every fabric and rack count at zero (units, spares, their NICs)
    already over budget_usd (capex, with contingency) or facility_power_kw (PUE · IT kW). Every other
    term is ≥ 0, so no design of the point meets the cap. Matters most for `fastest`, whose design
    space keeps every d (the largest are the unaffordable ones)."""
    caps = data.caps
    if all(caps.get(name) is None for name in ("max_gpus", "budget_usd", "facility_power_kw")):
        return data
    over = set()
    breaks: dict[tuple[int, int], bool] = {}  # (architecture, domains) -> over a cap
    for (i, j, a), (dom, spares, nodes, _) in points(data).items():
        if (a, dom) not in breaks:
            ad = data.archs[a]
            units = ad.units_per_domain * dom
            lines = costing.bom_lines(ad.parts, costing.Quantities(units=units, spare_units=spares, nodes=nodes))
            checks = ((caps.get("max_gpus"), nodes * ad.gpus_per_node),
                      (caps.get("budget_usd"), costing.lines_capex_usd(lines, data.contingency_fraction)),
                      (caps.get("facility_power_kw"), data.pue * costing.lines_power_kw(lines)))
            breaks[(a, dom)] = any(cap is not None and value > cap * (1 + 1e-9) for cap, value in checks)
        if breaks[(a, dom)]:
            over.add((i, j, a))
    return dataclasses.replace(data, over_caps=frozenset(over))


def _prune_slow_points(space: DesignSpace, data: ModelData, k: int, distinct_by: str,
                       tries_per_architecture: int = 3) -> tuple[ModelData, int]:
    """Exact bound pruning for `fastest`: UB_K = the K-th smallest step time among real designs of
    distinct identities that meet every cap (for each architecture, its fastest points evaluated in
    order, at most `tries_per_architecture`); the K best distinct designs are no slower than UB_K, so
    a point slower than UB_K (beyond the same_speed tolerance) is left out of the model."""
    sc, cat = space.scenario, space.catalog
    by_arch: dict[int, list] = {}
    for (i, j, a) in points(data):
        by_arch.setdefault(a, []).append((space.shapes[i].step_time_s[j], i, j))
    upper: dict = {}
    for a, candidates in by_arch.items():
        for _, i, j in sorted(candidates)[:tries_per_architecture]:
            shape = space.shapes[i]
            design = make_design(sc, cat, data.archs[a].arch, shape.layout(shape.d_values[j]),
                                 space.target_step_time_s, sc.pin.tiers)
            if design is None or not design.meets_target or not design.perf.fits_memory:
                continue
            if not within_caps(design, sc.constraints, sc.pin):
                continue
            if design.tiers == 1 and not one_tier_allowed(data.archs[a].arch, space.architectures):
                continue
            key = design.platform_identity if distinct_by == "platform" else design.identity
            upper[key] = min(upper.get(key, float("inf")), design.perf.step_time_s)
            break
    if len(upper) < k:
        return data, 0
    bound = sorted(upper.values())[k - 1]
    slow = {p for p in points(data) if not same_speed(space.shapes[p[0]].step_time_s[p[1]], bound)}
    return dataclasses.replace(data, over_caps=data.over_caps | slow), len(slow)


def _prune_by_bounds(space: DesignSpace, data: ModelData, k: int,
                     distinct_by: str = "architecture") -> tuple[ModelData, int]:
    """Exact bound pruning before the K-best loop.

    LB_a: the cheapest point of architecture a priced by the bill-of-materials table with every
    fabric and rack count at zero (units, spares and their scale-out NICs, with contingency; for TCO
    also their energy) — every other cost of the model is ≥ 0, so no design of a is cheaper. UB_K:
    evaluate each architecture's cheapest point with the evaluator; those that meet every
    requirement are K real designs of distinct identities (architectures, or platforms with
    `--distinct-by platform`; a layout identity is finer than an architecture's, so the bound
    holds for it too), so the K-th best distinct design costs
    at most the K-th smallest of them. An architecture with LB_a > UB_K cannot hold any of the K best
    and is left out of the model.
    """
    sc, cat = space.scenario, space.catalog
    lb: dict = {}
    cheapest: dict = {}
    for (i, j, a), (dom, spares, nodes, _) in points(data).items():
        units = data.archs[a].units_per_domain * dom + spares
        cost = _lower_bound_usd(data, a, units, spares, nodes)
        if a not in lb or cost < lb[a]:
            lb[a], cheapest[a] = cost, (i, j)
    upper: dict = {}
    for a, (i, j) in cheapest.items():
        shape = space.shapes[i]
        design = make_design(sc, cat, data.archs[a].arch, shape.layout(shape.d_values[j]), space.target_step_time_s,
                             sc.pin.tiers)
        if design is None or not design.meets_target or not design.perf.fits_memory:
            continue
        if not within_caps(design, sc.constraints, sc.pin):
            continue
        if design.tiers == 1 and not one_tier_allowed(data.archs[a].arch, space.architectures):
            continue
        key = design.platform_identity if distinct_by == "platform" else design.identity
        upper[key] = min(upper.get(key, float("inf")), design.objective_usd)
    if len(upper) < k:
        return data, 0
    bound = sorted(upper.values())[k - 1] * (1 + 1e-9) + 1e-3
    keep = [ad for a, ad in enumerate(data.archs) if lb.get(a, float("inf")) <= bound]
    return dataclasses.replace(data, archs=keep), len(data.archs) - len(keep)


def _design_of(space: DesignSpace, data: milp.ModelData, choice: milp.Choice, proven: bool = True) -> Design:
    """Evaluate the chosen design with the evaluator and check it agrees with the model.

    An unproven incumbent (time limit) may carry more switches, modules or racks than its design
    needs; the evaluator sizes them minimally, so its cost may only be lower, never higher.
    """
    ad = data.archs[choice.arch_index]
    shape = space.shapes[choice.shape_index]
    design = make_design(space.scenario, space.catalog, ad.arch, shape.layout(choice.d), space.target_step_time_s,
                         space.scenario.pin.tiers)
    problems = []
    if design is None:
        raise ConsistencyError(f"the model chose {ad.arch.label()} with {choice.domains} domains, which the evaluator cannot build")
    if design.tiers != choice.tiers:
        problems.append(f"tiers: model {choice.tiers}, evaluator {design.tiers}")
    tolerance = 1e-6 * max(1.0, design.objective_usd) + 0.01
    off = design.objective_usd - choice.objective_usd
    if off > tolerance or (proven and off < -tolerance):
        problems.append(f"objective: model ${choice.objective_usd:,.2f}, evaluator ${design.objective_usd:,.2f}")
    model_step_s = shape.step_time_s[shape.d_values.index(choice.d)]
    if abs(design.perf.step_time_s - model_step_s) > 1e-6 * model_step_s:
        problems.append(f"step time: model {model_step_s:.6f} s, evaluator {design.perf.step_time_s:.6f} s")
    if not design.meets_target:
        problems.append(f"step time {design.perf.step_time_s:.4f} s over the {space.target_step_time_s:.4f} s target")
    if not design.perf.fits_memory:
        problems.append(f"memory {design.perf.memory_per_gpu_gb:.1f} GB over {design.perf.hbm_usable_gb:.1f} GB")
    if problems:
        raise ConsistencyError(f"{ad.arch.label()} {shape.key} d={choice.d}: " + "; ".join(problems))
    return design
