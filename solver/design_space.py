"""The design space: every allowed platform × NIC × rails × switch × oversubscription × layout shape.

A *shape* is one performance class (platform, NIC, rails, oversubscription) with one layout
(t, c, p, v, b, G_u) and the set of data-parallel degrees d it may take. For the optimisation
model each shape carries the coefficients of its step-time, exposure, link-capacity and memory rows
multiplied by d (SPEC §7), read off `perf.step.performance` and `perf.step.point_terms` at every
allowed d: the bandwidth terms are affine in d inside one placement regime, the latency, fsdp
per-microbatch and in-flight terms are not, so each (shape, d) binary carries its own exact
coefficient (SPEC §4.5 "Exactness") — the formulas live only in solver/perf.

Pruning is exact: a shape is dropped only if no allowed d fits in memory, or no allowed d meets
the target step time, or its placement is impossible. Nothing that could be optimal is removed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from .costing import total_nodes
from .fabrics import DEFAULT_FAMILY, family
from .inputs.schema import Catalog, Scenario, as_list
from .perf.hardware import Hardware, hardware_for
from .perf.layout import Layout, LayoutShape, dp_candidates, layout_shapes, placement_problem
from .perf.memory import memory_per_gpu_gb
from .perf.model import parameter_count
from .perf.step import Performance, compute_and_bubble_s, performance, point_terms, step_time_on
from .perf.traffic import overlap_for

PRUNE_LEVELS = ("none", "shapes", "points", "dominated")


@dataclass(frozen=True, order=True)
class PerfClass:
    """What the step time depends on besides the layout."""

    platform: str
    nic: str
    rails_per_node: int
    oversubscription: float


@dataclass(frozen=True, order=True)
class Architecture:
    """The identity of a design, without its tier count (the model decides that)."""

    platform: str
    nic: str
    rails_per_node: int
    switch: str
    oversubscription: float
    fabric: str = DEFAULT_FAMILY

    @property
    def perf(self) -> PerfClass:
        return PerfClass(self.platform, self.nic, self.rails_per_node, self.oversubscription)

    def label(self, tiers: int | None = None) -> str:
        over = "" if self.oversubscription == 1 else f", {self.oversubscription:g}:1"
        kind = "" if self.fabric == DEFAULT_FAMILY else f" {self.fabric}"
        tier = f", {tiers}-tier{kind}" if tiers else kind
        return f"{self.platform} · {self.rails_per_node}×{self.nic} · {self.switch}{tier}{over}"


@dataclass
class Exposure:
    """One traffic class of a shape: d·exposed_k = max(0, max_i v_i[j]) at the j-th allowed d, each piece
    v_i[j] = d_j·(a_i·T_k − W_i) of the class's window rule evaluated exactly at d_j."""

    name: str
    pieces: list[list[float]]  # pieces[i][j]

    def at(self, j: int) -> float:
        """d·exposed_k at the j-th d."""
        return max([0.0] + [p[j] for p in self.pieces])


@dataclass
class Condition:
    """The step-time rows of a shape under one condition: nominal, or a margin the scenario demands
    (compute slowdown σ, or scale-out bandwidth derate δ; SPEC §4.5)."""

    name: str  # "" nominal, "compute_margin", "bandwidth_margin"
    comp: list[float]  # d·(T_comp + bubble)·(1 + σ) at each d
    exposures: list[Exposure]
    capacity: list[float]  # d·max(Σ_k T_k^so, Σ_k T_k^nvl) at each d

    def step_time_s(self, j: int, d: int) -> float:
        return max(self.comp[j] + sum(x.at(j) for x in self.exposures), self.capacity[j]) / d


@dataclass
class Shape:
    key: str
    perf: PerfClass
    tp: int
    cp: int
    pp: int
    vp: int
    microbatch_size: int
    gpus_per_domain_used: int
    d_values: list[int]
    domains: list[int]  # NVLink domains the job occupies at each d
    conditions: list[Condition]  # nominal first
    mem: list[float]  # d·mem(d) at each d (GB)
    hbm_usable_gb: float
    step_time_s: list[float] = field(default_factory=list)  # at each d (reports, pruning)

    @property
    def nominal(self) -> Condition:
        return self.conditions[0]

    def keep(self, js: list[int]) -> None:
        """Keep only the points js (ascending): every per-point list is cut alike."""
        self.d_values = [self.d_values[j] for j in js]
        self.domains = [self.domains[j] for j in js]
        self.step_time_s = [self.step_time_s[j] for j in js]
        self.mem = [self.mem[j] for j in js]
        for c in self.conditions:
            c.comp = [c.comp[j] for j in js]
            c.capacity = [c.capacity[j] for j in js]
            for x in c.exposures:
                x.pieces = [[p[j] for j in js] for p in x.pieces]

    def describe(self, d: int | None = None) -> str:
        p = self.perf
        dp = f" dp={d}" if d is not None else ""
        return (f"{p.platform}, {p.rails_per_node}×{p.nic}, tp={self.tp} cp={self.cp} pp={self.pp} vp={self.vp}"
                f"{dp} mbs={self.microbatch_size}")

    def memory_gb(self, d: int) -> float:
        """Memory per GPU at d, from the row memory_fit states: (d·mem) / d."""
        return self.mem[self.d_values.index(d)] / d

    def layout(self, d: int) -> Layout:
        return Layout(tp=self.tp, cp=self.cp, pp=self.pp, vp=self.vp, dp=d, microbatch_size=self.microbatch_size,
                      gpus_per_domain_used=self.gpus_per_domain_used)

    @property
    def gpus_per_replica(self) -> int:
        return self.tp * self.cp * self.pp


@dataclass
class DesignSpace:
    scenario: Scenario
    catalog: Catalog
    target_step_time_s: float
    architectures: list[Architecture]
    shapes: list[Shape]
    combinations: int  # shapes × d values × switches before pruning
    pruned: dict[str, int]
    fastest: tuple = (float("inf"), "")  # best step time of any placeable, memory-fitting point (s, shape)
    leanest: tuple = (float("inf"), 0.0, "")  # smallest memory per GPU of any point (GB, usable GB, shape)

    @property
    def points(self) -> int:
        """(shape, d, switch) points kept: the size of what enumeration would evaluate."""
        per_perf: dict[PerfClass, int] = {}
        for a in self.architectures:
            per_perf[a.perf] = per_perf.get(a.perf, 0) + 1
        return sum(len(s.d_values) * per_perf.get(s.perf, 0) for s in self.shapes)


# --------------------------------------------------------------------------- allow-lists


def architectures(scenario: Scenario, cat: Catalog) -> list[Architecture]:
    """Every allowed platform × NIC × rails × switch × oversubscription (sorted, deterministic)."""
    con, pin = scenario.constraints, scenario.pin
    allow_plat = as_list(con.platforms)
    allow_gpu = as_list(con.gpus)
    allow_nic = as_list(con.nics)
    allow_sw = as_list(con.switches)
    allow_rails = as_list(con.rails_per_node)
    overs = [pin.oversubscription] if pin.oversubscription is not None else (as_list(con.oversubscription) or [1.0])
    nics, out = cat.by_id("nics"), []
    for plat in cat.platforms:
        if (pin.platform and plat.id != pin.platform) or (allow_plat and plat.id not in allow_plat):
            continue
        if allow_gpu and plat.gpu not in allow_gpu:
            continue
        for nic_id in plat.compatible_nics:
            if (pin.nic and nic_id != pin.nic) or (allow_nic and nic_id not in allow_nic) or nic_id not in nics:
                continue
            nic = nics[nic_id]
            for rails in plat.scaleout_nics_per_node:
                if (pin.rails_per_node and rails != pin.rails_per_node) or (allow_rails and rails not in allow_rails):
                    continue
                for sw in cat.switches:
                    if (pin.switch and sw.id != pin.switch) or (allow_sw and sw.id not in allow_sw):
                        continue
                    if not switch_serves_nic(sw, nic):
                        continue
                    for over in overs:
                        out.append(Architecture(plat.id, nic_id, rails, sw.id, float(over)))
    return sorted(set(out))


def switch_serves_nic(switch, nic) -> bool:
    """A switch serves a NIC of the same fabric whose ports run at the switch's port speed."""
    return switch.fabric == nic.fabric and math.isclose(switch.port_speed_gbps, nic.speed_gbps)


def one_tier_allowed(arch: Architecture, all_archs) -> bool:
    """A 1-tier fabric has no uplinks, so it is the non-blocking architecture: an oversubscribed
    architecture may use 1 tier only when the non-blocking twin is not in the design space."""
    if arch.oversubscription == 1:
        return True
    twin = replace(arch, oversubscription=1.0)
    return twin not in set(all_archs)


# ------------------------------------------------------------------------------- shapes


def build_design_space(scenario: Scenario, catalog: Catalog, prune: str = "dominated",
                       one_layout_per_cost: bool = False) -> DesignSpace:
    """Enumerate, evaluate coefficients and prune exactly. Deterministic order.

    prune: "none" keeps every placeable point (the model's rows decide everything); "shapes" drops
    layouts with no d that fits in memory and meets the target; "points" also drops each d whose
    own rows fail; "dominated" (default) keeps, per layout, the smallest feasible d and, for each
    tier boundary of the class's switches, the smallest feasible d above it (a bigger fabric is a
    distinct architecture, so ranking needs its cheapest point too).
    one_layout_per_cost (with "dominated"): of the points of one performance class that occupy the
    same number of domains — and so cost exactly the same on every architecture — keep only the
    fastest. Exact when ranking distinct architectures, not distinct layouts.
    """
    if prune not in PRUNE_LEVELS:
        raise ValueError(f"prune must be one of {PRUNE_LEVELS}")
    if prune == "dominated" and scenario.pin.nodes is not None:
        prune = "points"  # a pinned node count may need a d above the cheapest: dominance no longer holds
    archs = architectures(scenario, catalog)
    ctx = _Context(scenario, catalog, prune)
    platforms = catalog.by_id("platforms")
    perfs = sorted({a.perf for a in archs})
    switches_per_perf = {p: sum(1 for a in archs if a.perf == p) for p in perfs}
    shapes: list[Shape] = []
    for plat_id in sorted({p.platform for p in perfs}):
        plat = platforms[plat_id]
        plat_perfs = [p for p in perfs if p.platform == plat_id]
        n_switch = sum(switches_per_perf[p] for p in plat_perfs)
        hws = {p: hardware_for(scenario, catalog, p.platform, p.nic, p.rails_per_node, p.oversubscription)
               for p in plat_perfs}
        # fastest NICs first, so that slower ones can start their scans where the faster ones found points
        plat_perfs.sort(key=lambda p: (-hws[p].scaleout_effective_gbyte_s, hws[p].nic_step_latency_s,
                                       hws[p].oversubscription, p))
        thresholds = _tier_thresholds(catalog, [a for a in archs if a.platform == plat_id])
        for g_used in plat.domain_sizes(scenario.pin.gpus_per_domain_used):
            for lay in layout_shapes(scenario):
                ds = _placeable(ctx, lay, g_used, n_switch)
                if not ds or not _fits_memory_somewhere(ctx, lay, g_used, ds, hws[plat_perfs[0]], len(plat_perfs)):
                    continue
                # one lazy evaluation per platform and d: bytes, compute, bubble and memory do not depend on
                # the NIC; each performance class only re-times the traffic (perf.step.point_terms)
                points = _Points(ctx, lay, g_used, ds, hws[plat_perfs[0]], plat)
                for perf in plat_perfs:
                    shape = _shape(ctx, perf, hws[perf], g_used, lay, points, plat, thresholds)
                    if shape is not None:
                        shapes.append(shape)
    pruned = ctx.pruned
    if one_layout_per_cost and prune == "dominated":
        before = sum(len(s.d_values) for s in shapes)
        shapes = _one_point_per_cost(shapes)
        pruned["equal_cost"] = before - sum(len(s.d_values) for s in shapes)
    kept_perf = {s.perf for s in shapes}
    archs = [a for a in archs if a.perf in kept_perf]
    return DesignSpace(scenario, catalog, ctx.target, archs, shapes, ctx.combinations, pruned,
                       ctx.best["fastest"], ctx.best["leanest"])


class _Context:
    """What every shape of one build shares, and the counters it keeps."""

    def __init__(self, scenario: Scenario, catalog: Catalog, prune: str):
        self.scenario, self.catalog, self.prune = scenario, catalog, prune
        self.wl = scenario.workload
        self.target = scenario.target_step_time_s()
        self.overlap = overlap_for(scenario)
        self.params = parameter_count(scenario.workload.model)
        self.conditions = _wanted_conditions(self)
        self.max_gpus = scenario.constraints.max_gpus
        self.pruned = {"placement": 0, "memory": 0, "target": 0, "caps": 0}
        self.combinations = 0
        self.best: dict[str, tuple] = {"fastest": (float("inf"), ""), "leanest": (float("inf"), 0.0, "")}


def _tier_thresholds(cat: Catalog, archs: list[Architecture]) -> list[int]:
    """Node counts at which some architecture of the platform needs one more fabric tier."""
    switches = cat.by_id("switches")
    caps: set[int] = set()
    for a in archs:
        radix = switches[a.switch].radix
        caps.update(family(a.fabric).max_nodes(radix, a.rails_per_node, a.oversubscription, t) for t in (1, 2))
    return sorted(c for c in caps if c > 0)


def _placeable(ctx: _Context, lay: LayoutShape, g_used: int, n_switch: int) -> list[int]:
    """The d values of one layout that can be placed and fit max_gpus (ascending)."""
    out: list[int] = []
    for d in dp_candidates(ctx.scenario, lay):
        ctx.combinations += n_switch
        layout = lay.layout(dp=d, gpus_per_domain_used=g_used)
        if placement_problem(layout, ctx.wl, g_used) is not None:
            ctx.pruned["placement"] += n_switch
            continue
        if ctx.max_gpus is not None and layout.gpus > ctx.max_gpus:
            ctx.pruned["caps"] += n_switch
            continue
        out.append(d)
    return out


def _fits_memory_somewhere(ctx: _Context, lay: LayoutShape, g_used: int, ds: list[int], hw: Hardware,
                           n_perf: int) -> bool:
    """Memory does not depend on the NIC or rails: check it once per platform (exact pruning). It does not grow
    with d (the optimizer shard shrinks, in-flight microbatches min(m, ·) do not grow), so the largest d is
    the leanest."""
    layout = lay.layout(dp=ds[-1], gpus_per_domain_used=g_used)
    lean = memory_per_gpu_gb(ctx.wl, layout, ctx.params)
    if lean < ctx.best["leanest"][0]:
        ctx.best["leanest"] = (lean, hw.hbm_usable_gb, f"{hw.gpu_id}, {lay.describe()} dp={ds[-1]}")
    if ctx.prune != "none" and lean > hw.hbm_usable_gb * (1 + 1e-9):
        ctx.pruned["memory"] += len(ds) * n_perf
        return False
    return True


MARGIN_CONDITIONS = (("compute_margin", "compute_slowdown"), ("bandwidth_margin", "bandwidth_derate"))


class _Points:
    """One layout's placeable d values on one platform, evaluated lazily and once (every NIC of the platform
    shares the bytes, compute and memory; `perf.step.point_terms` re-times them per NIC)."""

    def __init__(self, ctx: _Context, lay: LayoutShape, g_used: int, ds: list[int], hw: Hardware, plat):
        self.ctx, self.lay, self.g_used, self.ds, self.hw = ctx, lay, g_used, ds, hw
        self.layouts = [lay.layout(dp=d, gpus_per_domain_used=g_used) for d in ds]
        self.domains = [x.domains for x in self.layouts]
        fraction = ctx.scenario.constraints.spare_nodes_fraction
        self.nodes = [total_nodes(plat, dom, fraction) for dom in self.domains]  # non-decreasing in d
        self._perf: dict[int, Performance] = {}
        self._open: dict[int, bool] = {}
        self._memory: dict[int, float] = {}
        self.first_ok: dict[tuple, dict[int, int | None]] = {}  # NIC speed key -> segment start -> first feasible

    def perf(self, j: int) -> Performance:
        if j not in self._perf:
            self._perf[j] = performance(self.ctx.wl, self.layouts[j], self.hw, self.ctx.overlap)
        return self._perf[j]

    def memory_gb(self, j: int) -> float:
        if j not in self._memory:
            self._memory[j] = memory_per_gpu_gb(self.ctx.wl, self.layouts[j], self.ctx.params)
        return self._memory[j]

    def open(self, j: int) -> bool:
        """The NIC-independent checks pass: memory fits, and T_comp + bubble (a lower bound on the step time on
        any NIC: exposure and capacity are ≥ 0) meets the target."""
        if j not in self._open:
            x = self.layouts[j]
            self._open[j] = (self.memory_gb(j) <= self.hw.hbm_usable_gb * (1 + 1e-9)
                             and compute_and_bubble_s(self.ctx.wl, x, self.hw, self.ctx.params)
                             <= self.ctx.target * (1 + 1e-9))
        return self._open[j]


def _faster_or_equal(a: Hardware, b: Hardware) -> bool:
    """Every re-timed term on `a` is at most the same term on `b` (same platform: same NVLink): more scale-out
    bandwidth, no more network latency, no more oversubscription. Then a point infeasible on `a` is on `b`."""
    return (a.scaleout_effective_gbyte_s >= b.scaleout_effective_gbyte_s and a.nic_step_latency_s <= b.nic_step_latency_s
            and a.oversubscription <= b.oversubscription)


def _wanted_conditions(ctx: _Context) -> list[tuple[str, float, float]]:
    """Nominal, then each margin the scenario demands: (name, compute slowdown σ, bandwidth derate δ)."""
    rob = ctx.scenario.robustness
    return [("", 0.0, 0.0)] + [(name, rob.compute_slowdown if attr == "compute_slowdown" else 0.0,
                                rob.bandwidth_derate if attr == "bandwidth_derate" else 0.0)
                               for name, attr in MARGIN_CONDITIONS if getattr(rob, attr) > 0]


def _conditions(ctx: _Context, ds: list[int], perfs: list[Performance], hw: Hardware) -> list[Condition]:
    """The nominal condition and each margin the scenario demands, every term multiplied by d and evaluated at
    every d (`perf.step.point_terms`); a class whose pieces are never positive is left out (its exposure is 0)."""
    out = []
    for name, sigma, delta in ctx.conditions:
        terms = [point_terms(q, hw, sigma, delta) for q in perfs]
        exposures = []
        for cls, first in terms[0].pieces.items():
            pieces = [[d * t.pieces[cls][i] for d, t in zip(ds, terms)] for i in range(len(first))]
            if any(v > 1e-12 for p in pieces for v in p):
                exposures.append(Exposure(cls, pieces))
        out.append(Condition(name, [d * t.compute_s for d, t in zip(ds, terms)], exposures,
                             [d * t.capacity_s for d, t in zip(ds, terms)]))
    return out


def _point_ok(ctx: _Context, points: _Points, j: int, hw: Hardware) -> tuple[bool, float]:
    """(the point meets memory, the target and every demanded margin on `hw`, its nominal step time; inf when
    not evaluated). The NIC-independent checks come first (`_Points.open`)."""
    if not points.open(j):
        return False, float("inf")
    q = points.perf(j)
    limit = ctx.target * (1 + 1e-9)
    steps = [step_time_on(q, hw, sigma, delta) for _, sigma, delta in ctx.conditions]
    return all(st <= limit for st in steps), steps[0]


def _record_fastest(ctx: _Context, perf: PerfClass, lay: LayoutShape, points: _Points, hw: Hardware) -> None:
    """The fastest reachable point (for infeasibility explanations): the largest d that fits in memory."""
    if ctx.best["fastest"][0] <= ctx.target:
        return  # some point meets the target: the explanation will not need it
    fits = [j for j in range(len(points.ds)) if points.memory_gb(j) <= hw.hbm_usable_gb * (1 + 1e-9)]
    if not fits:
        return
    j = fits[-1]
    st = step_time_on(points.perf(j), hw)
    if st < ctx.best["fastest"][0]:
        desc = f"{perf.platform}, {perf.rails_per_node}×{perf.nic}, {lay.describe()}"
        ctx.best["fastest"] = (st, f"{desc} dp={points.ds[j]}")


def _kept_points(ctx: _Context, points: _Points, hw: Hardware, thresholds: list[int]) -> tuple[list[int], list[float]]:
    """The points the prune level keeps (ascending) and their nominal step times.

    none / shapes: every point; points: every feasible point; dominated: the smallest feasible d and the
    smallest feasible d above each tier boundary, found by scanning d upward and
    stopping at the first feasible point of each segment — the points it skips are never kept at this level.
    A NIC at least as fast as this one (`_faster_or_equal`) that found no feasible point before index i in a
    segment proves none exists on this one either, so the scan starts there.
    """
    n = len(points.ds)
    if ctx.prune != "dominated":
        checked = [_point_ok(ctx, points, j, hw) for j in range(n)]
        every = list(range(n)) if ctx.prune in ("none", "shapes") else [j for j in range(n) if checked[j][0]]
        if ctx.prune == "shapes" and not any(ok for ok, _ in checked):
            every = []
        ctx.pruned["infeasible_points"] = ctx.pruned.get("infeasible_points", 0) + sum(not ok for ok, _ in checked)
        return every, [checked[j][1] for j in every]
    starts = sorted({0, *(next((j for j in range(n) if points.nodes[j] > bound), n) for bound in thresholds)})
    faster = [found for key, found in points.first_ok.items() if _faster_or_equal(key[0], hw)]
    keep: dict[int, float] = {}
    found_here: dict[int, int | None] = {}
    for start in starts:
        lower = start
        for found in faster:
            first = found.get(start, start)
            lower = n if first is None else max(lower, first)
        found_here[start] = None
        for j in range(lower, n):
            ok, step = _point_ok(ctx, points, j, hw)
            if ok:
                keep[j] = step
                found_here[start] = j
                break
    points.first_ok[(hw,)] = found_here
    if keep:  # a segment's first feasible point below the overall first feasible one cannot exist
        first = min(keep)
        keep = {j: st for j, st in keep.items() if j >= first}
    ctx.pruned["dominated"] = ctx.pruned.get("dominated", 0) + n - len(keep)
    js = sorted(keep)
    return js, [keep[j] for j in js]


def _shape(ctx: _Context, perf: PerfClass, hw: Hardware, g_used: int, lay: LayoutShape, points: _Points, plat,
           thresholds: list[int]) -> Shape | None:
    ds, domains = points.ds, points.domains
    _record_fastest(ctx, perf, lay, points, hw)
    keep, steps = _kept_points(ctx, points, hw, thresholds)
    if not keep:
        ctx.pruned["target"] += len(ds)
        return None
    kept_ds = [ds[j] for j in keep]
    perfs = [points.perf(j) for j in keep]
    conditions = _conditions(ctx, kept_ds, perfs, hw)
    mem = [d * points.memory_gb(j) for d, j in zip(kept_ds, keep)]
    steps = [st if st != float("inf") else step_time_on(q, hw) for st, q in zip(steps, perfs)]
    t, c, p, v, b = lay.tp, lay.cp, lay.pp, lay.vp, lay.microbatch_size
    key = (f"{perf.platform}|{perf.nic}|{perf.rails_per_node}|{perf.oversubscription:g}|G{g_used}|t{t}c{c}p{p}v{v}b{b}"
           f"|d{ds[0]}" + ("+" if len(ds) > 1 else ""))
    return Shape(key, perf, t, c, p, v, b, g_used, kept_ds, [domains[j] for j in keep], conditions, mem,
                 hw.hbm_usable_gb, steps)


def _one_point_per_cost(shapes: list[Shape]) -> list[Shape]:
    """The fastest point per (performance class, domains): equal cost on every architecture of the
    class, so the other points are twins."""
    best: dict = {}
    for i, s in enumerate(shapes):
        for j, dom in enumerate(s.domains):
            key = (s.perf, dom)
            rank = (s.step_time_s[j], s.key, s.d_values[j])
            if key not in best or rank < best[key][0]:
                best[key] = (rank, i, j)
    keep: dict[int, list[int]] = {}
    for _, i, j in best.values():
        keep.setdefault(i, []).append(j)
    out = []
    for i, s in enumerate(shapes):
        if i in keep:
            s.keep(sorted(keep[i]))
            out.append(s)
    return out
