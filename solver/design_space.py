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
from collections import Counter
from dataclasses import dataclass, field, replace

from .costing import compute_units, design_cost, fabric_spec, total_nodes
from .costing_facility import allowed_rails
from .deadline import NO_LIMIT, Deadline
from .errors import CatalogCannotBuild
from .fabrics import DEFAULT_FAMILIES, DEFAULT_FAMILY, FAMILIES, FabricSpec, family, same_network_as
from .fabrics.breakout import serves
from .failures import goodput_in_target, inputs_for, job_parts, point_goodput, spare_rule
from .inputs.schema import Catalog, Scenario, as_list
from .perf.crossing import cross_plane_share, pod_crossing
from .perf.hardware import Hardware, alltoall_bandwidths_gbyte_s, hardware_for
from .perf.layout import Layout, LayoutShape, dp_candidates, expert_text, layout_shapes, placement_problem
from .perf.memory import memory_per_gpu_gb
from .perf.step import Performance, compute_and_bubble_s, performance, point_terms, step_time_on
from .perf.totals import parameter_count
from .perf.traffic import CLASS_NAMES, overlap_for
from .perf.uncertainty import point_factor

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
    ep: int = 1  # expert parallelism (Mixture-of-Experts)
    etp: int = 1
    # Other performance classes whose step time is this shape's at every d (a multi-plane or rail-only
    # class whose layout forwards nothing between planes and crosses no oversubscribed pod tier):
    # their architectures share the shape's points.
    also: list[PerfClass] = field(default_factory=list)

    @property
    def perfs(self) -> tuple[PerfClass, ...]:
        return (self.perf, *self.also)

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
        fabric = "" if p.fabric == DEFAULT_FAMILY else f" {p.fabric}"
        return (f"{p.platform}, {p.rails_per_node}×{p.nic}{fabric}, tp={self.tp} cp={self.cp} pp={self.pp} vp={self.vp}"
                f"{dp} mbs={self.microbatch_size}" + expert_text(self))

    def memory_gb(self, d: int) -> float:
        """Memory per GPU at d, from the row memory_fit states: (d·mem) / d."""
        return self.mem[self.d_values.index(d)] / d

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
    costed: dict = field(default_factory=dict)  # (architecture, domains) → CostedDesign | None (dominance)
    complete: bool = True  # False when the time limit stopped the build: shapes is then a subset

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
    pods = _architecture_pods(scenario)
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
            for rails in allowed_rails(scenario, cat, plat):  # reference NIC configurations unless opened
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
    """pin.fabric, else constraints.fabrics, else the deployed families (DEFAULT_FAMILIES: rail-only has
    no public deployment and is built only when named, SPEC §5.2)."""
    if scenario.pin.fabric is not None:
        return [scenario.pin.fabric]
    return as_list(scenario.constraints.fabrics) or [f for f in FAMILIES if f in DEFAULT_FAMILIES]


def _architecture_pods(scenario: Scenario) -> list[float]:
    """The above-pod ratios architectures are made with: 1 (fabrics too small for the tier) and the
    allowed ones; a pin only its own ratio (3 tiers), as in a fully pinned evaluate (issue 27)."""
    if scenario.pin.above_pod_oversubscription is not None:
        return [float(scenario.pin.above_pod_oversubscription)]
    return sorted({1.0} | {float(x) for x in above_pod_ratios(scenario)})


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
                       one_layout_per_cost: bool = False, deadline: Deadline = NO_LIMIT) -> DesignSpace:
    """Enumerate, evaluate coefficients and prune exactly. Deterministic order.

    prune: "none" keeps every placeable point (the model's rows decide everything); "shapes" drops
    layouts with no d that fits in memory and meets the target; "points" also drops each d whose
    own rows fail; "dominated" (default) keeps, per layout, the smallest feasible d and, for each
    tier boundary of the class's switches, the smallest feasible d above it (a bigger fabric is a
    distinct architecture, so ranking needs its cheapest point too).
    one_layout_per_cost (with "dominated"): of the points of one performance class that occupy the
    same number of domains — and so cost exactly the same on every architecture — keep only the
    fastest. Exact when ranking distinct architectures, not distinct layouts.
    deadline: the build stops when its share of the time limit is used (`complete` is then False and
    the shapes are those of the platforms and layouts reached so far, in the deterministic order).
    """
    if prune not in PRUNE_LEVELS:
        raise ValueError(f"prune must be one of {PRUNE_LEVELS}")
    if prune == "dominated" and scenario.pin.nodes is not None:
        prune = "points"  # a pinned node count may need a d above the cheapest: dominance no longer holds
    if prune == "dominated" and scenario.objective == "fastest":
        prune = "points"  # `fastest`: more domains cost more but may run faster, so no d dominates another
    if prune == "dominated" and catalog.reliability is not None and goodput_in_target(scenario):
        prune = "points"  # the goodput in the target differs per switch: a class's first feasible d is not every one's
    archs = architectures(scenario, catalog)
    ctx = _Context(scenario, catalog, prune)
    platforms = catalog.by_id("platforms")
    perfs = sorted({a.perf for a in archs})
    switches_per_perf = Counter(a.perf for a in archs)  # architectures (switch choices) per performance class
    per_platform: dict[str, list[Shape]] = {}
    complete = True
    for plat_id in _most_promising_first(scenario, catalog, sorted({p.platform for p in perfs})):
        per_platform[plat_id] = []
        complete = _platform_shapes(ctx, platforms[plat_id], [p for p in perfs if p.platform == plat_id], archs,
                                    switches_per_perf, per_platform[plat_id], deadline)
        if not complete:
            break
    shapes = [s for plat_id in sorted(per_platform) for s in per_platform[plat_id]]  # the canonical order
    pruned = ctx.pruned
    if one_layout_per_cost and prune == "dominated":
        before = sum(len(s.d_values) for s in shapes)
        shapes = _one_point_per_cost(shapes)
        pruned["equal_cost"] = before - sum(len(s.d_values) for s in shapes)
    kept_perf = {p for s in shapes for p in s.perfs}
    archs = [a for a in archs if a.perf in kept_perf]
    return DesignSpace(scenario, catalog, ctx.target, archs, shapes, ctx.combinations, pruned,
                       ctx.best["fastest"], ctx.best["leanest"], ctx.costed, complete)


def _most_promising_first(scenario: Scenario, catalog: Catalog, platform_ids: list[str]) -> list[str]:
    """Platforms in order of price per peak FLOP/s (unit price / (GPUs per unit · peak)), cheapest
    first, then by id. A complete build does not depend on the order (its shapes are put back in id
    order); a build the time limit cuts short has then explored the platforms most likely to hold
    the cheapest designs, not the alphabetically first."""
    platforms, gpus = catalog.by_id("platforms"), catalog.by_id("gpus")
    precision = scenario.workload.precision

    def usd_per_tflops(plat_id: str) -> float:
        plat = platforms[plat_id]
        gpus_per_unit = plat.gpus_per_domain / max(1, compute_units(plat, 1))
        peak = gpus_per_unit * gpus[plat.gpu].peak_tflops(precision)
        return plat.unit_price_usd / peak if peak > 0 else math.inf

    return sorted(platform_ids, key=lambda p: (usd_per_tflops(p), p))


def _platform_shapes(ctx: _Context, plat, plat_perfs: list[PerfClass], archs: list[Architecture],
                     switches_per_perf: dict, shapes: list[Shape], deadline: Deadline) -> bool:
    """Append the shapes of one platform's performance classes; False if the deadline stopped it."""
    scenario, catalog = ctx.scenario, ctx.catalog
    n_switch = sum(switches_per_perf[p] for p in plat_perfs)
    hws = {p: hardware_of(scenario, catalog, p) for p in plat_perfs}
    # fastest NICs first, so that slower ones can start their scans where the faster ones found points
    plat_perfs.sort(key=lambda p: (-hws[p].scaleout_effective_gbyte_s, hws[p].nic_step_latency_s,
                                   hws[p].oversubscription, hws[p].above_pod_oversubscription, p))
    structures = _structure_groups(plat_perfs, hws)
    regimes = [(g_used, lay, ds) for g_used in plat.domain_sizes(scenario.pin.gpus_per_domain_used)
               for lay in layout_shapes(scenario) if (ds := _placeable(ctx, lay, g_used, n_switch))]
    plat_archs = [a for a in archs if a.platform == plat.id]
    thresholds = _tier_thresholds(catalog, plat_archs)
    if ctx.prune == "dominated":
        placeable_domains = {(lay.layout(dp=d, gpus_per_domain_used=g_used).domains, g_used)
                             for g_used, lay, ds in regimes for d in ds}
        thresholds = sorted(set(thresholds) | set(_offer_thresholds(ctx, plat, placeable_domains, plat_archs, archs)))
    for g_used, lay, ds in regimes:
        if deadline.expired("design_space"):
            return False
        if not _fits_memory_somewhere(ctx, lay, g_used, ds, hws[plat_perfs[0]], len(plat_perfs)):
            continue
        shapes += _shapes_of_layout(ctx, structures, hws, g_used, lay, ds, plat, thresholds)
    return True


class _Context:
    """What every shape of one build shares, and the counters it keeps."""

    def __init__(self, scenario: Scenario, catalog: Catalog, prune: str):
        self.scenario, self.catalog, self.prune = scenario, catalog, prune
        self.wl = scenario.workload
        self.target = scenario.target_step_time_s()
        self.overlap = overlap_for(scenario)
        self.params = parameter_count(scenario.workload.model)
        self.conditions = _wanted_conditions(self)
        self.quantile = scenario.robustness.quantile
        self.max_gpus = scenario.constraints.max_gpus
        self.pruned = {"placement": 0, "memory": 0, "target": 0, "caps": 0}
        self.combinations = 0
        self.best: dict[str, tuple] = {"fastest": (float("inf"), ""), "leanest": (float("inf"), 0.0, "")}
        self.costed: dict = {}  # (architecture, domains, G_u) → CostedDesign | None (`dominated_by_fat_tree`)
        self.spares = spare_rule(scenario, catalog)
        failures = inputs_for(scenario, catalog)
        self.goodput = failures if failures is not None and failures.in_target else None


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


def _crosses_nothing(lay: LayoutShape, g_used: int, ds: list[int], hw: Hardware) -> bool:
    """No class of the layout forwards bytes between planes or crosses an oversubscribed tier above the
    pods at any of the d values (perf/crossing.py): the step time is then the plain fat tree's at
    every d. Always true on a fat tree without an oversubscribed tier above the pods."""
    planes, pods = hw.rail_planes > 1, hw.above_pod_oversubscription != 1
    if not planes and not pods:
        return True
    for d in ds:
        layout = lay.layout(dp=d, gpus_per_domain_used=g_used)
        for n in CLASS_NAMES:
            if (planes and cross_plane_share(n, layout, hw)) or (pods and pod_crossing(n, layout, hw)):
                return False
    return True


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
        self.nodes = [total_nodes(plat, dom, ctx.spares, g_used) for dom in self.domains]  # non-decreasing in d
        self.gpus_per_node = plat.gpus_per_node
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
    """Every re-timed term on `a` is at most the same term on `b` (same platform and fabric structure: same NVLink
    and forwarded bytes): more scale-out bandwidth, no more network latency, no more oversubscription (leaf or
    above the pods), no slower all-to-all (MoE). Then a point infeasible on `a` is on `b`."""
    return (a.scaleout_effective_gbyte_s >= b.scaleout_effective_gbyte_s and a.nic_step_latency_s <= b.nic_step_latency_s
            and a.oversubscription <= b.oversubscription and a.above_pod_oversubscription <= b.above_pod_oversubscription
            and all(alltoall_bandwidths_gbyte_s(a, x)[1] >= alltoall_bandwidths_gbyte_s(b, x)[1]
                    for x in ("flat", "hierarchical")))


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
    if ctx.quantile is not None:
        out.append(_quantile_condition(ctx, ds, perfs, hw, out[0]))
    return out


def _quantile_condition(ctx: _Context, ds: list[int], perfs: list[Performance], hw: Hardware,
                        nominal: Condition) -> Condition:
    """robustness.quantile: the nominal rows with every term times the point's k_q (a per-point coefficient:
    k_q·max(comp + Σ exposed, capacity) = max(k_q·comp + Σ k_q·exposed, k_q·capacity) as k_q > 0)."""
    ks = [_quantile_factor(ctx, hw, q.compute_s + q.bubble_s, nominal.step_time_s(j, d))
          for j, (d, q) in enumerate(zip(ds, perfs))]
    exposures = [Exposure(x.name, [[k * v for k, v in zip(ks, p)] for p in x.pieces]) for x in nominal.exposures]
    return Condition("quantile", [k * v for k, v in zip(ks, nominal.comp)], exposures,
                     [k * v for k, v in zip(ks, nominal.capacity)])


def _shapes_of_layout(ctx: _Context, structures: list, hws: dict, g_used: int, lay: LayoutShape, ds: list[int],
                      plat, thresholds: list[int]) -> list[Shape]:
    """The shapes of one layout and placement on every performance class of the platform.

    One lazy evaluation per fabric structure and d (`_Points`): bytes, compute, bubble and memory do not
    depend on the NIC; each performance class only re-times the traffic (perf.step.point_terms). A class
    whose layout crosses nothing at any d shares the plain fat-tree class's shape (`_share_plain_shapes`)."""
    out: list[Shape] = []
    made: dict[PerfClass, Shape | None] = {}
    for ref, members in structures:
        if _crosses_nothing(lay, g_used, ds, hws[ref]):
            members = _share_plain_shapes(members, made)
        if not members:
            continue
        points = _Points(ctx, lay, g_used, ds, hws[ref], plat)
        for perf in members:
            shape = _shape(ctx, perf, hws[perf], g_used, lay, points, plat, thresholds)
            made[perf] = shape
            if shape is not None:
                out.append(shape)
    return out


def _point_ok(ctx: _Context, points: _Points, j: int, hw: Hardware) -> tuple[bool, float]:
    """(the point meets memory, the target and every demanded margin on `hw`, its nominal step time; inf when
    not evaluated). The NIC-independent checks come first (`_Points.open`)."""
    if not points.open(j):
        return False, float("inf")
    q = points.perf(j)
    limit = ctx.target * (1 + 1e-9) * goodput_bound(ctx, points, j, hw)
    steps = [step_time_on(q, hw, sigma, delta) for _, sigma, delta in ctx.conditions]
    k = _quantile_factor(ctx, hw, q.compute_s + q.bubble_s, steps[0])
    return all(st <= limit for st in steps) and steps[0] * k <= limit, steps[0]


def _quantile_factor(ctx: _Context, hw: Hardware, compute_and_bubble_s: float, step_time_s: float) -> float:
    """k_q of a point on `hw` (perf/uncertainty.py: its regime's quantile of the calibration residuals); 1 without
    robustness.quantile."""
    return point_factor(ctx.wl.stack, hw.gpu_id, ctx.wl.precision, compute_and_bubble_s, step_time_s, ctx.quantile)


def goodput_bound(ctx: _Context, points: _Points, j: int, hw: Hardware) -> float:
    """The goodput the step-time target is scaled by at a point (1 when the target does not use it): the
    switch-independent bound of every architecture of the class (no switch counted, `failures.job_parts`),
    so pruning on it is exact; the MILP's rows use each architecture's own (`optimize.data.points`)."""
    if ctx.goodput is None:
        return 1.0
    return point_goodput(ctx.goodput, "fat-tree", None, points.layouts[j].gpus, points.gpus_per_node,
                         points.nodes[j], hw.rails_per_node, None)


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
        fabric = "" if perf.fabric == DEFAULT_FAMILY else f" {perf.fabric}"
        desc = f"{perf.platform}, {perf.rails_per_node}×{perf.nic}{fabric}, {lay.describe()}"
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
    experts = f"e{lay.ep}x{lay.etp}" if (lay.ep, lay.etp) != (1, 1) else ""
    key = f"{perf.key()}|G{g_used}|t{t}c{c}p{p}v{v}b{b}{experts}|d{ds[0]}" + ("+" if len(ds) > 1 else "")
    return Shape(key, perf, t, c, p, v, b, g_used, kept_ds, [domains[j] for j in keep], conditions, mem,
                 hw.hbm_usable_gb, steps, ep=lay.ep, etp=lay.etp)


def _offer_thresholds(ctx: _Context, plat, domain_counts: set[tuple[int, int]], plat_archs: list[Architecture],
                      all_archs: list[Architecture]) -> list[int]:
    """Node counts just below each run of domain counts at which a multi-plane or rail-only
    architecture is offered (not `dominated_by_fat_tree`): with them as segment bounds of the dominance
    scan (`_kept_points`), the cheapest offered point of every architecture and tier count is kept,
    although its smaller, dominated points are not offered. `domain_counts` are those of every placeable
    point of the platform (a superset of any shape's: between two consecutive bounds the offered points
    come first, so the first feasible point of a segment is offered whenever any is). Counts are
    (domains, G_u) pairs: the spares, and so the nodes, depend on G_u (in-domain spares); each G_u is
    scanned on its own."""
    out: list[int] = []
    for a in plat_archs:
        if a.fabric == DEFAULT_FAMILY or a.above_pod_oversubscription != 1:
            continue
        for g_used in sorted({gu for _, gu in domain_counts}):
            offered_before = False
            for dom in sorted(dom for dom, gu in domain_counts if gu == g_used):
                offered = not dominated_by_fat_tree(ctx.scenario, ctx.catalog, a, dom, all_archs, ctx.costed, g_used)
                if offered and not offered_before:
                    out.append(total_nodes(plat, dom, ctx.spares, g_used) - 1)
                offered_before = offered
    return out


def dominated_by_fat_tree(scenario: Scenario, catalog: Catalog, arch: Architecture, domains: int,
                          all_archs: list[Architecture], cache: dict, gpus_per_domain_used: int | None = None) -> bool:
    """A multi-plane or rail-only design is not offered where the fat tree of the same parts (an
    architecture of the space) builds the same domains for no more capex, facility power and racks.

    With a non-blocking tier above the pods (the only case checked) the fat tree's step time is
    never longer either (it forwards nothing between planes), so it is at least as good on every
    requirement and objective: ranking the other family there would offer the fat tree's purchase,
    or a worse one, under another name (at small sizes their parts are often identical). Where the
    other family is cheaper, or the fat tree cannot build the size, it is offered. The optimisation
    model (`optimize.data.points`), the dominance pruning (`_offer_thresholds`) and the exhaustive
    enumeration apply this same rule; `cache` maps (architecture, domains, G_u) to its closed-form cost
    (G_u decides the in-domain spares). With the goodput in the target the fat tree must also be at
    least as reliable: it is (its leaves and node links are a subset of what a rail-only job depends on).
    """
    if arch.fabric == DEFAULT_FAMILY or arch.above_pod_oversubscription != 1:
        return False
    twin = replace(arch, fabric=DEFAULT_FAMILY)
    if twin not in all_archs:
        return False
    mine, plain = (_costed(scenario, catalog, a, domains, cache, gpus_per_domain_used) for a in (arch, twin))
    if mine is None or plain is None or plain.fabric.tiers not in allowed_tiers(twin, all_archs, scenario):
        return False
    return (plain.capex_usd <= mine.capex_usd and plain.facility_power_kw <= mine.facility_power_kw
            and plain.racks <= mine.racks
            and (catalog.reliability is None or not goodput_in_target(scenario) or _no_less_reliable(plain, mine, arch)))


def _no_less_reliable(plain, mine, arch: Architecture) -> bool:
    """The fat tree's job depends on no more switches and links than the other family's (same nodes and
    GPUs: `failures.job_parts`), so its goodput is at least as high."""
    a = job_parts(DEFAULT_FAMILY, 0, 1, arch.rails_per_node, plain.fabric, plain.nodes)
    b = job_parts(arch.fabric, 0, 1, arch.rails_per_node, mine.fabric, mine.nodes)
    return bool(a["switch"] <= b["switch"] + 1e-12 and a["link"] <= b["link"] + 1e-12)


def _costed(scenario: Scenario, catalog: Catalog, arch: Architecture, domains: int, cache: dict,
            gpus_per_domain_used: int | None = None):
    key = (arch, domains, gpus_per_domain_used)
    if key not in cache:
        try:
            cache[key] = design_cost(scenario, catalog, arch.platform, arch.nic, arch.rails_per_node, arch.switch,
                                     arch.oversubscription, domains, scenario.pin.tiers, arch.fabric,
                                     arch.above_pod_oversubscription, gpus_per_domain_used)
        except CatalogCannotBuild:
            cache[key] = None
    return cache[key]


def _one_point_per_cost(shapes: list[Shape]) -> list[Shape]:
    """The fastest point per (performance class, domains): equal cost on every architecture of the
    class, so the other points are twins."""
    best: dict = {}
    for i, s in enumerate(shapes):
        for j, dom in enumerate(s.domains):
            rank = (s.step_time_s[j], s.key, s.d_values[j])
            for perf in s.perfs:  # a shared shape's point stays when it is the fastest for any of its classes
                key = (perf, dom, s.gpus_per_domain_used)  # G_u decides the spares and the GPUs (goodput)
                if key not in best or rank < best[key][0]:
                    best[key] = (rank, i, j)
    keep: dict[int, list[int]] = {}
    for _, i, j in best.values():
        if j not in keep.get(i, []):
            keep.setdefault(i, []).append(j)
    out = []
    for i, s in enumerate(shapes):
        if i in keep:
            s.keep(sorted(keep[i]))
            out.append(s)
    return out
