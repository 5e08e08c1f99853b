"""Infeasibility explained (SPEC §7): which requirement cannot be met, and by how much."""
from __future__ import annotations

import math

from ..costing import compute_units, nodes_per_unit
from ..design_space import DesignSpace, build_design_space
from ..errors import InputError
from ..results import make_design
from . import model as milp
from .data import ModelData, model_data
from .highs import HighsAdapter
from .model import CAP_NAMES
from .ranking import k_best


def explain_infeasible(space: DesignSpace, time_limit_s: float | None = None) -> str:
    """Say which requirement cannot be met and by how much, and what the caps and pins can buy."""
    sc = space.scenario
    target = space.target_step_time_s
    if sc.pin.nodes is not None and sc.objective != "fastest" and math.isfinite(target):
        reached = _pinned_nodes_reach(space, time_limit_s)
        if reached:
            return reached
    if not space.architectures and space.combinations == 0:
        return ("no allowed architecture: the allow-lists and pins in constraints/pin leave no platform × NIC × "
                "rails × switch combination (check that the switch generation matches the NIC)")
    if not space.shapes:
        return _no_layout(space, time_limit_s)
    return _caps_exclude(space, time_limit_s)


def _no_layout(space: DesignSpace, time_limit_s: float | None) -> str:
    """No layout fits in memory, or none meets the target (within max_gpus)."""
    sc, target = space.scenario, space.target_step_time_s
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


def _caps_exclude(space: DesignSpace, time_limit_s: float | None) -> str:
    """The layouts can meet the target; some cap cannot. Re-solve with penalised cap slacks, name
    each cap with what the cheapest design needs, and say what the caps can buy."""
    sc, target = space.scenario, space.target_step_time_s
    data = model_data(space)
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
    if design is None:  # the model's fabric rows and the evaluator agree on what fits (tests)
        return "no design could be evaluated with the caps relaxed"
    parts = []
    c = design.cost
    needs = {"max_gpus": (c.gpus, "{:,.0f} GPUs"), "budget_usd": (c.capex_usd, "${:,.0f}"),
             "facility_power_kw": (c.facility_power_kw, "{:,.0f} kW"), "max_racks": (c.racks, "{:,.0f} racks")}
    meeting = f"meeting the {target:.3g} s target" if math.isfinite(target) else "of the design space"
    for name, cap in data.caps.items():
        if cap is None or pyo.value(model.cap_slack[name]) <= 1e-6:
            continue
        value, fmt = needs[name]
        parts.append(f"{name}: the cheapest design {meeting} ({design.label}, "
                     f"{c.gpus:,} GPUs) needs {fmt.format(value)}; {name} is {fmt.format(cap)}")
    can_buy = _what_the_caps_buy(space, time_limit_s) if sc.objective != "fastest" else None
    if can_buy:
        parts.append(can_buy)
    else:
        fastest = _fastest_within_gpu_cap(space)
        if fastest:
            parts.append(fastest)
    return "; ".join(parts) if parts else "the caps together leave no design (each alone could be met)"


def fastest_design(scenario, catalog, time_limit_s: float | None = None):
    """The fastest design of `scenario` with its target removed, within its caps and pins (SPEC §7
    `fastest`): what the caps and pins can buy. None when they admit no design at all."""
    from ..inputs.schema import Target

    fast = scenario.model_copy(update={"objective": "fastest", "target": Target()})
    space = build_design_space(fast, catalog)
    if not space.shapes:
        return None
    try:
        designs, _, _ = k_best(space, 1, time_limit_s=time_limit_s)
    except InputError:
        return None
    return designs[0] if designs else None


def _reached(design) -> str:
    c = design.cost
    return (f"{design.perf.step_time_s:.3g} s per step ({design.label}, {c.gpus:,} GPUs, "
            f"{_layout(design)}, capex ${c.capex_usd:,.0f})")


def _layout(design) -> str:
    lay = design.layout
    return f"tp={lay.tp} cp={lay.cp} pp={lay.pp} vp={lay.vp} dp={lay.dp} mbs={lay.microbatch_size}"


def _what_the_caps_buy(space: DesignSpace, time_limit_s: float | None) -> str | None:
    """What the caps can buy: the fastest design within them (the target removed)."""
    sc = space.scenario
    design = fastest_design(sc, space.catalog, time_limit_s)
    if design is None:
        return None
    caps = ", ".join(f"{name} = {_cap_text(name, getattr(sc.constraints, name))}" for name in CAP_NAMES
                     if getattr(sc.constraints, name) is not None)
    return f"within {caps} the fastest design reaches {_reached(design)}"


def _cap_text(name: str, value: float) -> str:
    return f"${value:,.0f}" if name == "budget_usd" else f"{value:,.0f}" + (" kW" if name == "facility_power_kw" else "")


def _pinned_nodes_reach(space: DesignSpace, time_limit_s: float | None) -> str | None:
    """With pin.nodes, when no layout on that many nodes meets the target: the step time it reaches."""
    sc = space.scenario
    design = fastest_design(sc, space.catalog, time_limit_s)
    if design is None or design.perf.step_time_s <= space.target_step_time_s * (1 + 1e-9):
        return None  # the pinned size can meet the target: something else is in the way
    return (f"pin.nodes = {sc.pin.nodes:,}: no design on {sc.pin.nodes:,} nodes meets the "
            f"{space.target_step_time_s:.3g} s target; the fastest reaches {_reached(design)}; pin more nodes, "
            "remove pin.nodes, or relax the target")


def _beyond_three_tiers(space: DesignSpace, data: ModelData) -> str | None:
    """When every layout that meets the target needs more nodes than any allowed 3-tier fat tree holds."""
    plats = space.catalog.by_id("platforms")
    fewest = None
    for s in space.shapes:
        plat = plats[s.perf.platform]
        nodes = min(compute_units(plat, dom) * nodes_per_unit(plat) for dom in s.domains)
        if fewest is None or nodes < fewest[0]:
            fewest = (nodes, s)
    biggest = max(((ad.fab.cap[3], ad.arch) for ad in data.archs),
                  key=lambda x: x[0], default=None)
    if fewest is None or biggest is None or fewest[0] <= biggest[0]:
        return None
    nodes, s = fewest
    return (f"every design meeting the {space.target_step_time_s:.3g} s target needs at least {nodes:,} nodes "
            f"({s.describe(s.d_values[0])}), more than the largest 3-tier fat-tree fabric allowed holds "
            f"({biggest[0]:,} nodes with {biggest[1].rails_per_node} rail(s) of {biggest[1].switch}); allow a "
            f"higher-radix switch, fewer rails per node or a slower target")


def _gpus_needed_without_cap(space: DesignSpace, time_limit_s: float | None) -> str | None:
    """The GPU count of the cheapest design meeting the target when max_gpus is lifted."""
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


def _fastest_within_gpu_cap(space: DesignSpace) -> str | None:
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
