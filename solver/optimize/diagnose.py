"""Infeasibility explained (SPEC §7): which requirement cannot be met, and by how much."""
from __future__ import annotations

from ..costing import compute_units, nodes_per_unit
from ..design_space import DesignSpace, allowed_tiers, architectures, build_design_space, fabric_spec_of
from ..fabrics import family
from ..results import make_design
from . import model as milp
from .data import ModelData, model_data
from .highs import HighsAdapter
from .ranking import k_best


def explain_infeasible(space: DesignSpace, time_limit_s: float | None = None) -> str:
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
    data = model_data(space)
    model = milp.build_model(data, soft_caps=True)
    outcome = HighsAdapter(time_limit_s=time_limit_s).solve(model)
    if not outcome.has_solution:
        too_big = _beyond_every_fabric(space, data)
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


def _beyond_every_fabric(space: DesignSpace, data: ModelData) -> str | None:
    """When every layout that meets the target needs more nodes than any allowed fabric of its own
    performance class (platform, NIC, rails, family) holds: say so, and name the fabric families
    (allowed or not) that would hold them."""
    plats = space.catalog.by_id("platforms")
    biggest: dict = {}
    for ad in data.archs:
        cap = max((ad.fab.cap[t] for t in ad.tiers), default=0)
        if cap > biggest.get(ad.arch.perf, (0, None))[0]:
            biggest[ad.arch.perf] = (cap, ad.arch)
    fewest = None
    for s in space.shapes:
        plat = plats[s.perf.platform]
        nodes = min(compute_units(plat, dom) * nodes_per_unit(plat) for dom in s.domains)
        cap = max(biggest.get(p, (0, None))[0] for p in s.perfs)
        if nodes <= cap:
            return None  # this layout fits some allowed fabric: the caps or the tiers are not the reason
        if fewest is None or nodes < fewest[0]:
            fewest = (nodes, s)
    if fewest is None:
        return None
    nodes, s = fewest
    cap, arch = max((biggest.get(p, (0, None)) for p in s.perfs), key=lambda x: x[0])
    held = (f"more than the largest allowed fabric holds ({cap:,} nodes: {arch.fabric}, {arch.rails_per_node} "
            f"rail(s) of {arch.switch})" if arch is not None else "no allowed fabric holds it")
    text = (f"every design meeting the {space.target_step_time_s:.3g} s target needs at least {nodes:,} nodes "
            f"({s.describe(s.d_values[0])}), {held}")
    holding = _families_holding(space, s.perf.platform, nodes)
    if not holding:
        return text + ("; no fabric family holds them (fat-tree, multi-plane, rail-only): allow a higher-radix "
                       "switch, fewer rails per node or a slower target")
    allowed = {a.fabric for a in space.architectures}
    names = ", ".join(f"{name} (up to {n:,} nodes with {a.rails_per_node} rail(s) of {a.switch})"
                      for name, (n, a) in sorted(holding.items()))
    hint = "" if set(holding) <= allowed else "; allow them in constraints.fabrics"
    return text + f"; fabric families that would hold them: {names}{hint}"


def _families_holding(space: DesignSpace, platform: str, nodes: int) -> dict:
    """family → (largest node count, architecture) among the platform's architectures of every
    family (the scenario's constraints.fabrics and pin.fabric lifted) that hold `nodes` nodes."""
    sc = space.scenario
    free = sc.model_copy(update={"constraints": sc.constraints.model_copy(update={"fabrics": None}),
                                 "pin": sc.pin.model_copy(update={"fabric": None})})
    archs = [a for a in architectures(free, space.catalog) if a.platform == platform]
    out: dict = {}
    for a in archs:
        spec = fabric_spec_of(space.catalog, a)
        cap = max([family(a.fabric).max_nodes(spec, t) for t in allowed_tiers(a, archs, free)], default=0)
        if cap >= nodes and cap > out.get(a.fabric, (0, None))[0]:
            out[a.fabric] = (cap, a)
    return out


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
