"""Ranking: the K best distinct designs by no-good cuts, infeasibility explained, and the
exhaustive enumeration the optimiser is checked against.
"""
from __future__ import annotations

import time
from typing import Callable, Optional

from . import milp, workload
from .design_space import DesignSpace, allowed_parallelism, architectures, domain_sizes, one_tier_allowed
from .fabric import divisors
from .highs import HighsAdapter, SolveOutcome
from .results import Design, make_design


class ConsistencyError(RuntimeError):
    """The evaluator disagrees with the optimisation model: a bug, never a user error."""


def k_best(space: DesignSpace, k: int, distinct_by: str = "architecture", time_limit_s: Optional[float] = None,
           progress: Optional[Callable[[int, int], None]] = None) -> tuple[list[Design], list[SolveOutcome], dict]:
    """Solve, cut the found identity off, solve again — K times or until infeasible."""
    timings = {}
    start = time.perf_counter()
    data = milp.model_data(space)
    if not data.archs:
        raise _unbuildable(space, data)
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


def _prune_by_bounds(space: DesignSpace, data: milp.ModelData, k: int) -> tuple[milp.ModelData, int]:
    """Exact bound pruning before the K-best loop.

    LB_a: the cheapest compute (units, spares and their scale-out NICs, with contingency; for TCO
    also their energy) over the points of architecture a — every other cost of the model is ≥ 0, so
    no design of a is cheaper. UB_K: evaluate each architecture's cheapest-compute point with the
    evaluator; those that meet every requirement are K real designs of distinct identities, so the
    K-th best distinct design costs at most the K-th smallest of them. An architecture with
    LB_a > UB_K cannot hold any of the K best and is left out of the model.
    """
    import dataclasses

    from .design_space import one_tier_allowed

    sc, cat = space.scenario, space.catalog
    lb, cheapest = {}, {}
    for (i, j, a), (dom, spares, nodes, _) in milp._points(data).items():
        ad = data.archs[a]
        units = ad.units_per_domain * dom + spares
        cost = (1 + data.contingency_fraction) * (units * ad.unit_musd + nodes * ad.rails * ad.nic_musd)
        if data.objective == "tco":
            cost += data.years * 8760.0 * data.pue * units * ad.unit_kw * data.usd_per_kwh * milp.MUSD
        if a not in lb or cost < lb[a]:
            lb[a], cheapest[a] = cost, (i, j)
    upper = {}
    for a, (i, j) in cheapest.items():
        shape = space.shapes[i]
        design = make_design(sc, cat, data.archs[a].arch, shape.layout(shape.d_values[j]), space.target_step_time_s,
                             sc.pin.tiers)
        if design is None or not design.meets_target or not design.perf.fits_memory:
            continue
        if not _within_caps(design, sc.constraints, sc.pin):
            continue
        if design.tiers == 1 and not one_tier_allowed(data.archs[a].arch, space.architectures):
            continue
        upper[design.identity] = min(upper.get(design.identity, float("inf")), design.objective_usd * milp.MUSD)
    if len(upper) < k:
        return data, 0
    bound = sorted(upper.values())[k - 1] * (1 + 1e-9) + 1e-9
    keep = [ad for a, ad in enumerate(data.archs) if lb.get(a, float("inf")) <= bound]
    return dataclasses.replace(data, archs=keep), len(data.archs) - len(keep)


def _unbuildable(space: DesignSpace, data: milp.ModelData):
    """Every allowed architecture was dropped for a catalog reason: an input error on the facility."""
    from .loading import InputError, Problem

    by_reason: dict = {}
    for label, why in sorted(data.dropped.items()):
        by_reason.setdefault(why, []).append(label)
    reasons = "; ".join(f"{why} ({len(labels)} architecture(s), e.g. {labels[0]})" for why, labels in by_reason.items())
    message = (f"no allowed architecture can be built from the catalog ({reasons}); check "
               "facility.link_distance_m against the links' max_reach_m, and the compute rack's usable kW and RU")
    origin = getattr(space.catalog, "origin", {}).get(("facility", "facility"))
    if origin:
        doc, loc = origin
        return InputError([doc.problem(loc, message)])
    files = getattr(space.catalog, "files", [("<catalog>", "")])
    return InputError([Problem(files[-1][0], 1, 1, "facility", message)])


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


# ------------------------------------------------------------------------------ enumeration


def enumerate_designs(scenario, catalog, target_step_time_s: Optional[float] = None) -> list[Design]:
    """Every feasible design of the unpruned design space, evaluated one by one (the reference the
    optimiser is checked against; same evaluator, no model, no pruning)."""
    target = target_step_time_s or scenario.target_step_time_s()
    cat = getattr(catalog, "catalog", catalog)
    wl, par, con, pin = scenario.workload, allowed_parallelism(scenario), scenario.constraints, scenario.pin
    plats = cat.by_id("platforms")
    out = []
    archs = architectures(scenario, catalog)
    for arch in archs:
        plat = plats[arch.platform]
        hw = workload.hardware_for(scenario, cat, arch.platform, arch.nic, arch.rails_per_node, arch.oversubscription)
        for g_used in domain_sizes(plat.gpus_per_domain, pin.gpus_per_domain_used):
            for t in par["tp"]:
                for c in par["cp"]:
                    for p in par["pp"]:
                        for v in par["vp"]:
                            if v > 1 and p == 1:
                                continue
                            for b in par["microbatch_size"]:
                                if wl.global_batch_size % b:
                                    continue
                                ds = [pin.dp] if pin.dp else divisors(wl.global_batch_size // b)
                                for d in ds:
                                    if wl.global_batch_size % (d * b):
                                        continue
                                    lay = workload.Layout(t, c, p, v, d, b, g_used)
                                    if workload.placement_problem(lay, wl, g_used) is not None:
                                        continue
                                    perf = workload.performance(wl, lay, hw, workload.overlap_for(scenario))
                                    if not perf.fits_memory or perf.step_time_s > target * (1 + 1e-9):
                                        continue
                                    design = make_design(scenario, catalog, arch, lay, target, pin.tiers)
                                    if design is None or (design.tiers == 1 and not one_tier_allowed(arch, archs)):
                                        continue
                                    if _within_caps(design, con, pin):
                                        out.append(design)
    out.sort(key=Design.sort_key)
    return out


def _within_caps(design: Design, con, pin) -> bool:
    c = design.cost
    if pin.nodes is not None and c.job_nodes != pin.nodes:
        return False
    checks = ((con.max_gpus, c.gpus), (con.budget_usd, c.capex_usd), (con.facility_power_kw, c.facility_power_kw),
              (con.max_racks, c.racks))
    return all(cap is None or value <= cap * (1 + 1e-9) for cap, value in checks)


def best_distinct(designs: list[Design], k: int, distinct_by: str = "architecture") -> list[Design]:
    """The K best designs with distinct identities from an enumeration (sorted input)."""
    seen, out = set(), []
    for d in designs:
        key = d.identity if distinct_by == "architecture" else d.layout_identity
        if key not in seen:
            seen.add(key)
            out.append(d)
        if len(out) == k:
            break
    return out


# ------------------------------------------------------------------------- infeasibility


def explain_infeasible(space: DesignSpace, time_limit_s: Optional[float] = None) -> str:
    """Say which requirement cannot be met and by how much."""
    sc = space.scenario
    target = space.target_step_time_s
    if not space.architectures and space.combinations == 0:
        return ("no allowed architecture: the allow-lists and pins in constraints/pin leave no platform × NIC × "
                "rails × switch combination (check that the switch generation matches the NIC)")
    if not space.shapes:
        lean_gb, usable_gb, lean_key = space.leanest
        fast_s, fast_key = space.fastest
        if fast_s == float("inf"):
            return (f"no allowed layout fits in GPU memory: the leanest needs {lean_gb:,.1f} GB per GPU "
                    f"({lean_key}) but {usable_gb:,.1f} GB is usable; allow larger tp/pp/cp, "
                    f"a smaller microbatch_size, more activation recompute, or a GPU with more memory")
        cap = f" within max_gpus = {sc.constraints.max_gpus:,}" if sc.constraints.max_gpus else ""
        message = (f"the target step time of {target:.3g} s cannot be met: the fastest allowed design{cap} reaches "
                   f"{fast_s:.3g} s ({fast_key})")
        needed = _gpus_needed_without_cap(space, time_limit_s) if sc.constraints.max_gpus else None
        if needed:
            return message + f"; {target:.3g} s needs {needed}; max_gpus is {sc.constraints.max_gpus:,}"
        return message + "; relax the target, allow more GPUs, or allow faster platforms, more rails or other layouts"
    # The layouts can meet the target; some cap cannot. Re-solve with penalised cap slacks.
    data = milp.model_data(space)
    model = milp.build_model(data, soft_caps=True)
    outcome = HighsAdapter(time_limit_s=time_limit_s).solve(model)
    if not outcome.has_solution:
        too_big = _beyond_three_tiers(space, data)
        if too_big:
            return too_big
        return f"no design could be built even with the caps relaxed (solver status {outcome.status})"
    import pyomo.environ as pyo

    choice = milp.decode(model)
    shape = space.shapes[choice.shape_index]
    design = make_design(space.scenario, space.catalog, data.archs[choice.arch_index].arch, shape.layout(choice.d),
                         space.target_step_time_s)
    parts = []
    c = design.cost
    needs = {"max_gpus": (c.gpus, "{:,.0f} GPUs"), "budget_usd": (c.capex_usd, "${:,.0f}"),
             "facility_power_kw": (c.facility_power_kw, "{:,.0f} kW"), "max_racks": (c.racks, "{:,.0f} racks")}
    for name, cap in data.caps.items():
        if cap is None or pyo.value(model.cap_slack[name]) <= 1e-6:
            continue
        value, fmt = needs[name]
        parts.append(f"{name}: the cheapest design meeting the {target:.3g} s target ({design.label}, "
                     f"{c.gpus:,} GPUs) needs {fmt.format(value)}; {name} is {fmt.format(cap)}")
    fastest = _fastest_within_gpu_cap(space)
    if fastest:
        parts.append(fastest)
    return "; ".join(parts) if parts else "the caps together leave no design (each alone could be met)"


def _beyond_three_tiers(space: DesignSpace, data) -> Optional[str]:
    """When every layout that meets the target needs more nodes than any allowed 3-tier fat tree holds."""
    from .fabric import compute_units, max_nodes, nodes_per_unit

    cat = getattr(space.catalog, "catalog", space.catalog)
    plats = cat.by_id("platforms")
    fewest = None
    for s in space.shapes:
        plat = plats[s.perf.platform]
        nodes = min(compute_units(plat, dom) * nodes_per_unit(plat) for dom in s.domains)
        if fewest is None or nodes < fewest[0]:
            fewest = (nodes, s)
    biggest = max(((max_nodes(ad.k, ad.rails, ad.arch.oversubscription, 3), ad.arch) for ad in data.archs),
                  key=lambda x: x[0], default=None)
    if fewest is None or biggest is None or fewest[0] <= biggest[0]:
        return None
    nodes, s = fewest
    return (f"every design meeting the {space.target_step_time_s:.3g} s target needs at least {nodes:,} nodes "
            f"({s.describe(s.d_values[0])}), more than the largest 3-tier fat-tree fabric allowed holds "
            f"({biggest[0]:,} nodes with {biggest[1].rails_per_node} rail(s) of {biggest[1].switch}); allow a "
            f"higher-radix switch, fewer rails per node or a slower target")


def _gpus_needed_without_cap(space: DesignSpace, time_limit_s: Optional[float]) -> Optional[str]:
    """The GPU count of the cheapest design meeting the target when max_gpus is lifted."""
    from .design_space import build_design_space

    sc = space.scenario.model_copy(update={"constraints": space.scenario.constraints.model_copy(update={"max_gpus": None})})
    uncapped = build_design_space(sc, space.catalog)  # prune="dominated": d_values[0] is each layout's smallest feasible d
    if not uncapped.shapes:
        return None
    fewest = min(uncapped.shapes, key=lambda s: (s.gpus_per_replica * s.d_values[0], s.key))
    n = fewest.gpus_per_replica * fewest.d_values[0]
    text = f"at least {n:,} GPUs ({fewest.describe(fewest.d_values[0])})"
    designs, _, _ = k_best(uncapped, 1, time_limit_s=time_limit_s)
    if designs:
        text += f"; the cheapest design meeting it buys {designs[0].cost.gpus:,} ({designs[0].label})"
    return text


def _fastest_within_gpu_cap(space: DesignSpace) -> Optional[str]:
    cap = space.scenario.constraints.max_gpus
    if cap is None:
        return None
    best = None
    for s in space.shapes:
        for d, st in zip(s.d_values, s.step_time_s):
            mem = s.memory_gb(d)
            if s.gpus_per_replica * d <= cap and mem <= s.hbm_usable_gb and (best is None or st < best[0]):
                best = (st, s, d)
    if best is None:
        return None
    st, s, d = best
    return f"the fastest allowed design within max_gpus = {cap:,} reaches {st:.3g} s ({s.describe(d)})"
