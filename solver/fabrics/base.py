"""What every scale-out fabric family provides (SPEC §5, §5.1), behind one small interface.

A family (one module each: `fat_tree.py`, `multi_plane.py`, `rail_only.py`) states, side by side:
- its capacity: the largest node count a tier count holds (`max_nodes`);
- its closed-form sizing for the evaluator (`size` → `FabricSize`, role-keyed switch counts and
  per-tier link counts);
- its rows in the optimisation model (`add_milp`: variables and constraints for the architectures
  of the family, and `milp_switches` / `milp_links`: the same role-keyed counts as expressions).
  Families that share one set of rows (the three trees) name the same `milp_block`; the model calls
  that block's `add_milp` once for all their architectures, so every constraint name exists once;
- what its structure means for the traffic (`planes`, `planes_by_domain_position`, `pod_nodes`),
  which the step-time model reads through `perf.hardware.Hardware`;
- `twin`: the family that builds exactly the same network for a spec (multi-plane with one rail is
  a fat tree), so that the design space does not offer the same network under two names;
- `vocabulary` (`FabricVocabulary`): its words, in one place — its tiers bottom up, each tier's switch role
  (the key of `FabricSize.switches`, the JSON's `<role>_switches`, the BOM's "<role> switch: …") and the name
  of the links that come up into it (the key of `FabricSize.links`, the BOM's "<link> cable: …", the cables
  sheet's tier), and the catalog link key (`node_leaf`, `leaf_spine`, `spine_core`: the catalog's words) whose
  options build those links.
The bill of materials (costing/table.py), the cables sheet, the figures, the terminal and the JSON read every
role and link name from the design's family (`family_vocabulary`), so a new family is one new module plus
`register_family(...)` (the shipped three are registered in `fabrics/__init__.py`); docs/architecture.md,
"Adding a fabric family", works an example.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Protocol

MAX_TIERS = 3  # the most tiers a family declares: the design space and the model index tier counts 1..MAX_TIERS
TIER_COUNTS = tuple(range(1, MAX_TIERS + 1))  # a fabric of t tiers has the first t tiers of its family's vocabulary
POD_TIERS = TIER_COUNTS[-1]  # the tier count whose top tier sits above the pods (the one that may be oversubscribed)
_WORD = re.compile(r"^[A-Za-z]\w*$")  # a role or link name: one word (BOM roles and JSON keys are built from it)


@dataclass(frozen=True)
class FabricTier:
    """One tier of a family's fabric, bottom up: its switches and the links that come up into them.

    link: the links from the tier below (or the nodes) to this tier ("node_leaf"): a key of `FabricSize.links`, the
    BOM's "<link> cable: …" and the cables sheet's tier; catalog_link: the catalog link key whose options build them
    (`inputs.schema.TIERS`: node_leaf, leaf_spine, spine_core — the catalog's words, which also name the facility's
    `link_distance_m`: a length class); role: the tier's switches ("leaf"): a key of `FabricSize.switches`, the
    JSON's `<role>_switches`, the BOM's "<role> switch: …"; None when the tier adds links but no switches (a
    torus's ring links, a dragonfly's global links join the routers of the first tier).
    """

    role: str | None
    link: str
    catalog_link: str


@dataclass(frozen=True)
class FabricVocabulary:
    """A family's words, declared once (module docstring): its tiers bottom up. A t-tier fabric of the family has
    the first t tiers; the first tier's link is the one that leaves the node (its node-end module)."""

    tiers: tuple[FabricTier, ...]

    def __post_init__(self) -> None:
        words = [*self.switch_roles, *self.link_names]
        if not 1 <= len(self.tiers) <= MAX_TIERS or self.tiers[0].role is None:
            raise ValueError(f"a fabric vocabulary has 1 to {MAX_TIERS} tiers, the first with switches; got {self.tiers}")
        if any(not _WORD.match(w) for w in words) or len(set(words)) != len(words):
            raise ValueError(f"fabric role and link names must be distinct single words, got {words}")

    @property
    def switch_roles(self) -> tuple[str, ...]:
        """The switch roles, bottom up (the keys of `FabricSize.switches`)."""
        return tuple(t.role for t in self.tiers if t.role is not None)

    @property
    def link_names(self) -> tuple[str, ...]:
        """The link names, bottom up (the keys of `FabricSize.links`)."""
        return tuple(t.link for t in self.tiers)

    @property
    def node_link(self) -> str:
        """The links that leave the nodes (the first tier's)."""
        return self.tiers[0].link

    @property
    def edge_role(self) -> str:
        """The role of the switches the nodes plug into (the first tier's)."""
        return self.switch_roles[0]

    def catalog_link(self, link: str) -> str:
        """The catalog link key that builds the family's links `link`."""
        for t in self.tiers:
            if t.link == link:
                return t.catalog_link
        raise KeyError(f"no link {link!r} in this fabric vocabulary (has {self.link_names})")


def tier_counts(fam: FabricFamily) -> tuple[int, ...]:
    """The tier counts a family builds (multi-plane ≥ 2, rail-only ≤ 2)."""
    return tuple(t for t in TIER_COUNTS if fam.min_tiers <= t <= fam.max_tiers)


def has_pod_tier(fam: FabricFamily) -> bool:
    """The family builds a tier above the pods (so an oversubscribed one: `above_pod_oversubscription`)."""
    return fam.max_tiers >= POD_TIERS


@dataclass(frozen=True)
class FabricSpec:
    """What sizing needs to know about one architecture's fabric.

    radix: ports per switch at the port speed in use (after breakout, `fabrics.breakout`);
    rails_per_node: scale-out NICs per node (the rails); oversubscription: leaf down:up; above_pod_oversubscription:
    spine down:up in 3 tiers (the tier above the pods); nodes_per_domain: nodes per NVLink domain
    (rail-only builds one rail per NIC position in the domain).
    """

    radix: int
    rails_per_node: int
    oversubscription: float = 1.0
    above_pod_oversubscription: float = 1.0
    nodes_per_domain: int = 1


@dataclass(frozen=True)
class FabricSize:
    """Switch and link counts of one sized fabric.

    switches: role → count (leaf, spine, core); links: tier → count (node_leaf, leaf_spine,
    spine_core); endpoints = nodes · rails. k_down/k_up are the leaf's down and up ports (for 1 tier
    k_down = k, k_up = 0 and oversubscription = 1: no uplinks). planes = independent copies of the
    tree (1 for a fat tree); every count is the total over the planes. `detail` holds
    family-specific counts (pods per plane) for reports.
    """

    family: str
    tiers: int
    k: int
    k_down: int
    k_up: int
    oversubscription: float
    switches: dict[str, int]
    links: dict[str, int]
    endpoints: int
    detail: dict[str, int] = field(default_factory=dict)
    planes: int = 1
    above_pod_oversubscription: float = 1.0

    @property
    def total_switches(self) -> int:
        return sum(self.switches.values())

    @property
    def vocabulary(self) -> FabricVocabulary:
        """The words of this fabric's family (registered with `register_family`)."""
        return family_vocabulary(self.family)

    @property
    def edge_switches(self) -> int:
        """The switches the nodes plug into (the family's first tier: the trees' leaves)."""
        return self.switches.get(self.vocabulary.edge_role, 0)

    # the tree families' roles by name, for their own tests and sizing; consumers read `switches` by the vocabulary
    @property
    def leaf_switches(self) -> int:
        return self.switches.get("leaf", 0)

    @property
    def spine_switches(self) -> int:
        return self.switches.get("spine", 0)

    @property
    def core_switches(self) -> int:
        return self.switches.get("core", 0)

    @property
    def pods(self) -> int:
        """Pods per plane (3 tiers), 0 otherwise."""
        return self.detail.get("pods", 0)


@dataclass(frozen=True)
class FabricConstants:
    """The per-architecture constants the optimisation model needs from a family.

    The tree rows size one plane and multiply by `planes`: a plane has `rails` leaf groups per
    plane node, and one plane node is `node_group` nodes (1, or a whole NVLink domain for
    rail-only). cap: tier count → max nodes (0 = the family does not build that tier count).
    spine_down / spine_up: the spine's ports in 3 tiers (k/2 and k/2 unless the tier above the
    pods is oversubscribed).
    """

    k: int
    k_down: int
    k_up: int
    rails: int
    cap: dict[int, int]  # tier count → max nodes
    planes: int = 1
    node_group: int = 1
    spine_down: int = 0
    spine_up: int = 0
    rails_per_node: int = 0  # node–leaf links per node (= rails per node)
    # 1 tier only: the rail groups one switch may take (0 = rails) over how many planes (0 = planes); rail-only
    # packs several rails into one switch where its ports allow (R rails of one plane each → R groups of 1 plane)
    one_tier_rails: int = 0
    one_tier_planes: int = 0
    one_tier_one_switch: bool = False  # the fat tree: one tier is one switch holding every rail (SPEC §5.3)

    @property
    def rails1(self) -> int:
        return self.one_tier_rails or self.rails

    @property
    def planes1(self) -> int:
        return self.one_tier_planes or self.planes


class FabricFamily(Protocol):
    """The interface of one fabric family (see the module docstring)."""

    name: str
    milp_block: str
    min_tiers: int
    max_tiers: int
    planes_by_domain_position: bool
    vocabulary: FabricVocabulary

    def max_nodes(self, spec: FabricSpec, tiers: int) -> int: ...

    def size(self, nodes: int, spec: FabricSpec, tiers: int | None = None) -> FabricSize | None: ...

    def constants(self, spec: FabricSpec) -> FabricConstants: ...

    def planes(self, spec: FabricSpec) -> int: ...

    def pod_nodes(self, spec: FabricSpec) -> int: ...

    def twin(self, spec: FabricSpec) -> str | None: ...

    def add_milp(self, m: Any, archs: list[int]) -> None: ...

    def milp_switches(self, m: Any, a: int) -> dict[str, Any]: ...

    def milp_links(self, m: Any, a: int) -> dict[str, Any]: ...


# ----------------------------------------------------------------------------------- the registry

FAMILIES: dict[str, FabricFamily] = {}  # name → family, in registration order (fabrics/__init__.py: the shipped three)


def register_family(fam: FabricFamily) -> FabricFamily:
    """Add a family to the registry (by its `name`); its vocabulary must hold its tier counts. Returns it."""
    if not 1 <= fam.min_tiers <= fam.max_tiers <= len(fam.vocabulary.tiers):
        raise ValueError(f"fabric family {fam.name!r} builds {fam.min_tiers}..{fam.max_tiers} tiers but its vocabulary "
                         f"names {len(fam.vocabulary.tiers)}")
    if fam.name in FAMILIES and FAMILIES[fam.name] is not fam:
        raise ValueError(f"a fabric family {fam.name!r} is already registered")
    FAMILIES[fam.name] = fam
    return fam


def family(name: str) -> FabricFamily:
    """The registered family of this name."""
    return FAMILIES[name]


def family_vocabulary(name: str) -> FabricVocabulary:
    """The words of the registered family of this name."""
    return FAMILIES[name].vocabulary
