"""`build_design_space`: the shapes of every platform's performance classes and layouts, pruned exactly — the
plain builder (`plain.plain_design_space`, read it first) with speed layers that cannot change the answer: its
enumeration and per-point functions, plus the memo, bisection, dominance, cost/step bounds and the helper process
(docs/architecture.md, "The design space: a plain builder and its speed layers")."""
from __future__ import annotations

import math
from collections import Counter
from typing import NamedTuple

from ..costing import compute_units, job_nodes
from ..deadline import NO_LIMIT, Deadline
from ..fabrics import DEFAULT_FAMILY, TIER_COUNTS, family
from ..failures import goodput_in_target
from ..inputs.schema import Catalog, Scenario
from ..perf.hardware import Hardware
from ..perf.layout import LayoutShape
from . import parallel
from .allowlists import fabric_spec_of, hardware_of
from .bound import CostBound, StepBound
from .context import ArchGoodput
from .identity import PRUNE_LEVELS, Architecture, DesignSpace, PerfClass, Shape, switch_points
from .memo import ScanMemo
from .plain import domain_sizes, fits_memory, performance_classes, placeable
from .scan import ScanContext, add_conditions, class_shape, count_once_per_switch
from .structures import crosses_nothing, share_plain_shapes, structure_groups


def build_design_space(scenario: Scenario, catalog: Catalog, prune: str = "dominated",
                       one_layout_per_cost: bool = False, deadline: Deadline = NO_LIMIT,
                       memo: ScanMemo | None = None, top_k: int | None = None,
                       distinct_by: str = "architecture", seed: tuple = (),
                       budget_cut_usd: float | None = None) -> DesignSpace:
    """Enumerate, evaluate coefficients and prune exactly. Deterministic order.

    prune: "none" keeps every placeable point (the model's rows decide everything); "shapes" drops
    layouts with no d that fits in memory and meets the target; "points" also drops each d whose
    own rows fail; "dominated" (default) keeps, per layout, the smallest feasible d and, for each
    tier boundary of the class's switches, the smallest feasible d above it (a bigger fabric is a
    distinct architecture, so ranking needs its cheapest point too); with the goodput in the target, each
    architecture's smallest feasible d; for `fastest`, each feasible d faster than every smaller one.
    one_layout_per_cost (with "dominated"): of the points of one performance class that occupy the
    same number of domains — and so cost exactly the same on every architecture — keep only the
    fastest. Exact when ranking distinct architectures, not distinct layouts.
    deadline: the build stops when its share of the time limit is used (`complete` is then False and
    the shapes are those of the platforms and layouts reached so far, in the deterministic order).
    memo: an earlier build's `DesignSpace.memo`, reused when it is of the same scenario (but for the target and
    objective) and catalog (`memo.ScanMemo`: the points it evaluated and, at a lower target, where its scans start).
    top_k (with "dominated"; `distinct_by` as the ranking's): the space is ranked for only its K best designs at this
    target, so the scan also drops the points whose capex lower bound is over `budget_usd` (points and dominated;
    counted under "caps"), and the dominance scan also stops where every point's cost lower bound is over the K-th best design
    found so far (`bound.CostBound`; `pruned["cost_bound"]` counts the points it cut); `seed`: (architecture, layout)
    of designs known to meet this scenario's memory, target and margins, offered to the bound before the scan.
    With top_k and `fastest`, the scan starts each segment where T_comp + bubble is within the K-th best step time
    found so far (`bound.StepBound`).
    budget_cut_usd (points and dominated, without top_k): the budget cut alone, at this limit instead of `budget_usd`:
    the points whose capex lower bound is over it are dropped unevaluated (the infeasibility explanation's bounded
    rebuild, `optimize.solve._explain`); every other point is kept exactly as without it.
    A large build (`parallel.PARALLEL_MIN_SIZE`) scans about half its platforms in a helper process
    (`_scan_with_helper`); the shapes are put back in the same canonical order.
    """
    if prune not in PRUNE_LEVELS:
        raise ValueError(f"prune must be one of {PRUNE_LEVELS}")
    if prune == "dominated" and scenario.pin.nodes is not None:
        prune = "points"  # a pinned node count may need a d above the cheapest: dominance no longer holds
    fastest = scenario.objective == "fastest"
    if prune == "dominated" and fastest and catalog.reliability is not None and goodput_in_target(scenario):
        prune = "points"  # `fastest` with the goodput in the target: feasibility differs per switch, speed per point
    build = _Build(scenario, catalog, prune, memo, top_k, distinct_by, seed, one_layout_per_cost, budget_cut_usd)
    ctx = build.ctx
    order = _most_promising_first(scenario, catalog, sorted({p.platform for p in build.perfs}))
    helper = None if len(order) < 2 else parallel.helper_for(catalog, len(build.archs) * len(ctx.caches.layout_shapes),
                                                              _helper_part)
    if helper is None:
        complete = build.scan(order, deadline)
    else:
        complete = _scan_with_helper(build, helper, order, deadline)
    # the canonical order: platforms by id, each platform's layouts in `layout_shapes` order
    made = build.made
    shapes = [s for plat_id in sorted(made) for i in sorted(made[plat_id]) for s in made[plat_id][i]]
    pruned = ctx.tallies.pruned
    if one_layout_per_cost and prune == "dominated":
        before = switch_points(shapes, ctx.tallies.switches)
        shapes = _one_point_per_cost(shapes)
        pruned["equal_cost"] = before - switch_points(shapes, ctx.tallies.switches)
    if ctx.caches.defer_conditions:
        add_conditions(ctx, shapes)
    kept_perf = {p for s in shapes for p in s.perfs}
    archs = [a for a in build.archs if a.perf in kept_perf]
    return DesignSpace(scenario, catalog, ctx.inputs.target, archs, shapes, ctx.tallies.combinations, pruned,
                       ctx.tallies.best["fastest"], ctx.tallies.best["leanest"], ctx.caches.costed, complete, ctx.caches.memo, bound=ctx.bounds.bound,
                       budget_cut=ctx.tallies.budget_cut)


class _Build:
    """One build's context (`scan.ScanContext`, with its cost or step bound), architectures and performance classes,
    and the shapes it made per platform (`made`: platform → regime index → shapes)."""

    def __init__(self, scenario: Scenario, catalog: Catalog, prune: str, memo: ScanMemo | None, top_k: int | None,
                 distinct_by: str, seed: tuple, one_layout_per_cost: bool, budget_cut_usd: float | None = None):
        # what the helper process's part of the build is made with (`_helper_part`)
        self.options = dict(prune=prune, top_k=top_k, distinct_by=distinct_by, seed=seed,
                            one_layout_per_cost=one_layout_per_cost, budget_cut_usd=budget_cut_usd)
        archs, self.perfs = performance_classes(scenario, catalog)  # `plain`'s enumeration
        self.archs = archs
        self.ctx = ctx = ScanContext(scenario, catalog, prune, memo)
        ctx.tallies.switches = Counter(a.perf for a in archs)  # architectures (switch choices) per class
        fastest = scenario.objective == "fastest"
        if top_k and prune == "dominated" and not fastest:  # the cost bound ranks by cost; `fastest` by step time
            ctx.bounds.bound = CostBound(scenario, catalog, archs, top_k, distinct_by, seed, costed=ctx.caches.costed,
                                  costs=ctx.caches.memo.costs.setdefault(scenario.objective, {}), spare_rule=ctx.inputs.spares)
        elif top_k and prune == "dominated":  # `fastest`: the K-th best step time (scans start within it)
            ctx.bounds.step_bound = StepBound(scenario, catalog, archs, top_k, distinct_by, costed=ctx.caches.costed,
                                       spare_rule=ctx.inputs.spares)
        ctx.bounds.pareto = fastest  # the dominance scan keeps each point faster than every cheaper one of its segment
        ctx.caches.defer_conditions = one_layout_per_cost and prune == "dominated"  # rows for the shapes left at the end
        if prune == "dominated":  # the goodput in the target differs per architecture (none without it)
            ctx.caches.goodput_archs = _goodput_archs(ctx, catalog, archs)
        if top_k and prune in ("points", "dominated") and scenario.constraints.budget_usd is not None:
            ctx.bounds.budget = ctx.caches.memo.budget_bound(scenario, archs)  # its lower bounds only: `budget_cut`
        elif budget_cut_usd is not None and prune in ("points", "dominated"):  # the budget cut at another limit
            limited = scenario.model_copy(update={"constraints": scenario.constraints.model_copy(
                update={"budget_usd": budget_cut_usd})})
            ctx.bounds.budget = ctx.caches.memo.budget_bound(limited, archs)
        self.platforms = catalog.by_id("platforms")
        self.made: dict[str, dict[int, list[Shape]]] = {}

    def scan(self, order: list[str], deadline: Deadline) -> bool:
        """Scan the platforms of `order`, in that order (`_scan_platforms`); False if the deadline stopped it."""
        scans: dict[str, _PlatformScan] = {}
        complete = _scan_platforms(self.ctx, self.platforms, self.perfs, self.archs, scans,
                                   deadline, order)
        self.made.update((plat_id, scan.made) for plat_id, scan in scans.items())
        return complete


def _scan_with_helper(build: _Build, helper: parallel.Helper, order: list[str], deadline: Deadline) -> bool:
    """Scan about half the platforms of `order` here and the others in the helper process (`parallel`, `_split`),
    each process with its own UB_K, and take in what the helper made (its shapes, their deferred rows' hardware, its
    counts)."""
    ctx = build.ctx
    if ctx.caches.memo.token is None:
        ctx.caches.memo.token = parallel.new_token()
    mine, theirs = _split(order, build.platforms)
    request = dict(scenario=ctx.inputs.scenario, options=build.options, token=ctx.caches.memo.token, platforms=theirs,
                   deadline=deadline)
    if not helper.send(request):
        parallel.forget()
        return build.scan(order, deadline)
    received = False
    try:
        complete = build.scan(mine, deadline)
        part = helper.receive()
        received = True
    finally:
        if not received:
            parallel.forget()  # its answer is still on the way: a later build must not read it
    if part is None:  # the helper died or failed: its platforms are scanned here (an error is raised here, as itself)
        parallel.forget()
        return build.scan(theirs, deadline) and complete
    build.made.update(part["made"])
    for shape, evaluated_on, hw in part["pending"]:
        ctx.caches.pending[id(shape)] = (shape, evaluated_on, hw)
    for reason, points in part["pruned"].items():
        ctx.tallies.pruned[reason] = ctx.tallies.pruned.get(reason, 0) + points
    ctx.tallies.combinations += part["combinations"]
    ctx.tallies.budget_cut += part["budget_cut"]
    for key, record in part["best"].items():  # on a tie, this process's record (either names an equal point)
        if record[0] < ctx.tallies.best[key][0]:
            ctx.tallies.best[key] = record
    return complete and part["complete"]


def _split(order: list[str], platforms: dict) -> tuple[list[str], list[str]]:
    """The platforms this process scans and those the helper scans, each in `order`: platforms that differ only in
    price and ids (one board from several vendors) share their scans (`scan.ScanContext.points`), so they go to one
    process; the groups go, most promising first, to the process with fewer platforms (this one on a tie). Only the
    balance depends on it, not the answer; the same scenario and catalog split the same way (the next faster
    design's build finds its scans in the same process)."""
    groups: dict[tuple, list[str]] = {}
    for plat_id in order:
        p = platforms[plat_id]
        key = (p.gpu, p.gpus_per_domain, p.gpus_per_node, p.nodes_per_domain, p.nvlink_gbyte_s, p.nvlink_efficiency,
               p.hbm_reserve_gb, p.alltoall_efficiency, tuple(p.rails_per_node_options))
        groups.setdefault(key, []).append(plat_id)
    mine: list[str] = []
    theirs: list[str] = []
    for members in groups.values():  # in the order of their most promising member
        (mine if len(mine) <= len(theirs) else theirs).extend(members)
    rank = {plat_id: i for i, plat_id in enumerate(order)}
    return sorted(mine, key=rank.__getitem__), sorted(theirs, key=rank.__getitem__)


def _helper_part(catalog: Catalog, memos: dict, request: dict) -> dict:
    """The helper's part of a build (`parallel._serve`): its platforms scanned with its own scan memo for the main
    process's memo token, and its own cost bound."""
    token = request["token"]
    build = _Build(request["scenario"], catalog, memo=memos.get(token), **request["options"])
    ctx = build.ctx
    memos.pop(token, None)
    memos[token] = ctx.caches.memo  # the most recently used last (`parallel.MEMOS_KEPT`)
    complete = build.scan(request["platforms"], request["deadline"])
    return dict(made=build.made, pending=list(ctx.caches.pending.values()), pruned=ctx.tallies.pruned,
                combinations=ctx.tallies.combinations, budget_cut=ctx.tallies.budget_cut, best=ctx.tallies.best, complete=complete)


def _scan_platforms(ctx: ScanContext, platforms: dict, perfs: list[PerfClass], archs: list[Architecture],
                    scans: dict, deadline: Deadline, order: list[str]) -> bool:
    """Scan the platforms of `order` (most promising first, `_most_promising_first`) into `scans`; False if the
    deadline stopped it. With a cost bound, first each platform's PROBES cheapest-looking layouts, so that UB_K is
    known (K distinct designs: more than one platform may be needed) before any platform's other layouts are
    scanned."""
    for phase in ("probes", "rest") if ctx.bounds.bound is not None else ("all",):
        for plat_id in order:
            if plat_id not in scans:
                scans[plat_id] = _prepare_platform(ctx, platforms[plat_id], [p for p in perfs if p.platform == plat_id],
                                                   archs)
            if not _platform_shapes(ctx, scans[plat_id], phase, deadline):
                return False
    return True


def _goodput_archs(ctx: ScanContext, catalog: Catalog, archs: list[Architecture]) -> dict[PerfClass, list[ArchGoodput]]:
    """With the goodput in the target, each performance class's architectures as the dominance scan judges them on
    their own goodput (`scan._scan_segment`); empty without it."""
    out: dict[PerfClass, list[ArchGoodput]] = {}
    if ctx.inputs.goodput is not None:
        for a in archs:
            out.setdefault(a.perf, []).append(ArchGoodput.of(a, fabric_spec_of(catalog, a)))
    return out


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


PROBES = 16  # layouts per platform scanned in the first pass of a build with a cost bound (`_PlatformScan.probes`)


class _PlatformScan:
    """One platform's part of a build: its classes' hardware, fabric structures, (G_u, layout, d values) regimes and
    the shapes made so far per regime index (`made`)."""

    def __init__(self, plat, plat_perfs: list[PerfClass], plat_archs: list[Architecture], all_archs: list[Architecture],
                 hws: dict, structures: list, regimes: list[tuple[int, LayoutShape, list[int]]], choices: dict):
        self.plat, self.plat_perfs, self.plat_archs, self.all_archs = plat, plat_perfs, plat_archs, all_archs
        self.choices: dict[PerfClass, int] = choices  # class → its architectures (switch choices)
        self.n_choices = sum(choices.values())
        self.hws, self.structures, self.regimes = hws, structures, regimes
        self.made: dict[int, list[Shape]] = {}
        self.probed: set[int] = set()
        self._open: list[int] | None = None
        self._open_domains: set[tuple[int, int]] | None = None

    def open_from(self, ctx: ScanContext) -> list[int]:
        """Each regime's first open index (`ScanContext.open_from`: memory and T_comp + bubble read the GPU only, so
        every class of the platform shares it), once per platform."""
        if self._open is None:
            gpu = self.hws[self.plat_perfs[0]]
            self._open = [ctx.open_from(lay, g_used, ds, gpu) for g_used, lay, ds in self.regimes]
        return self._open

    def open_domains(self, ctx: ScanContext) -> set[tuple[int, int]]:
        """The (domains, G_u) of every open point of the platform (`_offer_thresholds`), once per platform."""
        if self._open_domains is None:
            self._open_domains = {(dom, g_used) for (g_used, lay, ds), first in zip(self.regimes, self.open_from(ctx))
                                  for dom in ctx.domains_of(lay, g_used, ds)[first:]}
        return self._open_domains

    def probes(self, ctx: ScanContext) -> list[int]:
        """The PROBES regimes whose first open point (`ScanContext.open_from`) uses the fewest GPUs: likely the
        platform's cheapest designs, which set UB_K early (any order gives the same answer: the bound only cuts)."""
        ranked = []
        for i, ((g_used, lay, ds), first) in enumerate(zip(self.regimes, self.open_from(ctx))):
            if first < len(ds):
                ranked.append((ctx.domains_of(lay, g_used, ds)[first] * g_used, i))
        return sorted(i for _, i in sorted(ranked)[:PROBES])


def _prepare_platform(ctx: ScanContext, plat, plat_perfs: list[PerfClass], archs: list[Architecture]) -> _PlatformScan:
    """The platform's classes (fastest NIC first), structures and regimes; its combinations and unplaceable
    points counted."""
    scenario, catalog = ctx.inputs.scenario, ctx.inputs.catalog
    choices = {p: ctx.tallies.switches[p] for p in plat_perfs}
    n_switch = sum(choices.values())
    hws = {p: hardware_of(scenario, catalog, p) for p in plat_perfs}
    # fastest NICs first, so that slower ones can start their scans where the faster ones found points
    plat_perfs.sort(key=lambda p: (-hws[p].scaleout_effective_gbyte_s, hws[p].nic_step_latency_s,
                                   hws[p].oversubscription, hws[p].above_pod_oversubscription, p))
    regimes: list[tuple[int, LayoutShape, list[int]]] = []
    for g_used in domain_sizes(scenario, plat):
        placed = _placeable_layouts(ctx, g_used)
        ctx.tallies.combinations += placed.candidates * n_switch
        ctx.tallies.pruned["placement"] += placed.placement * n_switch
        ctx.tallies.pruned["caps"] += placed.caps * n_switch
        regimes += [(g_used, lay, ds) for lay, ds in placed.layouts]
    return _PlatformScan(plat, plat_perfs, [a for a in archs if a.platform == plat.id], archs, hws,
                         structure_groups(plat_perfs, hws), regimes, choices)


def _platform_shapes(ctx: ScanContext, scan: _PlatformScan, phase: str, deadline: Deadline) -> bool:
    """Make the shapes of one platform's regimes of a phase ("all"; "probes", then "rest": `_PlatformScan.probes`);
    False if the deadline stopped it. The segment bounds are worked out for each phase (UB_K narrows them)."""
    plat, gpu = scan.plat, scan.hws[scan.plat_perfs[0]]
    if phase == "probes":
        indices = scan.probes(ctx)
        scan.probed.update(indices)
    else:
        indices = [i for i in range(len(scan.regimes)) if i not in scan.probed]
    if not indices:
        return True
    thresholds = _tier_thresholds(ctx.inputs.catalog, scan.plat_archs)
    if ctx.inputs.prune == "dominated":
        thresholds = sorted(set(thresholds) | set(_offer_thresholds(ctx, plat, scan.open_domains(ctx), scan.plat_archs,
                                                                    scan.all_archs)))
    opens = scan.open_from(ctx)
    for i in indices:
        g_used, lay, ds = scan.regimes[i]
        if deadline.expired("design_space"):
            return False
        if not _fits_memory_somewhere(ctx, lay, g_used, ds, gpu, scan.n_choices):
            continue
        if ctx.bounds.bound is not None and _platform_over_bound(ctx, plat, lay, g_used, ds, opens[i], scan.choices):
            continue  # no point of the layout on any class of the platform can be among the K best
        scan.made[i] = _shapes_of_layout(ctx, scan, g_used, lay, ds, thresholds, opens[i])
    return True


def _platform_over_bound(ctx: ScanContext, plat, lay: LayoutShape, g_used: int, ds: list[int], first: int,
                         choices: dict[PerfClass, int]) -> bool:
    """Every open point of the layout on the platform (`ScanContext.open_from`: the points before it fail memory or
    T_comp + bubble on every class of the platform) has every architecture's cost lower bound over UB_K (or none
    is open while UB_K is known, so K designs meet the target: no infeasibility to explain); its points are then
    counted (`_count_unscanned`)."""
    bound = ctx.bounds.bound
    assert bound is not None
    if bound.limit_usd == math.inf:
        return False
    domains = ctx.domains_of(lay, g_used, ds)
    if not bound.platform_over(plat.id, tuple(domains[first:]), ctx.inputs.spares, g_used):
        return False
    for perf, per_switch in choices.items():
        _count_unscanned(ctx, perf, domains, g_used, first, per_switch)
    return True


def _count_unscanned(ctx: ScanContext, perf: PerfClass, domains: list[int], g_used: int, cut: int, per_switch: int,
                     tally: dict[str, int] | None = None) -> None:
    """Count the points of a class the scan skips because none from index `cut` on can be among the K best and none
    before it is open: those over the budget (`CostBound.budget_cut`) under "caps", as the scan does; of the others,
    those before `cut` under "target", the rest under "cost_bound"; once per switch choice of the class (`per_switch`,
    `scan.count_once_per_switch`), and once in `tally` when the class's own counts are wanted."""
    n = len(domains)
    over = n if ctx.bounds.budget is None else ctx.bounds.budget.budget_cut(perf, domains, ctx.inputs.spares, g_used)
    before = min(cut, over)
    pruned = ctx.tallies.pruned  # (as `scan.count_once_per_switch` adds them: written out, the scan's most frequent count)
    pruned["caps"] += (n - over) * per_switch
    pruned["target"] += before * per_switch
    pruned["cost_bound"] = pruned.get("cost_bound", 0) + (over - before) * per_switch
    ctx.tallies.budget_cut += (n - over) * per_switch
    if tally is not None:
        tally.update(caps=n - over, target=before, cost_bound=over - before)


def _tier_thresholds(cat: Catalog, archs: list[Architecture]) -> list[int]:
    """Node counts at which some architecture of the platform needs one more fabric tier."""
    caps: set[int] = set()
    for a in archs:
        spec = fabric_spec_of(cat, a)
        caps.update(family(a.fabric).max_nodes(spec, t) for t in TIER_COUNTS[:-1])  # past the largest: no more tiers
    return sorted(c for c in caps if c > 0)


class _Placed(NamedTuple):
    """The layouts of one G_u with a placeable d (`_placeable`), and what a platform of that G_u counts."""

    layouts: list[tuple[LayoutShape, list[int]]]  # (layout, its placeable d values), in `layout_shapes` order
    candidates: int  # d values of every layout, placeable or not (combinations per switch choice)
    placement: int  # of them, not placeable
    caps: int  # of them, over max_gpus


def _placeable_layouts(ctx: ScanContext, g_used: int) -> _Placed:
    """`_placeable` of every layout of the scenario at one G_u, once per build (every platform with that domain size
    reads it; each platform counts its combinations and pruned points per switch choice)."""
    placed = ctx.caches.placed.get(g_used)
    if placed is None:
        layouts, candidates, placement, caps = [], 0, 0, 0
        for lay in ctx.caches.layout_shapes:
            ds, n, unplaced, over = _placeable(ctx, lay, g_used)
            candidates, placement, caps = candidates + n, placement + unplaced, caps + over
            if ds:
                layouts.append((lay, ds))
        placed = ctx.caches.placed[g_used] = _Placed(layouts, candidates, placement, caps)
    return placed


def _placeable(ctx: ScanContext, lay: LayoutShape, g_used: int) -> tuple[list[int], int, int, int]:
    """(the d values of one layout that can be placed and fit max_gpus (ascending), how many d values it has, of them
    not placeable, of them over max_gpus). Placement does not depend on the platform, only on G_u: each (layout, G_u)
    is checked once per scan memo (`ScanMemo.placeable`: the builds sharing it share it)."""
    key = (lay, g_used)
    if key not in ctx.caches.placeable:
        ctx.caches.placeable[key] = placeable(ctx.inputs, lay, g_used)
    return ctx.caches.placeable[key]


def _fits_memory_somewhere(ctx: ScanContext, lay: LayoutShape, g_used: int, ds: list[int], hw: Hardware,
                           n_choices: int) -> bool:
    """Memory does not depend on the NIC or rails: check it once per platform (exact pruning). It does not grow
    with d (the optimizer shard shrinks, in-flight microbatches min(m, ·) do not grow), so the largest d is
    the leanest. A layout that fits nowhere counts its points once per class and switch choice (`n_choices`)."""
    lean = ctx.memory_gb(ctx.layout_memo(lay, g_used), ds[-1])
    if lean < ctx.tallies.best["leanest"][0]:
        ctx.tallies.best["leanest"] = (lean, hw.hbm_usable_gb, f"{hw.gpu_id}, {lay.describe()} dp={ds[-1]}")
    if ctx.inputs.prune != "none" and not fits_memory(lean, hw):
        ctx.tallies.pruned["memory"] += len(ds) * n_choices
        return False
    return True


def _shapes_of_layout(ctx: ScanContext, scan: _PlatformScan, g_used: int, lay: LayoutShape, ds: list[int],
                      thresholds: list[int], first_open: int) -> list[Shape]:
    """The shapes of one layout and placement on every performance class of the platform.

    One lazy evaluation per fabric structure and d (`_Points`): bytes, compute, bubble and memory do not
    depend on the NIC; each performance class only re-times the traffic (perf.step.point_terms). A class
    whose layout crosses nothing at any d shares the plain fat-tree class's shape (`share_plain_shapes`).
    `first_open`: the layout's first open index on the platform (`_PlatformScan.open_from`).
    Each class's points not kept are counted once per switch choice; a class that may become a twin (the first
    structure's, when a later one may share its shapes) keeps its own counts apart (`tallies`), for the classes that
    share its shape to count as it does."""
    out: list[Shape] = []
    made: dict[PerfClass, Shape | None] = {}
    tallies: dict[PerfClass, dict[str, int]] = {}  # class → its points not kept, by reason (`scan.add_to_tally`)
    structures, hws, choices = scan.structures, scan.hws, scan.choices
    for n, (ref, members) in enumerate(structures):
        twins = n == 0 and len(structures) > 1 and ctx.inputs.goodput is None  # its classes' counts are kept apart
        if ctx.bounds.bound is not None:
            members = _within_bound(ctx, members, lay, g_used, ds, first_open, made, choices, tallies if twins else None)
        if ctx.bounds.budget is not None and ctx.tallies.best["fastest"][0] <= ctx.inputs.target:
            members = _within_budget(ctx, members, lay, g_used, ds, first_open, made, choices, tallies if twins else None)
        # (with the goodput in the target a class keeps its own architectures' first feasible points: no sharing)
        if members and ctx.inputs.goodput is None and crosses_nothing(ctx, lay, g_used, ds, hws[ref]):
            members = share_plain_shapes(ctx, members, made, tallies, choices)
        if not members:
            continue
        points = ctx.points(lay, g_used, ds, hws[ref], scan.plat)
        for perf in members:
            per_switch = choices[perf]
            own = twins or per_switch != 1  # else `class_shape` counts straight into the build's counts
            tally: dict[str, int] = {} if own else ctx.tallies.pruned
            shape = class_shape(ctx, perf, hws[perf], g_used, lay, points, scan.plat, thresholds, tally)
            if own:
                count_once_per_switch(ctx, tally, per_switch)
                tallies[perf] = tally
            made[perf] = shape
            if shape is not None:
                out.append(shape)
    return out


def _within_bound(ctx: ScanContext, members: list[PerfClass], lay: LayoutShape, g_used: int, ds: list[int],
                  first: int, made: dict, choices: dict[PerfClass, int], tallies: dict | None) -> list[PerfClass]:
    """The classes of which some open point of the layout may be among the K best (`bound.CostBound.cut_index`
    above the first open index, `ScanContext.open_from`: the points before it fail memory or T_comp + bubble on
    every class of the platform); each other one has no shape (`made`: nor have the classes that would share it)
    and its points are counted (`_count_unscanned`).
    (A known UB_K means K designs meet the target: no infeasibility explanation needs these classes' fastest point.)"""
    bound = ctx.bounds.bound
    assert bound is not None
    domains = ctx.domains_of(lay, g_used, ds)
    out = []
    for perf in members:
        cut = bound.cut_index(perf, domains, ctx.inputs.spares, g_used)
        if cut <= first and cut < len(ds):
            made[perf] = None
            _count_unscanned(ctx, perf, domains, g_used, cut, choices[perf],
                             None if tallies is None else tallies.setdefault(perf, {}))
        else:
            out.append(perf)
    return out


def _within_budget(ctx: ScanContext, members: list[PerfClass], lay: LayoutShape, g_used: int, ds: list[int],
                   first: int, made: dict, choices: dict[PerfClass, int], tallies: dict | None) -> list[PerfClass]:
    """The classes with an open point (`ScanContext.open_from`) within the budget cut (`CostBound.budget_cut`); each
    other one has no shape and is counted, unscanned, as its scan counts it (`scan._kept_points`, `scan.class_shape`: over
    the budget under "caps", the rest under "target"; the bounds' counts 0). Only when the cost bound cuts nowhere
    before the budget does, and once the fastest reachable point is within the target (`scan._record_fastest` then
    records nothing). Issue 45s: the explanation's rebuilds cut most layouts whole."""
    assert ctx.bounds.budget is not None
    domains, n = ctx.domains_of(lay, g_used, ds), len(ds)
    out = []
    for perf in members:
        over = ctx.bounds.budget.budget_cut(perf, domains, ctx.inputs.spares, g_used)
        if over <= first and (ctx.bounds.bound is None or ctx.bounds.bound.cut_index(perf, domains, ctx.inputs.spares, g_used) >= over):
            made[perf] = None
            tally = ({"caps": n - over} if over < n else {}) | ({"cost_bound": 0} if ctx.bounds.bound is not None else {})
            tally |= ({"step_bound": 0} if ctx.bounds.step_bound is not None else {}) | {"target": over}
            count_once_per_switch(ctx, tally, choices[perf])
            ctx.tallies.budget_cut += (n - over) * choices[perf]
            if tallies is not None:
                tallies[perf] = tally
        else:
            out.append(perf)
    return out


def _offer_thresholds(ctx: ScanContext, plat, domain_counts: set[tuple[int, int]], plat_archs: list[Architecture],
                      all_archs: list[Architecture]) -> list[int]:
    """Node counts just below each run of domain counts at which a multi-plane or rail-only
    architecture is offered (not `dominated_by_fat_tree`): with them as segment bounds of the dominance
    scan (`_kept_points`), the cheapest offered point of every architecture and tier count is kept,
    although its smaller, dominated points are not offered. `domain_counts` are those of every open point
    of the platform (`ScanContext.open_from`; a superset of any kept point's: between two consecutive bounds the
    offered points come first, so the first feasible point of a segment is offered whenever any is). A count no
    layout has an open point at holds no feasible point: leaving it out moves a run's bound up past counts where
    no scan finds anything, so every segment's first feasible point is the same. Counts are
    (domains, G_u) pairs: the spares, and so the nodes, depend on G_u (in-domain spares); each G_u is
    scanned on its own."""
    out: list[int] = []
    per_g_used = {g_used: _within_platform_bound(ctx, plat, sorted(dom for dom, gu in domain_counts if gu == g_used),
                                                 g_used) for g_used in {gu for _, gu in domain_counts}}
    for a in plat_archs:
        if a.fabric == DEFAULT_FAMILY or a.above_pod_oversubscription != 1:
            continue
        for g_used in sorted(per_g_used):
            offered_before = False
            for dom in per_g_used[g_used]:
                offered = not ctx.dominated(a, dom, g_used, all_archs)
                if offered and not offered_before:
                    out.append(job_nodes(plat, dom) - 1)
                offered_before = offered
    return out


def _within_platform_bound(ctx: ScanContext, plat, domain_counts: list[int], g_used: int) -> list[int]:
    """The ascending domain counts up to the last one from which on some lower bound of the platform is within
    UB_K (`bound.CostBound`) and the budget cut (`CostBound.budget_cut`, issue 45s): a segment starting beyond it
    holds no point that can be among the K best, nor one within the budget (its scan stops where it starts)."""
    budget = None if ctx.bounds.budget is None else ctx.bounds.budget.scenario.constraints.budget_usd
    keep = len(domain_counts)
    while keep > 0 and (
            (ctx.bounds.bound is not None and ctx.bounds.bound.over([ctx.bounds.bound.platform_lower_bound_usd(
                plat.id, domain_counts[keep - 1], ctx.inputs.spares, g_used)]))
            or (ctx.bounds.budget is not None and budget is not None and ctx.bounds.budget.platform_lower_bound_usd(
                plat.id, domain_counts[keep - 1], ctx.inputs.spares, g_used) > budget * (1 + 1e-9))):
        keep -= 1
    return domain_counts[:keep]


def _one_point_per_cost(shapes: list[Shape]) -> list[Shape]:
    """The fastest point per (performance class, domains, G_u): equal cost on every architecture of the
    class, so the other points are twins. With the goodput in the target (`Shape.needed_goodput`) every point
    that needs less goodput than each faster one stays too: an architecture's fastest point of the group among
    those whose goodput need it meets (its goodput is the same at each: same GPUs, nodes and fabric) is one of them."""
    groups: dict[tuple, list] = {}
    for i, s in enumerate(shapes):
        needs = s.needed_goodput or [0.0] * len(s.d_values)
        for j, dom in enumerate(s.domains):
            entry = ((s.step_time_s[j], s.key, s.d_values[j]), needs[j], i, j)
            for perf in s.perfs:  # a shared shape's point stays when it is the fastest for any of its classes
                # G_u decides the spares and the GPUs (goodput)
                groups.setdefault((perf, dom, s.gpus_per_domain_used), []).append(entry)
    keep: dict[int, set[int]] = {}
    for group in groups.values():
        least_need = math.inf
        for _, need, i, j in (sorted(group) if any(entry[1] for entry in group) else [min(group)]):
            if need < least_need:  # the fastest, then each that needs less than every faster one
                least_need = need
                keep.setdefault(i, set()).add(j)
    out = []
    for i, s in enumerate(shapes):
        if i in keep:
            s.keep(sorted(keep[i]))
            out.append(s)
    return out
