"""The identity types of the design space: a performance class, an architecture, a shape's rows (exposure,
condition), a shape and the design space itself."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..fabrics import DEFAULT_FAMILY
from ..inputs.schema import Catalog, Scenario
from ..perf.layout import Layout, LayoutShape, expert_text

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

    def identity(self, tiers: int) -> tuple:
        """What makes two designs distinct in a ranking by architecture: the architecture and its tier count."""
        return (self.platform, self.nic, self.rails_per_node, self.switch, tiers, self.oversubscription, self.fabric,
                self.above_pod_oversubscription)

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


@dataclass(kw_only=True)
class Shape:
    """One performance class with one layout (t, c, p, v, b, ep, etp: `layout_shape`) and placement (G_u), and
    the rows of its allowed d values. Every field is keyword-only."""

    key: str
    perf: PerfClass
    layout_shape: LayoutShape  # t, c, p, v, microbatch size, ep, etp
    gpus_per_domain_used: int
    d_values: list[int]
    domains: list[int]  # NVLink domains the job occupies at each d
    conditions: list[Condition]  # nominal first
    mem: list[float]  # d·mem(d) at each d (GB)
    hbm_usable_gb: float
    step_time_s: list[float] = field(default_factory=list)  # at each d (reports, pruning)
    # Other performance classes whose step time is this shape's at every d (a multi-plane or rail-only
    # class whose layout forwards nothing between planes and crosses no oversubscribed pod tier):
    # their architectures share the shape's points.
    also: list[PerfClass] = field(default_factory=list)
    # With the goodput in the target (dominance scan): the goodput each point needs, the largest of its step times
    # under the demanded conditions ÷ the target (an architecture whose goodput at the point is at least this meets
    # the target there); empty otherwise.
    needed_goodput: list[float] = field(default_factory=list)

    @property
    def tp(self) -> int:
        return self.layout_shape.tp

    @property
    def cp(self) -> int:
        return self.layout_shape.cp

    @property
    def pp(self) -> int:
        return self.layout_shape.pp

    @property
    def vp(self) -> int:
        return self.layout_shape.vp

    @property
    def microbatch_size(self) -> int:
        return self.layout_shape.microbatch_size

    @property
    def ep(self) -> int:
        """Expert parallelism (Mixture-of-Experts)."""
        return self.layout_shape.ep

    @property
    def etp(self) -> int:
        return self.layout_shape.etp

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
        self.needed_goodput = [self.needed_goodput[j] for j in js] if self.needed_goodput else []
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
        return self.layout_shape.layout(dp=d, gpus_per_domain_used=self.gpus_per_domain_used)

    @property
    def gpus_per_replica(self) -> int:
        return self.tp * self.cp * self.pp


def switch_points(shapes: list[Shape], switches: Counter[PerfClass]) -> int:
    """(shape, d, switch) points of `shapes`: each shape stands for every architecture (switch choice) of its
    classes (`switches`: class → how many)."""
    return sum(len(s.d_values) * switches[p] for s in shapes for p in s.perfs)


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
    memo: Any = field(default=None, repr=False, compare=False)  # memo.ScanMemo: what a later build of it reuses
    bound: Any = field(default=None, repr=False, compare=False)  # bound.CostBound of a build for the K best, or None
    budget_cut: int = 0  # of pruned["caps"], the points the budget cut left unevaluated (`CostBound.budget_cut`)

    @property
    def points(self) -> int:
        """(shape, d, switch) points kept: the size of what enumeration would evaluate."""
        return switch_points(self.shapes, Counter(a.perf for a in self.architectures))
