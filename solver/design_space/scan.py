"""The points scan of one layout: lazy evaluation of its d values (`_Points`), the feasibility of each
point, the dominance scan that keeps the smallest feasible d per segment (with the goodput in the target, each
architecture's; for `fastest`, each feasible d faster than every smaller one), and the rows of the shape made from
the kept points.

What a point is and whether it is feasible is `plain.py`'s (`point_performance`, `point_memory_gb`, `fits_memory`,
`step_need`, `goodput_at`, `meets_target`, `condition_rows`, `shape_of`); this module only decides which points to
ask about and remembers the answers — speed layers that cannot change the answer: one evaluation per fabric
structure re-timed per NIC (`_Points`), the memo (`ScanContext`'s lookups, `memo.ScanMemo`), the bisection for the
first open point (`ScanContext.open_from`), the dominance scan (`_kept_points`) and the bounds it obeys (`bound`).
At prune="points" the shapes are `plain.plain_design_space`'s (tests/design_space/test_plain_builder.py)."""
from __future__ import annotations

import math
from bisect import bisect_left, bisect_right

from ..costing import job_nodes
from ..fabrics import DEFAULT_FAMILY, TIER_COUNTS
from ..failures import point_goodput
from ..inputs.schema import Catalog, Scenario
from ..perf.hardware import Hardware, alltoall_bandwidths_gbyte_s
from ..perf.layout import Layout, LayoutShape
from ..perf.step import Performance, compute_and_bubble_s, step_time_on
from .context import ArchGoodput, ScanBounds, ScanCaches, ScanInputs, ScanTallies
from .dominance import dominated_by_fat_tree
from .identity import Architecture, PerfClass, Shape
from .memo import MAX_KEPT_POINTS, LayoutMemo, ScanMemo
from .plain import (
    condition_rows,
    fits_memory,
    goodput_at,
    meets_target,
    point_memory_gb,
    point_performance,
    shape_of,
    step_need,
)


class ScanContext:
    """What every shape of one build shares, in four typed parts — `inputs` (read only), `bounds` (the cuts),
    `tallies` (the counts) and `caches` (the memo and per-build lookups) — and the lookups that work each thing out
    once (the methods below: the speed machinery over a plain reading of the inputs)."""

    def __init__(self, scenario: Scenario, catalog: Catalog, prune: str, memo: ScanMemo | None = None):
        self.inputs = ScanInputs.of(scenario, catalog, prune)
        self.bounds = ScanBounds()
        self.tallies = ScanTallies()
        self.caches = ScanCaches.of(scenario, catalog, self.inputs.target, self.inputs.goodput is not None, memo)

    def arch_goodput(self, info: ArchGoodput, gpus: int, gpus_per_node: int, nodes: int) -> float | None:
        """The goodput of a point on one architecture, as the MILP's step-time rows scale its target
        (`optimize.data.point_goodput`: the fabric sized for the point's nodes on the pinned tier count, else the
        fewest that hold them); None when no allowed size of the family holds the nodes (nor any larger count)."""
        key = (info.arch, gpus, nodes)
        if key not in self.caches.arch_goodputs:
            assert self.inputs.goodput is not None  # only a build with the goodput in the target has `goodput_archs`
            pinned = self.inputs.scenario.pin.tiers
            fits = [t for t in TIER_COUNTS if nodes <= info.cap.get(t, 0)]
            tiers = pinned if pinned is not None else (fits[0] if fits else None)
            self.caches.arch_goodputs[key] = None if tiers is None or tiers not in fits else point_goodput(
                self.inputs.goodput, info.arch.fabric, info.spec, gpus, gpus_per_node, nodes, info.arch.rails_per_node, tiers)
        return self.caches.arch_goodputs[key]

    def domains_of(self, lay: LayoutShape, g_used: int, ds: list[int]) -> list[int]:
        """The NVLink domains of each d (`Layout.domains`), once per (layout, G_u) of a build."""
        key = (lay, g_used)
        if key not in self.caches.domains:
            shared = self.layout_memo(lay, g_used)
            self.caches.domains[key] = [shared.layout(d).domains for d in ds]
        return self.caches.domains[key]

    def open_from(self, lay: LayoutShape, g_used: int, ds: list[int], hw: Hardware) -> int:
        """The first index of `ds` whose point is open on `hw`'s GPU (`is_open`: memory fits, T_comp + bubble meets
        the target); len(ds) when none is. Neither check reads the NIC, the rails or the fabric, so the index is one
        per (layout, G_u) and GPU reading: every class of a platform shares it. Found by bisection: memory and
        T_comp + bubble never grow with d (docs/model.md "Monotone in d": the optimizer shard and the in-flight
        microbatches shrink, m·τ shrinks, the bubble's (p − 1)/v microbatch computes do not depend on d), so the
        open points are a suffix of the ascending d values (tests/design_space/test_monotone_in_d.py checks it on
        every layout of the shipped and bench scenarios). `ds` must be the placeable d values of (layout, G_u)
        (`ScanMemo.placeable`): the index is kept without them."""
        compute_id = self.compute_id(hw)
        key = (lay, g_used, compute_id, hw.hbm_usable_gb)
        found = self.caches.open_from.get(key)
        if found is None:
            shared = self.layout_memo(lay, g_used)
            found = self.caches.open_from[key] = bisect_left(ds, True, key=lambda d: self.is_open(shared, d, hw))
        return found

    def is_open(self, shared: LayoutMemo, d: int, hw: Hardware) -> bool:
        """The NIC-independent checks of a point pass: memory fits, and T_comp + bubble (a lower bound on the step
        time on any NIC: exposure and capacity are ≥ 0) meets the target."""
        if not fits_memory(self.memory_gb(shared, d), hw):
            return False
        if self.inputs.target == math.inf:  # no target (`fastest` without one): every finite T_comp + bubble meets it
            return True
        return self.compute_and_bubble_s(shared, d, hw) <= self.inputs.target * (1 + 1e-9)

    def compute_and_bubble_s(self, shared: LayoutMemo, d: int, hw: Hardware) -> float:
        """T_comp + bubble of the layout at d on `hw` (`perf.step.compute_and_bubble_s`), once per (layout, G_u, d)
        and compute reading of the memo (`compute_id`)."""
        key, compute = (self.compute_id(hw), d), shared.compute
        seconds = compute.get(key)
        if seconds is None:
            seconds = compute[key] = compute_and_bubble_s(self.inputs.wl, shared.layout(d), hw, self.inputs.params)
        return seconds

    def dominated(self, arch: Architecture, domains: int, g_used: int, all_archs: list[Architecture]) -> bool:
        """`dominance.dominated_by_fat_tree` of the build's scenario and architectures, once per (architecture,
        domains, G_u) of the build (each platform's offer thresholds ask it of every domain count)."""
        key = (arch, domains, g_used)
        if key not in self.caches.dominated:
            self.caches.dominated[key] = dominated_by_fat_tree(self.inputs.scenario, self.inputs.catalog, arch, domains, all_archs,
                                                         self.caches.costed, g_used)
        return self.caches.dominated[key]

    def memory_gb(self, shared: LayoutMemo, d: int) -> float:
        """Memory per GPU of the layout at d (`perf.memory.memory_per_gpu_gb`), once per (layout, G_u, d) of the memo."""
        gb = shared.memory.get(d)
        if gb is None:
            gb = shared.memory[d] = point_memory_gb(self.inputs, shared.layout(d))
        return gb

    def layout_memo(self, lay: LayoutShape, g_used: int) -> LayoutMemo:
        """What every platform and fabric structure shares for one (layout, G_u): kept in the scan memo, so the
        builds that share it (the next faster design's) share these too."""
        key, by_layout = (lay, g_used), self.caches.memo.by_layout
        memo = by_layout.get(key)
        if memo is None:
            memo = by_layout[key] = LayoutMemo(lay, g_used)
        return memo

    def compute_id(self, hw: Hardware) -> int:
        """A small number for what T_comp + bubble read of `hw` (`perf.step.compute_and_bubble_s`: the compute
        model, the flat efficiency and peak, HBM bandwidth, the expert efficiency), equal for equal readings."""
        return self._numbers(hw)[2]

    def faster_or_equal(self, a: Hardware, b: Hardware) -> bool:
        """`_faster_or_equal`, once per pair of hardware objects of a build (the entry holds both, so their ids stay
        theirs). With the goodput in the target, `a` must also have no more rails than `b`: its goodput bound
        (`goodput_bound`: the rails' NICs and links fail) is then at least `b`'s."""
        key = (id(a), id(b))
        known = self.caches.faster.get(key)
        if known is None:
            ok = _faster_or_equal(a, b) and (self.inputs.goodput is None or a.rails_per_node <= b.rails_per_node)
            known = self.caches.faster[key] = (a, b, ok)
        return known[2]

    def nodes_of(self, plat, domains: int, g_used: int) -> int:
        """The job's nodes (`costing.job_nodes`: spares excluded; the fabric and its tier count are the job's, the
        spares take its free ports, fabrics/spares.py), once per (platform, domains, G_u) of a build."""
        key = (plat.id, domains, g_used)
        if key not in self.caches.nodes:
            self.caches.nodes[key] = job_nodes(plat, domains)
        return self.caches.nodes[key]

    def points(self, lay: LayoutShape, g_used: int, ds: list[int], hw: Hardware, plat) -> _Points:
        """The `_Points` of one layout, placement and fabric structure, with the scan starts the memo holds for it."""
        points = _Points(self, lay, g_used, ds, hw, plat)
        if self.inputs.prune == "dominated":  # only the dominance scan reads and writes the starts
            # what the scan reads of the platform is its nodes at each d and its GPUs per node: platforms that differ
            # only in price or vendor (the same board sold by several) share their scans
            key = (plat.gpus_per_node, tuple(points.nodes), g_used, lay, self.hardware_id(hw))
            state = self.caches.memo.scans.get(key)
            if state is None:
                state = self.caches.memo.scans[key] = ({}, {})
            points.first_ok, points.kept = state
            points._perf.update(points.kept)
        return points

    def hardware_id(self, hw: Hardware) -> int:
        """A number for `hw`'s value, the same in every build of the memo (hashing the hardware, with its compute
        model, once per object of a build rather than at every lookup)."""
        return self._numbers(hw)[1]

    def _numbers(self, hw: Hardware) -> tuple[Hardware, int, int]:
        """(hw, its `hardware_id`, its `compute_id`), worked out once per hardware object of a build (the entry holds
        the object, so its id stays its own)."""
        hit = self.caches.hardware_ids.get(id(hw))
        if hit is None:
            ids, computes = self.caches.memo.hardware_ids, self.caches.memo.compute_ids
            reading = (hw.gpu_id, hw.peak_tflops, hw.compute_efficiency, hw.compute, hw.hbm_tbyte_s, hw.expert_efficiency)
            hit = self.caches.hardware_ids[id(hw)] = (hw, ids.setdefault(hw, len(ids)),
                                                computes.setdefault(reading, len(computes)))
        return hit


class _Points:
    """One layout's placeable d values on one platform, evaluated lazily and once (every NIC of the platform
    shares the bytes, compute and memory; `perf.step.point_terms` re-times them per NIC)."""

    def __init__(self, ctx: ScanContext, lay: LayoutShape, g_used: int, ds: list[int], hw: Hardware, plat):
        self.ctx, self.g_used, self.ds, self.hw = ctx, g_used, ds, hw
        self.shared = ctx.layout_memo(lay, g_used)
        self.domains = ctx.domains_of(lay, g_used, ds)
        self.nodes = [ctx.nodes_of(plat, dom, g_used) for dom in self.domains]  # non-decreasing in d
        self.gpus_per_node = plat.gpus_per_node
        self._perf: dict[int, Performance] = {}
        self.open_from = ctx.open_from(lay, g_used, ds, hw)  # the first open index (`ScanContext.open_from`)
        # hardware number (`ScanContext.hardware_id`) → (its hardware, segment start → first feasible index at or after
        # it, None if none: `_kept_points`)
        self.first_ok: dict[int, tuple[Hardware, dict[int, int | None]]] = {}
        self.kept: dict[int, Performance] = {}  # the kept points' evaluations (`ScanMemo.scans`)

    def layout(self, j: int) -> Layout:
        """The layout of the j-th d value (made on first use: a scan the cost bound stops never needs most)."""
        return self.shared.layout(self.ds[j])

    def perf(self, j: int) -> Performance:
        if j not in self._perf:
            self._perf[j] = point_performance(self.ctx.inputs, self.layout(j), self.hw)
        return self._perf[j]

    def memory_gb(self, j: int) -> float:
        return self.ctx.memory_gb(self.shared, self.ds[j])

    def open(self, j: int) -> bool:
        """The NIC-independent checks pass (`ScanContext.is_open`). The open points are those from `open_from` on when
        memory and T_comp + bubble never grow with d, which the search relies on; the point's own checks (cached) are
        read too, so a point kept is one that fits memory and meets T_comp + bubble even if that ever failed."""
        return j >= self.open_from and self.ctx.is_open(self.shared, self.ds[j], self.hw)


def _faster_or_equal(a: Hardware, b: Hardware) -> bool:
    """Every re-timed term on `a` is at most the same term on `b` (same platform and fabric structure: same NVLink
    and forwarded bytes): more scale-out bandwidth, no more network latency, no more oversubscription (leaf or
    above the pods), no slower all-to-all (MoE). Then a point infeasible on `a` is on `b`."""
    return (a.scaleout_effective_gbyte_s >= b.scaleout_effective_gbyte_s and a.nic_step_latency_s <= b.nic_step_latency_s
            and a.oversubscription <= b.oversubscription and a.above_pod_oversubscription <= b.above_pod_oversubscription
            and all(alltoall_bandwidths_gbyte_s(a, x)[1] >= alltoall_bandwidths_gbyte_s(b, x)[1]
                    for x in ("flat", "hierarchical")))


def _point_ok(ctx: ScanContext, points: _Points, j: int, hw: Hardware) -> tuple[bool, float]:
    """(the point meets memory, the target and every demanded margin on `hw`, its nominal step time; inf when
    not evaluated): `_point_check` without the goodput need."""
    ok, step, _ = _point_check(ctx, points, j, hw)
    return ok, step


def _point_check(ctx: ScanContext, points: _Points, j: int, hw: Hardware) -> tuple[bool, float, float]:
    """(the point meets memory, the target and every demanded margin on `hw` on the goodput bound, its nominal step
    time, its goodput need: `_point_need`); (False, inf, inf) when it fails memory or T_comp + bubble, the
    NIC-independent checks that come first (`_Points.open`)."""
    if not points.open(j):
        return False, float("inf"), float("inf")
    need, step = _point_need(ctx, points, j, hw)
    return meets_target(ctx.inputs, need, goodput_bound(ctx, points, j, hw)), step, need


def _point_need(ctx: ScanContext, points: _Points, j: int, hw: Hardware) -> tuple[float, float]:
    """(the largest of an open point's step times on `hw` under every demanded condition and k_q times the nominal
    one: the point meets the target where this is ≤ target × goodput; its nominal step time)."""
    return step_need(ctx.inputs, points.perf(j), hw)


def _arch_ok(ctx: ScanContext, points: _Points, j: int, need: float, info: ArchGoodput) -> bool | None:
    """The point meets the target on one architecture of its class, on that architecture's own goodput (`need`:
    `_point_need`); None when no allowed fabric size of the architecture holds the point's nodes (nor a larger d's)."""
    good = ctx.arch_goodput(info, points.layout(j).gpus, points.gpus_per_node, points.nodes[j])
    return None if good is None else meets_target(ctx.inputs, need, good)


def goodput_bound(ctx: ScanContext, points: _Points, j: int, hw: Hardware) -> float:
    """The goodput the step-time target is scaled by at a point (1 when the target does not use it): the
    switch-independent bound of every architecture of the class (no switch counted, `failures.job_parts`),
    so pruning on it is exact; the MILP's rows use each architecture's own (`optimize.data.points`)."""
    if ctx.inputs.goodput is None:  # (`plain.goodput_at` says so too: this skips making the layout)
        return 1.0
    # once per (GPUs, GPUs per node, nodes, rails) of the scan memo's builds (`ScanMemo.goodput_bounds`)
    key = (points.layout(j).gpus, points.gpus_per_node, points.nodes[j], hw.rails_per_node)
    known = ctx.caches.goodput_bounds.get(key)
    if known is None:
        known = ctx.caches.goodput_bounds[key] = goodput_at(ctx.inputs, *key)
    return known


def _record_fastest(ctx: ScanContext, perf: PerfClass, lay: LayoutShape, points: _Points, hw: Hardware) -> None:
    """The fastest reachable point (for infeasibility explanations): the largest d that fits in memory."""
    if ctx.tallies.best["fastest"][0] <= ctx.inputs.target:
        return  # some point meets the target: the explanation will not need it
    j = len(points.ds) - 1  # memory never grows with d (`ScanContext.open_from`): the largest d fits if any does
    if not fits_memory(points.memory_gb(j), hw):
        return
    st = step_time_on(points.perf(j), hw)
    if st < ctx.tallies.best["fastest"][0]:
        fabric = "" if perf.fabric == DEFAULT_FAMILY else f" {perf.fabric}"
        desc = f"{perf.platform}, {perf.rails_per_node}×{perf.nic}{fabric}, {lay.describe()}"
        ctx.tallies.best["fastest"] = (st, f"{desc} dp={points.ds[j]}")


def add_to_tally(tally: dict[str, int], reason: str, points: int) -> None:
    """Add `points` of one class to `tally` (`class_shape`'s: the build's counts themselves, or the class's own when they
    are needed apart, `count_once_per_switch`) under `reason`, a key of `DesignSpace.pruned`."""
    tally[reason] = tally.get(reason, 0) + points


def count_once_per_switch(ctx: ScanContext, tally: dict[str, int], per_switch: int) -> None:
    """Add one class's counts (a `class_shape` tally of its own) to the build's, once per architecture (switch choice) of
    the class (`per_switch`): the combinations, the pruned counts and `DesignSpace.points` all count (shape, d,
    switch) points, and the class's shape stands for every switch of it."""
    pruned = ctx.tallies.pruned
    for reason, points in tally.items():
        pruned[reason] = pruned.get(reason, 0) + points * per_switch


def _kept_points(ctx: ScanContext, perf: PerfClass, points: _Points, hw: Hardware, thresholds: list[int],
                 tally: dict[str, int]) -> tuple[list[int], list[float], int, int]:
    """The points the prune level keeps (ascending), their nominal step times, how many points the bounds and the
    budget cut (`bound.CostBound`: from the first index whose points' cost lower bounds are all over UB_K;
    `bound.StepBound`: those before each segment's first d within it) and how many feasible points `fastest`'s step
    bound found slower than UB_K.

    none / shapes: every point; points: every feasible point; dominated: the smallest feasible d and the
    smallest feasible d above each tier boundary, found by scanning d upward and
    stopping at the first feasible point of each segment — the points it skips are never kept at this level (with
    the goodput in the target, each architecture's first; for `fastest`, every feasible point faster than each
    before it: `_scan_segment`).
    A NIC at least as fast as this one (`_faster_or_equal`) that found no feasible point before index i in a
    segment proves none exists on this one either, so the scan starts there. A scan the cost bound or the budget
    stops records where it stopped as a lower bound on its segment's first feasible index (none lies before it).
    The points it does not keep are counted in `tally` (`add_to_tally`).
    """
    n = len(points.ds)
    # from `over` on, no point is within the budget (`CostBound.budget_cut`): counted under "caps", never evaluated
    over = n if ctx.bounds.budget is None else ctx.bounds.budget.budget_cut(perf, points.domains, ctx.inputs.spares, points.g_used)
    if over < n:
        add_to_tally(tally, "caps", n - over)
        ctx.tallies.budget_cut += (n - over) * ctx.tallies.switches[perf]
    if ctx.inputs.prune != "dominated":
        return _every_point(ctx, points, hw, over, tally)
    starts = sorted({0, *(bisect_right(points.nodes, bound) for bound in thresholds)})  # nodes never fall as d grows
    faster = [found for other, found in points.first_ok.values() if ctx.faster_or_equal(other, hw)]
    bound = ctx.bounds.bound
    stop = min(over, n if bound is None else bound.cut_index(perf, points.domains, ctx.inputs.spares, points.g_used))
    cut = False
    keep: dict[int, float] = {}
    found_here: dict[int, int | None] = {}
    per_arch = ctx.caches.goodput_archs.get(perf, []) if ctx.inputs.goodput is not None else None
    skipped: set[int] = set()  # points the step-time bound left unevaluated (`fastest`; the segments' scans overlap)
    slower: set[int] = set()  # feasible points it found slower than UB_K (`_scan_segment`)
    for start in starts:
        lower = start if start >= stop else max(start, points.open_from)
        for found in faster:
            first = found.get(start, start)
            lower = n if first is None else max(lower, first)
        # where this segment's first feasible point may lie: nowhere, or (cut by the bound) at `stop` or later
        found_here[start] = max(lower, stop) if lower < n and stop < n else None
        begin = _within_step_bound(ctx, points, hw, lower, stop)
        first, ran_out = _scan_segment(ctx, points, hw, begin, stop, per_arch, keep, slower)
        if begin > lower:  # points before `begin` were not evaluated: the first feasible may lie anywhere from `lower`
            skipped.update(range(lower, begin))
            found_here[start] = lower
        elif first is not None:
            found_here[start] = first
        if ran_out:
            cut = cut or (lower < n and stop < n)
    points.first_ok[ctx.hardware_id(hw)] = (hw, found_here)
    if points.ctx.caches.memo.kept_points < MAX_KEPT_POINTS:  # a cache: past the bound the next build re-evaluates
        points.ctx.caches.memo.kept_points += len(keep)
        points.kept.update((j, points.perf(j)) for j in keep)
    slow = len(skipped)
    past = over - stop if cut else 0  # cut by the cost bound (those from `over` on are over the budget)
    if keep:  # a layout with no feasible point is counted once, under "target" (`class_shape`)
        add_to_tally(tally, "dominated", n - len(keep) - past - (n - over) - slow)
    if bound is not None:
        add_to_tally(tally, "cost_bound", past)
    if ctx.bounds.step_bound is not None:
        add_to_tally(tally, "step_bound", slow)
    js = sorted(keep)
    return js, [keep[j] for j in js], past + n - over + slow, len(slower)


def _every_point(ctx: ScanContext, points: _Points, hw: Hardware, over: int,
                 tally: dict[str, int]) -> tuple[list[int], list[float], int, int]:
    """`_kept_points` at the levels below `dominated`: none / shapes, every point (shapes: none when no point is
    feasible); points, every feasible point (those from `over` on are over the budget)."""
    n = len(points.ds)
    closed = points.open_from  # the points before it fail memory or T_comp + bubble
    checked = [_point_ok(ctx, points, j, hw) if j >= closed else (False, float("inf")) for j in range(over)]
    every = list(range(n)) if ctx.inputs.prune in ("none", "shapes") else [j for j in range(over) if checked[j][0]]
    if ctx.inputs.prune == "shapes" and not any(ok for ok, _ in checked):
        every = []
    if ctx.inputs.prune == "points" and every:  # none / shapes keep them; a layout with none feasible is counted under "target"
        add_to_tally(tally, "infeasible_points", over - len(every))
    return every, [checked[j][1] for j in every], n - over, 0


def _within_step_bound(ctx: ScanContext, points: _Points, hw: Hardware, lower: int, stop: int) -> int:
    """The first index of [lower, stop) whose T_comp + bubble is within `fastest`'s step-time bound (`StepBound`:
    UB_K; none of the points before it can be among the K fastest designs); `lower` without the bound, `stop` when
    no point is within it. Bisection: T_comp + bubble never grows with d (as `ScanContext.open_from`'s)."""
    sb = ctx.bounds.step_bound
    if sb is None or sb.limit_s == float("inf") or lower >= stop:
        return lower
    return bisect_left(points.ds, True, lower, stop,
                       key=lambda d: ctx.compute_and_bubble_s(points.shared, d, hw) <= sb.limit_s)


def _scan_segment(ctx: ScanContext, points: _Points, hw: Hardware, lower: int, stop: int, archs: list[ArchGoodput] | None,
                  keep: dict[int, float], slower: set[int]) -> tuple[int | None, bool]:
    """Scan one segment's points from `lower` up to `stop` (excluded), adding the kept ones to `keep` (index → nominal
    step time): the first feasible one; with the goodput in the target (`archs`: the class's architectures), each
    architecture's first point feasible on its own goodput (`_arch_ok`), which is at or after the first point
    feasible on the goodput bound; for `fastest` (`ScanContext.pareto`), each feasible point faster than every one before
    it (a larger d of the segment costs no less on every architecture and is as constrained by every cap, so a point
    no faster than a smaller d's never ranks above it: SPEC §7 ranks the faster first, the cheaper among equally fast).
    Returns (that first point feasible on the bound, None if none: what a slower NIC's scan starts from; True when
    the scan reached `stop` without being done)."""
    looking = list(archs) if archs is not None else None
    first, fastest = None, float("inf")
    for j in range(lower, stop):
        ok, step, need = _point_check(ctx, points, j, hw)
        if not ok:
            continue
        first = j if first is None else first
        if ctx.bounds.pareto:  # a larger d costs no less on every architecture: only a faster one can rank above
            if step < fastest:
                fastest = step
                if ctx.bounds.step_bound is None or step <= ctx.bounds.step_bound.limit_s:
                    keep[j] = step
                else:  # feasible, but slower than the K-th fastest design: not among the K fastest
                    slower.add(j)  # a set: the segments' scans overlap
            continue
        if looking is None:
            keep[j] = step
            return first, False
        verdicts = [(info, _arch_ok(ctx, points, j, need, info)) for info in looking]
        if any(verdict for _, verdict in verdicts):
            keep[j] = step
        looking = [info for info, verdict in verdicts if verdict is False]  # served, or never buildable: done
        if not looking:
            return first, False
    return first, True


def class_shape(ctx: ScanContext, perf: PerfClass, hw: Hardware, g_used: int, lay: LayoutShape, points: _Points, plat,
           thresholds: list[int], tally: dict[str, int]) -> Shape | None:
    """The class's shape of the layout (None when it keeps no point); its points not kept counted in `tally` (per
    class: `count_once_per_switch` adds them to the build's counts)."""
    ds, domains = points.ds, points.domains
    _record_fastest(ctx, perf, lay, points, hw)
    keep, steps, past, slow = _kept_points(ctx, perf, points, hw, thresholds, tally)
    if not keep:  # none feasible, or (`fastest`) those feasible all slower than the K-th fastest design
        add_to_tally(tally, "target", len(ds) - past - slow)
        if slow:
            add_to_tally(tally, "step_bound", slow)
        return None
    kept_ds = [ds[j] for j in keep]
    perfs = [points.perf(j) for j in keep]
    conditions = [] if ctx.caches.defer_conditions else condition_rows(ctx.inputs, kept_ds, perfs, hw)
    steps = [st if st != float("inf") else step_time_on(q, hw) for st, q in zip(steps, perfs)]
    shape = shape_of(perf, hw, g_used, lay, ds, kept_ds, [domains[j] for j in keep],
                     [points.memory_gb(j) for j in keep], steps, conditions)
    if ctx.caches.defer_conditions:
        ctx.caches.pending[id(shape)] = (shape, points.hw, hw)
    if ctx.inputs.goodput is not None and ctx.inputs.prune == "dominated":
        needs = [_point_need(ctx, points, j, hw)[0] for j in keep]
        shape.needed_goodput = [need / ctx.inputs.target for need in needs]
        if ctx.bounds.bound is not None:  # each point is a real design of the architectures whose own goodput it meets
            for j, need in zip(keep, needs):
                for info in ctx.caches.goodput_archs.get(perf, []):
                    if _arch_ok(ctx, points, j, need, info):
                        ctx.bounds.bound.offer_design(info.arch, points.layout(j), ctx.inputs.spares, ctx.caches.costed)
    elif ctx.bounds.bound is not None:  # its points meet memory, the target and the margins: real designs of the class
        ctx.bounds.bound.offer(perf, [points.layout(j) for j in keep], ctx.inputs.spares, ctx.caches.costed)
    if ctx.bounds.step_bound is not None:  # `fastest`: each kept point on every architecture of its class
        ctx.bounds.step_bound.offer_steps(perf, [(points.layout(j), step) for j, step in zip(keep, steps)], ctx.inputs.spares,
                                   ctx.caches.costed)
    return shape


def add_conditions(ctx: ScanContext, shapes: list[Shape]) -> None:
    """The condition rows of shapes made with `defer_conditions` (most of a large build's shapes are dropped by
    `_one_point_per_cost`; only those left need their rows): their kept points evaluated again, as the scan did
    (`plain.point_performance` on the evaluation's hardware, `plain.condition_rows` re-timed on the class's)."""
    for shape in shapes:
        _, evaluated_on, hw = ctx.caches.pending.pop(id(shape))
        memo = ctx.layout_memo(shape.layout_shape, shape.gpus_per_domain_used)
        perfs = [point_performance(ctx.inputs, memo.layout(d), evaluated_on) for d in shape.d_values]
        shape.conditions = condition_rows(ctx.inputs, shape.d_values, perfs, hw)
    ctx.caches.pending.clear()
