"""The serving fleet's design space (SPEC §4.9): per pool role (aggregated, or prefill and decode) the candidate
pools — a machine (platform, NIC, rails, switch: the fabric decisions) × a replica layout (tp, pp, ep) × a
concurrency — each with its replica performance (read off the performance-model interface, never re-derived
here), the replica counts the MILP's rows may choose among, and the pool's bill of materials at each count
(costing.design_cost: the one costing table, the fabric sized by the existing families for the pool's nodes).

Per candidate pool o with replica performance (rate_o requests/s, tpot_o, prefill_o) and r replicas:
    serves the peak          r · rate_o · u_max ≥ λ_peak                                   (serve_peak)
    first token in time      ttft_p90(prefill_o, λ_peak, r) + kv_transfer_o ≤ TTFT target  (ttft_p90)
    decode speed             tpot_o ≤ TPOT target (aggregated and decode pools)             (tpot_p90)
    memory                   concurrency_o ≤ max_concurrency_o (the KV room), weights fit   (memory_fit)
    scale-out                the replica's scale-out bytes/s per GPU ≤ the NIC configuration's  (scaleout_fit)
The first two depend on r and are rows of the MILP (optimize/serving_model.py); the last three are properties of
the candidate and filter it here (recorded for the infeasibility explanation). Domains for r replicas of g GPUs
on a platform of D GPUs per domain: ⌈r / ⌊D/g⌋⌉ when g ≤ D, else r·⌈g/D⌉ (a replica never straddles a domain it
does not fill).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .. import costing
from ..costing.facility import allowed_rails
from ..errors import CatalogCannotBuild
from ..inputs.schema import Catalog, Scenario, as_list
from ..perf.hardware import scaleout_gbyte_s_per_gpu
from ..perf.interface import model_for

ROLES_BY_MODE = {"aggregated": ("aggregated",), "disaggregated": ("prefill", "decode")}
REPLICA_WINDOW = 2  # replica counts offered to the MILP below the first that meets every row (they fail a row)
MAX_REPLICAS = 100_000
DEFAULT_TP = (1, 2, 4, 8)


@dataclass(frozen=True)
class Machine:
    """A pool's fabric decisions: platform, NIC, rails per node, switch (fat-tree, non-blocking)."""

    platform: str
    nic: str
    rails_per_node: int
    switch: str
    fabric: str = "fat-tree"
    oversubscription: float = 1.0
    scaleout_gbyte_s_per_gpu: float = 0.0
    network: str = "infiniband"  # the NIC's fabric technology: a disaggregated fleet's pools share it (kv_path)

    @property
    def key(self) -> tuple:
        return (self.platform, self.nic, self.rails_per_node, self.switch, self.fabric, self.oversubscription)


@dataclass
class PoolOption:
    """One candidate pool: a machine, a replica layout and concurrency, its replica performance, and per
    offered replica count r its TTFT p90 and its costed bill of materials."""

    index: int
    role: str
    machine: Machine
    layout: Any  # perf.serving.ReplicaLayout
    perf: Any  # perf.serving.ReplicaPerf
    gpus_per_replica: int
    gpus_per_domain: int
    replicas: tuple[int, ...] = ()
    ttft_s: tuple[float, ...] = ()
    costs: tuple[Any, ...] = ()  # costing.CostedDesign per offered count

    def domains(self, r: int) -> int:
        """⌈r / ⌊D/g⌋⌉ when g ≤ D, else r·⌈g/D⌉."""
        g, d = self.gpus_per_replica, self.gpus_per_domain
        return -(-r // (d // g)) if g <= d else r * -(-g // d)

    def used_per_domain(self, r: int) -> int:
        """GPUs the replicas use in each domain (G_u): g·min(r, ⌊D/g⌋) when g ≤ D, else ⌈g / ⌈g/D⌉⌉. The rest of a
        domain (a 64-of-72 NVL72 layout's 2 trays) are in-domain hot spares for the availability rule
        (failures.spare_units), as for a training job."""
        g, d = self.gpus_per_replica, self.gpus_per_domain
        return g * min(r, d // g) if g <= d else -(-g // -(-g // d))

    @property
    def tpot_s(self) -> float:
        return float(self.perf.tpot_s)

    def capacity_rps(self, r: int) -> float:
        return r * float(self.perf.requests_per_s)


@dataclass
class Rejections:
    """Why candidates left the space: per reason the best value seen (for the infeasibility explanation)."""

    counts: dict[str, int] = field(default_factory=dict)
    best: dict[str, tuple[float, str]] = field(default_factory=dict)

    def add(self, reason: str, value: float, what: str, lower_is_better: bool = True) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        old = self.best.get(reason)
        if old is None or (value < old[0] if lower_is_better else value > old[0]):
            self.best[reason] = (value, what)


@dataclass
class FleetSpace:
    """The candidates of every pool role, the traffic and targets the rows use, and what was rejected."""

    options: list[PoolOption]
    modes: tuple[str, ...]
    peak_rps: float
    ttft_max_s: float
    tpot_max_s: float
    utilisation_max: float
    rejected: Rejections
    evaluated: int = 0
    same_platform: bool = False
    pruned: int = 0

    def of(self, role: str) -> list[PoolOption]:
        return [o for o in self.options if o.role == role]


def modes_of(disaggregation: str) -> tuple[str, ...]:
    return {"off": ("aggregated",), "on": ("disaggregated",), "auto": ("aggregated", "disaggregated")}[disaggregation]


def serves_peak(rate_rps: float, replicas: int, peak_rps: float, u: float) -> bool:
    """serve_peak: r · rate · u_max ≥ λ_peak (relative tolerance 1e-9)."""
    return replicas * rate_rps * u >= peak_rps * (1 - 1e-9)


def replicas_for_peak(rate_rps: float, peak_rps: float, u: float) -> int:
    """The fewest replicas with r · rate · u ≥ λ: ⌈λ / (rate · u)⌉ (≥ 1)."""
    return max(1, math.ceil(peak_rps / (rate_rps * u) * (1 - 1e-12)))


def ttft_of(perf: Any, role: str, peak_rps: float, replicas: int, concurrency: int = 1) -> float:
    """TTFT p90 of a pool of r replicas at the peak, perf.serving.ttft_p90_s: a prefill replica is one server busy
    1/rate per prompt (c = r); an aggregated replica admits a request when one of its b slots frees, so it is b
    servers each busy b/rate per request (c = r·b; the utilisation λ/(r·rate) either way); a prefill pool adds the
    KV transfer to the decode pool. 0 for a decode pool (its TTFT is the prefill pool's)."""
    from ..perf.serving import ttft_p90_s

    if role == "decode":
        return 0.0
    per = concurrency if role == "aggregated" else 1
    extra = kv_transfer_s(perf) if role == "prefill" else 0.0
    return ttft_p90_s(perf.prefill_s, peak_rps, replicas * per, service_s=per / perf.requests_per_s, extra_s=extra)


def kv_transfer_s(perf: Any) -> float:
    """The prompt's KV cache moved prefill → decode: the replica model's `kv_transfer_s` (perf/serving.py)."""
    return float(getattr(perf, "kv_transfer_s", 0.0))


def _machines(sc: Scenario, cat: Catalog, platform: Any) -> list[Machine]:
    con = sc.constraints
    nics = as_list(con.nics)
    switches = as_list(con.switches)
    out = []
    for nic_id in platform.compatible_nics:
        if nics is not None and nic_id not in nics:
            continue
        nic = cat.by_id("nics")[nic_id]
        for rails in allowed_rails(sc, cat, platform):
            for sw in cat.switches:
                if switches is not None and sw.id not in switches:
                    continue
                try:
                    costing.check_combination(platform, nic, sw, rails)
                except CatalogCannotBuild:
                    continue
                bw = scaleout_gbyte_s_per_gpu(rails, nic.speed_gbps, platform.gpus_per_node,
                                              sc.efficiency.nic_efficiency or nic.efficiency)
                out.append(Machine(platform.id, nic_id, rails, sw.id, scaleout_gbyte_s_per_gpu=bw, network=nic.fabric))
    return out


def _layouts(sc: Scenario, moe: bool, pool_pin: Any) -> list[tuple[int, int, int]]:
    par = sc.parallelism
    tps = [pool_pin.tp] if pool_pin is not None and pool_pin.tp else (as_list(par.tp) or list(DEFAULT_TP))
    pps = [pool_pin.pp] if pool_pin is not None and pool_pin.pp else (as_list(par.pp) or [1])
    eps_allowed = [pool_pin.ep] if pool_pin is not None and pool_pin.ep else as_list(par.ep)
    out: list[tuple[int, int, int]] = []
    for tp in tps:
        for pp in pps:
            eps = eps_allowed if eps_allowed is not None else ([tp * pp] if moe else [1])
            # ep ≤ tp·pp: experts over the replica's GPUs; ep a multiple of tp·pp beyond it: attention data
            # parallelism (dp_attention = ep / (tp·pp) copies of the attention, experts over all ep GPUs)
            out.extend((tp, pp, ep) for ep in eps if (moe or ep == 1) and ((tp * pp) % ep == 0 or ep % (tp * pp) == 0))
    return out


def _pool_pin(sc: Scenario, role: str) -> Any:
    pin = sc.pin
    if role == "aggregated":
        return pin if any(getattr(pin, k) is not None for k in ("platform", "tp", "pp", "ep", "concurrency",
                                                               "replicas", "nic", "rails_per_node", "switch")) else None
    return getattr(pin, role)


def _platforms(sc: Scenario, cat: Catalog, pool_pin: Any) -> list[Any]:
    allowed, gpus = as_list(sc.constraints.platforms), as_list(sc.constraints.gpus)
    out = []
    for p in cat.platforms:
        if allowed is not None and p.id not in allowed or gpus is not None and p.gpu not in gpus:
            continue
        if pool_pin is not None and pool_pin.platform and p.id != pool_pin.platform:
            continue
        out.append(p)
    return out


def _machine_pinned(m: Machine, pool_pin: Any) -> bool:
    if pool_pin is None:
        return True
    return all(getattr(pool_pin, k) in (None, v) for k, v in (("nic", m.nic), ("rails_per_node", m.rails_per_node),
                                                               ("switch", m.switch)))


class _Builder:
    """Fills a FleetSpace: every (role, machine, layout, concurrency), filtered, with its replica rows' inputs."""

    def __init__(self, sc: Scenario, cat: Catalog) -> None:
        from ..perf.serving import ServingModelContext  # noqa: F401 - fail early when the replica model is absent

        self.sc, self.cat = sc, cat
        serving = sc.serving
        assert serving is not None  # kind: inference
        self.serving = serving
        self.traffic = serving.traffic
        self.peak = serving.traffic.peak_requests_per_s()
        self.u = serving.slo.utilisation_max
        self.ttft_max = serving.slo.ttft_p90_s
        self.tpot_max = serving.slo.tpot_max_s()
        self.model = model_for("inference")
        self.rejected = Rejections()
        self.options: list[PoolOption] = []
        self.cost_memo: dict[tuple, Any] = {}
        self.ttft_memo: dict[tuple, tuple[Any, float]] = {}
        self.evaluated = 0

    def context(self, platform: Any, bw: float) -> Any:
        from ..perf.serving import ServingModelContext, kv_cache_dtype_of

        wl = self.sc.workload
        gpu = self.cat.by_id("gpus")[platform.gpu]
        kv = kv_cache_dtype_of(wl)
        return ServingModelContext(model=wl.model, gpu=gpu, platform=platform, scaleout_gbyte_s_per_gpu=bw,
                                   stack=self.cat.by_id("stacks")[wl.stack], precision=wl.precision,
                                   kv_cache_dtype=kv)

    def cost(self, m: Machine, domains: int, used: int) -> Any:
        key = (m.key, domains, used)
        if key not in self.cost_memo:
            self.cost_memo[key] = costing.design_cost(self.sc, self.cat, m.platform, m.nic, m.rails_per_node, m.switch,
                                                      m.oversubscription, domains, None, m.fabric,
                                                      gpus_per_domain_used=used)
        return self.cost_memo[key]

    def build(self, modes: tuple[str, ...]) -> FleetSpace:
        roles = [r for mode in modes for r in ROLES_BY_MODE[mode]]
        for role in roles:
            self.role(role)
        return FleetSpace(self.options, modes, self.peak, self.ttft_max, self.tpot_max, self.u, self.rejected,
                          self.evaluated, self.serving.platforms_per_pool == "same")

    def role(self, role: str) -> None:
        pool_pin = _pool_pin(self.sc, role)
        moe = self.sc.workload.model.moe is not None
        layouts = _layouts(self.sc, moe, pool_pin)
        concurrency = ([pool_pin.concurrency] if pool_pin is not None and pool_pin.concurrency
                       else list(self.serving.concurrency_values()))
        if role == "prefill":
            concurrency = concurrency[:1] if pool_pin is None or not pool_pin.concurrency else concurrency
        for platform in _platforms(self.sc, self.cat, pool_pin):
            machines = [m for m in _machines(self.sc, self.cat, platform) if _machine_pinned(m, pool_pin)]
            by_bw: dict[float, list[Machine]] = {}
            for m in machines:
                by_bw.setdefault(m.scaleout_gbyte_s_per_gpu, []).append(m)
            for bw, group in by_bw.items():
                self.platform_layouts(role, platform, bw, group, layouts, concurrency, pool_pin)

    def platform_layouts(self, role: str, platform: Any, bw: float, machines: list[Machine],
                         layouts: list[tuple[int, int, int]], concurrency: list[int], pool_pin: Any) -> None:
        from ..perf.serving import ReplicaLayout

        ctx = self.context(platform, bw)
        for tp, pp, ep in layouts:
            for b in concurrency:
                dp = ep // (tp * pp) if ep > tp * pp else 1
                layout = ReplicaLayout(tp=tp, pp=pp, ep=ep, concurrency=b, role=role, dp_attention=dp)
                self.evaluated += 1
                perf = self.model.point((ctx, self.traffic), layout).detail
                if not self.admissible(role, platform, layout, perf, bw):
                    continue
                for m in machines:
                    self.add(role, m, platform, layout, perf, pool_pin)

    def admissible(self, role: str, platform: Any, layout: Any, perf: Any, bw: float) -> bool:
        what = f"{platform.id} tp{layout.tp} pp{layout.pp} ep{layout.ep} concurrency {layout.concurrency}"
        gpus = replica_gpus(layout)
        if not perf.fits or layout.concurrency > perf.max_concurrency:
            self.rejected.add("memory_fit", -gpus, what)
            return False
        if role != "prefill" and perf.tpot_s > self.tpot_max * (1 + 1e-9):
            self.rejected.add("tpot_p90", perf.tpot_s, f"{what} ({gpus} GPUs per replica)")
            return False
        cap = self.sc.constraints.max_gpus
        if cap is not None and gpus > cap:  # one replica alone exceeds the cap (it would meet its TPOT)
            self.rejected.add("replica_gpus" if role != "prefill" else "prefill_replica_gpus", gpus, what)
            return False
        if perf.scaleout_gbyte_s_per_gpu > bw * (1 + 1e-9):
            self.rejected.add("scaleout_fit", perf.scaleout_gbyte_s_per_gpu / bw, what)
            return False
        # with ever more replicas the wait vanishes: TTFT → the prompt's prefill (+ its KV transfer)
        if role != "decode" and (best := perf.prefill_s + (kv_transfer_s(perf) if role == "prefill" else 0.0)) \
                >= self.ttft_max:
            self.rejected.add("ttft_p90", best, what)
            return False
        return perf.requests_per_s > 0

    def ttft(self, perf: Any, role: str, r: int, b: int) -> float:
        """ttft_of, once per (replica performance, role, replicas): the machines of one bandwidth share it."""
        key = (id(perf), role, r, b)
        hit = self.ttft_memo.get(key)
        if hit is None or hit[0] is not perf:  # the entry holds its perf: an id is never reused while memoised
            hit = self.ttft_memo[key] = (perf, ttft_of(perf, role, self.peak, r, b))
        return hit[1]

    def first_in_time(self, perf: Any, role: str, b: int, first: int) -> int:
        """The fewest replicas r ≥ first whose TTFT p90 meets the target (ttft_of is non-increasing in r): doubling,
        then bisection."""
        def ok(r: int) -> bool:
            return role == "decode" or self.ttft(perf, role, r, b) <= self.ttft_max

        if ok(first):
            return first
        lo, hi = first, first * 2
        while not ok(hi) and hi < MAX_REPLICAS:
            lo, hi = hi, hi * 2
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if ok(mid) else (mid, hi)
        return hi

    def add(self, role: str, m: Machine, platform: Any, layout: Any, perf: Any, pool_pin: Any) -> None:
        rate = float(perf.requests_per_s)
        first = replicas_for_peak(rate, self.peak, self.u)
        feasible = self.first_in_time(perf, role, layout.concurrency, first)
        if pool_pin is not None and pool_pin.replicas:
            counts = [pool_pin.replicas]
        else:
            counts = list(range(max(1, min(first, feasible - REPLICA_WINDOW)), feasible + 1))
        opt = PoolOption(len(self.options), role, m, layout, perf, replica_gpus(layout), platform.gpus_per_domain)
        kept = [(r, self.cost(m, opt.domains(r), opt.used_per_domain(r))) for r in counts]
        kept = [(r, c) for r, c in kept if c is not None]
        if not kept:
            self.rejected.add("fabric", 0, f"{m.platform} {m.nic} ×{m.rails_per_node} {m.switch}: more than 3 tiers")
            return
        opt.replicas = tuple(r for r, _ in kept)
        opt.ttft_s = tuple(self.ttft(perf, role, r, layout.concurrency) for r in opt.replicas)
        opt.costs = tuple(c for _, c in kept)
        self.options.append(opt)


def replica_gpus(layout: Any) -> int:
    """GPUs of one replica: the layout's `gpus` when it states one (attention data parallelism), else tp · pp."""
    g = getattr(layout, "gpus", None)
    return int(g) if g is not None else layout.tp * layout.pp


def build_fleet_space(sc: Scenario, cat: Catalog, prune: bool = True, keep_speed: bool = False) -> FleetSpace:
    """Every candidate pool of the scenario's fleet modes (disaggregation off → aggregated; on → prefill and decode;
    auto → both), filtered by the per-candidate rows, each with the replica counts and costs the MILP chooses among."""
    assert sc.serving is not None
    pin = sc.pin
    if pin.prefill is not None or pin.decode is not None:
        modes: tuple[str, ...] = ("disaggregated",)
    elif _pool_pin(sc, "aggregated") is not None and sc.serving.disaggregation == "auto":
        modes = ("aggregated",)
    else:
        modes = modes_of(sc.serving.disaggregation)
    space = _Builder(sc, cat).build(modes)
    return prune_dominated(space, weighed(sc, keep_speed)) if prune else space


def rows_ok(space: FleetSpace, o: PoolOption, j: int) -> bool:
    """serve_peak, ttft_p90 and tpot_p90 of one candidate pool at its j-th offered replica count (the MILP's rows,
    read off the same coefficients; the enumeration and the pruning use this)."""
    if not serves_peak(float(o.perf.requests_per_s), o.replicas[j], space.peak_rps, space.utilisation_max):
        return False
    if o.role != "decode" and not (math.isfinite(o.ttft_s[j]) and o.ttft_s[j] <= space.ttft_max_s * (1 + 1e-9)):
        return False
    return o.role == "prefill" or o.tpot_s <= space.tpot_max_s * (1 + 1e-9)


MEASURES = ("capex", "tco", "gpus", "power", "racks", "tpot")
CAP_MEASURES = (("max_gpus", "gpus"), ("budget_usd", "capex"), ("facility_power_kw", "power"), ("max_racks", "racks"))
"""Each fleet cap (constraints.<cap>) and the measure it bounds: the pruning weighs it, the MILP caps it."""


def weighed(sc: Scenario, keep_speed: bool = False) -> tuple[str, ...]:
    """The measures the MILP weighs for this scenario: its objective's cost (`fastest`: capex and TPOT), the
    quantity of every cap it sets, and TPOT with capex and TCO when the frontier is asked for (`keep_speed`)."""
    out = {"tco" if sc.objective == "tco" else "capex"}
    if sc.objective == "fastest" or keep_speed:
        out |= {"tpot", "capex", "tco"}
    con = sc.constraints
    for cap, name in CAP_MEASURES:
        if getattr(con, cap) is not None:
            out.add(name)
    return tuple(m for m in MEASURES if m in out)


def _measures(o: PoolOption, j: int, names: tuple[str, ...]) -> tuple[float, ...]:
    """The candidate's measures at its fewest replicas meeting every row (offered count j), then its TPOT (the
    tie-break: of equal candidates the faster one stays)."""
    c = o.costs[j]
    every = {"capex": c.capex_usd, "tco": c.tco_usd, "gpus": c.gpus, "power": c.facility_power_kw, "racks": c.racks,
             "tpot": o.tpot_s if o.role != "prefill" else 0.0}
    return tuple(every[n] for n in names) + (every["tpot"],)


def prune_dominated(space: FleetSpace, names: tuple[str, ...] = MEASURES) -> FleetSpace:
    """Drop a candidate when another of the same role and machine (so the same architecture for the K best) is no
    worse in every measure the MILP weighs (`weighed`) and better in one — or equal in all and faster, or equal in
    all and speed too and listed first. Pools add up independently (costs and caps are sums; the coupling rows read
    only the machine), so the best fleet of every architecture survives. The enumeration
    (optimize/serving_oracle.py) runs on the unpruned space: it checks this too."""
    kept: list[PoolOption] = []
    groups: dict[tuple, list[PoolOption]] = {}
    for o in space.options:
        groups.setdefault((o.role,) + o.machine.key, []).append(o)
    for group in groups.values():
        # a candidate no offered count of which meets its rows can never be chosen (a pinned count too few)
        firsts = [(o, next((j for j in range(len(o.replicas)) if rows_ok(space, o, j)), None)) for o in group]
        group = [o for o, j in firsts if j is not None]
        ms = [_measures(o, j, names) for o, j in firsts if j is not None]
        for i, o in enumerate(group):
            if not any(_dominates(ms[k], ms[i], k < i) for k in range(len(group)) if k != i):
                kept.append(o)
    for i, o in enumerate(kept):
        o.index = i
    space.pruned = len(space.options) - len(kept)
    space.options = kept
    return space


def _dominates(a: tuple[float, ...], b: tuple[float, ...], earlier: bool) -> bool:
    """a over b on the measures (the last entry is the tie-break TPOT): no worse in each and better in one; equal in
    every measure and faster; or equal in all and earlier."""
    if any(x > y * (1 + 1e-12) for x, y in zip(a[:-1], b[:-1])):
        return False
    if any(x < y * (1 - 1e-12) for x, y in zip(a[:-1], b[:-1])):
        return True
    if a[-1] != b[-1]:
        return a[-1] < b[-1]
    return earlier
