"""The rail-optimised fat tree (SPEC §5): capacity, closed-form sizing and MILP rows side by side.

Each of the `rails` NICs of a node goes to its own leaf group; leaves go to spines and (3 tiers)
spines go to cores, one fabric joining all rails at the spine. Notation: k = switch radix (at the
port speed in use, after breakout), o = oversubscription (leaf down:up), o_pod = the spine's
down:up in 3 tiers (the tier above the pods), E = nodes · rails endpoints.

| tiers | fits when | switches |
|---|---|---|
| 1 | nodes ≤ ⌊k/rails⌋ | one switch holds every rail group (fat tree); rail-only: q = min(rails, ⌊k/nodes⌋) whole rail groups per switch, switches = ⌈rails/q⌉ |
| 2 | leaves ≤ k | leaves = rails·⌈nodes/k_down⌉; spines = smallest divisor of k_up ≥ ⌈leaves·k_up/k⌉ |
| 3 | pods ≤ k | pods = ⌈leaves/s_down⌉; spines = pods·k_up; C = smallest divisor of s_up ≥ ⌈pods·s_up/k⌉; cores = k_up·C |

A fat tree's one tier is one switch: one switch per rail (or per few rails) with no spine has no path
between rails but NVLink, so it is the rail-only network (SPEC §5.3) and is built only as that family.

(s_down, s_up) = split_ports(k, o_pod): (k/2, k/2) when the tier above the pods is non-blocking.
Uniform striping: every leaf connects to every spine with the same number of links (the number of
spines divides k_up); in 3 tiers spine j of each pod connects to the C cores of plane j with s_up/C
links each, so a core takes pods·s_up/C ≤ k links. Links: node_leaf = E, leaf_spine =
leaves·k_up, spine_core = spines·s_up.

The same rules size one *plane* of the multi-plane and rail-only families (`size_tree`,
`tree_constants` and the MILP rows below take a number of planes and a plane-node size), so the
three families share one set of rows in the optimisation model (`milp_block = "tree"`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from ..integers import divisors, floor_int, is_close_to_one, smallest_divisor_at_least
from .base import TIER_COUNTS, FabricConstants, FabricSize, FabricSpec, FabricTier, FabricVocabulary

NAME = "fat-tree"
MILP_BLOCK = "tree"
# The words of the three tree families (fat-tree, multi-plane, rail-only), bottom up: the leaves take the node links,
# the spines the leaves' uplinks, the cores the spines' (3 tiers); each link is built from the catalog's option of
# the same name. Every count below is keyed by these words (`_roles`, `_links`).
TREE_VOCABULARY = FabricVocabulary((FabricTier("leaf", "node_leaf", "node_leaf"),
                                    FabricTier("spine", "leaf_spine", "leaf_spine"),
                                    FabricTier("core", "spine_core", "spine_core")))
_LEAF, _SPINE, _CORE = TREE_VOCABULARY.switch_roles
_NODE_LEAF, _LEAF_SPINE, _SPINE_CORE = TREE_VOCABULARY.link_names


def split_ports(radix: int, oversubscription: float) -> tuple[int, int]:
    """A switch's ports (down, up) for down:up ratio o (the leaf; with o_pod, the spine in 3 tiers).

    o = 1: k_down = k_up = ⌊k/2⌋.
    o > 1: k_up = 2·⌊k / (2·(1+o))⌋ (even, so striping has divisors),
           k_down = min(k − k_up, ⌊o·k_up⌋).
    k_up = 0 (o too large for k) means no multi-tier fabric can be built.
    """
    if oversubscription < 1:
        raise ValueError(f"oversubscription must be ≥ 1 (down:up), got {oversubscription}")
    if is_close_to_one(oversubscription):
        return radix // 2, radix // 2
    k_up = 2 * floor_int(radix / (2.0 * (1.0 + oversubscription)))
    k_down = min(radix - k_up, floor_int(oversubscription * k_up))
    return k_down, k_up


def leaves_for(nodes: int, rails: int, k_down: int) -> int:
    """leaves = rails · ⌈nodes / k_down⌉ (one leaf group per rail)."""
    return rails * math.ceil(nodes / k_down)


def one_tier_switches(nodes: int, rails: int, radix: int, one_switch: bool = False) -> int | None:
    """1 tier: q = min(rails, ⌊k/nodes⌋) whole rail groups per switch; switches = ⌈rails/q⌉.

    None when nodes > k, or (`one_switch`: the fat tree, SPEC §5.3) when the rails do not all fit one switch
    (nodes · rails > k): split over several switches with no spine, the rails would join only through NVLink.
    """
    if nodes > radix or (one_switch and nodes * rails > radix):
        return None
    per_switch = min(rails, radix // nodes)
    return math.ceil(rails / per_switch)


def spines_for(leaves: int, radix: int, k_up: int) -> int | None:
    """2 tiers: spines = smallest divisor of k_up that is ≥ ⌈leaves·k_up / k⌉.

    Every leaf then sends k_up/spines links to every spine. None when no divisor is big enough
    (i.e. leaves > k).
    """
    return smallest_divisor_at_least(k_up, math.ceil(leaves * k_up / radix))


def cores_per_plane(pods: int, radix: int, spine_up: int | None = None) -> int | None:
    """3 tiers: C = smallest divisor of s_up that is ≥ ⌈pods·s_up/k⌉ (None when pods > k).

    s_up = the spine's uplinks (k/2 when the tier above the pods is non-blocking, which gives
    C ≥ ⌈pods/2⌉). Spine j of every pod connects to the C cores of plane j with s_up/C links
    each, so a core takes pods·s_up/C ≤ k links.
    """
    up = radix // 2 if spine_up is None else spine_up
    if up < 1:
        return None
    return smallest_divisor_at_least(up, math.ceil(pods * up / radix))


def max_nodes(radix: int, rails: int, oversubscription: float, tiers: int,
              above_pod_oversubscription: float = 1.0) -> int:
    """Largest node count that fits in `tiers` tiers (0 when none).

    1 tier: ⌊k/rails⌋ (one switch holds every rail).  2 tiers: ⌊k/rails⌋·k_down (leaves ≤ k).  3 tiers: ⌊k·s_down / rails⌋·k_down
    (pods ≤ k, each with s_down leaves; s_down = ⌊k/2⌋ non-blocking). With rails = 1 and o = 1
    these are the fat-tree capacities k²/2 and k³/4.
    """
    if tiers == 1:
        return radix // rails
    k_down, k_up = split_ports(radix, oversubscription)
    if k_up < 1 or k_down < 1:
        return 0
    if tiers == 2:
        return (radix // rails) * k_down
    s_down, s_up = split_ports(radix, above_pod_oversubscription)
    if s_up < 1 or s_down < 1:
        return 0
    return (radix * s_down // rails) * k_down


def pod_nodes(radix: int, rails: int, oversubscription: float, above_pod_oversubscription: float = 1.0) -> int:
    """Nodes of one pod in 3 tiers: ⌊s_down/rails⌋ whole leaf groups of k_down nodes (0 when a
    node's leaves do not fit in one pod)."""
    k_down, _ = split_ports(radix, oversubscription)
    s_down, _ = split_ports(radix, above_pod_oversubscription)
    return (s_down // rails) * k_down


# ----------------------------------------------------------------------------------- one plane


@dataclass(frozen=True)
class Plane:
    """The counts of one plane: `nodes` plane nodes with `rails` leaf groups each."""

    tiers: int
    k_down: int
    k_up: int
    switches: dict[str, int]
    links: dict[str, int]
    pods: int = 0


def _roles(leaf: Any, spine: Any = 0, core: Any = 0) -> dict[str, Any]:
    """Switch counts keyed by the trees' roles (TREE_VOCABULARY), bottom up."""
    return {_LEAF: leaf, _SPINE: spine, _CORE: core}


def _tree_links(node_leaf: Any, leaf_spine: Any = 0, spine_core: Any = 0) -> dict[str, Any]:
    """Link counts keyed by the trees' link names (TREE_VOCABULARY), bottom up."""
    return {_NODE_LEAF: node_leaf, _LEAF_SPINE: leaf_spine, _SPINE_CORE: spine_core}


def _links(nodes: int, rails: int, leaf_spine: int = 0, spine_core: int = 0) -> dict[str, int]:
    return _tree_links(nodes * rails, leaf_spine, spine_core)


def _plane_one_tier(nodes: int, rails: int, radix: int, o: float, o_pod: float, one_switch: bool = False) -> Plane | None:
    switches = one_tier_switches(nodes, rails, radix, one_switch)
    if switches is None:
        return None
    return Plane(1, radix, 0, _roles(switches), _links(nodes, rails))


def _plane_two_tier(nodes: int, rails: int, radix: int, o: float, o_pod: float) -> Plane | None:
    k_down, k_up = split_ports(radix, o)
    if k_up < 1 or k_down < 1:
        return None
    leaves = leaves_for(nodes, rails, k_down)
    spines = spines_for(leaves, radix, k_up)
    if spines is None:
        return None
    return Plane(2, k_down, k_up, _roles(leaves, spines), _links(nodes, rails, leaves * k_up))


def _plane_three_tier(nodes: int, rails: int, radix: int, o: float, o_pod: float) -> Plane | None:
    k_down, k_up = split_ports(radix, o)
    s_down, s_up = split_ports(radix, o_pod)
    if k_up < 1 or k_down < 1 or s_down < 1 or s_up < 1:
        return None
    leaves = leaves_for(nodes, rails, k_down)
    pods = math.ceil(leaves / s_down)
    planes_cores = cores_per_plane(pods, radix, s_up)
    if pods > radix or planes_cores is None:
        return None
    spines = pods * k_up
    return Plane(3, k_down, k_up, _roles(leaves, spines, k_up * planes_cores),
                 _links(nodes, rails, leaves * k_up, spines * s_up), pods)


_SIZERS = {1: _plane_one_tier, 2: _plane_two_tier, 3: _plane_three_tier}


def size_tree(family: str, nodes: int, rails: int, radix: int, oversubscription: float, tiers: int | None = None, *,
              above_pod_oversubscription: float = 1.0, planes: int = 1, min_tiers: int = 1,
              max_tiers: int = 3, one_switch: bool = False) -> FabricSize | None:
    """Fewest-tier tree of `planes` identical planes, each for `nodes` plane nodes × `rails` leaf
    groups on radix-k switches; every count is the total over the planes.

    `tiers` forces a tier count. None when it does not fit in min_tiers..max_tiers tiers (or the
    forced count). `one_switch`: one tier is a single switch holding every rail (the fat tree, SPEC §5.3).
    """
    if nodes < 1 or rails < 1 or radix < 2 or planes < 1:
        raise ValueError(f"need nodes, rails, planes ≥ 1 and radix ≥ 2; got {nodes}, {rails}, {planes}, {radix}")
    if tiers not in (None, 1, 2, 3):
        raise ValueError(f"tiers must be 1, 2, 3 or None, got {tiers}")
    for count in [tiers] if tiers else list(range(min_tiers, max_tiers + 1)):
        if not min_tiers <= count <= max_tiers:
            return None
        if count == 1:
            plane = _plane_one_tier(nodes, rails, radix, oversubscription, above_pod_oversubscription, one_switch)
        else:
            plane = _SIZERS[count](nodes, rails, radix, oversubscription, above_pod_oversubscription)
        if plane is not None:
            over = 1.0 if count == 1 else float(oversubscription)
            over_pod = float(above_pod_oversubscription) if count == 3 else 1.0
            return FabricSize(family, count, radix, plane.k_down, plane.k_up, over,
                              {role: planes * n for role, n in plane.switches.items()},
                              {tier: planes * n for tier, n in plane.links.items()}, planes * nodes * rails,
                              {"pods": plane.pods} if plane.pods else {}, planes, over_pod)
    return None


def size_fabric(nodes: int, rails: int, radix: int, oversubscription: float,
                tiers: int | None = None, above_pod_oversubscription: float = 1.0) -> FabricSize | None:
    """Fewest-tier rail-optimised fat tree for `nodes` × `rails` endpoints on radix-k switches.

    `tiers` forces a tier count. None when it does not fit in 3 tiers (or in the forced count).
    """
    return size_tree(NAME, nodes, rails, radix, oversubscription, tiers,
                     above_pod_oversubscription=above_pod_oversubscription, one_switch=True)


def tree_constants(spec: FabricSpec, *, rails: int, planes: int, node_group: int, min_tiers: int,
                   max_tiers: int) -> FabricConstants:
    """The model constants of a tree of `planes` planes, each with `rails` leaf groups per plane node
    of `node_group` nodes; cap in nodes (0 outside min_tiers..max_tiers)."""
    k = spec.radix
    k_down, k_up = split_ports(k, spec.oversubscription)
    s_down, s_up = split_ports(k, spec.above_pod_oversubscription)
    cap = {t: node_group * max_nodes(k, rails, spec.oversubscription, t, spec.above_pod_oversubscription)
           if min_tiers <= t <= max_tiers else 0 for t in TIER_COUNTS}
    return FabricConstants(k=k, k_down=k_down, k_up=k_up, rails=rails, cap=cap, planes=planes, node_group=node_group,
                           spine_down=s_down, spine_up=s_up, rails_per_node=spec.rails_per_node)


# ============================================================================ optimisation rows
#
# The rows size one plane (rails = leaf groups per plane node, g = nodes per plane node) and the
# switch and link expressions multiply by the number of planes P: P = 1, g = 1 for the fat tree.


def _times(factor: int, expr: Any) -> Any:
    return expr if factor == 1 else factor * expr


def one_tier_groups(f: FabricConstants) -> range:
    """The rail groups q one switch may take in one tier: every rail (q = rails: the fat tree's one switch),
    or 1..rails (rail-only packs whole rails where its ports allow)."""
    return range(f.rails1, f.rails1 + 1) if f.one_tier_one_switch else range(1, f.rails1 + 1)


def _one_tier_switches(m: Any, a: int) -> Any:
    r = m.fab[a].rails1
    return sum(-(-r // q) * m.rail_groups[a, q] for q in one_tier_groups(m.fab[a])) if (a, 1) in m.tier else 0


def _spines2(m: Any, a: int) -> Any:
    return sum(dv * m.spine_choice[a, dv] for dv in divisors(m.fab[a].k_up)) if (a, 2) in m.tier else 0


def _cores_per_plane(m: Any, a: int) -> Any:
    return sum(dv * m.core_choice[a, dv] for dv in divisors(m.fab[a].spine_up)) if (a, 3) in m.tier else 0


def add_variables(m: Any, archs: list[int]) -> None:
    """rail_groups[a,q] ∈ {0,1} (1 tier: q whole rail groups per switch); leaves2[a], leaves3[a]
    (leaves per rail and plane), pods[a] (per plane) integers; spine_choice[a,δ] ∈ {0,1} (2 tiers:
    δ spines per plane, δ | k_up); core_choice[a,c] ∈ {0,1} (3 tiers: c cores per spine plane, c | s_up)."""
    import pyomo.core as pyo

    fab = m.fab
    used = {a: {t for (b, t) in m.AT if b == a} for a in archs}

    def leaf_bound(a: int, tiers: int) -> int:
        return -(-min(fab[a].cap[tiers], m.node_bound[a]) // max(1, fab[a].node_group * fab[a].k_down))

    m.Q = [(a, q) for a in archs if 1 in used[a] for q in one_tier_groups(fab[a])]
    m.rail_groups = pyo.Var(m.Q, domain=pyo.Binary)
    m.leaves2 = pyo.Var(archs, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, leaf_bound(a, 2)))
    m.leaves3 = pyo.Var(archs, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, leaf_bound(a, 3)))
    m.pods = pyo.Var(archs, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, fab[a].k))
    m.RHO = [(a, dv) for a in archs if 2 in used[a] for dv in divisors(fab[a].k_up)]
    m.spine_choice = pyo.Var(m.RHO, domain=pyo.Binary)
    m.CHI = [(a, dv) for a in archs if 3 in used[a] for dv in divisors(fab[a].spine_up)]
    m.core_choice = pyo.Var(m.CHI, domain=pyo.Binary)


def add_one_tier_ports(m: Any, archs: list[int]) -> None:
    """one_tier_groups[a]: Σ_q rail_groups[a,q] = tier[a,1]; one_tier_ports[a]: tier_nodes[a,1] ≤
    Σ_q g·⌊k/q⌋·rail_groups[a,q] — each switch holds q whole rail groups of a plane; switches =
    P·Σ_q ⌈rails/q⌉·rail_groups."""
    import pyomo.core as pyo

    fab = m.fab
    A1 = [a for a in archs if (a, 1) in m.tier]
    m.one_tier_groups = pyo.Constraint(A1, rule=lambda _, a: sum(m.rail_groups[a, q] for q in one_tier_groups(fab[a])) == m.tier[a, 1])
    m.one_tier_ports = pyo.Constraint(A1, rule=lambda _, a: m.tier_nodes[a, 1] <= sum(
        fab[a].node_group * (fab[a].k // q) * m.rail_groups[a, q] for q in one_tier_groups(fab[a])))


def add_two_tier_ports(m: Any, archs: list[int]) -> None:
    """leaf_down_ports2[a]: g·k_down·leaves2[a] ≥ tier_nodes[a,2] (leaves per rail and plane);
    spine_count2[a]: Σ_δ spine_choice[a,δ] = tier[a,2] over the divisors δ of k_up (uniform striping);
    spine_ports2[a]: k·spines ≥ k_up·rails·leaves2[a] (every leaf uplink lands on a spine port)."""
    import pyomo.core as pyo

    fab = m.fab
    A2 = [a for a in archs if (a, 2) in m.tier]
    m.leaf_down_ports2 = pyo.Constraint(A2, rule=lambda _, a: fab[a].node_group * fab[a].k_down * m.leaves2[a] >= m.tier_nodes[a, 2])
    m.spine_count2 = pyo.Constraint(A2, rule=lambda _, a: sum(m.spine_choice[a, dv] for dv in divisors(fab[a].k_up)) == m.tier[a, 2])
    m.spine_ports2 = pyo.Constraint(A2, rule=lambda _, a: fab[a].k * _spines2(m, a) >= fab[a].k_up * fab[a].rails * m.leaves2[a])
    for a in archs:
        if (a, 2) not in m.tier:
            m.leaves2[a].fix(0)


def add_three_tier_ports(m: Any, archs: list[int]) -> None:
    """leaf_down_ports3[a]: g·k_down·leaves3[a] ≥ tier_nodes[a,3]; pod_slots[a]: s_down·pods[a] ≥
    rails·leaves3[a]; pod_limit[a]: pods[a] ≤ k·tier[a,3]; core_count[a]: Σ_c core_choice[a,c] =
    tier[a,3] over divisors c of s_up; core_ports[a]: k·cores_per_plane ≥ s_up·pods (each core takes
    pods·s_up/C ≤ k links). Spines = P·k_up·pods, cores = P·k_up·cores_per_plane."""
    import pyomo.core as pyo

    fab = m.fab
    A3 = [a for a in archs if (a, 3) in m.tier]
    m.leaf_down_ports3 = pyo.Constraint(A3, rule=lambda _, a: fab[a].node_group * fab[a].k_down * m.leaves3[a] >= m.tier_nodes[a, 3])
    m.pod_slots = pyo.Constraint(A3, rule=lambda _, a: fab[a].spine_down * m.pods[a] >= fab[a].rails * m.leaves3[a])
    m.pod_limit = pyo.Constraint(A3, rule=lambda _, a: m.pods[a] <= fab[a].k * m.tier[a, 3])
    m.core_count = pyo.Constraint(A3, rule=lambda _, a: sum(m.core_choice[a, dv] for dv in divisors(fab[a].spine_up)) == m.tier[a, 3])
    m.core_ports = pyo.Constraint(A3, rule=lambda _, a: fab[a].k * _cores_per_plane(m, a) >= fab[a].spine_up * m.pods[a])
    for a in archs:
        if (a, 3) not in m.tier:
            m.leaves3[a].fix(0)
            m.pods[a].fix(0)


def add_tree_rows(m: Any, archs: list[int]) -> None:
    """The rows of every tree family (fat-tree, multi-plane, rail-only) for their architectures."""
    add_variables(m, archs)
    add_one_tier_ports(m, archs)
    add_two_tier_ports(m, archs)
    add_three_tier_ports(m, archs)


def tree_switches(m: Any, a: int) -> dict[str, Any]:
    """Leaf, spine and core switch counts of architecture a as expressions (P planes)."""
    f = m.fab[a]
    return _roles(_times(f.planes1, _one_tier_switches(m, a)) + _times(f.planes, f.rails * (m.leaves2[a] + m.leaves3[a])),
                  _times(f.planes, _spines2(m, a) + f.k_up * m.pods[a]),
                  _times(f.planes, f.k_up * _cores_per_plane(m, a)))


def tree_links(m: Any, a: int) -> dict[str, Any]:
    """links: node_leaf = rails per node·cabled nodes (Σ_t tier_nodes: the job's and the spares packed into its
    free ports); leaf_spine = P·k_up·rails·leaves; spine_core = P·s_up·k_up·pods."""
    f = m.fab[a]
    return _tree_links(f.rails_per_node * sum(m.tier_nodes[b, t] for (b, t) in m.AT if b == a),
                       _times(f.planes, f.k_up * f.rails * (m.leaves2[a] + m.leaves3[a])),
                       _times(f.planes, f.spine_up * f.k_up * m.pods[a]))


class FatTree:
    """The `fat-tree` family (see the module docstring)."""

    name = NAME
    milp_block = MILP_BLOCK
    min_tiers = 1
    max_tiers = 3
    planes_by_domain_position = False
    vocabulary = TREE_VOCABULARY

    def max_nodes(self, spec: FabricSpec, tiers: int) -> int:
        return max_nodes(spec.radix, spec.rails_per_node, spec.oversubscription, tiers, spec.above_pod_oversubscription)

    def size(self, nodes: int, spec: FabricSpec, tiers: int | None = None) -> FabricSize | None:
        return size_fabric(nodes, spec.rails_per_node, spec.radix, spec.oversubscription, tiers, spec.above_pod_oversubscription)

    def constants(self, spec: FabricSpec) -> FabricConstants:
        return replace(tree_constants(spec, rails=spec.rails_per_node, planes=1, node_group=1, min_tiers=self.min_tiers,
                                      max_tiers=self.max_tiers), one_tier_one_switch=True)

    def planes(self, spec: FabricSpec) -> int:
        """One fabric joins every rail at the spine."""
        return 1

    def pod_nodes(self, spec: FabricSpec) -> int:
        return pod_nodes(spec.radix, spec.rails_per_node, spec.oversubscription, spec.above_pod_oversubscription)

    def twin(self, spec: FabricSpec) -> str | None:
        return None

    def add_milp(self, m: Any, archs: list[int]) -> None:
        add_tree_rows(m, archs)

    def milp_switches(self, m: Any, a: int) -> dict[str, Any]:
        return tree_switches(m, a)

    def milp_links(self, m: Any, a: int) -> dict[str, Any]:
        return tree_links(m, a)
