"""The design space: every allowed platform × NIC × rails × switch × oversubscription × layout shape.

A *shape* is one performance class (platform, NIC, rails, oversubscription) with one layout
(t, c, p, v, b, G_u) and the set of data-parallel degrees d it may take. For the optimisation
model each shape carries the coefficients of its step-time and memory constraints multiplied by d
(SPEC §7): d·T(d) and d·mem(d) are affine in d inside one placement regime, so the coefficients
are read off `perf.step.performance` at two values of d — the formulas live only in solver/perf.

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
from .perf.layout import Layout, LayoutShape, dp_candidates, expert_text, layout_shapes, placement_problem
from .perf.step import Performance, performance
from .perf.traffic import overlap_for, retime

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
    """One traffic class of a shape: d·exposed_k(d) = max(0, max_i (c0_i + c1_i·d)), each piece
    d·(a_i·T_k − W_i) of the class's window rule being affine in d inside one placement regime."""

    name: str
    pieces: list[tuple[float, float]]  # (c0_i, c1_i)

    def at(self, d: int) -> float:
        """d·exposed_k at d."""
        return max([0.0] + [c0 + c1 * d for c0, c1 in self.pieces])


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
    comp0: float  # d·(T_comp + bubble) = comp0 + comp1·d
    comp1: float
    exposures: list[Exposure]
    mem0: float  # d·mem(d) = mem0 + mem1·d  (GB)
    mem1: float
    hbm_usable_gb: float
    step_time_s: list[float] = field(default_factory=list)  # at each d (reports, pruning)
    ep: int = 1  # expert parallelism (Mixture-of-Experts)
    etp: int = 1

    def describe(self, d: int | None = None) -> str:
        p = self.perf
        dp = f" dp={d}" if d is not None else ""
        return (f"{p.platform}, {p.rails_per_node}×{p.nic}, tp={self.tp} cp={self.cp} pp={self.pp} vp={self.vp}"
                f"{dp} mbs={self.microbatch_size}" + expert_text(self))

    def memory_gb(self, d: int) -> float:
        """Memory per GPU at d, from the row memory_fit states: (mem0 + mem1·d) / d."""
        return (self.mem0 + self.mem1 * d) / d

    def layout(self, d: int) -> Layout:
        return Layout(tp=self.tp, cp=self.cp, pp=self.pp, vp=self.vp, dp=d, microbatch_size=self.microbatch_size,
                      gpus_per_domain_used=self.gpus_per_domain_used, ep=self.ep, etp=self.etp)

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
        thresholds = _tier_thresholds(catalog, [a for a in archs if a.platform == plat_id])
        for g_used in plat.domain_sizes(scenario.pin.gpus_per_domain_used):
            for lay in layout_shapes(scenario):
                for ds in _placeable_groups(ctx, lay, g_used, n_switch):
                    if not _fits_memory_somewhere(ctx, lay, g_used, ds, hws[plat_perfs[0]], len(plat_perfs)):
                        continue
                    # one evaluation per platform: bytes, compute, bubble and memory do not depend on the
                    # NIC; each performance class only re-times the bytes (traffic.retime)
                    base = [performance(ctx.wl, lay.layout(dp=d, gpus_per_domain_used=g_used), hws[plat_perfs[0]],
                                        ctx.overlap) for d in ds[:2]]
                    for perf in plat_perfs:
                        shape = _shape(ctx, perf, hws[perf], g_used, lay, ds, plat, thresholds, base)
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


def _placeable_groups(ctx: _Context, lay: LayoutShape, g_used: int, n_switch: int) -> list[list[int]]:
    """The d values of one layout that can be placed, split into regimes: all d whose pipeline stage
    fills whole domains (one shape), then each smaller d on its own."""
    multi: list[int] = []
    single: list[int] = []
    for d in dp_candidates(ctx.scenario, lay):
        ctx.combinations += n_switch
        layout = lay.layout(dp=d, gpus_per_domain_used=g_used)
        if placement_problem(layout, ctx.wl, g_used) is not None:
            ctx.pruned["placement"] += n_switch
            continue
        if ctx.max_gpus is not None and layout.gpus > ctx.max_gpus:
            ctx.pruned["caps"] += n_switch
            continue
        (multi if lay.tp * lay.cp * d >= g_used else single).append(d)
    return ([multi] if multi else []) + [[d] for d in single]


def _fits_memory_somewhere(ctx: _Context, lay: LayoutShape, g_used: int, ds: list[int], hw: Hardware,
                           n_perf: int) -> bool:
    """Memory does not depend on the NIC or rails: check it once per platform (exact pruning)."""
    q = performance(ctx.wl, lay.layout(dp=ds[-1], gpus_per_domain_used=g_used), hw, ctx.overlap)
    lean = q.memory_per_gpu_gb  # the largest d has the smallest optimizer shard
    if lean < ctx.best["leanest"][0]:
        ctx.best["leanest"] = (lean, q.hbm_usable_gb, f"{hw.gpu_id}, {lay.describe()} dp={ds[-1]}")
    if ctx.prune != "none" and lean > q.hbm_usable_gb * (1 + 1e-9):
        ctx.pruned["memory"] += len(ds) * n_perf
        return False
    return True


def _exposures(ds: list[int], perfs: list[Performance], hw: Hardware) -> list[Exposure]:
    """Per traffic class, its window pieces multiplied by d, re-timed on `hw`, as affine functions
    of d; a class whose pieces are never positive on D_s is left out (its exposure is 0)."""
    out = []
    for name in perfs[0].traffic:
        pieces = []
        for i in range(len(perfs[0].traffic[name].pieces)):
            values = []
            for d, q in zip(ds, perfs):
                traffic = q.traffic[name]
                a, w = traffic.pieces[i]
                values.append(d * (a * retime(traffic, hw) - w))
            pieces.append(_affine(ds, values))
        if any(c0 + c1 * d > 1e-12 for c0, c1 in pieces for d in (ds[0], ds[-1])):
            out.append(Exposure(name, pieces))
    return out


def _shape(ctx: _Context, perf: PerfClass, hw: Hardware, g_used: int, lay: LayoutShape, ds: list[int], plat,
           thresholds: list[int], perfs: list[Performance]) -> Shape | None:
    target, prune = ctx.target, ctx.prune
    comp = _affine(ds, [d * (q.compute_s + q.bubble_s) for d, q in zip(ds, perfs)])
    mem = _affine(ds, [d * q.memory_per_gpu_gb for d, q in zip(ds, perfs)])
    exposures = _exposures(ds, perfs, hw)
    hbm = perfs[0].hbm_usable_gb
    mems = [(mem[0] + mem[1] * d) / d for d in ds]
    steps = [(comp[0] + comp[1] * d + sum(x.at(d) for x in exposures)) / d for d in ds]
    t, c, p, v, b = lay.tp, lay.cp, lay.pp, lay.vp, lay.microbatch_size
    experts = f"e{lay.ep}x{lay.etp}" if (lay.ep, lay.etp) != (1, 1) else ""
    key = (f"{perf.platform}|{perf.nic}|{perf.rails_per_node}|{perf.oversubscription:g}|G{g_used}|t{t}c{c}p{p}v{v}b{b}"
           f"{experts}|d{ds[0]}" + ("+" if len(ds) > 1 else ""))
    fitting = [(st, d) for st, mm, d in zip(steps, mems, ds) if mm <= hbm * (1 + 1e-9)]
    if fitting and min(fitting)[0] < ctx.best["fastest"][0]:
        desc = f"{perf.platform}, {perf.rails_per_node}×{perf.nic}, {lay.describe()}"
        ctx.best["fastest"] = (min(fitting)[0], f"{desc} dp={min(fitting)[1]}")
    ok = [st <= target * (1 + 1e-9) and mm <= hbm * (1 + 1e-9) for st, mm in zip(steps, mems)]
    if prune != "none" and not any(ok):
        ctx.pruned["target"] += len(ds)
        return None
    domains = [lay.layout(dp=d, gpus_per_domain_used=g_used).domains for d in ds]
    if prune in ("points", "dominated"):
        # Exact bound tightening: a d whose own step-time or memory row fails can never be chosen.
        keep = [j for j in range(len(ds)) if ok[j]]
        ctx.pruned["infeasible_points"] = ctx.pruned.get("infeasible_points", 0) + len(ds) - len(keep)
        if prune == "dominated":
            kept = _cheapest_per_tier(keep, domains, plat, ctx.scenario, thresholds)
            ctx.pruned["dominated"] = ctx.pruned.get("dominated", 0) + len(keep) - len(kept)
            keep = kept
        ds, steps, domains = [ds[j] for j in keep], [steps[j] for j in keep], [domains[j] for j in keep]
    return Shape(key, perf, t, c, p, v, b, g_used, list(ds), domains, comp[0], comp[1], exposures, mem[0], mem[1], hbm,
                 steps, ep=lay.ep, etp=lay.etp)


def _cheapest_per_tier(feasible: list[int], domains: list[int], plat, scenario, thresholds: list[int]) -> list[int]:
    """Of the feasible d (ascending), the smallest, and the smallest whose node count crosses each
    tier boundary: every architecture-and-tier identity keeps its cheapest point on this layout, and
    the rest (same identity, more domains) can never be cheaper or easier on a cap."""
    fraction = scenario.constraints.spare_nodes_fraction
    nodes = {j: total_nodes(plat, domains[j], fraction) for j in feasible}  # non-decreasing in j
    keep = {feasible[0]}
    for bound in thresholds:
        above = next((j for j in feasible if nodes[j] > bound), None)
        if above is not None:
            keep.add(above)
    return sorted(keep)


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
            js = sorted(keep[i])
            s.d_values = [s.d_values[j] for j in js]
            s.domains = [s.domains[j] for j in js]
            s.step_time_s = [s.step_time_s[j] for j in js]
            out.append(s)
    return out


def _affine(ds: list[int], values: list[float]) -> tuple[float, float]:
    """(intercept, slope) through the first two points; a single point gives slope 0."""
    if len(ds) == 1:
        return values[0], 0.0
    slope = (values[1] - values[0]) / (ds[1] - ds[0])
    return values[0] - slope * ds[0], slope
