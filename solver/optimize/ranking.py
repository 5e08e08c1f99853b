"""Ranking: the K best distinct designs by no-good cuts, with exact bound pruning of
architectures before the loop and every returned design checked against the evaluator."""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

from .. import costing
from ..deadline import NO_LIMIT, Deadline
from ..design_space import DesignSpace
from ..errors import ConsistencyError
from ..results import Design, make_design
from . import model as milp
from .data import MUSD, ModelData, model_data, points, unbuildable_error
from .highs import HighsAdapter, SolveOutcome
from .ties import admissible_design, faster_at_equal_cost
from .user_rows import in_force

SAME_SPEED_REL = 1e-9  # `fastest`: step times within this relative distance are equally fast (then cheapest wins)


def same_speed(step_s: float, fastest_s: float) -> bool:
    """Whether a design of step time `step_s` is as fast as the fastest, `fastest_s` (SPEC §7 `fastest`:
    ties go to the cheaper design; the enumeration uses the same rule)."""
    return step_s <= fastest_s * (1 + SAME_SPEED_REL) + 1e-12


@dataclass
class Search:
    """What the K-best search found and how far it got.

    complete: the whole design space was searched and the loop ended with K designs or a proof that
    no further distinct design exists; otherwise `stopped_in` names the stage the time limit cut
    short (design space, bounds, model build or K-best). proven: how many of the leading designs
    are proven to be the best in that order (each found by a solve that proved optimality over the
    whole space, after only proven designs were cut off).
    """

    designs: list[Design]
    outcomes: list[SolveOutcome]
    timings: dict
    complete: bool = True
    proven: int = 0
    stopped_in: str | None = None


def k_best(space: DesignSpace, k: int, distinct_by: str = "architecture", deadline: Deadline = NO_LIMIT,
           progress: Callable[[int, int], None] | None = None) -> Search:
    """Solve, cut the found identity off, solve again — K times, until infeasible, or until the
    time limit. `fastest` solves twice per rank: the least step time, then the least cost among
    designs as fast. When the limit stops the search before HiGHS finds anything, the best designs the
    bound pruning evaluated (real designs meeting every requirement) are returned, unproven."""
    start = time.perf_counter()
    data = model_data(space)
    if not data.archs:
        raise unbuildable_error(space, data)
    fastest = data.objective == "fastest"
    data = prune_points_over_caps(data)
    timings: dict = {"points_over_caps": len(data.over_caps)}
    evaluated: list[Design] = []
    if fastest:  # the bounds are on step time
        data, slow = _prune_slow_points(space, data, k, distinct_by)
        timings["points_slower_than_k_designs"] = slow
        pruned = 0
    else:
        data, pruned, evaluated = prune_by_bounds(space, data, k, distinct_by, deadline)
    timings["architectures_pruned_by_bounds"] = pruned
    search = Search([], [], timings)
    adapter = HighsAdapter(time_limit_s=deadline.seconds)
    if deadline.expired("bounds"):
        search.stopped_in = "bounds"
    else:
        model = milp.build_model(data)
        search.timings.update(model_variables=model.nvariables(), model_constraints=model.nconstraints())
        if deadline.expired("model"):
            search.stopped_in = "model build"
        else:
            search.timings["build_s"] = time.perf_counter() - start
            search.stopped_in = _solve_loop(space, data, model, adapter, k, distinct_by, deadline, progress, search)
            if not fastest:
                _check_first_against_evaluated(search, evaluated)
    search.timings.setdefault("build_s", time.perf_counter() - start)
    search.timings["solve_s"] = adapter.total_time_s
    if not space.complete:
        search.stopped_in = "design space"
    search.complete = search.stopped_in is None
    search.proven = _proven(search) if space.complete else 0
    if not search.designs and search.stopped_in is not None:
        search.designs = best_distinct(sorted(evaluated, key=Design.sort_key), k, distinct_by)
    if not fastest:  # `fastest` comes out in rank order; equal-speed ties were settled by cost
        search.designs.sort(key=Design.sort_key)
    for rank, d in enumerate(search.designs, 1):
        d.rank = rank
    return search


def _check_first_against_evaluated(search: Search, evaluated: list[Design]) -> None:
    """The designs the bound pruning evaluated are points of the model that meet every requirement, so a
    first solve that proves infeasibility, or proves optimal a design costlier than one of them, is
    wrong (it was HiGHS's presolve aggregator on expand-owned-h100, optimize/highs.py): raise rather than
    rank a wrong answer."""
    if not search.outcomes or not evaluated:
        return
    first = search.outcomes[0]
    cheapest = min(evaluated, key=lambda d: d.objective_usd)
    if first.status == "infeasible":
        raise ConsistencyError(f"the solver proved the model infeasible, but {cheapest.label} meets every requirement "
                               f"(${cheapest.objective_usd:,.0f})")
    if first.status == "optimal" and search.designs:
        best = search.designs[0]
        if best.objective_usd > cheapest.objective_usd * (1 + 1e-9) + 0.01:
            raise ConsistencyError(f"the solver proved {best.label} (${best.objective_usd:,.0f}) optimal, but "
                                   f"{cheapest.label} meets every requirement for ${cheapest.objective_usd:,.0f}")


def _proven(search: Search) -> int:
    """Leading designs each found by a solve that proved optimality (after only proven cuts).
    `fastest` records two outcomes per design (step time, then cost among the equally fast)."""
    per_design = 2 if search.designs and search.designs[0].objective == "fastest" else 1
    proven = 0
    for i in range(len(search.designs)):
        if any(o.status != "optimal" for o in search.outcomes[i * per_design:(i + 1) * per_design]):
            break
        proven += 1
    return proven


def _solve_loop(space: DesignSpace, data: ModelData, model, adapter: HighsAdapter, k: int, distinct_by: str,
                deadline: Deadline, progress, search: Search) -> str | None:
    """The K-best loop proper; returns "K-best" if the time limit stopped it, else None (K designs
    found, or the last solve proved infeasibility or failed: the caller reads the last outcome)."""
    for index in range(k):
        remaining = deadline.remaining_s()
        if remaining is not None and remaining <= 0:
            return "K-best"
        outcome = adapter.solve(model, time_limit_s=None if remaining is None else max(0.05, remaining))
        search.outcomes.append(outcome)
        if not outcome.has_solution:
            return "K-best" if outcome.status == "time_limit" else None
        choice = milp.decode(model)
        if data.objective == "fastest":
            remaining = deadline.remaining_s()
            choice, outcome = _cheapest_as_fast(model, adapter, choice, index,
                                                None if remaining is None else max(0.05, remaining))
            search.outcomes.append(outcome)
        elif distinct_by == "layout":  # equal-cost layouts abound: the fastest of them (SPEC §7 tie rule)
            remaining = deadline.remaining_s()
            choice = _fastest_as_cheap(model, adapter, choice, index, None if remaining is None else max(0.05, remaining))
        design = design_of(space, data, choice, proven=outcome.status == "optimal")
        search.designs.append(design if data.objective == "fastest" else faster_at_equal_cost(space, design, distinct_by))
        milp.add_no_good(model, choice, distinct_by, index)
        if progress:
            progress(index + 1, k)
    return None


def best_distinct(designs: list[Design], k: int, distinct_by: str = "architecture") -> list[Design]:
    """The first K designs of a sorted list with distinct identities."""
    seen, out = set(), []
    for d in designs:
        key = {"architecture": d.identity, "platform": d.platform_identity}.get(distinct_by, d.layout_identity)
        if key not in seen:
            seen.add(key)
            out.append(d)
        if len(out) == k:
            break
    return out


def _cheapest_as_fast(model, adapter: HighsAdapter, choice: milp.Choice, index: int,
                      time_limit_s: float | None) -> tuple[milp.Choice, SolveOutcome]:
    """The second stage of `fastest`: among the designs as fast as `choice` (same_speed), the
    cheapest; then the step-time objective is restored for the next rank."""
    import pyomo.core as pyo

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


def _fastest_as_cheap(model, adapter: HighsAdapter, choice: milp.Choice, index: int,
                      time_limit_s: float | None) -> milp.Choice:
    """The second stage of a cost objective with `--distinct-by layout`: among the designs that cost
    no more than `choice` (to the cent), the fastest (the first stage picks any of equal-cost layouts);
    then the cost objective is restored. Kept only when proven optimal, else the first choice stands."""
    import pyomo.core as pyo

    if not hasattr(model, "step_objective_ms"):
        milp.add_step_objective(model)
    cost = model.total_tco_musd if model.data.objective == "tco" else model.total_capex_musd
    row = milp.add_cut(model, f"same_cost_{index}", cost <= (choice.objective_usd + 0.005) * MUSD)
    model.objective.deactivate()
    model.speed_objective = pyo.Objective(expr=model.step_objective_ms, sense=pyo.minimize)
    try:
        outcome = adapter.solve(model, time_limit_s=time_limit_s)
        faster = milp.decode(model) if outcome.status == "optimal" else choice
    finally:
        model.del_component(model.speed_objective)
        model.objective.activate()
        row.deactivate()
    return faster


def _d_index(model, choice: milp.Choice) -> int:
    return model.data.space.shapes[choice.shape_index].d_values.index(choice.d)


def _lower_bound_usd(data: ModelData, a: int, units: int, spares: int, nodes: int) -> float:
    """LB of one point of architecture a (`costing.point_lower_bound_usd`: no design of the point costs less)."""
    energy = (data.pue, data.years, data.usd_per_kwh) if data.objective == "tco" else None
    return costing.point_lower_bound_usd(data.archs[a].parts, units - spares, spares, nodes, data.contingency_fraction,
                                         data.owned, energy)


def prune_points_over_caps(data: ModelData) -> ModelData:
    """Exact: drop each point whose compute alone breaks a cap — GPUs bought > max_gpus, or the
    bill-of-materials table with every fabric and rack count at zero (units, spares, their NICs)
    already over budget_usd (capex, with contingency, owned parts netted as the cap is judged) or
    facility_power_kw (PUE · IT kW: owned parts draw power too). Every other
    term is ≥ 0, so no design of the point meets the cap. Matters most for `fastest`, whose design
    space keeps every d (the largest are the unaffordable ones)."""
    caps = data.caps
    if all(caps.get(name) is None for name in ("max_gpus", "budget_usd", "facility_power_kw")):
        return data
    over = set()
    breaks: dict[tuple[int, int, int, int], bool] = {}  # (architecture, domains, spares, nodes) -> over a cap
    for (i, j, a), (dom, spares, nodes, _, _) in points(data).items():
        key = (a, dom, spares, nodes)  # G_u decides the in-domain spares, so domains alone do not fix the nodes
        if key not in breaks:
            ad = data.archs[a]
            units = ad.units_per_domain * dom
            lines = costing.bom_lines(ad.parts, costing.Quantities(units=units, spare_units=spares, nodes=nodes))
            # capex as the caps judge it: owned parts netted (`costing.point_lower_bound_usd`)
            capex = costing.point_lower_bound_usd(ad.parts, units, spares, nodes, data.contingency_fraction, data.owned)
            checks = ((caps.get("max_gpus"), nodes * ad.gpus_per_node), (caps.get("budget_usd"), capex),
                      (caps.get("facility_power_kw"), data.pue * costing.lines_power_kw(lines)))
            breaks[key] = any(cap is not None and value > cap * (1 + 1e-9) for cap, value in checks)
        if breaks[key]:
            over.add((i, j, a))
    return dataclasses.replace(data, over_caps=frozenset(over))


def _prune_slow_points(space: DesignSpace, data: ModelData, k: int, distinct_by: str,
                       tries_per_architecture: int = 3) -> tuple[ModelData, int]:
    """Exact bound pruning for `fastest`: UB_K = the K-th smallest step time among real designs of
    distinct identities that meet every cap (for each architecture, its fastest points evaluated in
    order, at most `tries_per_architecture`); the K best distinct designs are no slower than UB_K, so
    a point slower than UB_K (beyond the same_speed tolerance) is left out of the model. Off while user rows are in
    force (the designs it evaluates do not see them)."""
    if in_force(space.scenario):
        return data, 0
    by_arch: dict[int, list] = {}
    for (i, j, a) in points(data):
        by_arch.setdefault(a, []).append((space.shapes[i].step_time_s[j], i, j))
    upper: dict = {}
    for a, candidates in by_arch.items():
        for _, i, j in sorted(candidates)[:tries_per_architecture]:
            shape = space.shapes[i]
            design = admissible_design(space, data.archs[a].arch, shape.layout(shape.d_values[j]))
            if design is None:
                continue
            key = design.platform_identity if distinct_by == "platform" else design.identity
            upper[key] = min(upper.get(key, float("inf")), design.perf.step_time_s)
            break
    if len(upper) < k:
        return data, 0
    bound = sorted(upper.values())[k - 1]
    slow = {p for p in points(data) if not same_speed(space.shapes[p[0]].step_time_s[p[1]], bound)}
    return dataclasses.replace(data, over_caps=data.over_caps | slow), len(slow)


def prune_by_bounds(space: DesignSpace, data: ModelData, k: int, distinct_by: str = "architecture",
                     deadline: Deadline = NO_LIMIT) -> tuple[ModelData, int, list[Design]]:
    """Exact bound pruning before the K-best loop; also returns the designs it evaluated that meet
    every requirement (the time limit's fallback answer).

    LB_a: the cheapest point of architecture a priced by the bill-of-materials table with every
    fabric and rack count at zero (units, spares and their scale-out NICs, with contingency; for TCO
    also their energy) — every other cost of the model is ≥ 0, so no design of a is cheaper. UB_K:
    evaluate each architecture's cheapest point with the evaluator; those that meet every
    requirement are K real designs of distinct identities (architectures, or platforms with
    `--distinct-by platform`; a layout identity is finer than an architecture's, so the bound
    holds for it too), so the K-th best distinct design costs
    at most the K-th smallest of them. An architecture with LB_a > UB_K cannot hold any of the K best
    and is left out of the model. When the deadline's "bounds" share runs out, nothing is pruned. Off while user rows
    are in force (the designs it evaluates do not see them, optimize/user_rows.py).
    """
    if in_force(space.scenario):
        return data, 0, []
    lb: dict = {}
    cheapest: dict = {}
    for (i, j, a), (dom, spares, nodes, _, _) in points(data).items():
        units = data.archs[a].units_per_domain * dom + spares
        cost = _lower_bound_usd(data, a, units, spares, nodes)
        if a not in lb or cost < lb[a]:
            lb[a], cheapest[a] = cost, (i, j)
    upper: dict = {}
    evaluated: list[Design] = []
    for a, (i, j) in cheapest.items():
        if deadline.expired("bounds"):
            return data, 0, evaluated
        shape = space.shapes[i]
        design = admissible_design(space, data.archs[a].arch, shape.layout(shape.d_values[j]))
        if design is None:
            continue
        evaluated.append(design)
        key = design.platform_identity if distinct_by == "platform" else design.identity
        upper[key] = min(upper.get(key, float("inf")), design.objective_usd)
    if len(upper) < k:
        return data, 0, evaluated
    bound = sorted(upper.values())[k - 1] * (1 + 1e-9) + 1e-3
    keep = [ad for a, ad in enumerate(data.archs) if lb.get(a, float("inf")) <= bound]
    return dataclasses.replace(data, archs=keep), len(data.archs) - len(keep), evaluated


def design_of(space: DesignSpace, data: milp.ModelData, choice: milp.Choice, proven: bool = True) -> Design:
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
    problems += requirement_problems(design, space.target_step_time_s)
    if problems:
        raise ConsistencyError(f"{ad.arch.label()} {shape.key} d={choice.d}: " + "; ".join(problems))
    return design


def requirement_problems(design: Design, target_step_time_s: float) -> list[str]:
    """What an evaluated design the model chose fails of the requirements every chosen design meets:
    the target step time and the GPU memory (empty when it meets both)."""
    problems = []
    if not design.meets_target:
        problems.append(f"step time {design.perf.step_time_s:.4f} s over the {target_step_time_s:.4f} s target")
    if not design.perf.fits_memory:
        problems.append(f"memory {design.perf.memory_per_gpu_gb:.1f} GB over {design.perf.hbm_usable_gb:.1f} GB")
    return problems
