"""The optimisation model (SPEC §7): one Pyomo MILP whose constraints state the mission.

Indices: a architecture (platform, NIC, rails, switch, oversubscription, fabric family), p its
performance class (a without the switch), s a layout shape of class p, j the j-th allowed
data-parallel degree D_sj of shape s, t ∈ {1, 2, 3} fabric tiers, k a traffic class. Decisions:
w[s,j,a] (shape s runs with d = D_sj on a), x[a] (architecture), tier[a,t], integer domains, spares,
the fabric family's counts, modules and racks. Costs are in M$ inside the model (conditioning);
`decode` turns them back into dollars.

`build_model` is the flat list of constraint families below; each family is one small function
whose docstring is its equation (docs/model.md repeats them with these names, and a test keeps the
two in step), and each family is a Pyomo `Block` that owns its index sets, its own variables and its
rows (oemof-solph's pattern): m.choice, m.step, m.capacity, m.memory, m.sizing, m.tiers, m.fabric,
m.cabling, m.racks, m.netting, m.caps, m.pins, m.user (the rows a user adds, optimize/user_rows.py) and
m.cuts (the rows the searches add: no-good cuts, same-speed and frontier rows). The decisions every
family shares (w, x, tier, domains, spare_units, tier_nodes, modules, racks, cap slack) and the
expressions built on them stay on the model. The blocks are declared in the order of the families,
so the rows reach HiGHS in the order they always had. The fabric's rows come from its family module (solver/fabrics); the cost and power
expressions from the bill-of-materials table (solver/costing/table.py), netted against owned inventory
there. No traffic class is named here: the step-time rows read the coefficients the design space
took off the performance model. A multi-period plan (solver/plan) builds the design rows and the
needs of one period per Pyomo block (`add_design_rows`, `add_needs`, `add_pins`) and prices the
purchases itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyomo.core as pyo

from .. import costing
from ..fabrics import family
from .data import MUSD, ModelData, bounds, point_goodput, points
from .user_rows import add_user_rows

CAP_NAMES = ("max_gpus", "budget_usd", "facility_power_kw", "max_racks")


def build_model(data: ModelData, soft_caps: bool = False) -> pyo.ConcreteModel:
    """The MILP as a flat list of constraint families (names are stable and used in reports)."""
    m = pyo.ConcreteModel(name="fabricplan")
    add_design_rows(m, data, soft_caps)
    add_cost_and_power(m)
    add_caps(m, soft_caps)
    add_pins(m)
    add_user_rows(m)
    m.cuts = pyo.Block()  # the searches' rows (add_cut): last, so they follow every family's
    add_objective(m, soft_caps)
    return m


def add_design_rows(m: Any, data: ModelData, soft_caps: bool = False) -> None:
    """The rows that decide one design, without its cost: on a model, or on one period's block of a plan."""
    m.data = data
    add_sets_and_variables(m, data, soft_caps)
    add_choice(m)
    add_step_time(m)
    add_link_capacity(m)
    add_memory_fit(m)
    add_sizing(m)
    add_tier_choice(m)
    add_fabric(m)
    add_link_modules(m)
    add_racks(m)


def add_sets_and_variables(m: Any, data: ModelData, soft_caps: bool) -> None:
    shapes = data.space.shapes
    m.A = list(range(len(data.archs)))
    m.point = points(data)  # (i, j, a) -> (domains, spare units, nodes, tiers) of that point
    m.SJA = sorted(m.point)
    m.S = sorted({i for i, _, _ in m.SJA})
    m.AT = sorted({(a, t) for (_, _, a), (_, _, _, t, _) in m.point.items()})  # tier counts some point uses
    m.w = pyo.Var(m.SJA, domain=pyo.Binary)
    m.x = pyo.Var(m.A, domain=pyo.Binary)
    m.tier = pyo.Var(m.AT, domain=pyo.Binary)
    big = {a: max(1, data.archs[a].max_domains) for a in m.A}
    m.domains = pyo.Var(m.A, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, big[a]))
    # Upper bounds implied by the constraints (they cut nothing feasible; they help presolve)
    plats = data.space.catalog.by_id("platforms")
    ub = {a: bounds(data.archs[a], data.spares, plats[data.archs[a].arch.platform]) for a in m.A}
    m.node_bound = {a: ub[a]["nodes"] for a in m.A}
    m.fab = {a: data.archs[a].fab for a in m.A}
    m.spare_units = pyo.Var(m.A, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, ub[a]["spares"]))
    m.tier_nodes = pyo.Var(m.AT, domain=pyo.NonNegativeIntegers,
                           bounds=lambda _, a, t: (0, min(data.archs[a].fab.cap[t], ub[a]["nodes"])))
    m.MOD = [(a, tier, end) for a in m.A for tier, link in data.archs[a].parts.links.items()
             for end in costing.MODULE_ENDS if _module_matters(link, end)]
    m.modules = pyo.Var(m.MOD, domain=pyo.NonNegativeIntegers)
    m.compute_racks = pyo.Var(m.A, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, ub[a]["compute_racks"]))
    m.network_racks = pyo.Var(m.A, domain=pyo.NonNegativeIntegers)
    m.cap_slack = pyo.Var(list(CAP_NAMES), domain=pyo.NonNegativeReals)
    if not soft_caps:
        m.cap_slack.fix(0)
    # handy expressions
    m.y = {i: 0 for i in m.S}
    m.d = {i: 0 for i in m.S}
    m.yj = {}  # (i, j) -> Σ_a w[i,j,a]: shape i runs with its j-th d
    # g[s,j,a]: goodput of each point when the target applies to step ÷ goodput (else 1)
    m.goodput = {(i, j, a): point_goodput(data, i, j, a, data.archs[a].nodes_per_unit * data.archs[a].units_per_domain * dom,
                                          tiers) for (i, j, a), (dom, _, _, tiers, _) in m.point.items()}
    m.d_good = {i: 0 for i in m.S}  # Σ g_sja·D_sj·w[s,j,a]: the target's side of the step-time rows
    for (i, j, a) in m.SJA:
        m.y[i] += m.w[i, j, a]
        m.d[i] += shapes[i].d_values[j] * m.w[i, j, a]
        m.d_good[i] += m.goodput[i, j, a] * shapes[i].d_values[j] * m.w[i, j, a]
        m.yj[i, j] = m.yj.get((i, j), 0) + m.w[i, j, a]
    m.units = {a: data.archs[a].units_per_domain * m.domains[a] for a in m.A}
    m.nodes = {a: data.archs[a].nodes_per_unit * (m.units[a] + m.spare_units[a]) for a in m.A}


def _module_matters(link: Any, end: str) -> bool:
    usd, watts, _ = costing.module_price(link, end)
    return usd > 0 or watts > 0


def add_choice(m: Any) -> None:
    """Block m.choice over the architectures A. one_design: Σ_a x[a] = 1 — exactly one architecture is bought;
    shape_matches_architecture[a]: x[a] = Σ_{s,j} w[s,j,a] — the chosen point runs on a (disaggregated per
    architecture: no big-M, the relaxation is the convex hull of the points)."""
    b = m.choice = pyo.Block()
    b.A = m.A
    b.one_design = pyo.Constraint(expr=sum(m.x[a] for a in b.A) == 1)
    rows: dict = {a: [] for a in b.A}
    for (i, j, a) in m.SJA:
        rows[a].append(m.w[i, j, a])
    b.shape_matches_architecture = pyo.Constraint(b.A, rule=lambda _, a: m.x[a] == sum(rows[a]))


def _per_point(m: Any, i: int, values: list[float]) -> Any:
    """Σ_j values[j]·Y_sj with Y_sj = Σ_a w[s,j,a]: a term evaluated exactly at each allowed d (SPEC §4.5)."""
    return sum(v * m.yj[i, j] for j, v in enumerate(values) if (i, j) in m.yj and v != 0)


def _condition_index(m: Any, name: str) -> int | None:
    """Position of a condition ("" nominal, "compute_margin", "bandwidth_margin"); every shape carries the same
    conditions in the same order (nominal first), None when the scenario does not demand it."""
    names = [cond.name for cond in m.data.space.shapes[m.S[0]].conditions] if m.S else [""]
    return names.index(name) if name in names else None


def _step_rule(m: Any, c: int):
    shapes, target = m.data.space.shapes, m.data.target_step_time_s

    def rule(_, i):
        s = shapes[i]
        cond = s.conditions[c]
        if len(s.d_values) == 1:  # d·exposed_k at the only d, times y_s
            exposed = sum(x.at(0) for x in cond.exposures) * m.y[i]
        else:
            exposed = sum(m.step.exposed[i, c, e] for e in range(len(cond.exposures)))
        return _per_point(m, i, cond.comp) + exposed <= target * m.d_good[i]

    return rule


def add_step_time(m: Any) -> None:
    """step_time[s]: d·T_s(d) ≤ T_target·g·d, i.e. Σ_j comp_sj·Y_sj + Σ_k exposed[s,k] ≤ T·Σ_{j,a} g_sja·D_sj·w[s,j,a]
    (g_sja the point's goodput when the target applies to step ÷ goodput, else 1), with comp_sj =
    d_j·(T_comp + bubble) at the j-th allowed d, Y_sj = Σ_a w[s,j,a], d_s = Σ_{j,a} D_sj·w[s,j,a] (SPEC §7). A shape
    with one d left has the constant Σ_k d·exposed_k·y_s instead.
    step_time_compute_margin[s] / step_time_bandwidth_margin[s]: the same with compute (1 + σ) slower, or with
    (1 − δ) of the scale-out bandwidth (scenario `robustness`), each with its own exposure variables.
    step_time_quantile[s]: the same with every term times the point's k_q (robustness.quantile, perf/uncertainty.py).
    Block m.step: the shapes S, SE = (s, condition, class) where d still varies (with one d left the exposure is a
    constant), SE's pieces SEP, the variables exposed[s,c,k] ≥ 0, these rows and the exposure rows (add_exposure)."""
    shapes = m.data.space.shapes
    b = m.step = pyo.Block()
    b.S = m.S
    b.SE = [(i, c, e) for i in b.S if len(shapes[i].d_values) > 1 for c, cond in enumerate(shapes[i].conditions)
            for e in range(len(cond.exposures))]
    b.SEP = [(i, c, e, q) for (i, c, e) in b.SE for q in range(len(shapes[i].conditions[c].exposures[e].pieces))]
    b.exposed = pyo.Var(b.SE, domain=pyo.NonNegativeReals)
    b.step_time = pyo.Constraint(b.S, rule=_step_rule(m, 0))
    c = _condition_index(m, "compute_margin")
    if c is not None:
        b.step_time_compute_margin = pyo.Constraint(b.S, rule=_step_rule(m, c))
    c = _condition_index(m, "bandwidth_margin")
    if c is not None:
        b.step_time_bandwidth_margin = pyo.Constraint(b.S, rule=_step_rule(m, c))
    c = _condition_index(m, "quantile")
    if c is not None:
        b.step_time_quantile = pyo.Constraint(b.S, rule=_step_rule(m, c))
    add_exposure(m, b)


def add_exposure(m: Any, b: Any) -> None:
    """exposure[s,k,i]: exposed[s,k] ≥ Σ_j v_skij·Y_sj, v_skij = d_j·(a_i·T_k − W_i) at the j-th d, one row per piece i
    of class k's window rule; exposed ≥ 0 (SPEC §4.5's max(0, ·) multiplied by d). exposure_compute_margin /
    exposure_bandwidth_margin: the same pieces under the margin conditions."""
    shapes = m.data.space.shapes

    def rule(_, i, c, e, q):
        return b.exposed[i, c, e] >= _per_point(m, i, shapes[i].conditions[c].exposures[e].pieces[q])

    def rows(name):
        c = _condition_index(m, name)
        return [key for key in b.SEP if key[1] == c]

    b.exposure = pyo.Constraint(rows(""), rule=rule)
    if _condition_index(m, "compute_margin") is not None:
        b.exposure_compute_margin = pyo.Constraint(rows("compute_margin"), rule=rule)
    if _condition_index(m, "bandwidth_margin") is not None:
        b.exposure_bandwidth_margin = pyo.Constraint(rows("bandwidth_margin"), rule=rule)
    if _condition_index(m, "quantile") is not None:
        b.exposure_quantile = pyo.Constraint(rows("quantile"), rule=rule)


def _capacity_rule(m: Any, c: int):
    shapes, target = m.data.space.shapes, m.data.target_step_time_s

    def rule(_, i):
        return _per_point(m, i, shapes[i].conditions[c].capacity) <= target * m.d_good[i]

    return rule


def add_link_capacity(m: Any) -> None:
    """link_capacity[s]: every class shares the links: Σ_j d_j·max(Σ_k T_k^scale-out, Σ_k T_k^NVLink)·Y_sj ≤ T·d_s
    (SPEC §4.5 capacity; the right side is T·Σ g_sja·D_sj·w as in step_time). link_capacity_bandwidth_margin[s]: the same with (1 − δ) of the scale-out bandwidth.
    Block m.capacity over the shapes S."""
    b = m.capacity = pyo.Block()
    b.S = m.S
    b.link_capacity = pyo.Constraint(b.S, rule=_capacity_rule(m, 0))
    c = _condition_index(m, "bandwidth_margin")
    if c is not None:
        b.link_capacity_bandwidth_margin = pyo.Constraint(b.S, rule=_capacity_rule(m, c))
    c = _condition_index(m, "quantile")
    if c is not None:
        b.link_capacity_quantile = pyo.Constraint(b.S, rule=_capacity_rule(m, c))


def add_memory_fit(m: Any) -> None:
    """memory_fit[s]: Σ_j d_j·mem_s(d_j)·Y_sj ≤ HBM_usable·d_s (SPEC §4.6): memory per GPU at each allowed d.
    Block m.memory over the shapes S."""
    shapes = m.data.space.shapes
    b = m.memory = pyo.Block()
    b.S = m.S

    def rule(_, i):
        s = shapes[i]
        return _per_point(m, i, s.mem) <= s.hbm_usable_gb * m.d[i]

    b.memory_fit = pyo.Constraint(b.S, rule=rule)


def add_sizing(m: Any) -> None:
    """Block m.sizing over the architectures A: the domains and spares the chosen point buys (add_whole_domains,
    add_spares)."""
    b = m.sizing = pyo.Block()
    b.A = m.A
    add_whole_domains(m, b)
    add_spares(m, b)


def add_whole_domains(m: Any, b: Any) -> None:
    """whole_domains[a]: domains[a] = Σ_{s,j} dom_sj·w[s,j,a], dom = t·c·p·d / G_u whole NVLink domains."""
    rows: dict = {a: 0 for a in b.A}
    for (i, j, a), (dom, _, _, _, _) in m.point.items():
        rows[a] += dom * m.w[i, j, a]
    b.whole_domains = pyo.Constraint(b.A, rule=lambda _, a: m.domains[a] == rows[a])


def add_spares(m: Any, b: Any) -> None:
    """spares[a]: spare_units[a] = Σ_{s,j} spares_sj·w[s,j,a], spares_sj = max(⌈f_spare·units_sj⌉, the
    availability rule's spare units at the point's domains and G_u) (costing.spare_units_for)."""
    if all(spares == 0 for (_, spares, _, _, _) in m.point.values()):
        m.spare_units.fix(0)
        return
    rows: dict = {a: 0 for a in b.A}
    for (i, j, a), (_, spares, _, _, _) in m.point.items():
        rows[a] += spares * m.w[i, j, a]
    b.spares = pyo.Constraint(b.A, rule=lambda _, a: m.spare_units[a] == rows[a])


def add_tier_choice(m: Any) -> None:
    """point_tier[a,t]: tier[a,t] = Σ w over the points of a whose fewest tier count is t;
    point_tier_nodes[a,t]: tier_nodes[a,t] = Σ cabled_sj·w over those points (the job's nodes and the spares
    packed into its fabric's free ports, fabrics/spares.py);
    tier_choice[a]: Σ_t tier[a,t] = x[a]; tier_nodes_sum[a]: Σ_t tier_nodes[a,t] ≤ nodes[a] (spares that do
    not fit the job's leaf groups are bought, not cabled);
    tier_capacity[a,t]: tier_nodes[a,t] ≤ cap_t·tier[a,t]; fewest_tiers[a,t]: tier_nodes[a,t] ≥
    (cap_{t−1} + 1)·tier[a,t] — a tier count is used only when the one below cannot hold the nodes.
    Block m.tiers over AT (the tier counts some point of a uses) and A."""
    archs = m.data.archs
    b = m.tiers = pyo.Block()
    b.A, b.AT = m.A, m.AT
    tier_rows: dict = {at: 0 for at in b.AT}
    node_rows: dict = {at: 0 for at in b.AT}
    for (i, j, a), (_, _, _, t, cabled) in m.point.items():
        tier_rows[a, t] += m.w[i, j, a]
        node_rows[a, t] += cabled * m.w[i, j, a]
    # the tier count and its nodes follow from the chosen point (disaggregated: tight relaxation)
    b.point_tier = pyo.Constraint(b.AT, rule=lambda _, a, t: m.tier[a, t] == tier_rows[a, t])
    b.point_tier_nodes = pyo.Constraint(b.AT, rule=lambda _, a, t: m.tier_nodes[a, t] == node_rows[a, t])
    used = {a: [t for (c, t) in b.AT if c == a] for a in b.A}
    b.tier_choice = pyo.Constraint(b.A, rule=lambda _, a: sum(m.tier[a, t] for t in used[a]) == m.x[a])
    b.tier_nodes_sum = pyo.Constraint(b.A, rule=lambda _, a: sum(m.tier_nodes[a, t] for t in used[a]) <= m.nodes[a])
    b.tier_capacity = pyo.Constraint(b.AT, rule=lambda _, a, t: m.tier_nodes[a, t] <= archs[a].fab.cap[t] * m.tier[a, t])

    def fewest(_, a, t):
        if t == 1 or m.data.pin_tiers is not None:  # a pinned tier count is built even where fewer fit
            return pyo.Constraint.Skip
        return m.tier_nodes[a, t] >= (archs[a].fab.cap[t - 1] + 1) * m.tier[a, t]

    b.fewest_tiers = pyo.Constraint(b.AT, rule=fewest)


class BlockView:
    """A family's block as the family sees it: what the family sets (its sets, variables, rows) goes on the
    block; what it reads and did not set (x, tier, tier_nodes, AT, fab, node_bound, data) is the model's. The
    fabric families (solver/fabrics) write `m.<name> = …`, so they fill a block without knowing it is one."""

    def __init__(self, model: Any, block: Any):
        object.__setattr__(self, "_model", model)
        object.__setattr__(self, "_block", block)

    def __getattr__(self, name: str) -> Any:
        own = object.__getattribute__(self, "_block").__dict__
        return own[name] if name in own else getattr(object.__getattribute__(self, "_model"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "_block"), name, value)


def add_fabric(m: Any) -> None:
    """Block m.fabric: each fabric family adds its port and striping rows, with their sets and variables, for its
    architectures (solver/fabrics); families that share rows (the trees) name one `milp_block`, added once for all
    of them; m.switches[a] (role → count) and m.links[a] (tier → count) are the family's expressions."""
    m.fabric = pyo.Block()
    view = BlockView(m, m.fabric)
    by_block: dict[str, list[int]] = {}
    for a in m.A:
        by_block.setdefault(family(m.data.archs[a].arch.fabric).milp_block, []).append(a)
    for _, archs in sorted(by_block.items()):
        family(m.data.archs[archs[0]].arch.fabric).add_milp(view, archs)
    m.switches = {a: family(m.data.archs[a].arch.fabric).milp_switches(view, a) for a in m.A}
    m.links = {a: family(m.data.archs[a].arch.fabric).milp_links(view, a) for a in m.A}


def add_link_modules(m: Any) -> None:
    """link_modules[a,tier,end]: modules·links_per_module ≥ links — whole modules; a twin-port
    module serves two links. Where links ÷ links_per_module is a whole number at every integer point (each
    coefficient of the link count, integer counts times integer constants, divides by it: `_whole_modules`), the
    least modules is that number, and a module's positive price or power holds the count there at the optimum: the
    variable is left continuous (exact). HiGHS's root reduced-cost fixing walks up to 1,024 values of every
    general integer; these walks were most of each solve's time (docs/performance.md, issue 26's fifth pass).
    Block m.cabling over MOD = (a, tier, end) with a module that costs or draws something."""
    archs = m.data.archs
    b = m.cabling = pyo.Block()
    b.MOD = m.MOD
    per = {(a, tier, end): costing.module_price(archs[a].parts.links[tier], end)[2] for a, tier, end in b.MOD}
    b.link_modules = pyo.Constraint(b.MOD, rule=lambda _, a, tier, end: per[a, tier, end] * m.modules[a, tier, end]
                                    >= m.links[a][tier])
    for a, tier, end in m.MOD:
        if _whole_modules(m.links[a][tier], per[a, tier, end]):
            m.modules[a, tier, end].domain = pyo.NonNegativeReals


def _whole_modules(links: Any, per: int) -> bool:
    """links ÷ per is a whole number whenever every variable of `links` is integer: each is, and each coefficient
    and the constant are whole multiples of `per`."""
    from pyomo.repn import generate_standard_repn

    if isinstance(links, (int, float)):
        return float(links) % per == 0
    repn = generate_standard_repn(links, compute_values=True, quadratic=False)
    if repn.nonlinear_expr is not None or not all(v.is_integer() for v in repn.linear_vars):
        return False
    numbers = [repn.constant, *repn.linear_coefs]
    return all(float(c).is_integer() and int(c) % per == 0 for c in numbers)


def _total_switches(m: Any, a: int) -> Any:
    return sum(m.switches[a].values())


def add_racks(m: Any) -> None:
    """compute_racks_fit[a]: units_per_rack·compute_racks ≥ units + spares (= when the unit is a rack);
    network_racks_space[a] / network_racks_power[a]: racks hold every switch's RU and kW. Block m.racks over A."""
    archs = m.data.archs
    b = m.racks = pyo.Block()
    b.A = m.A

    def compute(_, a):
        units = m.units[a] + m.spare_units[a]
        if archs[a].unit_is_rack:
            return m.compute_racks[a] == units
        return archs[a].units_per_rack * m.compute_racks[a] >= units

    def space(_, a):
        p = archs[a].parts
        return p.network_rack.usable_ru * m.network_racks[a] >= p.switch.ru * _total_switches(m, a)

    def power(_, a):
        p = archs[a].parts
        return p.network_rack.usable_kw * m.network_racks[a] >= p.switch.power_w / 1000.0 * _total_switches(m, a)

    b.compute_racks_fit = pyo.Constraint(b.A, rule=compute)
    b.network_racks_space = pyo.Constraint(b.A, rule=space)
    b.network_racks_power = pyo.Constraint(b.A, rule=power)


def quantities(m: Any, a: int) -> costing.Quantities:
    """The model's quantities of architecture a, for the bill-of-materials table (costing/table.py)."""
    return costing.Quantities(
        units=m.units[a], spare_units=m.spare_units[a], nodes=m.nodes[a], switches=m.switches[a],
        links={tier: n for tier, n in m.links[a].items() if tier in m.data.archs[a].parts.links},
        modules={(tier, end): m.modules[a, tier, end] for (b, tier, end) in m.MOD if b == a},
        compute_racks=m.compute_racks[a], network_racks=m.network_racks[a], site=site_counts(m, a))


def site_counts(m: Any, a: int) -> dict[str, Any]:
    """site[a,line] = Σ_{s,j} site_count(line, units_sj + spares_sj, nodes_sj, cabled_sj)·w[s,j,a]: the site lines
    (storage, management, cooling, installation; costing/facility.py) of the chosen point, exact (the
    counts are step functions of the point's nodes, one binary per point)."""
    ad = m.data.archs[a]
    out: dict[str, Any] = {line.id: 0 for line in ad.parts.site}
    if not out:
        return out
    for (i, j, b), (dom, spares, nodes, _, cabled) in m.point.items():
        if b != a:
            continue
        units = ad.units_per_domain * dom + spares
        for line in ad.parts.site:
            out[line.id] += costing.site_count(line, units, nodes, cabled) * m.w[i, j, a]
    return out


def add_needs(m: Any) -> None:
    """needed[a,key] = Σ quantity of the bill-of-materials lines of stock key `key` (costing.bom_lines:
    units, spares, NICs, switches, cables, modules, racks, extras; costing.stock_of); it_power[a] =
    Σ_lines quantity·W/1000 (owned parts included); facility_power = PUE·Σ_a it_power; gpus[a] =
    nodes·gpus_per_node; racks = Σ_a compute + network racks. Expressions, not constraints."""
    d, archs = m.data, m.data.archs
    m.stock, m.it_power_kw, m.gpus = {}, {}, {}
    for a in m.A:
        lines = costing.bom_lines(archs[a].parts, quantities(m, a))
        m.stock[a] = costing.stock_of(lines, d.owned)
        m.it_power_kw[a] = costing.lines_power_kw(lines)
        m.gpus[a] = m.nodes[a] * archs[a].gpus_per_node
    m.total_facility_kw = d.pue * sum(m.it_power_kw.values())
    m.total_gpus = sum(m.gpus.values())
    m.total_racks = sum(m.compute_racks[a] + m.network_racks[a] for a in m.A)


def add_cost_and_power(m: Any) -> None:
    """The needs (`add_needs`), then owned_netting[a,key]: bought[a,key] ≥ needed[a,key] − owned[key],
    bought ≥ 0, for every stock key with owned units (oemof's existing + invest: total = owned +
    bought, cost on bought; without owned units bought = needed); capex[a] = (1 + f_cont)·[(1 + F)·
    Σ_hardware price·bought + Σ_extra price·bought] in M$ (costing.purchase_usd); tco = capex +
    years·8760·facility_power·$/kWh. Block m.netting: the set OWNED of (a, key) with owned units, bought and
    owned_netting over it."""
    add_needs(m)
    d, archs = m.data, m.data.archs
    b = m.netting = pyo.Block()
    b.OWNED = [(a, key) for a in m.A for key, st in m.stock[a].items() if st.owned > 0]
    if b.OWNED:
        b.bought = pyo.Var(b.OWNED, domain=pyo.NonNegativeReals)
        b.owned_netting = pyo.Constraint(
            b.OWNED, rule=lambda _, a, key: b.bought[a, key] >= m.stock[a][key].needed - m.stock[a][key].owned)
    m.capex = {}
    for a in m.A:
        bought = {key: (b.bought[a, key] if st.owned > 0 else st.needed) for key, st in m.stock[a].items()}
        m.capex[a] = costing.purchase_usd(m.stock[a], bought, d.contingency_fraction,
                                          archs[a].parts.hardware_fraction) * MUSD
    m.total_capex_musd = sum(m.capex.values())
    m.total_tco_musd = m.total_capex_musd + costing.energy_usd(m.total_facility_kw, d.years, d.usd_per_kwh) * MUSD


def add_caps(m: Any, soft: bool) -> None:
    """max_gpus: GPUs bought ≤ cap; budget: capex ≤ budget_usd; facility_power: PUE·IT kW ≤ cap;
    max_racks: racks ≤ cap. With `soft`, each has a penalised slack (infeasibility diagnosis). Block m.caps (the
    slack cap_slack stays on the model: the objective and the diagnosis read it)."""
    caps = m.data.caps
    b = m.caps = pyo.Block()
    terms = {
        "max_gpus": (m.total_gpus, 1.0),
        "budget_usd": (m.total_capex_musd, MUSD),
        "facility_power_kw": (m.total_facility_kw, 1.0),
        "max_racks": (m.total_racks, 1.0),
    }
    for name, (expr, scale) in terms.items():
        if caps.get(name) is None:
            continue
        b.add_component(name, pyo.Constraint(expr=expr <= caps[name] * scale + m.cap_slack[name]))


def add_pins(m: Any) -> None:
    """pin_tiers[a]: tier[a,t] = 0 for t ≠ pinned tiers; pin_nodes: job nodes = pinned nodes. Block m.pins."""
    d = m.data
    b = m.pins = pyo.Block()
    if d.pin_tiers is not None:
        for (a, t) in m.AT:
            if t != d.pin_tiers:
                m.tier[a, t].fix(0)
    if d.pin_nodes is not None:
        b.pin_nodes = pyo.Constraint(expr=sum(d.archs[a].nodes_per_unit * m.units[a] for a in m.A) == d.pin_nodes)


def add_objective(m: Any, soft: bool) -> None:
    """minimise capex or TCO (M$); with soft caps, plus a large penalty per relative unit of slack.
    `fastest` minimises the step time (add_step_objective); with soft caps it minimises capex, so the
    diagnosis reports what the cheapest design needs."""
    if m.data.objective == "fastest" and not soft:
        add_step_objective(m)
        m.objective = pyo.Objective(expr=m.step_objective_ms, sense=pyo.minimize)
        return
    base = m.total_tco_musd if m.data.objective == "tco" else m.total_capex_musd
    if soft:
        penalty = 0
        for name, cap in m.data.caps.items():
            if cap is not None:
                scale = cap * (MUSD if name == "budget_usd" else 1.0)
                penalty += 1e9 * m.cap_slack[name] / max(scale, 1e-9)
        base = base * 1e-6 + penalty
    m.objective = pyo.Objective(expr=base, sense=pyo.minimize)


def add_step_objective(m: Any) -> None:
    """step_objective = Σ_{s,j,a} T_sj·w[s,j,a] in ms (SPEC §7 `fastest`): exactly one point is chosen
    and T_sj, the step time of shape s at d = D_sj, is a constant of the point (the design space
    reads it off the same coefficients as step_time[s]), so the step time is linear in w."""
    shapes = m.data.space.shapes
    m.step_objective_ms = sum(1e3 * shapes[i].step_time_s[j] * m.w[i, j, a] for (i, j, a) in m.SJA)


def bound_step_time(m: Any, limit_s: float, index: int) -> Any:
    """same_speed_k: Σ T_sj·w ≤ limit (ms) — the second stage of `fastest` keeps the designs as fast as
    the first stage's (within ranking.same_speed) and minimises their cost."""
    return add_cut(m, f"same_speed_{index}", m.step_objective_ms <= 1e3 * limit_s)


def add_cut(m: Any, name: str, expr: Any) -> Any:
    """A row a search adds (no-good cut, same-speed, same-cost or frontier row) to the block m.cuts; the row."""
    row = pyo.Constraint(expr=expr)
    m.cuts.add_component(name, row)
    return row


def drop_cut(m: Any, row: Any) -> None:
    """Remove a row add_cut added."""
    m.cuts.del_component(row)


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


def chosen_point(m: Any) -> tuple[int, int, int, int]:
    """(architecture a, tier count, shape i, d index j) of the design a solved model (or block) chose."""
    a = next(a for a in m.A if pyo.value(m.x[a]) > 0.5)
    tiers = next(t for (b, t) in m.AT if b == a and pyo.value(m.tier[a, t]) > 0.5)
    i, j = next((i, j) for (i, j, b) in m.SJA if b == a and pyo.value(m.w[i, j, b]) > 0.5)
    return a, tiers, i, j


def decode(m: Any) -> Choice:
    """Read the chosen design out of a solved model."""
    data = m.data
    a, tiers, i, j = chosen_point(m)
    shape = data.space.shapes[i]
    capex = pyo.value(m.total_capex_musd)  # one walk of the cost expression (the TCO adds the energy to it)
    obj_k = pyo.value(m.total_tco_musd) if data.objective == "tco" else capex
    return Choice(a, tiers, i, shape.d_values[j], shape.domains[j], obj_k / MUSD, capex / MUSD)


def add_no_good(m: Any, choice: Choice, distinct_by: str, index: int) -> None:
    """nogood_k: forbid the identity just found — tier[a,t] ≤ 0 (architecture identity),
    y_s + tier[a,t] ≤ 1 (layout identity) or Σ_{a' on platform(a)} x[a'] ≤ 0 (platform identity)."""
    a, t = choice.arch_index, choice.tiers
    if distinct_by == "layout":
        expr = m.y[choice.shape_index] + m.tier[a, t] <= 1
    elif distinct_by == "platform":
        platform = m.data.archs[a].arch.platform
        expr = sum(m.x[b] for b in m.A if m.data.archs[b].arch.platform == platform) <= 0
    else:
        expr = m.tier[a, t] <= 0
    add_cut(m, f"nogood_{index}", expr)
