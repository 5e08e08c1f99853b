"""The plan MILP (SPEC §6.1): one model over all periods, hardware carried forward.

Each period p is a Pyomo block holding the single-period design rows of solver/optimize/model.py
(`add_design_rows`, `add_needs`, `add_pins`: one design per period, its step time, memory, fabric and
racks, and needed[p,a,key] per stock key of the bill-of-materials table). This module adds what
links the periods; docs/model.md ("Plan model") lists the families by these names:

    run[p,g]                 = x[a] of period p's block for global architecture g (0 if g has no point in p)
    same_architecture[p,g]   run[p,g] = run[0,g]                                  (keep_one)
    moves_once[p]            moved[p] ≥ moved[p−1], moved[0] = 0                  (allow_second)
    first_cluster[p,g]       run[p,g] ≤ run[0,g] + moved[p]
    second_cluster[p,g]      run[p,g] ≤ second[g] + 1 − moved[p]
    one_second               Σ_g second[g] ≤ 1
    distinct_clusters[g]     run[0,g] + second[g] ≤ 1
    cover[p,g,key]           Σ_{q≤p} bought[q,g,key] ≥ needed[p,g,key] − owned[key]·run[0,g]
    first_period_only[p,g,key]  bought[p,g,key] = 0 for p ≥ 1                     (the up-front comparison)
    orderable_window[p,g,key]   bought[p,g,key] = 0 when key's part is outside its lifecycle window in p
    period_caps[p,cap]       GPUs, facility kW, racks of period p's design ≤ caps; spend_p ≤ budget_usd
    resale_held, resale_runs, resale_stops  sold[p,g,key] ≤ held, ≤ M·run[p,g], ≤ M·(1 − run[p+1,g]) (plan/resale.py)
    objective                min Σ_p δ_p·(spend_p + energy_p − resale_p),
                             spend_p  = (1 + f_cont)·[(1 + F)·Σ_hardware P·φ_p·bought + Σ_extra P·φ_p·bought]
                             energy_p = Y·8760·PUE·IT kW_p·$/kWh (TCO only)

Each family is a Pyomo `Block` that owns its sets, variables and rows, as in the single-period model: m.clusters
(same_architecture, or the second-cluster rows with moved and second), m.cover (cover, first_period_only),
m.orderable (orderable_window), m.resold (sold and the resale rows, plan/resale.py) and m.caps (period_caps),
declared before the period blocks so that the rows keep the order they always had. The decisions the families
share (bought, run) and the expressions (spend, energy, resale) stay on the model.

Each architecture's cluster keeps its own stock (what it bought, carried forward); the owned inventory
belongs to the cluster that runs period 0. `bought` may run ahead of the need (buy early when a
later period is dearer), never behind it; it is integer when a period has a budget cap (see
`add_cover`). Costs are in M$ as in the single-period model.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyomo.core as pyo

from .. import costing
from ..design_space import Architecture, DesignSpace
from ..optimize import model as milp
from ..optimize.data import MUSD, ModelData
from .periods import PlanSpec
from .resale import add_resale

CAPS = ("max_gpus", "facility_power_kw", "max_racks", "budget_usd")


@dataclass
class PeriodModel:
    """One period's design space and model constants."""

    space: DesignSpace
    data: ModelData


def build_plan_model(spec: PlanSpec, periods: list[PeriodModel], first_period_only: bool = False) -> Any:
    """The plan MILP as a flat list of families (one function each)."""
    m = pyo.ConcreteModel(name="fabricplan-plan")
    m.spec = spec
    m.P = list(range(len(periods)))
    for name in ("clusters", "cover", "orderable", "resold", "caps"):  # filled below, after the periods they link
        m.add_component(name, pyo.Block())
    m.period = pyo.Block(m.P)
    for p in m.P:
        b = m.period[p]
        milp.add_design_rows(b, periods[p].data)
        milp.add_needs(b)
        milp.add_pins(b)
    add_architectures(m)
    if spec.architectures == "allow_second":
        add_second_cluster(m)
    else:
        add_same_architecture(m)
    add_cover(m, first_period_only)
    add_orderable_window(m)
    add_spend(m)
    add_resale(m)
    add_period_caps(m)
    add_objective(m)
    return m


def add_architectures(m: Any) -> None:
    """run[p,g] = x[a] of period p for the global architecture g (an expression; 0 when absent)."""
    archs: set[Architecture] = set()
    for p in m.P:
        archs |= {ad.arch for ad in m.period[p].data.archs}
    m.G = sorted(archs)
    m.local = {p: {ad.arch: a for a, ad in enumerate(m.period[p].data.archs)} for p in m.P}
    m.run = {(p, g): (m.period[p].x[m.local[p][arch]] if arch in m.local[p] else 0)
             for p in m.P for g, arch in enumerate(m.G)}
    m.GI = list(range(len(m.G)))


def _row(lhs: Any, rhs: Any, sense: str) -> Any:
    """A constraint row, skipped when both sides are constants (an architecture absent from both periods)."""
    if isinstance(lhs, (int, float)) and isinstance(rhs, (int, float)):
        return pyo.Constraint.Skip
    return lhs == rhs if sense == "==" else lhs <= rhs


def add_same_architecture(m: Any) -> None:
    """same_architecture[p,g]: run[p,g] = run[0,g] — every period's job runs on one architecture."""
    b = m.clusters
    b.LATER = [(p, g) for p in m.P[1:] for g in m.GI]
    b.same_architecture = pyo.Constraint(b.LATER, rule=lambda _, p, g: _row(m.run[p, g], m.run[0, g], "=="))


def add_second_cluster(m: Any) -> None:
    """moves_once[p]: moved[p] ≥ moved[p−1] (moved[0] = 0); first_cluster[p,g]: run[p,g] ≤ run[0,g] +
    moved[p]; second_cluster[p,g]: run[p,g] ≤ second[g] + 1 − moved[p]; one_second: Σ_g second[g] ≤ 1;
    distinct_clusters[g]: run[0,g] + second[g] ≤ 1 — the jobs move at most once, to a different,
    newly built architecture, and never back. Block m.clusters: moved[p], second[g] and these rows over PG = (p, g)."""
    b = m.clusters
    b.moved = pyo.Var(m.P, domain=pyo.Binary)
    b.moved[0].fix(0)
    b.second = pyo.Var(m.GI, domain=pyo.Binary)
    b.moves_once = pyo.Constraint(m.P[1:], rule=lambda _, p: b.moved[p] >= b.moved[p - 1])
    b.PG = [(p, g) for p in m.P for g in m.GI]
    b.first_cluster = pyo.Constraint(b.PG, rule=lambda _, p, g: m.run[p, g] <= m.run[0, g] + b.moved[p])
    b.second_cluster = pyo.Constraint(b.PG, rule=lambda _, p, g: m.run[p, g] <= b.second[g] + 1 - b.moved[p])
    b.one_second = pyo.Constraint(expr=sum(b.second[g] for g in m.GI) <= 1)
    b.distinct_clusters = pyo.Constraint(m.GI, rule=lambda _, g: m.run[0, g] + b.second[g] <= 1)


def _stock(m: Any, p: int, g: int) -> dict:
    """Period p's stock keys (needed, owned, price) of global architecture g; {} when g is absent."""
    a = m.local[p].get(m.G[g])
    return {} if a is None else m.period[p].stock[a]


def add_cover(m: Any, first_period_only: bool) -> None:
    """cover[p,g,key]: Σ_{q≤p} bought[q,g,key] ≥ needed[p,g,key] − owned[key]·run[0,g] — what the
    cluster of g holds (owned inventory if it runs period 0, plus everything bought so far) covers
    what period p's design needs; first_period_only[p,g,key]: bought[p,g,key] = 0 for p ≥ 1. Block m.cover over
    NEEDS = the (p, g, key) period p's design of g needs (bought, the shared purchases, stays on the model)."""
    m.keys = {}
    for g in m.GI:
        for p in m.P:
            for key, st in _stock(m, p, g).items():
                m.keys.setdefault(g, {}).setdefault(key, st)
    m.GK = [(g, key) for g in sorted(m.keys) for key in m.keys[g]]
    # Whole units. Without a budget cap, continuous is exact: once the designs are chosen, the cover rows
    # form an interval matrix with integer right-hand sides, so every vertex is integral. A budget cap
    # on a period's spend breaks that, so the purchases become integers.
    budgeted = any(m.period[p].data.caps.get("budget_usd") is not None for p in m.P)
    m.bought = pyo.Var([(p, g, key) for p in m.P for (g, key) in m.GK],
                       domain=pyo.NonNegativeIntegers if budgeted else pyo.NonNegativeReals)
    b = m.cover
    b.NEEDS = [(p, g, key) for p in m.P for (g, key) in m.GK if key in _stock(m, p, g)]

    def cover(_, p, g, key):
        st = _stock(m, p, g)[key]
        held = sum(m.bought[q, g, key] for q in m.P if q <= p)
        return held >= st.needed - st.owned * m.run[0, g]

    b.cover = pyo.Constraint(b.NEEDS, rule=cover)
    if first_period_only:
        b.LATER = [(p, g, key) for p in m.P[1:] for (g, key) in m.GK]
        b.first_period_only = pyo.Constraint(b.LATER, rule=lambda _, p, g, key: m.bought[p, g, key] == 0)


def add_orderable_window(m: Any) -> None:
    """orderable_window[p,g,key]: bought[p,g,key] = 0 when the key's part cannot be ordered in period p
    (catalog lifecycle, plan/lifecycle.py): what a later period needs must have been bought while it was. Block
    m.orderable over CLOSED = the (p, g, key) whose part is not orderable in p."""
    spec = m.spec
    b = m.orderable
    b.CLOSED = [(p, g, key) for p in m.P for (g, key) in m.GK if not spec.orderable(p, m.keys[g][key].part)]
    b.orderable_window = pyo.Constraint(b.CLOSED, rule=lambda _, p, g, key: m.bought[p, g, key] == 0)


def add_spend(m: Any) -> None:
    """spend_p = Σ_g costing.purchase_usd(stock of g, bought[p,g,·], contingency_p, F, φ_p) in M$;
    energy_p = Y·8760·facility kW_p·$/kWh in M$. Expressions."""
    spec = m.spec
    m.spend, m.energy = {}, {}
    for p in m.P:
        d = m.period[p].data
        period = spec.periods[p]
        fraction = costing.hardware_fraction(period.scenario.extra_costs)
        m.spend[p] = sum(costing.purchase_usd(m.keys[g], {key: m.bought[p, g, key] for key in m.keys[g]},
                                              d.contingency_fraction, fraction, period.price_factors,
                                              {st.part: spec.factor(p, st.category, st.part) for st in m.keys[g].values()})
                         for g in sorted(m.keys)) * MUSD
        m.energy[p] = costing.energy_usd(m.period[p].total_facility_kw, spec.period_years, d.usd_per_kwh) * MUSD


def add_period_caps(m: Any) -> None:
    """period_caps[p,cap]: GPUs, facility kW and racks of period p's design ≤ the period's caps;
    spend_p ≤ budget_usd (each period's purchases). Block m.caps over CAPPED = the (p, cap) a period sets."""
    rows = []
    for p in m.P:
        caps = m.period[p].data.caps
        rows += [(p, name) for name in CAPS if caps.get(name) is not None]
    m.caps.CAPPED = rows

    def rule(_, p, name):
        b, cap = m.period[p], m.period[p].data.caps[name]
        value = {"max_gpus": b.total_gpus, "facility_power_kw": b.total_facility_kw, "max_racks": b.total_racks,
                 "budget_usd": m.spend[p]}[name]
        return value <= cap * (MUSD if name == "budget_usd" else 1.0)

    m.caps.period_caps = pyo.Constraint(m.caps.CAPPED, rule=rule)


def add_objective(m: Any) -> None:
    """min Σ_p δ_p·(spend_p + energy_p − resale_p), energy only for objective tco, resale only with
    plan.resale_fraction (plan/resale.py) (M$)."""
    spec = m.spec
    tco = spec.objective == "tco"
    m.discounted = {p: spec.periods[p].discount_factor * (m.spend[p] + (m.energy[p] if tco else 0) - m.resale[p])
                    for p in m.P}
    m.objective = pyo.Objective(expr=sum(m.discounted.values()), sense=pyo.minimize)


# ===================================================================================== decode


@dataclass(frozen=True)
class PeriodChoice:
    """What the plan chose in one period: the architecture, tier count, shape and d of its design,
    the cluster that runs it (1 or 2) and what the model bought per (architecture, key)."""

    architecture: Architecture
    tiers: int
    shape_index: int
    d: int
    cluster: int
    bought: dict


def decode(m: Any) -> tuple[list[PeriodChoice], float]:
    """Per period choice, and the objective in dollars."""
    out = []
    moved = getattr(m.clusters, "moved", None)
    for p in m.P:
        b = m.period[p]
        a, tiers, i, j = milp.chosen_point(b)
        cluster = 2 if moved is not None and pyo.value(moved[p]) > 0.5 else 1
        bought = {(m.G[g], key): pyo.value(m.bought[p, g, key]) for (g, key) in m.GK}
        out.append(PeriodChoice(b.data.archs[a].arch, tiers, i, b.data.space.shapes[i].d_values[j], cluster,
                                {k: v for k, v in bought.items() if v > 1e-9}))
    return out, pyo.value(m.objective) / MUSD
