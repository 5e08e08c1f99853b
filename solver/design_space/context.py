"""The typed parts of a design-space build's context (`scan.ScanContext`): `ScanInputs` (what the build reads and never
changes), `ScanBounds` (the cost, step and budget cuts the speed machinery sets), `ScanTallies` (what it counts) and
`ScanCaches` (the scan memo and the per-build lookups). Read these first: `ScanContext` composes them and adds the
methods that work each thing out once (issue 39 item 2)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..fabrics import FabricSpec, family
from ..failures import goodput_in_target, inputs_for, spare_rule
from ..inputs.schema import Catalog, Scenario
from ..perf.hardware import Hardware
from ..perf.layout import LayoutShape, layout_shapes
from ..perf.totals import parameter_count
from ..perf.traffic import overlap_for
from .bound import CostBound, StepBound
from .identity import Architecture, PerfClass, Shape
from .memo import ScanMemo

MARGIN_CONDITIONS = (("compute_margin", "compute_slowdown"), ("bandwidth_margin", "bandwidth_derate"))


class ArchGoodput(NamedTuple):
    """What an architecture's goodput at a point reads: its fabric family's sizing inputs and tier capacities."""

    arch: Architecture
    spec: FabricSpec
    cap: dict[int, int]  # tier count → max nodes

    @classmethod
    def of(cls, arch: Architecture, spec: FabricSpec) -> ArchGoodput:
        return cls(arch, spec, family(arch.fabric).constants(spec).cap)


@dataclass
class ScanInputs:
    """What one build reads and never changes: the scenario and catalog, the pruning mode, the step-time target and
    what the scan reads of the workload (parameters, overlap, the margin conditions, the robustness quantile), the
    GPU cap, the spare rule and the goodput inputs (None unless the goodput is in the target)."""

    scenario: Scenario
    catalog: Catalog
    prune: str
    wl: Any  # scenario.workload
    target: float  # the step-time target (s)
    params: int  # the model's parameter count
    overlap: Any  # `perf.traffic.overlap_for(scenario)`
    conditions: list[tuple[str, float, float]]  # nominal, then each margin (`wanted_conditions`)
    quantile: float | None
    max_gpus: int | None
    spares: Any  # `failures.spare_rule`
    goodput: Any  # `failures.inputs_for` when the goodput is in the target, else None

    @classmethod
    def of(cls, scenario: Scenario, catalog: Catalog, prune: str) -> ScanInputs:
        failures = inputs_for(scenario, catalog)
        return cls(scenario, catalog, prune, scenario.workload, scenario.target_step_time_s(), parameter_count(
            scenario.workload.model), overlap_for(scenario), wanted_conditions(scenario), scenario.robustness.quantile,
            scenario.constraints.max_gpus, spare_rule(scenario, catalog),
            failures if failures is not None and failures.in_target else None)


@dataclass
class ScanBounds:
    """The speed machinery's cuts, set by `build_design_space` after the context is made: the cost bound of a
    dominance scan for the K best, `fastest`'s step bound, a ranking's budget cut, and `fastest`'s Pareto scan (a
    segment keeps each feasible point faster than every smaller d of it)."""

    bound: CostBound | None = None
    step_bound: StepBound | None = None
    budget: CostBound | None = None
    pareto: bool = False


@dataclass
class ScanTallies:
    """What a build counts: points pruned by reason ((shape, d, switch) points), combinations, points the budget cut
    left unevaluated (`DesignSpace.budget_cut`), each class's architectures (switch choices), and the fastest and
    leanest points seen."""

    pruned: dict[str, int] = field(default_factory=lambda: {"placement": 0, "memory": 0, "target": 0, "caps": 0})
    combinations: int = 0
    budget_cut: int = 0
    switches: Counter[PerfClass] = field(default_factory=Counter)
    best: dict[str, tuple] = field(default_factory=lambda: {"fastest": (float("inf"), ""),
                                                             "leanest": (float("inf"), 0.0, "")})


@dataclass
class ScanCaches:
    """What a build remembers so that it works each thing out once: the scan memo shared with later builds of the
    scenario (`memo.ScanMemo`) and what it holds (placeable d values, layout shapes, costed points), this build's
    placements per G_u, the shapes whose condition rows wait for the last pruning (`defer_conditions`: id → (shape,
    hw of the evaluation, hw of the class)), each class's architectures' goodput sizing, and the per-build lookups
    behind `ScanContext`'s methods."""

    memo: ScanMemo
    placeable: Any
    layout_shapes: list[LayoutShape]
    costed: Any
    placed: dict[int, Any] = field(default_factory=dict)  # G_u → `build._Placed` of the build
    defer_conditions: bool = False
    pending: dict[int, tuple[Shape, Hardware, Hardware]] = field(default_factory=dict)
    goodput_archs: dict[PerfClass, list[ArchGoodput]] = field(default_factory=dict)
    domains: dict[tuple, list[int]] = field(default_factory=dict)  # (layout, G_u) → domains per d
    nodes: dict[tuple, int] = field(default_factory=dict)  # (platform, domains, G_u) → job nodes
    faster: dict[tuple[int, int], tuple[Hardware, Hardware, bool]] = field(default_factory=dict)
    open_from: dict[tuple, int] = field(default_factory=dict)  # (layout, G_u, compute id, usable HBM) → `open_from`
    dominated: dict[tuple, bool] = field(default_factory=dict)  # (architecture, domains, G_u) → `dominated`
    hardware_ids: dict[int, tuple[Hardware, int, int]] = field(default_factory=dict)  # id → (hw, ids)
    arch_goodputs: dict[tuple, float | None] = field(default_factory=dict)
    goodput_bounds: dict[tuple, float] = field(default_factory=dict)  # `scan.goodput_bound` by (GPUs, per node, nodes, rails)

    @classmethod
    def of(cls, scenario: Scenario, catalog: Catalog, target: float, goodput: bool,
           memo: ScanMemo | None) -> ScanCaches:
        memo = memo if memo is not None and memo.serves(scenario, catalog) else ScanMemo(scenario, catalog)
        if memo.layout_shapes is None:
            memo.layout_shapes = layout_shapes(scenario)
        memo.at_target(target, goodput)
        if not memo.share_lookups:
            return cls(memo, memo.placeable, memo.layout_shapes, memo.costed)
        # the lookups no target changes, or kept per what they read of it, are the memo's (`ScanMemo.domains`, …)
        return cls(memo, memo.placeable, memo.layout_shapes, memo.costed, domains=memo.domains, nodes=memo.nodes,
                   open_from=memo.open_from_at(target),
                   dominated=memo.dominated.setdefault(goodput_in_target(scenario), {}),
                   goodput_bounds=memo.goodput_bounds)


def wanted_conditions(scenario: Scenario) -> list[tuple[str, float, float]]:
    """Nominal, then each margin the scenario demands: (name, compute slowdown σ, bandwidth derate δ)."""
    rob = scenario.robustness
    return [("", 0.0, 0.0)] + [(name, rob.compute_slowdown if attr == "compute_slowdown" else 0.0,
                                rob.bandwidth_derate if attr == "bandwidth_derate" else 0.0)
                               for name, attr in MARGIN_CONDITIONS if getattr(rob, attr) > 0]
