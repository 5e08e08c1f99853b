"""The design space stated plainly — read this first (issue 39 item 2).

    for each performance class (platform × NIC × rails × leaf ratio × fabric family × ratio above the pods),
        for each domain size G_u the platform allows,
            for each layout (t, c, p, v, b, ep, etp),
                for each data-parallel degree d that can be placed and fits max_gpus,
                    evaluate the point through the performance-model interface (`perf.interface.WORKLOADS`);
                    keep it if it fits in memory and meets the step-time target under every demanded margin
                    (and k_q, and the goodput bound when the goodput is in the target);
                the class's kept d values of the layout are one `Shape`, with its rows for the MILP.

That is all the design space is: `plain_design_space` below does exactly this, with no bound, no memo, no
dominance and no second process. The switch and the tier count are not looped here: a point's step time does not
depend on them (a class stands for every switch of its architectures, `Architecture.perf`), and the MILP prices
each architecture × tier count of a kept point with the costing (`costing.design_cost`'s rows) and applies the caps
(budget, power, racks, nodes). So the candidate designs are (kept point) × (architecture of its class) × (allowed
tier count), costed by the MILP — the same set the exhaustive enumeration (`optimize.oracle`) walks one by one.

The fast build (`build.build_design_space`, `scan`, `structures`) makes the same points with the same functions of
this module — `performance_classes`, `domain_sizes`, `placeable`, `point_performance`, `point_memory_gb`,
`fits_memory`, `step_need`, `meets_target`, `goodput_at`, `condition_rows`, `shape_of` — and adds speed layers
that cannot change the answer (docs/architecture.md, "The design space: a plain builder and its speed layers"):
each point evaluated once per fabric structure and re-timed per NIC, the memo shared with later builds, the open
points found by bisection (memory and T_comp + bubble never grow with d), the dominance scan that keeps only the
points that can be optimal, the cost and step bounds for the K best, and the helper process. With `prune="points"`
the fast build keeps exactly this module's points (tests/design_space/test_plain_builder.py).
"""
from __future__ import annotations

from typing import NamedTuple

from ..costing import job_nodes
from ..failures import point_goodput
from ..inputs.schema import Catalog, Scenario
from ..perf.hardware import Hardware
from ..perf.interface import TrainingContext, model_for
from ..perf.layout import Layout, LayoutShape, dp_candidates, layout_shapes, placement_problem
from ..perf.memory import memory_per_gpu_gb
from ..perf.step import Performance, point_terms, step_time_on
from ..perf.uncertainty import point_factor
from .allowlists import architectures, hardware_of
from .context import ScanInputs
from .identity import Architecture, Condition, DesignSpace, Exposure, PerfClass, Shape

TOLERANCE = 1e-9  # a point at its limit (memory, target) within this relative margin is kept

_TRAINING = model_for("training")  # the performance model of a training step (`perf.interface.TrainingStep`)


# ---------------------------------------------------------------------------------------------- the enumeration


def performance_classes(scenario: Scenario, catalog: Catalog) -> tuple[list[Architecture], list[PerfClass]]:
    """Every allowed architecture (`allowlists.architectures`) and their performance classes, sorted: what a point's
    step time depends on besides the layout (an architecture without its switch, unless the switch sizes the pods)."""
    archs = architectures(scenario, catalog)
    return archs, sorted({a.perf for a in archs})


def domain_sizes(scenario: Scenario, plat) -> list[int]:
    """The GPUs per NVLink domain a job may use on the platform (G_u: the whole domain and its largest power of
    two, or the pinned one)."""
    return plat.domain_sizes(scenario.pin.gpus_per_domain_used)


class Placeable(NamedTuple):
    """A layout's d values at one G_u: those that can be placed and fit max_gpus (ascending), and the counts."""

    ds: list[int]
    candidates: int  # every d the batch allows
    placement: int  # of them, not placeable (`perf.layout.placement_problem`)
    caps: int  # of them, placeable but over max_gpus


def placeable(inputs: ScanInputs, lay: LayoutShape, g_used: int) -> Placeable:
    """The d values of a layout at G_u that can be placed on the domains and fit max_gpus (placement reads only the
    layout, G_u and the workload: no platform, NIC or fabric)."""
    ds, placement, caps = [], 0, 0
    candidates = dp_candidates(inputs.scenario, lay)
    for d in candidates:
        layout = lay.layout(dp=d, gpus_per_domain_used=g_used)
        if placement_problem(layout, inputs.wl, g_used) is not None:
            placement += 1
        elif inputs.max_gpus is not None and layout.gpus > inputs.max_gpus:
            caps += 1
        else:
            ds.append(d)
    return Placeable(ds, len(candidates), placement, caps)


# ---------------------------------------------------------------------------------------------- one point


def point_performance(inputs: ScanInputs, layout: Layout, hw: Hardware) -> Performance:
    """The point's step and every term of it, through the performance-model interface (`perf.interface`: the
    training-step model, `perf.step.performance` unchanged)."""
    return _TRAINING.point(TrainingContext(inputs.wl, hw, inputs.overlap), layout).detail


def point_memory_gb(inputs: ScanInputs, layout: Layout) -> float:
    """Memory per GPU of the point (`perf.memory.memory_per_gpu_gb`: the same as `Performance.memory_per_gpu_gb`;
    it reads neither the NIC nor the fabric)."""
    return memory_per_gpu_gb(inputs.wl, layout, inputs.params)


def fits_memory(memory_gb: float, hw: Hardware) -> bool:
    """memory_fit: the point's memory per GPU is within the GPU's usable HBM."""
    return memory_gb <= hw.hbm_usable_gb * (1 + TOLERANCE)


def quantile_factor(inputs: ScanInputs, hw: Hardware, compute_and_bubble_s: float, step_time_s: float) -> float:
    """k_q of a point on `hw` (perf/uncertainty.py: its regime's quantile of the calibration residuals); 1 without
    robustness.quantile."""
    wl = inputs.wl
    return point_factor(wl.stack, hw.gpu_id, wl.precision, compute_and_bubble_s, step_time_s, inputs.quantile,
                        wl.model.moe is not None)


def step_need(inputs: ScanInputs, perf: Performance, hw: Hardware) -> tuple[float, float]:
    """(the step time the target must cover: the largest of the point's step times on `hw` under every demanded
    condition — nominal, compute margin, bandwidth margin — and k_q times the nominal one; the nominal step time).
    `perf` may have been evaluated on another class of the same fabric structure: every term is re-timed on `hw`."""
    steps = [step_time_on(perf, hw, sigma, delta) for _, sigma, delta in inputs.conditions]
    k = quantile_factor(inputs, hw, perf.compute_s + perf.bubble_s, steps[0])
    return max(*steps, steps[0] * k), steps[0]


def goodput_at(inputs: ScanInputs, gpus: int, gpus_per_node: int, nodes: int, rails_per_node: int) -> float:
    """The goodput the step-time target is scaled by at a point (1 when the target does not use it): the
    switch-independent bound of every architecture of the class (no switch counted, `failures.job_parts`); the
    MILP's rows use each architecture's own (`optimize.data.points`)."""
    if inputs.goodput is None:
        return 1.0
    return point_goodput(inputs.goodput, "fat-tree", None, gpus, gpus_per_node, nodes, rails_per_node, None)


def meets_target(inputs: ScanInputs, need_s: float, goodput: float) -> bool:
    """step_time_target: the step time the point needs (`step_need`) is within the target × goodput."""
    return need_s <= inputs.target * (1 + TOLERANCE) * goodput


# ---------------------------------------------------------------------------------------------- one shape's rows


def condition_rows(inputs: ScanInputs, ds: list[int], perfs: list[Performance], hw: Hardware) -> list[Condition]:
    """The step-time rows of a shape: the nominal condition and each margin the scenario demands, every term
    multiplied by d and evaluated at every kept d (`perf.step.point_terms` on `hw`); a traffic class whose pieces are
    never positive is left out (its exposure is 0); with robustness.quantile, the nominal rows times each point's k_q
    (k_q·max(comp + Σ exposed, capacity) = max(k_q·comp + Σ k_q·exposed, k_q·capacity) as k_q > 0)."""
    out = []
    for name, sigma, delta in inputs.conditions:
        terms = [point_terms(q, hw, sigma, delta) for q in perfs]
        exposures = []
        for cls, first in terms[0].pieces.items():
            pieces = [[d * t.pieces[cls][i] for d, t in zip(ds, terms)] for i in range(len(first))]
            if any(v > 1e-12 for p in pieces for v in p):
                exposures.append(Exposure(cls, pieces))
        out.append(Condition(name, [d * t.compute_s for d, t in zip(ds, terms)], exposures,
                             [d * t.capacity_s for d, t in zip(ds, terms)]))
    if inputs.quantile is not None:
        nominal = out[0]
        ks = [quantile_factor(inputs, hw, q.compute_s + q.bubble_s, nominal.step_time_s(j, d))
              for j, (d, q) in enumerate(zip(ds, perfs))]
        exposures = [Exposure(x.name, [[k * v for k, v in zip(ks, p)] for p in x.pieces]) for x in nominal.exposures]
        out.append(Condition("quantile", [k * v for k, v in zip(ks, nominal.comp)], exposures,
                             [k * v for k, v in zip(ks, nominal.capacity)]))
    return out


def shape_key(perf: PerfClass, g_used: int, lay: LayoutShape, ds: list[int]) -> str:
    """A shape's name: its class, G_u, layout and the first of the layout's placeable d values (`+` when more)."""
    experts = f"e{lay.ep}x{lay.etp}" if (lay.ep, lay.etp) != (1, 1) else ""
    layout = f"t{lay.tp}c{lay.cp}p{lay.pp}v{lay.vp}b{lay.microbatch_size}{experts}"
    return f"{perf.key()}|G{g_used}|{layout}|d{ds[0]}" + ("+" if len(ds) > 1 else "")


def shape_of(perf: PerfClass, hw: Hardware, g_used: int, lay: LayoutShape, ds: list[int], kept: list[int],
             domains: list[int], memory_gb: list[float], steps: list[float],
             conditions: list[Condition]) -> Shape:
    """The shape of a class's kept points of one layout (`kept`: the kept d values, of the placeable `ds`), each
    per-point list at the kept d: NVLink domains, memory per GPU, nominal step time; the memory row holds d·mem(d)."""
    return Shape(key=shape_key(perf, g_used, lay, ds), perf=perf, layout_shape=lay, gpus_per_domain_used=g_used,
                 d_values=kept, domains=domains, conditions=conditions,
                 mem=[d * gb for d, gb in zip(kept, memory_gb)], hbm_usable_gb=hw.hbm_usable_gb, step_time_s=steps)


# ---------------------------------------------------------------------------------------------- the builder


class _Kept(NamedTuple):
    """One feasible point of a layout on a class."""

    d: int
    domains: int
    memory_gb: float
    step_s: float
    perf: Performance


def plain_design_space(scenario: Scenario, catalog: Catalog) -> DesignSpace:
    """Every feasible point of the scenario's design space, evaluated one by one (module docstring): the same
    shapes, rows and step times as `build_design_space(..., prune="points")` (whose speed layers only skip work),
    one shape per class and layout (the fast build may share a shape between classes, `Shape.also`). Counts:
    `pruned` by the first check a point fails (placement, caps = max_gpus, memory, target); `fastest` / `leanest`
    the least step time of a point that fits and the least memory per GPU of any point."""
    inputs = ScanInputs.of(scenario, catalog, "points")
    archs, classes = performance_classes(scenario, catalog)
    per_class = {p: sum(1 for a in archs if a.perf == p) for p in classes}  # switch choices: a point per switch
    layouts = layout_shapes(scenario)
    platforms = catalog.by_id("platforms")
    shapes: list[Shape] = []
    pruned = {"placement": 0, "memory": 0, "target": 0, "caps": 0}
    combinations = 0
    best = {"fastest": (float("inf"), ""), "leanest": (float("inf"), 0.0, "")}
    for perf in classes:
        hw, plat = hardware_of(scenario, catalog, perf), platforms[perf.platform]
        for g_used in domain_sizes(scenario, plat):
            for lay in layouts:
                places = placeable(inputs, lay, g_used)
                combinations += places.candidates * per_class[perf]
                pruned["placement"] += places.placement * per_class[perf]
                pruned["caps"] += places.caps * per_class[perf]
                kept = []
                for d in places.ds:
                    point, reason = _point(inputs, plat, hw, lay.layout(dp=d, gpus_per_domain_used=g_used), best)
                    if point is None:
                        pruned[reason] += per_class[perf]
                    else:
                        kept.append(point)
                if kept:
                    shapes.append(shape_of(perf, hw, g_used, lay, places.ds, [k.d for k in kept],
                                           [k.domains for k in kept], [k.memory_gb for k in kept],
                                           [k.step_s for k in kept],
                                           condition_rows(inputs, [k.d for k in kept], [k.perf for k in kept], hw)))
    return DesignSpace(scenario, catalog, inputs.target, archs, shapes, combinations, pruned, best["fastest"],
                       best["leanest"])


def _point(inputs: ScanInputs, plat, hw: Hardware, layout: Layout, best: dict) -> tuple[_Kept | None, str]:
    """One placeable point on one class: (the point, "") when it fits in memory and meets the target under every
    demanded condition on the goodput bound, else (None, the check it fails); `best` records the fastest point that
    fits and the leanest point."""
    memory_gb = point_memory_gb(inputs, layout)
    if memory_gb < best["leanest"][0]:
        best["leanest"] = (memory_gb, hw.hbm_usable_gb, f"{hw.gpu_id}, {layout.describe()}")
    if not fits_memory(memory_gb, hw):
        return None, "memory"
    perf = point_performance(inputs, layout, hw)
    need, step = step_need(inputs, perf, hw)
    if step < best["fastest"][0]:
        best["fastest"] = (step, f"{hw.gpu_id}, {layout.describe()}")
    goodput = goodput_at(inputs, layout.gpus, plat.gpus_per_node, job_nodes(plat, layout.domains), hw.rails_per_node)
    if not meets_target(inputs, need, goodput):
        return None, "target"
    return _Kept(layout.dp, layout.domains, memory_gb, step, perf), ""
