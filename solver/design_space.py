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

from dataclasses import dataclass, field, replace

from .costing import design_cost, fabric_spec, total_nodes
from .errors import CatalogCannotBuild
from .fabrics import DEFAULT_FAMILY, FAMILIES, FabricSpec, family, same_network_as
from .fabrics.breakout import serves
from .inputs.schema import Catalog, Scenario, as_list
from .perf.crossing import cross_plane_share, pod_crossing
from .perf.hardware import Hardware, hardware_for
from .perf.layout import Layout, LayoutShape, dp_candidates, layout_shapes, placement_problem
from .perf.step import Performance, performance
from .perf.traffic import CLASS_NAMES, overlap_for, retime

PRUNE_LEVELS = ("none", "shapes", "points", "dominated")


@dataclass(frozen=True, order=True)
class PerfClass:
    """What the step time depends on besides the layout. The fabric family decides which bytes
    cross NVLink first (planes); with an oversubscribed tier above the pods, the pod size (and so
    the switch, `pod_switch`) decides which classes cross it (perf/crossing.py)."""

    platform: str
    nic: str
    rails_per_node: int
    oversubscription: float
    fabric: str = DEFAULT_FAMILY
    above_pod_oversubscription: float = 1.0
    pod_switch: str = ""  # the switch, when above_pod_oversubscription > 1

    def key(self) -> str:
        """platform|nic|rails|o, then the fabric and pod fields when they are not the defaults."""
        out = f"{self.platform}|{self.nic}|{self.rails_per_node}|{self.oversubscription:g}"
        if self.fabric != DEFAULT_FAMILY:
            out += f"|{self.fabric}"
        if self.above_pod_oversubscription != 1:
            out += f"|pod{self.above_pod_oversubscription:g}@{self.pod_switch}"
        return out


@dataclass(frozen=True, order=True)
class Architecture:
    """The identity of a design, without its tier count (the model decides that)."""

    platform: str
    nic: str
    rails_per_node: int
    switch: str
    oversubscription: float
    fabric: str = DEFAULT_FAMILY
    above_pod_oversubscription: float = 1.0

    @property
    def perf(self) -> PerfClass:
        pod = self.above_pod_oversubscription
        return PerfClass(self.platform, self.nic, self.rails_per_node, self.oversubscription, self.fabric, pod,
                         self.switch if pod != 1 else "")

    def label(self, tiers: int | None = None) -> str:
        over = "" if self.oversubscription == 1 else f", {self.oversubscription:g}:1"
        if self.above_pod_oversubscription != 1:
            over += f", {self.above_pod_oversubscription:g}:1 above the pods"
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
    # Other performance classes whose step time is this shape's at every d (a multi-plane or rail-only
    # class whose layout forwards nothing between planes and crosses no oversubscribed pod tier):
    # their architectures share the shape's points.
    also: list[PerfClass] = field(default_factory=list)

    @property
    def perfs(self) -> tuple[PerfClass, ...]:
        return (self.perf, *self.also)

    def describe(self, d: int | None = None) -> str:
        p = self.perf
        dp = f" dp={d}" if d is not None else ""
        fabric = "" if p.fabric == DEFAULT_FAMILY else f" {p.fabric}"
        return (f"{p.platform}, {p.rails_per_node}×{p.nic}{fabric}, tp={self.tp} cp={self.cp} pp={self.pp} vp={self.vp}"
                f"{dp} mbs={self.microbatch_size}")

    def memory_gb(self, d: int) -> float:
        """Memory per GPU at d, from the row memory_fit states: (mem0 + mem1·d) / d."""
        return (self.mem0 + self.mem1 * d) / d

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
    costed: dict = field(default_factory=dict)  # (architecture, domains) → CostedDesign | None (dominance)

    @property
    def points(self) -> int:
        """(shape, d, switch) points kept: the size of what enumeration would evaluate."""
        per_perf: dict[PerfClass, int] = {}
        for a in self.architectures:
            per_perf[a.perf] = per_perf.get(a.perf, 0) + 1
        return sum(len(s.d_values) * per_perf.get(p, 0) for s in self.shapes for p in s.perfs)


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
    families = allowed_families(scenario)
    pods = sorted({1.0} | {float(x) for x in above_pod_ratios(scenario)})
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
                        spec = fabric_spec(plat, nic, sw, rails, float(over))
                        out += [Architecture(plat.id, nic_id, rails, sw.id, float(over), name, pod)
                                for name in families if not set(same_network_as(name, spec)) & set(families)
                                for pod in pods if pod == 1 or family(name).max_tiers == 3]
    return sorted(set(out))


def allowed_families(scenario: Scenario) -> list[str]:
    """pin.fabric, else constraints.fabrics, else every family (fabrics/__init__.py)."""
    if scenario.pin.fabric is not None:
        return [scenario.pin.fabric]
    return as_list(scenario.constraints.fabrics) or list(FAMILIES)


def above_pod_ratios(scenario: Scenario) -> list[float]:
    """The allowed down:up ratios above the pods: pin, else constraints, else [1]."""
    pin = scenario.pin.above_pod_oversubscription
    if pin is not None:
        return [pin]
    return [float(x) for x in as_list(scenario.constraints.above_pod_oversubscription) or [1.0]]


def switch_serves_nic(switch, nic) -> bool:
    """A switch serves a NIC of the same fabric whose speed is its port speed, natively or after a
    breakout the catalog lists (fabrics/breakout.py)."""
    return serves(switch, nic) is not None


def allowed_tiers(arch: Architecture, all_archs, scenario: Scenario) -> tuple[int, ...]:
    """Tier counts an architecture may be built with: its family's (multi-plane ≥ 2, rail-only ≤ 2); only 3 when the
    tier above the pods is oversubscribed (a smaller fabric has no such tier: it is the
    non-blocking architecture's); not 3 for a non-blocking one when the scenario's
    above_pod_oversubscription list leaves out 1; not 1 when `one_tier_allowed` says so."""
    fam = family(arch.fabric)
    tiers = [t for t in (1, 2, 3) if fam.min_tiers <= t <= fam.max_tiers]
    if arch.above_pod_oversubscription != 1:
        tiers = [t for t in tiers if t == 3]
    elif 1.0 not in above_pod_ratios(scenario):
        tiers = [t for t in tiers if t < 3]
    if not one_tier_allowed(arch, all_archs):
        tiers = [t for t in tiers if t != 1]
    return tuple(tiers)


def fabric_spec_of(catalog: Catalog, arch: Architecture) -> FabricSpec:
    """The fabric family's sizing inputs for an architecture (radix after breakout)."""
    plat = catalog.by_id("platforms")[arch.platform]
    nic = catalog.by_id("nics")[arch.nic]
    sw = catalog.by_id("switches")[arch.switch]
    return fabric_spec(plat, nic, sw, arch.rails_per_node, arch.oversubscription, arch.above_pod_oversubscription)


def hardware_of(scenario: Scenario, catalog: Catalog, perf: PerfClass) -> Hardware:
    """`hardware_for` plus the fabric's structure: planes (multi-plane, rail-only) and the pods of
    an oversubscribed tier above them (perf/crossing.py reads both)."""
    hw = hardware_for(scenario, catalog, perf.platform, perf.nic, perf.rails_per_node, perf.oversubscription)
    if perf.fabric == DEFAULT_FAMILY and perf.above_pod_oversubscription == 1:
        return hw
    plat = catalog.by_id("platforms")[perf.platform]
    fam = family(perf.fabric)
    spec = FabricSpec(radix=0, rails=perf.rails_per_node, nodes_per_domain=plat.nodes_per_domain)  # planes: no radix
    pod_domains = 0
    if perf.above_pod_oversubscription != 1:
        arch = Architecture(perf.platform, perf.nic, perf.rails_per_node, perf.pod_switch, perf.oversubscription,
                            perf.fabric, perf.above_pod_oversubscription)
        nodes = fam.pod_nodes(fabric_spec_of(catalog, arch))
        pod_domains = nodes // plat.nodes_per_domain if nodes % plat.nodes_per_domain == 0 else 0
    return replace(hw, rail_planes=fam.planes(spec), planes_by_domain_position=fam.planes_by_domain_position,
                   above_pod_oversubscription=perf.above_pod_oversubscription, pod_domains=pod_domains)


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
        hws = {p: hardware_of(scenario, catalog, p) for p in plat_perfs}
        structures = _structure_groups(plat_perfs, hws)
        plat_shapes: list[Shape] = []
        for g_used in plat.domain_sizes(scenario.pin.gpus_per_domain_used):
            for lay in layout_shapes(scenario):
                for ds in _placeable_groups(ctx, lay, g_used, n_switch):
                    if not _fits_memory_somewhere(ctx, lay, g_used, ds, hws[plat_perfs[0]], len(plat_perfs)):
                        continue
                    plat_shapes += _shapes_of_regime(ctx, structures, hws, g_used, lay, ds)
        if prune == "dominated":
            plat_archs = [a for a in archs if a.platform == plat_id]
            bounds = _tier_thresholds(catalog, plat_archs) + _offer_thresholds(ctx, plat, plat_shapes, plat_archs, archs)
            plat_shapes = _prune_dominated(ctx, plat_shapes, plat, sorted(set(bounds)))
        shapes += plat_shapes
    pruned = ctx.pruned
    if one_layout_per_cost and prune == "dominated":
        before = sum(len(s.d_values) for s in shapes)
        shapes = _one_point_per_cost(shapes)
        pruned["equal_cost"] = before - sum(len(s.d_values) for s in shapes)
    kept_perf = {p for s in shapes for p in s.perfs}
    archs = [a for a in archs if a.perf in kept_perf]
    return DesignSpace(scenario, catalog, ctx.target, archs, shapes, ctx.combinations, pruned,
                       ctx.best["fastest"], ctx.best["leanest"], ctx.costed)


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
        self.costed: dict = {}  # (architecture, domains) → CostedDesign | None (`dominated_by_fat_tree`)


def _shapes_of_regime(ctx: _Context, structures: list, hws: dict, g_used: int, lay: LayoutShape,
                      ds: list[int]) -> list[Shape]:
    """The shapes of one layout and placement regime on every performance class of the platform.

    One evaluation per fabric structure (and crossing regime): bytes, compute, bubble and memory do
    not depend on the NIC; each performance class only re-times the bytes (traffic.retime). A class
    whose layout crosses nothing shares the plain fat-tree class's shape (`_share_plain_shapes`)."""
    out: list[Shape] = []
    made: dict[PerfClass, Shape | None] = {}
    for ref, members in structures:
        subs, nothing_crosses = _crossing_regimes(lay, g_used, ds, hws[ref])
        if nothing_crosses:
            members = _share_plain_shapes(members, made)
        for sub in subs if members else []:
            base = [performance(ctx.wl, lay.layout(dp=d, gpus_per_domain_used=g_used), hws[ref], ctx.overlap)
                    for d in sub[:2]]
            for perf in members:
                shape = _shape(ctx, perf, hws[perf], g_used, lay, sub, base)
                made[perf] = shape if len(subs) == 1 else made.get(perf)
                if shape is not None:
                    out.append(shape)
    return out


def _tier_thresholds(cat: Catalog, archs: list[Architecture]) -> list[int]:
    """Node counts at which some architecture of the platform needs one more fabric tier."""
    caps: set[int] = set()
    for a in archs:
        spec = fabric_spec_of(cat, a)
        caps.update(family(a.fabric).max_nodes(spec, t) for t in (1, 2))
    return sorted(c for c in caps if c > 0)


def _structure_key(hw: Hardware) -> tuple:
    """What, besides the layout, decides a class's bytes and pod crossing: the planes, and the
    pods of an oversubscribed tier above them."""
    pods = hw.above_pod_oversubscription != 1
    return hw.rail_planes, hw.planes_by_domain_position, pods, hw.pod_domains if pods else 0


def _structure_groups(perfs: list[PerfClass], hws: dict) -> list[tuple[PerfClass, list[PerfClass]]]:
    """Performance classes grouped by fabric structure (first member, members); the plain fat-tree
    structure first (the others may share its shapes, `_share_plain_shapes`)."""
    groups: dict[tuple, list[PerfClass]] = {}
    for p in perfs:
        groups.setdefault(_structure_key(hws[p]), []).append(p)
    plain = (1, False, False, 0)
    return [(members[0], members) for key, members in sorted(groups.items(), key=lambda kv: kv[0] != plain)]


def _plain(perf: PerfClass) -> PerfClass:
    """The fat-tree class of the same platform, NIC, rails and leaf oversubscription."""
    return PerfClass(perf.platform, perf.nic, perf.rails_per_node, perf.oversubscription)


def _share_plain_shapes(members: list[PerfClass], made: dict) -> list[PerfClass]:
    """Attach each class whose plain (fat-tree) twin already has this shape to it (`Shape.also`);
    return the classes that still need shapes of their own."""
    rest = []
    for perf in members:
        twin = _plain(perf)
        if perf != twin and twin in made:
            shape = made[twin]
            if shape is not None:
                shape.also.append(perf)
        else:
            rest.append(perf)
    return rest


def _crossing_regimes(lay: LayoutShape, g_used: int, ds: list[int], hw: Hardware) -> tuple[list[list[int]], bool]:
    """The d values of one placement regime split by what crosses planes and pods (perf/crossing.py):
    inside each part every class's forwarding share and pod crossing are constant, so d·T stays
    affine in d. Also whether nothing crosses at any d (the step time is then the fat tree's).
    One part, nothing crossing, on a fat tree without an oversubscribed tier above the pods."""
    planes, pods = hw.rail_planes > 1, hw.above_pod_oversubscription != 1
    if not planes and not pods:
        return [ds], True
    parts: dict[tuple, list[int]] = {}
    for d in ds:
        layout = lay.layout(dp=d, gpus_per_domain_used=g_used)
        signature = tuple((cross_plane_share(n, layout, hw) if planes else 0.0, pod_crossing(n, layout, hw) if pods else 0.0)
                          for n in CLASS_NAMES)
        parts.setdefault(signature, []).append(d)
    nothing = len(parts) == 1 and not any(x for pair in next(iter(parts)) for x in pair)
    return list(parts.values()), nothing


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


def _shape(ctx: _Context, perf: PerfClass, hw: Hardware, g_used: int, lay: LayoutShape, ds: list[int],
           perfs: list[Performance]) -> Shape | None:
    target, prune = ctx.target, ctx.prune
    comp = _affine(ds, [d * (q.compute_s + q.bubble_s) for d, q in zip(ds, perfs)])
    mem = _affine(ds, [d * q.memory_per_gpu_gb for d, q in zip(ds, perfs)])
    exposures = _exposures(ds, perfs, hw)
    hbm = perfs[0].hbm_usable_gb
    mems = [(mem[0] + mem[1] * d) / d for d in ds]
    steps = [(comp[0] + comp[1] * d + sum(x.at(d) for x in exposures)) / d for d in ds]
    t, c, p, v, b = lay.tp, lay.cp, lay.pp, lay.vp, lay.microbatch_size
    key = f"{perf.key()}|G{g_used}|t{t}c{c}p{p}v{v}b{b}|d{ds[0]}" + ("+" if len(ds) > 1 else "")
    fitting = [(st, d) for st, mm, d in zip(steps, mems, ds) if mm <= hbm * (1 + 1e-9)]
    if fitting and min(fitting)[0] < ctx.best["fastest"][0]:
        fabric = "" if perf.fabric == DEFAULT_FAMILY else f" {perf.fabric}"
        desc = f"{perf.platform}, {perf.rails_per_node}×{perf.nic}{fabric}, {lay.describe()}"
        ctx.best["fastest"] = (min(fitting)[0], f"{desc} dp={min(fitting)[1]}")
    ok = [st <= target * (1 + 1e-9) and mm <= hbm * (1 + 1e-9) for st, mm in zip(steps, mems)]
    if prune != "none" and not any(ok):
        ctx.pruned["target"] += len(ds)
        return None
    domains = [lay.layout(dp=d, gpus_per_domain_used=g_used).domains for d in ds]
    if prune in ("points", "dominated"):
        # Exact bound tightening: a d whose own step-time or memory row fails can never be chosen.
        # ("dominated" then keeps the cheapest points per tier: `_prune_dominated`, per platform.)
        keep = [j for j in range(len(ds)) if ok[j]]
        ctx.pruned["infeasible_points"] = ctx.pruned.get("infeasible_points", 0) + len(ds) - len(keep)
        ds, steps, domains = [ds[j] for j in keep], [steps[j] for j in keep], [domains[j] for j in keep]
    return Shape(key, perf, t, c, p, v, b, g_used, list(ds), domains, comp[0], comp[1], exposures, mem[0], mem[1], hbm,
                 steps)


def _prune_dominated(ctx: _Context, shapes: list[Shape], plat, bounds: list[int]) -> list[Shape]:
    """Per shape, the points `_cheapest_per_tier` keeps (exact: see there and `_offer_thresholds`)."""
    for s in shapes:
        keep = _cheapest_per_tier(list(range(len(s.d_values))), s.domains, plat, ctx.scenario, bounds)
        ctx.pruned["dominated"] = ctx.pruned.get("dominated", 0) + len(s.d_values) - len(keep)
        s.d_values, s.domains = [s.d_values[j] for j in keep], [s.domains[j] for j in keep]
        s.step_time_s = [s.step_time_s[j] for j in keep]
    return shapes


def _offer_thresholds(ctx: _Context, plat, shapes: list[Shape], plat_archs: list[Architecture],
                      all_archs: list[Architecture]) -> list[int]:
    """Node counts just below each run of domain counts at which a multi-plane or rail-only
    architecture is offered (not `dominated_by_fat_tree`): with them as tier bounds, the cheapest
    offered point of every architecture and tier count survives `_cheapest_per_tier`, although its
    smaller, dominated points are not offered."""
    fraction = ctx.scenario.constraints.spare_nodes_fraction
    out: list[int] = []
    for a in plat_archs:
        if a.fabric == DEFAULT_FAMILY or a.above_pod_oversubscription != 1:
            continue
        offered_before = False
        for dom in sorted({dom for s in shapes if a.perf in s.perfs for dom in s.domains}):
            offered = not dominated_by_fat_tree(ctx.scenario, ctx.catalog, a, dom, all_archs, ctx.costed)
            if offered and not offered_before:
                out.append(total_nodes(plat, dom, fraction) - 1)
            offered_before = offered
    return out


def dominated_by_fat_tree(scenario: Scenario, catalog: Catalog, arch: Architecture, domains: int,
                          all_archs: list[Architecture], cache: dict) -> bool:
    """A multi-plane or rail-only design is not offered where the fat tree of the same parts (an
    architecture of the space) builds the same domains for no more capex, facility power and racks.

    With a non-blocking tier above the pods (the only case checked) the fat tree's step time is
    never longer either (it forwards nothing between planes), so it is at least as good on every
    requirement and objective: ranking the other family there would offer the fat tree's purchase,
    or a worse one, under another name (at small sizes their parts are often identical). Where the
    other family is cheaper, or the fat tree cannot build the size, it is offered. The optimisation
    model (`optimize.data.points`), the dominance pruning (`_offer_thresholds`) and the exhaustive
    enumeration apply this same rule; `cache` maps (architecture, domains) to its closed-form cost.
    """
    if arch.fabric == DEFAULT_FAMILY or arch.above_pod_oversubscription != 1:
        return False
    twin = replace(arch, fabric=DEFAULT_FAMILY)
    if twin not in all_archs:
        return False
    mine, plain = (_costed(scenario, catalog, a, domains, cache) for a in (arch, twin))
    if mine is None or plain is None or plain.fabric.tiers not in allowed_tiers(twin, all_archs, scenario):
        return False
    return (plain.capex_usd <= mine.capex_usd and plain.facility_power_kw <= mine.facility_power_kw
            and plain.racks <= mine.racks)


def _costed(scenario: Scenario, catalog: Catalog, arch: Architecture, domains: int, cache: dict):
    key = (arch, domains)
    if key not in cache:
        try:
            cache[key] = design_cost(scenario, catalog, arch.platform, arch.nic, arch.rails_per_node, arch.switch,
                                     arch.oversubscription, domains, scenario.pin.tiers, arch.fabric,
                                     arch.above_pod_oversubscription)
        except CatalogCannotBuild:
            cache[key] = None
    return cache[key]


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
            rank = (s.step_time_s[j], s.key, s.d_values[j])
            for perf in s.perfs:  # a shared shape's point stays when it is the fastest for any of its classes
                key = (perf, dom)
                if key not in best or rank < best[key][0]:
                    best[key] = (rank, i, j)
    keep: dict[int, list[int]] = {}
    for _, i, j in best.values():
        if j not in keep.get(i, []):
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
