"""The optimisation model (SPEC §7): one Pyomo MILP whose constraints state the mission.

Indices: a architecture (platform, NIC, rails, switch, oversubscription), p its performance class
(a without the switch), s a layout shape of class p, j the j-th allowed data-parallel degree D_sj of
shape s, t ∈ {1, 2, 3} fabric tiers. Decisions: w[s,j] (shape s runs with d = D_sj), x[a]
(architecture), tier[a,t], integer domains, spares, leaves, spines, cores, pods, modules and racks.
Costs are in M$ inside the model (conditioning); `decode` turns them back into dollars.

`build_model` is the flat list of constraint families below; each family is one small function
whose docstring is its equation (docs/model.md repeats them with these names).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import pyomo.environ as pyo

from . import fabric
from .design_space import Architecture, DesignSpace, one_tier_allowed
from .schema import TIERS

MUSD = 1e-6  # model cost unit: millions of dollars (keeps HiGHS's cost range sane)


@dataclass
class ArchData:
    """Constants of one architecture, all taken from fabric.py and the catalog."""

    arch: Architecture
    k: int
    k_down: int
    k_up: int
    rails: int
    cap: dict  # max nodes per tier count (fabric.max_nodes)
    tiers: list  # tier counts this architecture may use
    units_per_domain: int
    nodes_per_unit: int
    gpus_per_node: int
    unit_musd: float
    unit_kw: float
    nic_musd: float  # per NIC bought (0 when included in the platform)
    nic_kw: float
    switch_musd: float
    switch_kw: float
    switch_ru: float
    links: dict  # tier -> Link option
    units_per_rack: int  # 1 and unit_is_rack for NVL72-style platforms
    unit_is_rack: bool
    compute_rack_musd: float
    network_rack_musd: float
    network_rack_ru: float
    network_rack_kw: float
    max_domains: int


@dataclass
class ModelData:
    space: DesignSpace
    archs: list[ArchData]
    target_step_time_s: float
    objective: str
    spare_fraction: float
    contingency_fraction: float
    pue: float
    usd_per_kwh: float
    years: float
    caps: dict  # max_gpus, budget_usd, facility_power_kw, max_racks (None = no cap)
    pin_tiers: Optional[int] = None
    pin_nodes: Optional[int] = None
    dropped: dict = field(default_factory=dict)


def model_data(space: DesignSpace) -> ModelData:
    """Collect the constants of every architecture from the catalog through fabric.py."""
    sc = space.scenario
    cat = getattr(space.catalog, "catalog", space.catalog)
    plats, nics, sws = cat.by_id("platforms"), cat.by_id("nics"), cat.by_id("switches")
    facility = fabric.facility_of(cat)
    compute_rack = fabric.rack_of(cat, facility.compute_rack)
    network_rack = fabric.rack_of(cat, facility.network_rack)
    pue, usd_per_kwh = fabric.pue_and_usd_per_kwh(sc, facility)
    max_dom: dict = {}
    for s in space.shapes:
        max_dom[s.perf] = max(max_dom.get(s.perf, 0), max(s.domains))
    archs, dropped = [], {}
    for a in space.architectures:
        plat, nic, sw = plats[a.platform], nics[a.nic], sws[a.switch]
        links, why = {}, {}
        for tier in TIERS:
            try:
                links[tier] = fabric.link_for(cat, sw, tier)
            except ValueError as exc:
                links[tier], why[tier] = None, str(exc)
        upr = fabric.units_per_rack(plat, compute_rack)
        if links["node_leaf"] is None or upr < 1:
            dropped[a.label()] = why.get("node_leaf") or (
                f"{plat.id} ({plat.unit_power_kw:g} kW, {plat.unit_ru:g} RU) does not fit in rack {compute_rack.id}")
            continue
        k_down, k_up = fabric.split_ports(sw.radix, a.oversubscription)
        uplinks = links["leaf_spine"] is not None and k_up >= 1
        tiers = ([1] if one_tier_allowed(a, space.architectures) else []) + ([2] if uplinks else []) \
            + ([3] if uplinks and links["spine_core"] is not None else [])
        npu = fabric.nodes_per_unit(plat)
        archs.append(ArchData(
            arch=a, k=sw.radix, k_down=k_down, k_up=k_up, rails=a.rails_per_node,
            cap={t: fabric.max_nodes(sw.radix, a.rails_per_node, a.oversubscription, t) for t in (1, 2, 3)},
            tiers=tiers, units_per_domain=fabric.compute_units(plat, 1), nodes_per_unit=npu,
            gpus_per_node=plat.gpus_per_node, unit_musd=plat.unit_price_usd * MUSD, unit_kw=plat.unit_power_kw,
            nic_musd=0.0 if plat.includes_scaleout_nics else nic.unit_price_usd * MUSD,
            nic_kw=0.0 if plat.includes_scaleout_nics else nic.power_w / 1000.0,
            switch_musd=sw.unit_price_usd * MUSD, switch_kw=sw.power_w / 1000.0, switch_ru=sw.ru,
            links=links, units_per_rack=upr, unit_is_rack=plat.unit_is_rack,
            compute_rack_musd=0.0 if plat.unit_is_rack else compute_rack.unit_price_usd * MUSD,
            network_rack_musd=network_rack.unit_price_usd * MUSD, network_rack_ru=network_rack.usable_ru,
            network_rack_kw=network_rack.usable_kw, max_domains=max_dom.get(a.perf, 0),
        ))
    con = sc.constraints
    return ModelData(
        space=space, archs=archs, target_step_time_s=space.target_step_time_s, objective=sc.objective,
        spare_fraction=con.spare_nodes_fraction, contingency_fraction=con.contingency_fraction,
        pue=pue, usd_per_kwh=usd_per_kwh, years=sc.tco.years,
        caps={"max_gpus": con.max_gpus, "budget_usd": con.budget_usd, "facility_power_kw": con.facility_power_kw,
              "max_racks": con.max_racks},
        pin_tiers=sc.pin.tiers, pin_nodes=sc.pin.nodes, dropped=dropped,
    )


# ====================================================================================== model


def build_model(data: ModelData, soft_caps: bool = False) -> pyo.ConcreteModel:
    """The MILP as a flat list of constraint families (names are stable and used in reports)."""
    m = pyo.ConcreteModel(name="fabricplan")
    m.data = data
    add_sets_and_variables(m, data, soft_caps)
    add_one_design(m)
    add_shape_matches_architecture(m)
    add_step_time(m)
    add_exposure(m)
    add_memory_fit(m)
    add_whole_domains(m)
    add_spares(m)
    add_tier_choice(m)
    add_one_tier_ports(m)
    add_two_tier_ports(m)
    add_three_tier_ports(m)
    add_link_modules(m)
    add_racks(m)
    add_cost_and_power(m)
    add_caps(m, soft_caps)
    add_pins(m)
    add_objective(m, soft_caps)
    return m


def add_sets_and_variables(m, data: ModelData, soft_caps: bool) -> None:
    shapes = data.space.shapes
    m.A = list(range(len(data.archs)))
    m.point = _points(data)  # (i, j, a) -> (domains, spare units, nodes, tiers) of that point
    m.SJA = sorted(m.point)
    m.S = sorted({i for i, _, _ in m.SJA})
    m.AT = sorted({(a, t) for (_, _, a), (_, _, _, t) in m.point.items()})  # tier counts some point uses
    used = {a: {t for (b, t) in m.AT if b == a} for a in m.A}
    # exposure variables only where d still varies; a single-d shape's exposure is a constant
    m.SE = [(i, e) for i in m.S if len(shapes[i].d_values) > 1 for e in range(len(shapes[i].exposures))]
    m.w = pyo.Var(m.SJA, domain=pyo.Binary)
    m.x = pyo.Var(m.A, domain=pyo.Binary)
    m.tier = pyo.Var(m.AT, domain=pyo.Binary)
    m.exposed = pyo.Var(m.SE, domain=pyo.NonNegativeReals)
    big = {a: max(1, data.archs[a].max_domains) for a in m.A}
    m.domains = pyo.Var(m.A, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, big[a]))
    # Upper bounds implied by the constraints (they cut nothing feasible; they help presolve)
    ub = {a: _bounds(data.archs[a], data.spare_fraction) for a in m.A}
    m.spare_units = pyo.Var(m.A, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, ub[a]["spares"]))
    m.tier_nodes = pyo.Var(m.AT, domain=pyo.NonNegativeIntegers,
                           bounds=lambda _, a, t: (0, min(data.archs[a].cap[t], ub[a]["nodes"])))
    m.Q = [(a, q) for a in m.A if 1 in used[a] for q in range(1, data.archs[a].rails + 1)]
    m.rail_groups = pyo.Var(m.Q, domain=pyo.Binary)  # 1 tier: q whole rail groups per switch
    m.leaves2 = pyo.Var(m.A, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, ub[a]["leaves2"]))  # per rail
    m.leaves3 = pyo.Var(m.A, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, ub[a]["leaves3"]))  # per rail
    m.pods = pyo.Var(m.A, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, data.archs[a].k))
    m.RHO = [(a, dv) for a in m.A if 2 in used[a] for dv in fabric.divisors(data.archs[a].k_up)]
    m.spine_choice = pyo.Var(m.RHO, domain=pyo.Binary)  # 2 tiers: spines = dv
    m.CHI = [(a, dv) for a in m.A if 3 in used[a] for dv in fabric.divisors(data.archs[a].k // 2)]
    m.core_choice = pyo.Var(m.CHI, domain=pyo.Binary)  # 3 tiers: cores per plane = dv
    m.MOD = [(a, tier, end) for a in m.A for tier in TIERS if data.archs[a].links[tier] is not None
             for end in ("switch", "far") if _module_matters(data.archs[a].links[tier], end)]
    m.modules = pyo.Var(m.MOD, domain=pyo.NonNegativeIntegers)
    m.compute_racks = pyo.Var(m.A, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, ub[a]["compute_racks"]))
    m.network_racks = pyo.Var(m.A, domain=pyo.NonNegativeIntegers)
    m.cap_slack = pyo.Var(["max_gpus", "budget_usd", "facility_power_kw", "max_racks"], domain=pyo.NonNegativeReals)
    if not soft_caps:
        m.cap_slack.fix(0)
    # handy expressions
    m.y = {i: 0 for i in m.S}
    m.d = {i: 0 for i in m.S}
    for (i, j, a) in m.SJA:
        m.y[i] += m.w[i, j, a]
        m.d[i] += shapes[i].d_values[j] * m.w[i, j, a]


def _points(data: ModelData) -> dict:
    """Every (shape i, d index j, architecture a) that can be built: its job domains, spare units,
    nodes (spares included) and tier count — the fewest tiers that hold the nodes (the pinned count
    when `pin.tiers`), which must be a tier count the architecture allows (`ArchData.tiers`)."""
    cat = getattr(data.space.catalog, "catalog", data.space.catalog)
    plats = cat.by_id("platforms")
    by_perf: dict = {}
    for a, ad in enumerate(data.archs):
        by_perf.setdefault(ad.arch.perf, []).append(a)
    points = {}
    for i, s in enumerate(data.space.shapes):
        plat = plats[s.perf.platform]
        for j, dom in enumerate(s.domains):
            units = fabric.compute_units(plat, dom)
            spares = fabric.spare_units_for(units, data.spare_fraction)
            nodes = fabric.total_nodes(plat, dom, data.spare_fraction)
            for a in by_perf.get(s.perf, []):
                ad = data.archs[a]
                fits = [t for t in (1, 2, 3) if nodes <= ad.cap[t]]
                tiers = data.pin_tiers if data.pin_tiers is not None else (fits[0] if fits else None)
                if tiers in ad.tiers and tiers in fits:
                    points[(i, j, a)] = (dom, spares, nodes, tiers)
    return points


def _bounds(ad: ArchData, spare_fraction: float) -> dict:
    """Largest values the integer counts of one architecture can take at any feasible point."""
    units = ad.units_per_domain * max(1, ad.max_domains)
    spares = fabric.spare_units_for(units, spare_fraction)
    nodes = ad.nodes_per_unit * (units + spares)
    k_down = max(1, ad.k_down)
    return {
        "spares": spares,
        "nodes": nodes,
        "leaves2": -(-min(ad.cap[2], nodes) // k_down),
        "leaves3": -(-min(ad.cap[3], nodes) // k_down),
        "compute_racks": units + spares if ad.unit_is_rack else -(-(units + spares) // ad.units_per_rack),
    }


def _module_matters(link, end: str) -> bool:
    usd = link.switch_end_module_usd if end == "switch" else link.far_end_module_usd
    w = link.switch_end_module_w if end == "switch" else link.far_end_module_w
    return usd > 0 or w > 0


def add_one_design(m) -> None:
    """one_design: Σ_a x[a] = 1 — exactly one architecture is bought."""
    m.one_design = pyo.Constraint(expr=sum(m.x[a] for a in m.A) == 1)


def add_shape_matches_architecture(m) -> None:
    """shape_matches_architecture[a]: x[a] = Σ_{s,j} w[s,j,a] — the chosen point runs on a
    (disaggregated per architecture: no big-M, the relaxation is the convex hull of the points)."""
    rows = {a: [] for a in m.A}
    for (i, j, a) in m.SJA:
        rows[a].append(m.w[i, j, a])
    m.shape_matches_architecture = pyo.Constraint(m.A, rule=lambda _, a: m.x[a] == sum(rows[a]))


def add_step_time(m) -> None:
    """step_time[s]: d·T_s(d) ≤ T_target·d, i.e. (comp0_s·y_s + comp1_s·d_s) + Σ_k exposed[s,k] ≤ T·d_s,
    with y_s = Σ_{j,a} w[s,j,a], d_s = Σ_{j,a} D_sj·w[s,j,a]; d·(T_comp + bubble) = comp0 + comp1·d
    (SPEC §7). A shape with one d left has the constant Σ_k max(0, c0_k + c1_k·d)·y_s instead."""
    shapes, target = m.data.space.shapes, m.data.target_step_time_s

    def rule(_, i):
        s = shapes[i]
        if len(s.d_values) == 1:  # d·max(0, T_k − φ_k·T_comp) at the only d, times y_s
            d = s.d_values[0]
            exposed = sum(max(0.0, x.c0 + x.c1 * d) for x in s.exposures) * m.y[i]
        else:
            exposed = sum(m.exposed[i, e] for e in range(len(s.exposures)))
        return s.comp0 * m.y[i] + s.comp1 * m.d[i] + exposed <= target * m.d[i]

    m.step_time = pyo.Constraint(m.S, rule=rule)


def add_exposure(m) -> None:
    """exposure[s,k]: exposed[s,k] ≥ c0_sk·y_s + c1_sk·d_s = d·(T_k − φ_k·T_comp); exposed ≥ 0
    (SPEC §4.5's max(0, ·) multiplied by d)."""
    shapes = m.data.space.shapes

    def rule(_, i, e):
        x = shapes[i].exposures[e]
        return m.exposed[i, e] >= x.c0 * m.y[i] + x.c1 * m.d[i]

    m.exposure = pyo.Constraint(m.SE, rule=rule)


def add_memory_fit(m) -> None:
    """memory_fit[s]: d·mem_s(d) ≤ HBM_usable·d, i.e. mem0_s·y_s + mem1_s·d_s ≤ HBM_s·d_s (SPEC §4.6)."""
    shapes = m.data.space.shapes

    def rule(_, i):
        s = shapes[i]
        return s.mem0 * m.y[i] + s.mem1 * m.d[i] <= s.hbm_usable_gb * m.d[i]

    m.memory_fit = pyo.Constraint(m.S, rule=rule)


def add_whole_domains(m) -> None:
    """whole_domains[a]: domains[a] = Σ_{s,j} dom_sj·w[s,j,a], dom = t·c·p·d / G_u whole NVLink domains."""
    rows = {a: 0 for a in m.A}
    for (i, j, a), (dom, _, _, _) in m.point.items():
        rows[a] += dom * m.w[i, j, a]
    m.whole_domains = pyo.Constraint(m.A, rule=lambda _, a: m.domains[a] == rows[a])


def _units(m, a):
    return m.data.archs[a].units_per_domain * m.domains[a]


def _nodes(m, a):
    """nodes[a] = (units + spares)·nodes_per_unit."""
    return m.data.archs[a].nodes_per_unit * (_units(m, a) + m.spare_units[a])


def add_spares(m) -> None:
    """spares[a]: spare_units[a] = Σ_{s,j} ⌈f_spare·units_sj⌉·w[s,j,a] (whole spare units per point)."""
    if m.data.spare_fraction == 0:
        m.spare_units.fix(0)
        return
    rows = {a: 0 for a in m.A}
    for (i, j, a), (_, spares, _, _) in m.point.items():
        rows[a] += spares * m.w[i, j, a]
    m.spares = pyo.Constraint(m.A, rule=lambda _, a: m.spare_units[a] == rows[a])


def add_tier_choice(m) -> None:
    """point_tier[a,t]: tier[a,t] = Σ w over the points of a whose fewest tier count is t;
    point_tier_nodes[a,t]: tier_nodes[a,t] = Σ nodes_sj·w over those points;
    tier_choice[a]: Σ_t tier[a,t] = x[a]; tier_nodes_sum[a]: Σ_t tier_nodes[a,t] = nodes[a];
    tier_capacity[a,t]: tier_nodes[a,t] ≤ cap_t·tier[a,t]; fewest_tiers[a,t]: tier_nodes[a,t] ≥
    (cap_{t−1} + 1)·tier[a,t] — a tier count is used only when the one below cannot hold the nodes."""
    archs = m.data.archs
    tier_rows = {at: 0 for at in m.AT}
    node_rows = {at: 0 for at in m.AT}
    for (i, j, a), (_, _, nodes, t) in m.point.items():
        tier_rows[a, t] += m.w[i, j, a]
        node_rows[a, t] += nodes * m.w[i, j, a]
    # the tier count and its nodes follow from the chosen point (disaggregated: tight relaxation)
    m.point_tier = pyo.Constraint(m.AT, rule=lambda _, a, t: m.tier[a, t] == tier_rows[a, t])
    m.point_tier_nodes = pyo.Constraint(m.AT, rule=lambda _, a, t: m.tier_nodes[a, t] == node_rows[a, t])
    used = {a: [t for (b, t) in m.AT if b == a] for a in m.A}
    m.tier_choice = pyo.Constraint(m.A, rule=lambda _, a: sum(m.tier[a, t] for t in used[a]) == m.x[a])
    m.tier_nodes_sum = pyo.Constraint(m.A, rule=lambda _, a: sum(m.tier_nodes[a, t] for t in used[a]) == _nodes(m, a))
    m.tier_capacity = pyo.Constraint(m.AT, rule=lambda _, a, t: m.tier_nodes[a, t] <= archs[a].cap[t] * m.tier[a, t])

    def fewest(_, a, t):
        if t == 1 or m.data.pin_tiers is not None:  # a pinned tier count is built even where fewer fit
            return pyo.Constraint.Skip
        return m.tier_nodes[a, t] >= (archs[a].cap[t - 1] + 1) * m.tier[a, t]

    m.fewest_tiers = pyo.Constraint(m.AT, rule=fewest)


def _one_tier_switches(m, a):
    r = m.data.archs[a].rails
    return sum(-(-r // q) * m.rail_groups[a, q] for q in range(1, r + 1)) if (a, 1) in m.tier else 0


def add_one_tier_ports(m) -> None:
    """one_tier_groups[a]: Σ_q rail_groups[a,q] = tier[a,1]; one_tier_ports[a]: tier_nodes[a,1] ≤
    Σ_q ⌊k/q⌋·rail_groups[a,q] — each switch holds q whole rail groups; switches = Σ_q ⌈rails/q⌉·rail_groups."""
    archs = m.data.archs
    A1 = [a for a in m.A if (a, 1) in m.tier]
    m.one_tier_groups = pyo.Constraint(A1, rule=lambda _, a: sum(m.rail_groups[a, q] for q in range(1, archs[a].rails + 1)) == m.tier[a, 1])
    m.one_tier_ports = pyo.Constraint(A1, rule=lambda _, a: m.tier_nodes[a, 1] <= sum((archs[a].k // q) * m.rail_groups[a, q] for q in range(1, archs[a].rails + 1)))


def _spines2(m, a):
    return sum(dv * m.spine_choice[a, dv] for dv in fabric.divisors(m.data.archs[a].k_up)) if (a, 2) in m.tier else 0


def _cores_per_plane(m, a):
    return sum(dv * m.core_choice[a, dv] for dv in fabric.divisors(m.data.archs[a].k // 2)) if (a, 3) in m.tier else 0


def add_two_tier_ports(m) -> None:
    """leaf_down_ports2[a]: k_down·leaves2[a] ≥ tier_nodes[a,2] (leaves per rail);
    spine_count2[a]: Σ_δ spine_choice[a,δ] = tier[a,2] over the divisors δ of k_up (uniform striping);
    spine_ports2[a]: k·spines ≥ k_up·rails·leaves2[a] (every leaf uplink lands on a spine port)."""
    archs = m.data.archs
    A2 = [a for a in m.A if (a, 2) in m.tier]
    m.leaf_down_ports2 = pyo.Constraint(A2, rule=lambda _, a: archs[a].k_down * m.leaves2[a] >= m.tier_nodes[a, 2])
    m.spine_count2 = pyo.Constraint(A2, rule=lambda _, a: sum(m.spine_choice[a, dv] for dv in fabric.divisors(archs[a].k_up)) == m.tier[a, 2])
    m.spine_ports2 = pyo.Constraint(A2, rule=lambda _, a: archs[a].k * _spines2(m, a) >= archs[a].k_up * archs[a].rails * m.leaves2[a])
    for a in m.A:
        if (a, 2) not in m.tier:
            m.leaves2[a].fix(0)


def add_three_tier_ports(m) -> None:
    """leaf_down_ports3[a]: k_down·leaves3[a] ≥ tier_nodes[a,3]; pod_slots[a]: (k/2)·pods[a] ≥
    rails·leaves3[a]; pod_limit[a]: pods[a] ≤ k·tier[a,3]; core_count[a]: Σ_c core_choice[a,c] = tier[a,3]
    over divisors c of k/2; core_ports[a]: 2·cores_per_plane ≥ pods (each core takes pods·(k/2)/C ≤ k links).
    Spines = k_up·pods, cores = k_up·cores_per_plane."""
    archs = m.data.archs
    A3 = [a for a in m.A if (a, 3) in m.tier]
    m.leaf_down_ports3 = pyo.Constraint(A3, rule=lambda _, a: archs[a].k_down * m.leaves3[a] >= m.tier_nodes[a, 3])
    m.pod_slots = pyo.Constraint(A3, rule=lambda _, a: (archs[a].k // 2) * m.pods[a] >= archs[a].rails * m.leaves3[a])
    m.pod_limit = pyo.Constraint(A3, rule=lambda _, a: m.pods[a] <= archs[a].k * m.tier[a, 3])
    m.core_count = pyo.Constraint(A3, rule=lambda _, a: sum(m.core_choice[a, dv] for dv in fabric.divisors(archs[a].k // 2)) == m.tier[a, 3])
    m.core_ports = pyo.Constraint(A3, rule=lambda _, a: 2 * _cores_per_plane(m, a) >= m.pods[a])
    for a in m.A:
        if (a, 3) not in m.tier:
            m.leaves3[a].fix(0)
            m.pods[a].fix(0)


def switch_counts(m, a) -> dict:
    """Leaf, spine and core switch counts of architecture a as expressions."""
    ad = m.data.archs[a]
    return {
        "leaf": _one_tier_switches(m, a) + ad.rails * (m.leaves2[a] + m.leaves3[a]),
        "spine": _spines2(m, a) + ad.k_up * m.pods[a],
        "core": ad.k_up * _cores_per_plane(m, a),
    }


def link_counts(m, a) -> dict:
    """links: node_leaf = rails·nodes; leaf_spine = k_up·rails·leaves; spine_core = (k/2)·spines3."""
    ad = m.data.archs[a]
    return {
        "node_leaf": ad.rails * _nodes(m, a),
        "leaf_spine": ad.k_up * ad.rails * (m.leaves2[a] + m.leaves3[a]),
        "spine_core": (ad.k // 2) * ad.k_up * m.pods[a],
    }


def add_link_modules(m) -> None:
    """link_modules[a,tier,end]: modules·links_per_module ≥ links — whole modules; a twin-port
    module serves two links."""
    archs = m.data.archs

    def rule(_, a, tier, end):
        link = archs[a].links[tier]
        per = link.switch_end_links_per_module if end == "switch" else link.far_end_links_per_module
        return per * m.modules[a, tier, end] >= link_counts(m, a)[tier]

    m.link_modules = pyo.Constraint(m.MOD, rule=rule)


def add_racks(m) -> None:
    """compute_racks_fit[a]: units_per_rack·compute_racks ≥ units + spares (one per unit when the unit
    is a rack); network_racks_space[a] / network_racks_power[a]: racks hold every switch's RU and kW."""
    archs = m.data.archs

    def compute(_, a):
        units = _units(m, a) + m.spare_units[a]
        if archs[a].unit_is_rack:
            return m.compute_racks[a] == units
        return archs[a].units_per_rack * m.compute_racks[a] >= units

    def switches(a):
        c = switch_counts(m, a)
        return c["leaf"] + c["spine"] + c["core"]

    m.compute_racks_fit = pyo.Constraint(m.A, rule=compute)
    m.network_racks_space = pyo.Constraint(m.A, rule=lambda _, a: archs[a].network_rack_ru * m.network_racks[a] >= archs[a].switch_ru * switches(a))
    m.network_racks_power = pyo.Constraint(m.A, rule=lambda _, a: archs[a].network_rack_kw * m.network_racks[a] >= archs[a].switch_kw * switches(a))


def add_cost_and_power(m) -> None:
    """capex[a] = (1 + f_cont)·(units·P_unit + spares·P_unit + NICs·P_nic + switches·P_sw + Σ_tier
    (links·P_cable + modules·P_module) + racks·P_rack) in M$; it_power[a] = units·kW_unit + NICs·kW_nic
    + switches·kW_sw + modules·kW_module; facility_power = PUE·it_power; tco = capex + years·8760·
    facility_power·$/kWh; gpus[a] = nodes·gpus_per_node. Expressions, not constraints."""
    d, archs = m.data, m.data.archs
    m.capex = {}
    m.it_power_kw = {}
    m.gpus = {}
    for a in m.A:
        ad = archs[a]
        units = _units(m, a) + m.spare_units[a]
        nodes = _nodes(m, a)
        nsw = sum(switch_counts(m, a).values())
        links = link_counts(m, a)
        cost = units * ad.unit_musd + nodes * ad.rails * ad.nic_musd + nsw * ad.switch_musd
        power = units * ad.unit_kw + nodes * ad.rails * ad.nic_kw + nsw * ad.switch_kw
        for tier in TIERS:
            link = ad.links[tier]
            if link is None:
                continue
            cost += links[tier] * link.cable_usd * MUSD
            for end in ("switch", "far"):
                if (a, tier, end) in m.modules:
                    usd = link.switch_end_module_usd if end == "switch" else link.far_end_module_usd
                    w = link.switch_end_module_w if end == "switch" else link.far_end_module_w
                    cost += m.modules[a, tier, end] * usd * MUSD
                    power += m.modules[a, tier, end] * w / 1000.0
        cost += m.compute_racks[a] * ad.compute_rack_musd + m.network_racks[a] * ad.network_rack_musd
        m.capex[a] = (1 + d.contingency_fraction) * cost
        m.it_power_kw[a] = power
        m.gpus[a] = nodes * ad.gpus_per_node
    m.total_capex_musd = sum(m.capex.values())
    m.total_facility_kw = d.pue * sum(m.it_power_kw.values())
    m.total_tco_musd = m.total_capex_musd + d.years * fabric.HOURS_PER_YEAR * m.total_facility_kw * d.usd_per_kwh * MUSD
    m.total_gpus = sum(m.gpus.values())
    m.total_racks = sum(m.compute_racks[a] + m.network_racks[a] for a in m.A)


def add_caps(m, soft: bool) -> None:
    """max_gpus: GPUs bought ≤ cap; budget: capex ≤ budget_usd; facility_power: PUE·IT kW ≤ cap;
    max_racks: racks ≤ cap. With `soft`, each has a penalised slack (infeasibility diagnosis)."""
    caps = m.data.caps
    terms = {
        "max_gpus": (m.total_gpus, 1.0),
        "budget_usd": (m.total_capex_musd, MUSD),
        "facility_power_kw": (m.total_facility_kw, 1.0),
        "max_racks": (m.total_racks, 1.0),
    }
    for name, (expr, scale) in terms.items():
        if caps.get(name) is None:
            continue
        m.add_component(name, pyo.Constraint(expr=expr <= caps[name] * scale + m.cap_slack[name]))


def add_pins(m) -> None:
    """pin_tiers[a]: tier[a,t] = 0 for t ≠ pinned tiers; pin_nodes: job nodes = pinned nodes."""
    d = m.data
    if d.pin_tiers is not None:
        for (a, t) in m.AT:
            if t != d.pin_tiers:
                m.tier[a, t].fix(0)
    if d.pin_nodes is not None:
        m.pin_nodes = pyo.Constraint(expr=sum(d.archs[a].nodes_per_unit * _units(m, a) for a in m.A) == d.pin_nodes)


def add_objective(m, soft: bool) -> None:
    """minimise capex or TCO (M$); with soft caps, plus a large penalty per relative unit of slack."""
    base = m.total_tco_musd if m.data.objective == "tco" else m.total_capex_musd
    if soft:
        penalty = 0
        for name, cap in m.data.caps.items():
            if cap is not None:
                scale = cap * (MUSD if name == "budget_usd" else 1.0)
                penalty += 1e9 * m.cap_slack[name] / max(scale, 1e-9)
        base = base * 1e-6 + penalty
    m.objective = pyo.Objective(expr=base, sense=pyo.minimize)


# ===================================================================================== decode


@dataclass(frozen=True)
class Choice:
    """What one solve chose: architecture, tier count, shape and data-parallel degree."""

    arch_index: int
    tiers: int
    shape_index: int
    d: int
    domains: int
    objective_usd: float
    capex_usd: float


def decode(m) -> Choice:
    """Read the chosen design out of a solved model."""
    data = m.data
    a = next(a for a in m.A if pyo.value(m.x[a]) > 0.5)
    tiers = next(t for (b, t) in m.AT if b == a and pyo.value(m.tier[a, t]) > 0.5)
    i, j = next((i, j) for (i, j, b) in m.SJA if b == a and pyo.value(m.w[i, j, b]) > 0.5)
    shape = data.space.shapes[i]
    obj_k = pyo.value(m.total_tco_musd if data.objective == "tco" else m.total_capex_musd)
    return Choice(a, tiers, i, shape.d_values[j], shape.domains[j], obj_k / MUSD, pyo.value(m.total_capex_musd) / MUSD)


def add_no_good(m, choice: Choice, distinct_by: str, index: int) -> None:
    """nogood_k: forbid the identity just found — tier[a,t] ≤ 0 (architecture identity) or
    y_s + tier[a,t] ≤ 1 (layout identity)."""
    a, t = choice.arch_index, choice.tiers
    if distinct_by == "layout":
        expr = m.y[choice.shape_index] + m.tier[a, t] <= 1
    else:
        expr = m.tier[a, t] <= 0
    m.add_component(f"nogood_{index}", pyo.Constraint(expr=expr))
