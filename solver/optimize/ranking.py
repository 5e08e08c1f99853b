"""Ranking: the K best distinct designs by no-good cuts, with exact bound pruning of
architectures before the loop and every returned design checked against the evaluator."""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from .. import costing
from ..design_space import DesignSpace, allowed_tiers
from ..errors import ConsistencyError
from ..results import Design, make_design, within_caps
from . import model as milp
from .data import ModelData, model_data, points, unbuildable_error
from .highs import HighsAdapter, SolveOutcome


def k_best(space: DesignSpace, k: int, distinct_by: str = "architecture", time_limit_s: float | None = None,
           progress: Callable[[int, int], None] | None = None) -> tuple[list[Design], list[SolveOutcome], dict]:
    """Solve, cut the found identity off, solve again — K times or until infeasible."""
    timings: dict[str, float] = {}
    start = time.perf_counter()
    data = model_data(space)
    if not data.archs:
        raise unbuildable_error(space, data)
    data, timings["architectures_pruned_by_bounds"] = _prune_by_bounds(space, data, k)
    model = milp.build_model(data)
    timings["build_s"] = time.perf_counter() - start
    adapter = HighsAdapter(time_limit_s=time_limit_s)
    deadline = None if time_limit_s is None else time.perf_counter() + time_limit_s
    designs, outcomes = [], []
    for index in range(k):
        remaining = None if deadline is None else max(0.05, deadline - time.perf_counter())
        outcome = adapter.solve(model, time_limit_s=remaining)
        outcomes.append(outcome)
        if not outcome.has_solution:
            break
        choice = milp.decode(model)
        designs.append(_design_of(space, data, choice, proven=outcome.status == "optimal"))
        milp.add_no_good(model, choice, distinct_by, index)
        if progress:
            progress(index + 1, k)
        if deadline is not None and time.perf_counter() >= deadline:
            break
    timings["solve_s"] = adapter.total_time_s
    timings["model_variables"] = model.nvariables()
    timings["model_constraints"] = model.nconstraints()
    designs.sort(key=Design.sort_key)
    for rank, d in enumerate(designs, 1):
        d.rank = rank
    return designs, outcomes, timings


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


def _prune_by_bounds(space: DesignSpace, data: ModelData, k: int) -> tuple[ModelData, int]:
    """Exact bound pruning before the K-best loop.

    LB_a: the cheapest point of architecture a priced by the bill-of-materials table with every
    fabric and rack count at zero (units, spares and their scale-out NICs, with contingency; for TCO
    also their energy) — every other cost of the model is ≥ 0, so no design of a is cheaper. UB_K:
    evaluate each architecture's cheapest point with the evaluator; those that meet every
    requirement are K real designs of distinct identities, so the K-th best distinct design costs
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
        if design.tiers not in allowed_tiers(data.archs[a].arch, space.architectures, sc):
            continue
        upper[design.identity] = min(upper.get(design.identity, float("inf")), design.objective_usd)
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
    if not design.meets_target:
        problems.append(f"step time {design.perf.step_time_s:.4f} s over the {space.target_step_time_s:.4f} s target")
    if not design.perf.fits_memory:
        problems.append(f"memory {design.perf.memory_per_gpu_gb:.1f} GB over {design.perf.hbm_usable_gb:.1f} GB")
    if problems:
        raise ConsistencyError(f"{ad.arch.label()} {shape.key} d={choice.d}: " + "; ".join(problems))
    return design
