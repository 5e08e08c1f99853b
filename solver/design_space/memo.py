"""What builds of one scenario share (issue 26): the scan memo (`ScanMemo`: the points a build evaluated, where its
dominance scans found each segment's first feasible d, the costed designs) and each (layout, G_u)'s layouts,
memory and T_comp + bubble by d (`LayoutMemo`)."""
from __future__ import annotations

from ..inputs.schema import Catalog, Scenario
from ..perf.hardware import Hardware
from ..perf.layout import Layout, LayoutShape
from ..perf.step import Performance
from .bound import CostBound
from .identity import Architecture

OPEN_FROM_TARGETS = 4  # targets whose first open indices a memo keeps (a solve's builds use at most 2: T and ∞)
MAX_KEPT_POINTS = 4_000  # kept evaluations a memo holds (≈ 4.5 kB each; the shipped examples keep ≤ 1,646, the 10M case far more)


class ScanMemo:
    """What a build of a scenario's design space learnt that a later build of the same scenario and catalog at the
    same or a lower target reuses (the next faster design is the cheapest at the target T₁·(1 − ε)): where each
    dominance scan found its segment's first feasible d (with that point's evaluation, where the next scan starts),
    the costed designs of the fat-tree dominance rule, and each (layout, G_u)'s layouts, memory and T_comp + bubble
    (`LayoutMemo`: no target changes them).
    Feasibility only narrows as the target falls (every row is step ≤ target × a factor independent of it), so a
    segment's first feasible index at T is a lower bound at T' ≤ T and a segment with none at T has none at T'
    (`_kept_points` starts its scans there). A build at a higher target, or with the goodput in the target where the
    earlier build had none or the reverse (`at_target`: the factor changes), forgets those indices. Of the evaluated
    points only the kept ones are held (at most MAX_KEPT_POINTS); the per-layout terms, placements and costs it keeps
    grow with the layouts a build reaches (≈ 180 MB peak for the 10M-combination bench case, docs/performance.md).
    Every build of the memo, at any target, also shares the lookups it would work out the same (issue 47t;
    docs/architecture.md, layer 7): each reads only what the builds have in common, or is kept per what else it
    reads (the target, the goodput rule, the budget)."""

    share_lookups = True  # the builds share the lookups below (issue 47t); off only to test that they change nothing

    def __init__(self, scenario: Scenario, catalog: Catalog):
        self.catalog = catalog
        self.key = scenario_key(scenario)
        self.token: int | None = None  # names the helper process's memo of the same builds (`parallel`)
        self.target_s = scenario.target_step_time_s()
        self.goodput_in_target: bool | None = None  # the rule the scan starts were found with (`at_target`)
        # (GPUs per node, node counts by d, G_u, layout, structure's hardware number: `ScanContext.points`) →
        # (`_Points.first_ok`, `_Points.kept`: index → evaluation of a kept point)
        self.scans: dict[tuple, tuple[dict, dict[int, Performance]]] = {}
        self.kept_points = 0  # evaluations held in `kept`, at most MAX_KEPT_POINTS
        self.costed: dict = {}  # (architecture, domains, G_u) → CostedDesign | None (`dominated_by_fat_tree`)
        self.costs: dict[str, dict] = {}  # objective → (architecture, domains, G_u) → cost (`bound.CostBound`)
        # (layout, G_u) → its layouts, memory and T_comp + bubble by d (`LayoutMemo`: none depends on the target)
        self.by_layout: dict[tuple, LayoutMemo] = {}
        self.compute_ids: dict[tuple, int] = {}  # `ScanContext.compute_id`
        self.hardware_ids: dict[Hardware, int] = {}  # `ScanContext.hardware_id`
        self.placeable: dict[tuple, tuple] = {}  # (layout shape, G_u) → (d values, candidates, placement, caps)
        self.layout_shapes: list[LayoutShape] | None = None  # `perf.layout.layout_shapes` (no target changes it)
        # lookups every build of the scenario asks again (`ScanContext`'s; issue 47t): none reads the target, or each
        # is kept per what it reads of it, so a later build reads the earlier builds' answers (`share_lookups`)
        self.domains: dict[tuple, list[int]] = {}  # (layout, G_u) → domains per placeable d (`domains_of`)
        self.nodes: dict[tuple, int] = {}  # (platform, domains, G_u) → job nodes (`nodes_of`)
        self.open_from: dict[float, dict[tuple, int]] = {}  # target → (layout, G_u, compute id, HBM) → `open_from`
        self.dominated: dict[bool, dict[tuple, bool]] = {}  # goodput in the target → (arch, domains, G_u) → bool
        # (GPUs, GPUs per node, nodes, rails) → the goodput bound (`scan.goodput_bound`: read only by builds with the
        # goodput in the target, whose failure inputs are all the same: `failures.inputs_for` of the memo's scenario)
        self.goodput_bounds: dict[tuple, float] = {}
        self.budget_bounds: dict[float | None, CostBound] = {}  # budget_usd → the budget cut's bound (`budget_bound`)
        self.capex_lower_bounds: dict[tuple, float] = {}  # (architecture, domains, G_u) → capex LB: every budget's

    def open_from_at(self, target_s: float) -> dict[tuple, int]:
        """The first open indices found at `target_s` (`ScanContext.open_from`: memory and T_comp + bubble against
        the target, nothing else of it); those of at most OPEN_FROM_TARGETS targets are kept, the latest used last."""
        found = self.open_from.pop(target_s, None)
        if found is None:
            found = {}
            while len(self.open_from) >= OPEN_FROM_TARGETS:
                del self.open_from[next(iter(self.open_from))]
        self.open_from[target_s] = found
        return found

    def budget_bound(self, scenario: Scenario, archs: list[Architecture]) -> CostBound:
        """The budget cut's bound at `scenario`'s budget_usd (`CostBound.budget_cut`), one per budget for the builds
        of this memo: it is never offered a design (its UB_K stays unknown), so it only holds capex lower bounds, which
        read the scenario but for its target and objective (this memo's), the catalog, the architectures and the
        budget; a later build at the same budget (the explanation's `fastest_within_caps` after the solve) reads them,
        and the bounds of every budget share the architectures' capex lower bounds (no budget changes them)."""
        made = self.budget_bounds.get(scenario.constraints.budget_usd) if self.share_lookups else None
        if made is None or made.archs != archs:
            made = self.budget_bounds[scenario.constraints.budget_usd] = CostBound(
                scenario, self.catalog, archs, 1, objective="capex",
                lower_bounds=self.capex_lower_bounds if self.share_lookups else None)
        return made

    def serves(self, scenario: Scenario, catalog: Catalog) -> bool:
        """The same catalog object and the same scenario but for its target and objective."""
        return catalog is self.catalog and scenario_key(scenario) == self.key

    def at_target(self, target_s: float, goodput_in_target: bool) -> None:
        """A build at `target_s`: the scan starts found at a lower target are too high, and those found with the other
        feasibility rule (the goodput in the target or not: the next faster design's lowered scenario drops a target
        in training days) bound nothing here; both are forgotten."""
        if target_s > self.target_s * (1 + 1e-12) or goodput_in_target != self.goodput_in_target:
            self.scans.clear()
            self.kept_points = 0
        self.target_s, self.goodput_in_target = target_s, goodput_in_target


def scenario_key(scenario: Scenario) -> str:
    """The scenario without its target and objective (what a `ScanMemo` may be shared across)."""
    return scenario.model_dump_json(exclude={"target", "objective", "name", "description"})


class LayoutMemo:
    """One (layout, G_u)'s layouts, memory per GPU and T_comp + bubble by d, made on first use and shared by every
    platform and fabric structure, and by every build of the scan memo (none of them depends on the NIC, the fabric,
    the platform's price or the target; T_comp + bubble is kept per compute reading, `ScanContext.compute_id`)."""

    __slots__ = ("lay", "g_used", "layouts", "memory", "compute")

    def __init__(self, lay: LayoutShape, g_used: int):
        self.lay, self.g_used = lay, g_used
        self.layouts: dict[int, Layout] = {}
        self.memory: dict[int, float] = {}
        self.compute: dict[tuple[int, int], float] = {}

    def layout(self, d: int) -> Layout:
        made = self.layouts.get(d)
        if made is None:
            made = self.layouts[d] = self.lay.layout(dp=d, gpus_per_domain_used=self.g_used)
        return made
