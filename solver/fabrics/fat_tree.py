"""The rail-optimised fat tree (SPEC §5): capacity, closed-form sizing and MILP rows side by side.

Each of the `rails` NICs of a node goes to its own leaf group; leaves go to spines and (3 tiers)
spines go to cores, one fabric joining all rails at the spine. Notation: k = switch radix,
o = oversubscription (leaf down:up), E = nodes · rails endpoints.

| tiers | fits when | switches |
|---|---|---|
| 1 | nodes ≤ k | q = min(rails, ⌊k/nodes⌋) whole rail groups per switch; switches = ⌈rails/q⌉ |
| 2 | leaves ≤ k | leaves = rails·⌈nodes/k_down⌉; spines = smallest divisor of k_up ≥ ⌈leaves·k_up/k⌉ |
| 3 | pods ≤ k | pods = ⌈leaves/(k/2)⌉; spines = pods·k_up; C = smallest divisor of k/2 ≥ ⌈pods/2⌉; cores = k_up·C |

Uniform striping: every leaf connects to every spine with the same number of links (the number of
spines divides k_up); in 3 tiers spine j of each pod connects to the C cores of plane j. Links:
node_leaf = E, leaf_spine = leaves·k_up, spine_core = spines·k/2.
"""
from __future__ import annotations

import math
from typing import Any

from ..integers import divisors, floor_int, is_close_to_one, smallest_divisor_at_least
from .base import FabricConstants, FabricSize

NAME = "fat-tree"


def split_ports(radix: int, oversubscription: float) -> tuple[int, int]:
    """Leaf ports (k_down, k_up) for down:up ratio o.

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


def one_tier_switches(nodes: int, rails: int, radix: int) -> int | None:
    """1 tier: q = min(rails, ⌊k/nodes⌋) whole rail groups per switch; switches = ⌈rails/q⌉.

    None when nodes > k.
    """
    if nodes > radix:
        return None
    per_switch = min(rails, radix // nodes)
    return math.ceil(rails / per_switch)


def spines_for(leaves: int, radix: int, k_up: int) -> int | None:
    """2 tiers: spines = smallest divisor of k_up that is ≥ ⌈leaves·k_up / k⌉.

    Every leaf then sends k_up/spines links to every spine. None when no divisor is big enough
    (i.e. leaves > k).
    """
    return smallest_divisor_at_least(k_up, math.ceil(leaves * k_up / radix))


def cores_per_plane(pods: int, radix: int) -> int | None:
    """3 tiers: C = smallest divisor of k/2 that is ≥ ⌈pods/2⌉ (None when pods > k).

    Spine j of every pod connects to the C cores of plane j with (k/2)/C links each, so a core
    takes pods·(k/2)/C ≤ k links.
    """
    return smallest_divisor_at_least(radix // 2, math.ceil(pods / 2))


def max_nodes(radix: int, rails: int, oversubscription: float, tiers: int) -> int:
    """Largest node count that fits in `tiers` tiers (0 when none).

    1 tier: k.  2 tiers: ⌊k/rails⌋·k_down (leaves ≤ k).  3 tiers: ⌊k·⌊k/2⌋ / rails⌋·k_down
    (pods ≤ k, each with ⌊k/2⌋ leaves). With rails = 1 and o = 1 these are the fat-tree
    capacities k²/2 and k³/4.
    """
    if tiers == 1:
        return radix
    k_down, k_up = split_ports(radix, oversubscription)
    if k_up < 1 or k_down < 1:
        return 0
    leaf_slots = radix if tiers == 2 else radix * (radix // 2)
    return (leaf_slots // rails) * k_down


def _links(nodes: int, rails: int, leaf_spine: int = 0, spine_core: int = 0) -> dict[str, int]:
    return {"node_leaf": nodes * rails, "leaf_spine": leaf_spine, "spine_core": spine_core}


def _size_one_tier(nodes: int, rails: int, radix: int, oversubscription: float) -> FabricSize | None:
    switches = one_tier_switches(nodes, rails, radix)
    if switches is None:
        return None
    return FabricSize(NAME, 1, radix, radix, 0, 1.0, {"leaf": switches, "spine": 0, "core": 0},
                      _links(nodes, rails), nodes * rails)


def _size_two_tier(nodes: int, rails: int, radix: int, oversubscription: float) -> FabricSize | None:
    k_down, k_up = split_ports(radix, oversubscription)
    if k_up < 1 or k_down < 1:
        return None
    leaves = leaves_for(nodes, rails, k_down)
    spines = spines_for(leaves, radix, k_up)
    if spines is None:
        return None
    return FabricSize(NAME, 2, radix, k_down, k_up, float(oversubscription), {"leaf": leaves, "spine": spines, "core": 0},
                      _links(nodes, rails, leaves * k_up), nodes * rails)


def _size_three_tier(nodes: int, rails: int, radix: int, oversubscription: float) -> FabricSize | None:
    k_down, k_up = split_ports(radix, oversubscription)
    half = radix // 2
    if k_up < 1 or k_down < 1 or half < 1:
        return None
    leaves = leaves_for(nodes, rails, k_down)
    pods = math.ceil(leaves / half)
    planes_cores = cores_per_plane(pods, radix)
    if pods > radix or planes_cores is None:
        return None
    spines = pods * k_up
    cores = k_up * planes_cores
    return FabricSize(NAME, 3, radix, k_down, k_up, float(oversubscription),
                      {"leaf": leaves, "spine": spines, "core": cores},
                      _links(nodes, rails, leaves * k_up, spines * half), nodes * rails, {"pods": pods})


_SIZERS = {1: _size_one_tier, 2: _size_two_tier, 3: _size_three_tier}


def size_fabric(nodes: int, rails: int, radix: int, oversubscription: float,
                tiers: int | None = None) -> FabricSize | None:
    """Fewest-tier rail-optimised fat tree for `nodes` × `rails` endpoints on radix-k switches.

    `tiers` forces a tier count. None when it does not fit in 3 tiers (or in the forced count).
    """
    if nodes < 1 or rails < 1 or radix < 2:
        raise ValueError(f"need nodes ≥ 1, rails ≥ 1, radix ≥ 2; got {nodes}, {rails}, {radix}")
    if tiers not in (None, 1, 2, 3):
        raise ValueError(f"tiers must be 1, 2, 3 or None, got {tiers}")
    for count in [tiers] if tiers else [1, 2, 3]:
        size = _SIZERS[count](nodes, rails, radix, oversubscription)
        if size is not None:
            return size
    return None


# ============================================================================ optimisation rows


def _one_tier_switches(m: Any, a: int) -> Any:
    r = m.fab[a].rails
    return sum(-(-r // q) * m.rail_groups[a, q] for q in range(1, r + 1)) if (a, 1) in m.tier else 0


def _spines2(m: Any, a: int) -> Any:
    return sum(dv * m.spine_choice[a, dv] for dv in divisors(m.fab[a].k_up)) if (a, 2) in m.tier else 0


def _cores_per_plane(m: Any, a: int) -> Any:
    return sum(dv * m.core_choice[a, dv] for dv in divisors(m.fab[a].k // 2)) if (a, 3) in m.tier else 0


def add_variables(m: Any, archs: list[int]) -> None:
    """rail_groups[a,q] ∈ {0,1} (1 tier: q whole rail groups per switch); leaves2[a], leaves3[a]
    (leaves per rail), pods[a] integers; spine_choice[a,δ] ∈ {0,1} (2 tiers: δ spines, δ | k_up);
    core_choice[a,c] ∈ {0,1} (3 tiers: c cores per plane, c | k/2)."""
    import pyomo.environ as pyo

    fab = m.fab
    used = {a: {t for (b, t) in m.AT if b == a} for a in archs}

    def leaf_bound(a: int, tiers: int) -> int:
        return -(-min(fab[a].cap[tiers], m.node_bound[a]) // max(1, fab[a].k_down))

    m.Q = [(a, q) for a in archs if 1 in used[a] for q in range(1, fab[a].rails + 1)]
    m.rail_groups = pyo.Var(m.Q, domain=pyo.Binary)
    m.leaves2 = pyo.Var(archs, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, leaf_bound(a, 2)))
    m.leaves3 = pyo.Var(archs, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, leaf_bound(a, 3)))
    m.pods = pyo.Var(archs, domain=pyo.NonNegativeIntegers, bounds=lambda _, a: (0, fab[a].k))
    m.RHO = [(a, dv) for a in archs if 2 in used[a] for dv in divisors(fab[a].k_up)]
    m.spine_choice = pyo.Var(m.RHO, domain=pyo.Binary)
    m.CHI = [(a, dv) for a in archs if 3 in used[a] for dv in divisors(fab[a].k // 2)]
    m.core_choice = pyo.Var(m.CHI, domain=pyo.Binary)


def add_one_tier_ports(m: Any, archs: list[int]) -> None:
    """one_tier_groups[a]: Σ_q rail_groups[a,q] = tier[a,1]; one_tier_ports[a]: tier_nodes[a,1] ≤
    Σ_q ⌊k/q⌋·rail_groups[a,q] — each switch holds q whole rail groups; switches = Σ_q ⌈rails/q⌉·rail_groups."""
    import pyomo.environ as pyo

    fab = m.fab
    A1 = [a for a in archs if (a, 1) in m.tier]
    m.one_tier_groups = pyo.Constraint(A1, rule=lambda _, a: sum(m.rail_groups[a, q] for q in range(1, fab[a].rails + 1)) == m.tier[a, 1])
    m.one_tier_ports = pyo.Constraint(A1, rule=lambda _, a: m.tier_nodes[a, 1] <= sum((fab[a].k // q) * m.rail_groups[a, q] for q in range(1, fab[a].rails + 1)))


def add_two_tier_ports(m: Any, archs: list[int]) -> None:
    """leaf_down_ports2[a]: k_down·leaves2[a] ≥ tier_nodes[a,2] (leaves per rail);
    spine_count2[a]: Σ_δ spine_choice[a,δ] = tier[a,2] over the divisors δ of k_up (uniform striping);
    spine_ports2[a]: k·spines ≥ k_up·rails·leaves2[a] (every leaf uplink lands on a spine port)."""
    import pyomo.environ as pyo

    fab = m.fab
    A2 = [a for a in archs if (a, 2) in m.tier]
    m.leaf_down_ports2 = pyo.Constraint(A2, rule=lambda _, a: fab[a].k_down * m.leaves2[a] >= m.tier_nodes[a, 2])
    m.spine_count2 = pyo.Constraint(A2, rule=lambda _, a: sum(m.spine_choice[a, dv] for dv in divisors(fab[a].k_up)) == m.tier[a, 2])
    m.spine_ports2 = pyo.Constraint(A2, rule=lambda _, a: fab[a].k * _spines2(m, a) >= fab[a].k_up * fab[a].rails * m.leaves2[a])
    for a in archs:
        if (a, 2) not in m.tier:
            m.leaves2[a].fix(0)


def add_three_tier_ports(m: Any, archs: list[int]) -> None:
    """leaf_down_ports3[a]: k_down·leaves3[a] ≥ tier_nodes[a,3]; pod_slots[a]: (k/2)·pods[a] ≥
    rails·leaves3[a]; pod_limit[a]: pods[a] ≤ k·tier[a,3]; core_count[a]: Σ_c core_choice[a,c] = tier[a,3]
    over divisors c of k/2; core_ports[a]: 2·cores_per_plane ≥ pods (each core takes pods·(k/2)/C ≤ k links).
    Spines = k_up·pods, cores = k_up·cores_per_plane."""
    import pyomo.environ as pyo

    fab = m.fab
    A3 = [a for a in archs if (a, 3) in m.tier]
    m.leaf_down_ports3 = pyo.Constraint(A3, rule=lambda _, a: fab[a].k_down * m.leaves3[a] >= m.tier_nodes[a, 3])
    m.pod_slots = pyo.Constraint(A3, rule=lambda _, a: (fab[a].k // 2) * m.pods[a] >= fab[a].rails * m.leaves3[a])
    m.pod_limit = pyo.Constraint(A3, rule=lambda _, a: m.pods[a] <= fab[a].k * m.tier[a, 3])
    m.core_count = pyo.Constraint(A3, rule=lambda _, a: sum(m.core_choice[a, dv] for dv in divisors(fab[a].k // 2)) == m.tier[a, 3])
    m.core_ports = pyo.Constraint(A3, rule=lambda _, a: 2 * _cores_per_plane(m, a) >= m.pods[a])
    for a in archs:
        if (a, 3) not in m.tier:
            m.leaves3[a].fix(0)
            m.pods[a].fix(0)


class FatTree:
    """The `fat-tree` family (see the module docstring)."""

    name = NAME

    def max_nodes(self, radix: int, rails: int, oversubscription: float, tiers: int) -> int:
        return max_nodes(radix, rails, oversubscription, tiers)

    def size(self, nodes: int, rails: int, radix: int, oversubscription: float,
             tiers: int | None = None) -> FabricSize | None:
        return size_fabric(nodes, rails, radix, oversubscription, tiers)

    def constants(self, radix: int, rails: int, oversubscription: float) -> FabricConstants:
        k_down, k_up = split_ports(radix, oversubscription)
        cap = {t: max_nodes(radix, rails, oversubscription, t) for t in (1, 2, 3)}
        return FabricConstants(k=radix, k_down=k_down, k_up=k_up, rails=rails, cap=cap)

    def add_milp(self, m: Any, archs: list[int]) -> None:
        add_variables(m, archs)
        add_one_tier_ports(m, archs)
        add_two_tier_ports(m, archs)
        add_three_tier_ports(m, archs)

    def milp_switches(self, m: Any, a: int) -> dict[str, Any]:
        """Leaf, spine and core switch counts of architecture a as expressions."""
        f = m.fab[a]
        return {"leaf": _one_tier_switches(m, a) + f.rails * (m.leaves2[a] + m.leaves3[a]),
                "spine": _spines2(m, a) + f.k_up * m.pods[a],
                "core": f.k_up * _cores_per_plane(m, a)}

    def milp_links(self, m: Any, a: int) -> dict[str, Any]:
        """links: node_leaf = rails·nodes; leaf_spine = k_up·rails·leaves; spine_core = (k/2)·k_up·pods."""
        f = m.fab[a]
        return {"node_leaf": f.rails * m.nodes[a],
                "leaf_spine": f.k_up * f.rails * (m.leaves2[a] + m.leaves3[a]),
                "spine_core": (f.k // 2) * f.k_up * m.pods[a]}
