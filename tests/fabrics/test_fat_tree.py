"""The fat-tree family (solver/fabrics/fat_tree.py; SPEC §5): capacities and sizes.

Every expected number is worked out by hand in a comment, or is a published fat-tree capacity
(Al-Fares, Loukissas, Vahdat, SIGCOMM 2008, §3; docs/sources.md [C8]).
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.fabrics.fat_tree import max_nodes, size_fabric, split_ports
from solver.integers import divisors

# ----------------------------------------------------------------------------------- ports


def test_split_ports():
    # o = 1, k = 64 → 32/32.  k = 144 → 72/72.
    assert split_ports(64, 1) == (32, 32)
    assert split_ports(144, 1) == (72, 72)
    # o = 2, k = 64: k_up = 2·⌊64/6⌋ = 20; k_down = min(64 − 20, ⌊2·20⌋) = 40 (4 ports unused).
    assert split_ports(64, 2) == (40, 20)
    # o = 3, k = 64: k_up = 2·⌊64/8⌋ = 16; k_down = min(48, 48) = 48.
    assert split_ports(64, 3) == (48, 16)
    # o = 40 on 64 ports: k_up = 2·⌊64/82⌋ = 0: no uplinks, no multi-tier fabric.
    assert split_ports(64, 40) == (0, 0)
    with pytest.raises(ValueError):
        split_ports(64, 0.5)


def test_divisors():
    assert divisors(32) == [1, 2, 4, 8, 16, 32]
    assert divisors(72) == [1, 2, 3, 4, 6, 8, 9, 12, 18, 24, 36, 72]
    assert divisors(20) == [1, 2, 4, 5, 10, 20]


# ----------------------------------------------------------------------------------- capacity anchors


def test_k64_capacity_anchors_al_fares_2008():
    # Al-Fares et al. 2008 §3 (docs/sources.md [C8]): k = 64 non-blocking holds k²/2 = 2,048 endpoints
    # in 2 tiers (64 leaves + 32 spines) and k³/4 = 65,536 in 3 tiers.
    two = size_fabric(2048, 1, 64, 1)
    assert (two.tiers, two.leaf_switches, two.spine_switches) == (2, 64, 32)
    # 2,049: leaves = ⌈2049/32⌉ = 65 > 64, spines would need ⌈65·32/64⌉ = 33 > 32 → 3 tiers.
    assert size_fabric(2049, 1, 64, 1).tiers == 3
    assert size_fabric(2049, 1, 64, 1, tiers=2) is None
    three = size_fabric(65_536, 1, 64, 1)
    # k³/4 tree: k²/2 = 2,048 leaves, 2,048 spines (64 pods × 32), k²/4 = 1,024 cores.
    assert (three.tiers, three.leaf_switches, three.spine_switches, three.core_switches) == (3, 2048, 2048, 1024)
    assert three.pods == 64
    assert size_fabric(65_537, 1, 64, 1) is None
    assert (max_nodes(64, 1, 1, 2), max_nodes(64, 1, 1, 3)) == (2048, 65_536)


def test_k144_capacity_anchor():
    # docs/sources.md [C8]: k = 144 → k²/2 = 10,368 hosts in 2 tiers (144 leaves + 72 spines).
    size = size_fabric(10_368, 1, 144, 1)
    assert (size.tiers, size.leaf_switches, size.spine_switches) == (2, 144, 72)
    assert size_fabric(10_369, 1, 144, 1).tiers == 3
    assert max_nodes(144, 1, 1, 2) == 10_368


# ----------------------------------------------------------------------------------- counts


def test_32_hgx_nodes_8_rails_forced_two_tiers():
    # leaves = 8 rails · ⌈32/32⌉ = 8; spines ≥ ⌈8·32/64⌉ = 4, 4 divides 32 → 4.
    # node_leaf = 32·8 = 256; leaf_spine = 8 leaves · 32 up = 256.
    size = size_fabric(32, 8, 64, 1, tiers=2)
    assert (size.leaf_switches, size.spine_switches, size.core_switches) == (8, 4, 0)
    assert size.links == {"node_leaf": 256, "leaf_spine": 256, "spine_core": 0}


def test_one_tier_is_one_switch():
    """SPEC §5.3: a fat tree's one tier is one switch holding every rail. 8 nodes × 8 rails = 64 ports → one
    switch; 32 nodes × 8 rails = 256 endpoints do not fit one 64-port switch, so the fat tree takes 2 tiers
    (8 leaves + 4 spines, the DGX SuperPOD H100 RA's 1-SU count, docs/sources.md [O1] Table 4), never 4 or
    8 spine-less switches (one per rail group: rail-only, built only as that family)."""
    size = size_fabric(8, 8, 64, 1)
    assert (size.tiers, size.leaf_switches, size.spine_switches) == (1, 1, 0)
    assert size.links == {"node_leaf": 64, "leaf_spine": 0, "spine_core": 0}
    # 1 tier ignores oversubscription: same count at o = 2.
    assert size_fabric(8, 8, 64, 2).leaf_switches == 1
    # 9 nodes × 8 rails = 72 > 64: not one switch
    assert size_fabric(9, 8, 64, 1, tiers=1) is None
    size = size_fabric(32, 8, 64, 1)
    assert (size.tiers, size.leaf_switches, size.spine_switches) == (2, 8, 4)
    assert size_fabric(48, 8, 64, 1, tiers=1) is None
    # one rail: up to k nodes on one switch; 65 nodes cannot be 1 tier on 64 ports.
    assert size_fabric(64, 1, 64, 1).leaf_switches == 1
    assert size_fabric(65, 1, 64, 1, tiers=1) is None


def test_96_nodes_striping_raises_spines():
    # leaves = 8·⌈96/32⌉ = 24; spines ≥ ⌈24·32/64⌉ = 12; divisors of 32: 1,2,4,8,16,32 → 16.
    size = size_fabric(96, 8, 64, 1)
    assert (size.tiers, size.leaf_switches, size.spine_switches) == (2, 24, 16)
    # node_leaf = 96·8 = 768; leaf_spine = 24·32 = 768.
    assert size.links == {"node_leaf": 768, "leaf_spine": 768, "spine_core": 0}


def test_512_nodes_8_rails_three_tiers():
    # leaves = 8·⌈512/32⌉ = 128 > 64 → not 2 tiers. pods = ⌈128/32⌉ = 4; spines = 4 pods · 32 = 128;
    # cores per plane C = smallest divisor of 32 ≥ ⌈4/2⌉ = 2 → 2; cores = 32 planes · 2 = 64.
    # links: node_leaf 512·8 = 4096; leaf_spine 128·32 = 4096; spine_core 128·32 = 4096.
    size = size_fabric(512, 8, 64, 1)
    assert (size.tiers, size.pods) == (3, 4)
    assert (size.leaf_switches, size.spine_switches, size.core_switches) == (128, 128, 64)
    assert size.links == {"node_leaf": 4096, "leaf_spine": 4096, "spine_core": 4096}


def test_xdr_144_striping_above_port_minimum():
    # 288 nodes × 8 rails on 144 ports: leaves = 8·⌈288/72⌉ = 32; port minimum ⌈32·72/144⌉ = 16,
    # but 16 does not divide 72 (divisors …, 12, 18, …) → 18 spines, 4 links from each leaf to each.
    size = size_fabric(288, 8, 144, 1)
    assert (size.tiers, size.leaf_switches, size.spine_switches) == (2, 32, 18)
    assert size.links["leaf_spine"] == 32 * 72


def test_oversubscription_2_to_1_reduces_spines():
    # o = 2, k = 64: k_down = 40, k_up = 20. leaves = 8·⌈96/40⌉ = 24; spines ≥ ⌈24·20/64⌉ = 8;
    # divisors of 20: 1,2,4,5,10,20 → 10 (vs 16 non-blocking); leaf_spine = 24·20 = 480.
    size = size_fabric(96, 8, 64, 2)
    assert (size.leaf_switches, size.spine_switches) == (24, 10)
    assert size.links["leaf_spine"] == 480
    assert size.spine_switches < size_fabric(96, 8, 64, 1).spine_switches


# ----------------------------------------------------------------------------------- architect checks


def _architect_check(nodes, rails, k, o, size):
    """Port-level checks an InfiniBand architect does on a rail-optimised fat tree."""
    assert size.endpoints == nodes * rails == size.links["node_leaf"]
    if size.tiers == 1:
        per_switch = k // nodes  # whole rail groups that fit on one switch
        assert size.leaf_switches * min(per_switch, rails) >= rails
        assert min(per_switch, rails) * nodes <= k
        return
    # Leaves: every rail has the same number of leaves, each with ≤ k_down nodes.
    assert size.leaf_switches % rails == 0
    per_rail = size.leaf_switches // rails
    assert math.ceil(nodes / per_rail) <= size.k_down
    assert size.k_down + size.k_up <= k
    assert size.k_down <= o * size.k_up + 1e-9  # real down:up no worse than asked
    assert size.links["leaf_spine"] == size.leaf_switches * size.k_up
    if size.tiers == 2:
        # Uniform striping, spine ports not exceeded, and no smaller valid spine count.
        assert size.k_up % size.spine_switches == 0
        assert size.leaf_switches * (size.k_up // size.spine_switches) <= k
        for fewer in range(1, size.spine_switches):
            assert not (size.k_up % fewer == 0 and size.leaf_switches * size.k_up <= fewer * k)
        assert size_fabric(nodes, rails, k, o, tiers=1) is None  # fewest tiers
        return
    half = k // 2
    assert size.pods * half >= size.leaf_switches  # every leaf has a pod slot
    assert size.spine_switches == size.pods * size.k_up
    planes_cores = size.core_switches // size.k_up
    assert size.core_switches == size.k_up * planes_cores
    assert half % planes_cores == 0  # uniform spine→core striping
    assert size.pods * (half // planes_cores) <= k  # core ports
    assert size.links["spine_core"] == size.spine_switches * half
    assert size_fabric(nodes, rails, k, o, tiers=2) is None  # fewest tiers


@settings(max_examples=400, deadline=None)
@given(
    nodes=st.integers(1, 20_000),
    rails=st.sampled_from([1, 2, 4, 8]),
    k=st.sampled_from([36, 40, 64, 144]),
    o=st.sampled_from([1, 1.5, 2, 3, 4]),
)
def test_every_fabric_passes_architect_checks(nodes, rails, k, o):
    size = size_fabric(nodes, rails, k, o)
    if size is None:
        assert nodes > max_nodes(k, rails, o, 3)
    else:
        _architect_check(nodes, rails, k, o, size)
