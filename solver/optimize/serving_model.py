"""The serving fleet MILP (SPEC §4.9, §7): which pools, on which machines, with how many replicas.

Indices: o a candidate pool of the fleet space (role, machine, layout, concurrency; design_space/serving.py),
j the j-th replica count R_oj offered for it, m a fleet mode (aggregated | disaggregated). Decisions: z[o,j] ∈ {0,1}
(pool o runs R_oj replicas), mode[m] ∈ {0,1}. The pool's bill of materials at R_oj replicas is the costing table's
(costing.design_cost, its fabric sized for the pool's nodes), so cost, GPUs, power and racks are Σ coefficient · z.
Each constraint family is one function below whose docstring is its equation (docs/model.md "Serving fleet"), and
a Pyomo `Block` that owns its index sets and rows (as the training MILP's, optimize/model.py): m.pools (one_mode,
one_pool), m.demand (serve_peak), m.latency (ttft_p90, tpot_p90), m.pairing (same_platform, kv_path), m.caps and
m.search (the no-good cuts and the TPOT bound the searches move). The decisions z, mode and the totals (capex, tco,
gpus, power, racks, tpot) stay on the model. Costs are in M$ inside the model.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import pyomo.core as pyo

from ..design_space.serving import CAP_MEASURES as CAPS
from ..design_space.serving import ROLES_BY_MODE, FleetSpace, PoolOption
from ..errors import SolverFailure
from .data import MUSD


@dataclass(frozen=True)
class Caps:
    max_gpus: float | None = None
    budget_usd: float | None = None
    facility_power_kw: float | None = None
    max_racks: float | None = None


def pairs(space: FleetSpace) -> list[tuple[int, int]]:
    return [(o.index, j) for o in space.options for j in range(len(o.replicas))]


def build_fleet_model(space: FleetSpace, caps: Caps, objective: str) -> pyo.ConcreteModel:
    """The fleet MILP: one family per function, named as in docs/model.md."""
    m = pyo.ConcreteModel(name="fabricplan-serving")
    m.opts = {o.index: o for o in space.options}
    m.Z = pyo.Set(initialize=pairs(space), dimen=2)
    m.M = pyo.Set(initialize=list(space.modes))
    m.z = pyo.Var(m.Z, domain=pyo.Binary)
    m.mode = pyo.Var(m.M, domain=pyo.Binary)
    m.pools = pyo.Block()
    add_one_mode(m, m.pools)
    add_one_pool_per_role(m, m.pools, space)
    add_serve_peak(m, space)
    m.latency = pyo.Block()
    add_ttft(m, m.latency, space)
    add_tpot(m, m.latency, space)
    m.pairing = pyo.Block()
    add_same_platform(m, m.pairing, space)
    add_kv_path(m, m.pairing, space)
    add_totals(m)
    add_caps(m, caps)
    add_search_rows(m)
    # capex | tco (fastest: capex, after the TPOT stage); gpus | power | racks: what the explanation minimises
    expr = {"tco": m.tco, "gpus": m.gpus, "power": m.power, "racks": m.racks}.get(objective, m.capex)
    m.obj = pyo.Objective(expr=expr, sense=pyo.minimize)
    return m


def add_one_mode(m: pyo.ConcreteModel, b: pyo.Block) -> None:
    """one_mode: Σ_m mode[m] = 1 (block m.pools)."""
    b.one_mode = pyo.Constraint(expr=sum(m.mode[k] for k in m.M) == 1)


def add_one_pool_per_role(m: pyo.ConcreteModel, b: pyo.Block, space: FleetSpace) -> None:
    """one_pool[role]: Σ_{o of role, j} z[o,j] = mode[m(role)] (aggregated: one pool; disaggregated: one prefill
    and one decode pool). Block m.pools, over ROLES = the (mode, role) pairs of the fleet space."""
    b.ROLES = [(mode, role) for mode in space.modes for role in ROLES_BY_MODE[mode]]

    def rule(_, mode, role):
        return sum(m.z[o, j] for o, j in m.Z if m.opts[o].role == role) == m.mode[mode]
    b.one_pool = pyo.Constraint(b.ROLES, rule=rule)


def _chosen(m: pyo.ConcreteModel, o: int):
    return sum(m.z[o, j] for j in range(len(m.opts[o].replicas)))


def add_serve_peak(m: pyo.ConcreteModel, space: FleetSpace) -> None:
    """serve_peak[o]: Σ_j R_oj · rate_o · u_max · z[o,j] ≥ λ_peak · Σ_j z[o,j]. Block m.demand over the pools O."""
    lam, u = space.peak_rps, space.utilisation_max
    b = m.demand = pyo.Block()
    b.O = list(m.opts)

    def rule(_, o):
        opt = m.opts[o]
        rate = float(opt.perf.requests_per_s)
        return sum(r * rate * u * m.z[o, j] for j, r in enumerate(opt.replicas)) >= lam * (1 - 1e-9) * _chosen(m, o)
    b.serve_peak = pyo.Constraint(b.O, rule=rule)


def add_ttft(m: pyo.ConcreteModel, b: pyo.Block, space: FleetSpace) -> None:
    """ttft_p90[o,j]: TTFT_p90(prefill_o, λ_peak, R_oj) · z[o,j] ≤ TTFT target (aggregated and prefill pools;
    the coefficient is perf.serving.ttft_p90_s at R_oj servers, plus the KV transfer for a prefill pool).
    Block m.latency, over FIRST = the (pool, count) pairs that prefill."""
    b.FIRST = [(o, j) for o, j in pairs(space) if space.options[o].role != "decode"]

    def rule(_, o, j):
        t = m.opts[o].ttft_s[j]
        if not math.isfinite(t):  # an unstable queue (λ ≥ servers / service time): the count is not allowed
            return m.z[o, j] <= 0
        return t * m.z[o, j] <= space.ttft_max_s * (1 + 1e-9)
    b.ttft_p90 = pyo.Constraint(b.FIRST, rule=rule)


def add_tpot(m: pyo.ConcreteModel, b: pyo.Block, space: FleetSpace) -> None:
    """tpot_p90[o]: tpot_o · Σ_j z[o,j] ≤ TPOT target (aggregated and decode pools; none without a target).
    Block m.latency, over DECODE = the pools that decode."""
    if space.tpot_max_s == float("inf"):
        return
    b.DECODE = [o.index for o in space.options if o.role != "prefill"]
    b.tpot_p90 = pyo.Constraint(b.DECODE, rule=lambda _, o: m.opts[o].tpot_s * _chosen(m, o)
                                <= space.tpot_max_s * (1 + 1e-9))


def add_same_platform(m: pyo.ConcreteModel, b: pyo.Block, space: FleetSpace) -> None:
    """same_platform[p] (serving.platforms_per_pool: same): Σ_{prefill o on p} z = Σ_{decode o on p} z.
    Block m.pairing, over PLATFORMS of the disaggregated pools."""
    if not space.same_platform or "disaggregated" not in space.modes:
        return
    b.PLATFORMS = sorted({o.machine.platform for o in space.options if o.role != "aggregated"})

    def side(role, p):
        return sum(m.z[o, j] for o, j in m.Z if m.opts[o].role == role and m.opts[o].machine.platform == p)
    b.same_platform = pyo.Constraint(b.PLATFORMS, rule=lambda _, p: side("prefill", p) == side("decode", p))


def add_kv_path(m: pyo.ConcreteModel, b: pyo.Block, space: FleetSpace) -> None:
    """kv_path[n]: Σ_{prefill o on network n} z = Σ_{decode o on network n} z — the prompt's KV cache moves from the
    prefill to the decode pool over the scale-out network, so both pools use one technology (InfiniBand or
    Ethernet); their NICs carry it (the candidates' scale-out filter counts the KV bytes). Block m.pairing, over
    NETWORKS of the disaggregated pools."""
    if "disaggregated" not in space.modes:
        return
    b.NETWORKS = sorted({o.machine.network for o in space.options if o.role != "aggregated"})

    def side(role, n):
        return sum(m.z[o, j] for o, j in m.Z if m.opts[o].role == role and m.opts[o].machine.network == n)
    b.kv_path = pyo.Constraint(b.NETWORKS, rule=lambda _, n: side("prefill", n) == side("decode", n))


def _total(m: pyo.ConcreteModel, value: Callable[[PoolOption, int], float]):
    return sum(value(m.opts[o], j) * m.z[o, j] for o, j in m.Z)


def add_totals(m: pyo.ConcreteModel) -> None:
    """capex = Σ capex_oj · z (M$), tco likewise; gpus, power (facility kW), racks = Σ their counts · z — each pool's
    counts from its costed bill of materials at R_oj replicas."""
    m.capex = pyo.Expression(expr=_total(m, lambda o, j: o.costs[j].capex_usd * MUSD))
    m.tco = pyo.Expression(expr=_total(m, lambda o, j: o.costs[j].tco_usd * MUSD))
    m.gpus = pyo.Expression(expr=_total(m, lambda o, j: o.costs[j].gpus))
    m.power = pyo.Expression(expr=_total(m, lambda o, j: o.costs[j].facility_power_kw))
    m.racks = pyo.Expression(expr=_total(m, lambda o, j: o.costs[j].racks))
    m.tpot = pyo.Expression(expr=_total(m, lambda o, j: o.tpot_s if o.role != "prefill" else 0.0))


def add_caps(m: pyo.ConcreteModel, caps: Caps) -> None:
    """caps: gpus ≤ max_gpus, capex ≤ budget_usd, power ≤ facility_power_kw, racks ≤ max_racks (those given).
    Block m.caps (its list `caps`)."""
    b = m.caps = pyo.Block()
    b.caps = pyo.ConstraintList()
    for name, attr in CAPS:
        cap = getattr(caps, name)
        if cap is not None:
            b.caps.add(getattr(m, attr) <= cap * (MUSD if name == "budget_usd" else 1.0) * (1 + 1e-9))


def add_search_rows(m: pyo.ConcreteModel) -> None:
    """Block m.search: cuts, the no-good rows of the K-best search (`exclude`); tpot_bound: tpot ≤ tpot_cap, a
    mutable bound `fastest` and the frontier move (1e9: off)."""
    b = m.search = pyo.Block()
    b.cuts = pyo.ConstraintList()
    m.tpot_cap = pyo.Param(initialize=1e9, mutable=True)
    b.tpot_bound = pyo.Constraint(expr=m.tpot <= m.tpot_cap)


def exclude(m: pyo.ConcreteModel, chosen: list[tuple[int, int]], same: Callable[[PoolOption, PoolOption], bool]) -> None:
    """no_good: Σ_{pools p of the found fleet} Σ_{o like p} z[o,·] ≤ (pools − 1): the next fleet differs in at least
    one pool's architecture (role, platform, NIC, rails, switch)."""
    found = [m.opts[o] for o, _ in chosen]
    like = [(o, j) for o, j in m.Z if any(same(m.opts[o], f) for f in found)]
    m.search.cuts.add(sum(m.z[o, j] for o, j in like) <= len(found) - 1)


def chosen(m: pyo.ConcreteModel) -> list[tuple[int, int]]:
    return [(o, j) for o, j in m.Z if pyo.value(m.z[o, j]) > 0.5]


def solve_model(m: pyo.ConcreteModel) -> bool:
    """Solve the fleet MILP at gap 0: True with a solution loaded, False when infeasible."""
    from .highs import HighsAdapter

    out = HighsAdapter().solve(m)
    if out.status in ("optimal", "feasible") and out.has_solution:
        return True
    if out.status == "infeasible":
        return False
    raise SolverFailure(f"the solver found no fleet ({out.status}: {out.termination})")
