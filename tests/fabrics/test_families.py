"""The fabric families (solver/fabrics/: multi_plane.py, rail_only.py, the tree engine of fat_tree.py)
and the tier above the pods: capacities, switch and link counts, published anchors.

Every expected number is worked out by hand in a comment, or is a published figure named by its
docs/sources.md entry ([F1] DeepSeek ISCA '25, [F2] Fire-Flyer, [F3] rail-only, [F8] Llama 3,
[F11] the DGX SuperPOD B200 reference architecture).
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.fabrics import FAMILIES, FabricSpec, family, same_network_as
from solver.fabrics.fat_tree import size_fabric
from solver.inputs.schema import FABRIC_FAMILIES

FT, MP, RO = family("fat-tree"), family("multi-plane"), family("rail-only")

# docs/sources.md §fabrics: DeepSeek's Table 3 FT2 and FT3 columns solved together (E): ratios, not quotes.
USD_PER_SWITCH = 83_008
USD_PER_LINK = 503.5


def spec(k: int, rails: int, o: float = 1, pod: float = 1, per_domain: int = 1) -> FabricSpec:
    return FabricSpec(radix=k, rails_per_node=rails, oversubscription=o, above_pod_oversubscription=pod,
                      nodes_per_domain=per_domain)


def switch_links(size) -> int:
    """Switch-to-switch links (DeepSeek's Table 3 "Links" row leaves the endpoint cables out)."""
    return size.links["leaf_spine"] + size.links["spine_core"]


def usd_per_endpoint(size) -> float:
    """Table 3's cost per endpoint: switches and switch-to-switch links at the implied unit prices."""
    return (size.total_switches * USD_PER_SWITCH + switch_links(size) * USD_PER_LINK) / size.endpoints


def test_the_registry_is_the_schema_list():
    assert tuple(FAMILIES) == FABRIC_FAMILIES


# ------------------------------------------------------------------------------- published anchors


def test_deepseek_mpft_joins_16384_gpus_in_two_tiers_of_64_port_switches():
    # [F1] §5.1: "64-port 400G IB switches, enabling the topology theoretically supports up to 16,384
    # GPUs while retaining … a two-layer network"; Table 3 MPFT: 768 switches, 16,384 links.
    # 2,048 eight-GPU nodes, 8 planes; per plane ⌈2048/32⌉ = 64 leaves and the smallest divisor of
    # 32 ≥ ⌈64·32/64⌉ = 32 spines: 8 · (64 + 32) = 768 switches, 8 · 64 · 32 = 16,384 leaf–spine links.
    size = MP.size(2048, spec(64, 8))
    assert (size.tiers, size.planes) == (2, 8)
    assert (size.leaf_switches, size.spine_switches, size.core_switches) == (512, 256, 0)
    assert (size.total_switches, switch_links(size)) == (768, 16_384)
    assert size.endpoints == size.links["node_leaf"] == 16_384
    assert MP.max_nodes(spec(64, 8), 2) == 2048
    # one node more and every plane needs a third tier
    assert MP.size(2049, spec(64, 8)).tiers == 3


def test_deepseek_table3_fat_tree_columns_and_the_deployed_cluster():
    # [F1] Table 3: FT2 = 2,048 endpoints on 96 switches and 2,048 links (k = 64: 64 leaves + 32
    # spines); FT3 = 65,536 endpoints on 5,120 switches and 131,072 links (8,192 eight-rail nodes:
    # 2,048 leaves + 2,048 spines + 1,024 cores; 65,536 leaf–spine + 65,536 spine–core links).
    ft2 = FT.size(2048, spec(64, 1))
    assert (ft2.tiers, ft2.total_switches, switch_links(ft2)) == (2, 96, 2048)
    ft3 = FT.size(8192, spec(64, 8))
    assert (ft3.tiers, ft3.total_switches, switch_links(ft3)) == (3, 5120, 131_072)
    # The cluster DeepSeek deployed (2,048 GPUs = 256 nodes, 8 planes): per plane 8 leaves + 4 spines,
    # 8 · 12 = 96 switches — the same count as one 2-tier fat tree of 2,048 endpoints.
    deployed = MP.size(256, spec(64, 8))
    assert (deployed.leaf_switches, deployed.spine_switches, switch_links(deployed)) == (64, 32, 2048)


def test_deepseek_cost_per_endpoint_from_the_implied_prices():
    # [F1] Table 3: $4.39k per endpoint for FT2 and MPFT, $7.5k for FT3 (Cost [M$] 9, 72, 491).
    # MPFT: (768 · 83,008 + 16,384 · 503.5) / 16,384 = 71,999,488 / 16,384 = $4,394.5
    # FT2:  (96 · 83,008 + 2,048 · 503.5) / 2,048 = 8,999,936 / 2,048 = $4,394.5
    # FT3:  (5,120 · 83,008 + 131,072 · 503.5) / 65,536 = 490,995,712 / 65,536 = $7,492.0
    assert usd_per_endpoint(MP.size(2048, spec(64, 8))) == pytest.approx(4394.5)
    assert usd_per_endpoint(FT.size(2048, spec(64, 1))) == pytest.approx(4394.5)
    assert usd_per_endpoint(FT.size(8192, spec(64, 8))) == pytest.approx(7492.0)
    assert round(usd_per_endpoint(FT.size(8192, spec(64, 8))) / 1000, 1) == 7.5


@pytest.mark.parametrize("nodes, tiers, leaf, spine, core", [
    (64, 2, 16, 8, 0), (128, 2, 32, 16, 0), (256, 2, 64, 32, 0),
    (512, 3, 128, 128, 64), (1024, 3, 256, 256, 128), (2048, 3, 512, 512, 256)])
def test_fat_tree_keeps_the_superpod_b200_table(nodes, tiers, leaf, spine, core):
    # [F11] DGX B200 SuperPOD compute fabric, 2 to 64 scalable units of 32 nodes (8 rails, 64-port
    # switches): leaf / spine / core switches, and node–leaf = leaf–spine = spine–core = GPUs cables.
    size = FT.size(nodes, spec(64, 8), tiers=tiers)
    assert (size.leaf_switches, size.spine_switches, size.core_switches) == (leaf, spine, core)
    gpus = 8 * nodes
    assert size.links == {"node_leaf": gpus, "leaf_spine": gpus, "spine_core": gpus if tiers == 3 else 0}


def test_fire_flyer_two_tier_fat_tree_of_40_port_switches():
    # [F2] §III-B: QM8700 "40 ports"; "a Two-Layer Fat-Tree can accommodate up to 800 nodes
    # (configured with 20 spine switches and 40 leaf switches)" — k²/2 with k = 40, one NIC per node.
    size = FT.size(800, spec(40, 1))
    assert (size.tiers, size.leaf_switches, size.spine_switches) == (2, 40, 20)
    assert FT.size(801, spec(40, 1)).tiers == 3


def test_rail_only_and_multi_plane_savings_sit_in_the_papers_range():
    # [F3] abstract: rail-only reduces the network cost by 38 % to 77 % against an any-to-any
    # (rail-optimised) Clos. Only the abstract is sourced, so this checks the range, at two sizes,
    # priced with DeepSeek's implied ratios:
    # 144 NVL72 racks on 144-port switches (10,368 GPUs, 4 NICs per 4-GPU tray): rail-only = 72 rail
    # switches, no switch-to-switch links: 72 · 83,008 = $5,976,576. Fat tree: 2,592 nodes × 4 rails
    # in 2 tiers: 4·⌈2592/72⌉ = 144 leaves, 72 spines, 144·72 = 10,368 links:
    # 216 · 83,008 + 10,368 · 503.5 = $23,150,016 → 1 − 5,976,576/23,150,016 = 74.2 % cheaper.
    rail_only = RO.size(144 * 18, spec(144, 4, per_domain=18))
    fat_tree = FT.size(144 * 18, spec(144, 4))
    assert (rail_only.tiers, rail_only.total_switches, switch_links(rail_only)) == (1, 72, 0)
    assert (fat_tree.tiers, fat_tree.total_switches, switch_links(fat_tree)) == (2, 216, 10_368)
    saving = 1 - usd_per_endpoint(rail_only) / usd_per_endpoint(fat_tree)
    assert saving == pytest.approx(1 - 5_976_576 / 23_150_016)
    assert 0.38 <= saving <= 0.77
    # DeepSeek's 16,384 GPUs: multi-plane $71,999,488 against a 3-tier fat tree of 512 + 512 + 256
    # switches and 32,768 links = 1,280 · 83,008 + 32,768 · 503.5 = $122,748,928 → 41.3 % cheaper.
    saving = 1 - usd_per_endpoint(MP.size(2048, spec(64, 8))) / usd_per_endpoint(FT.size(2048, spec(64, 8)))
    assert saving == pytest.approx(1 - 71_999_488 / 122_748_928)
    assert 0.38 <= saving <= 0.77


# ------------------------------------------------------------------------------- multi-plane


def test_multi_plane_three_tiers_by_hand():
    # 2,049 nodes × 8 rails, k = 64: per plane ⌈2049/32⌉ = 65 leaves (> 64: 3 tiers), ⌈65/32⌉ = 3 pods,
    # 3·32 = 96 spines, cores per spine plane = smallest divisor of 32 ≥ ⌈3·32/64⌉ = 2 → 2, so
    # 32·2 = 64 cores. × 8 planes: 520 leaves, 768 spines, 512 cores; links node_leaf 2049·8 = 16,392,
    # leaf_spine 8·65·32 = 16,640, spine_core 8·96·32 = 24,576.
    size = MP.size(2049, spec(64, 8))
    assert (size.tiers, size.pods, size.planes) == (3, 3, 8)
    assert (size.leaf_switches, size.spine_switches, size.core_switches) == (520, 768, 512)
    assert size.links == {"node_leaf": 16_392, "leaf_spine": 16_640, "spine_core": 24_576}


def test_multi_plane_capacity_is_rails_times_the_fat_tree():
    # One plane is a one-rail fat tree: k³/4 = 65,536 nodes in 3 tiers at k = 64, so 8 planes hold
    # 65,536 eight-rail nodes (524,288 GPUs); the rail-optimised fat tree holds ⌊64·32/8⌋·32 = 8,192.
    assert MP.max_nodes(spec(64, 8), 3) == 65_536
    assert FT.max_nodes(spec(64, 8), 3) == 8_192
    assert MP.size(65_536, spec(64, 8)).endpoints == 524_288
    assert MP.size(65_537, spec(64, 8)) is None


def test_multi_plane_starts_at_two_tiers():
    # One tier would be one switch per plane: never cheaper than the fat tree's one tier (which puts
    # q = ⌊k/nodes⌋ whole rail groups on a switch), so it is not built. 32 nodes × 8 rails: per plane
    # 1 leaf + 1 spine (smallest divisor of 32 ≥ ⌈1·32/64⌉ = 1) → 16 switches in 2 tiers.
    assert MP.max_nodes(spec(64, 8), 1) == 0
    assert MP.size(32, spec(64, 8), tiers=1) is None
    size = MP.size(32, spec(64, 8))
    assert (size.tiers, size.leaf_switches, size.spine_switches) == (2, 8, 8)


def test_multi_plane_with_one_rail_is_the_fat_tree():
    assert same_network_as("multi-plane", spec(64, 1)) == ["fat-tree"]
    assert same_network_as("multi-plane", spec(64, 8)) == []
    for nodes in (100, 2048, 5000):
        a, b = MP.size(nodes, spec(64, 1)), FT.size(nodes, spec(64, 1))
        assert (a.tiers, a.switches, a.links) == (b.tiers, b.switches, b.links)


# ------------------------------------------------------------------------------- rail-only


def test_rail_only_one_rail_switch_per_nvl72_position():
    # GB200 NVL72: 18 trays of 4 GPUs, one NIC per GPU → R = 4·18 = 72 rails, each with one endpoint
    # per rack. 144 racks on 144-port switches: 1 tier, 72 switches, node_leaf = 144·18·4 = 10,368.
    size = RO.size(144 * 18, spec(144, 4, per_domain=18))
    assert (size.tiers, size.planes, size.total_switches) == (1, 72, 72)
    assert size.links == {"node_leaf": 10_368, "leaf_spine": 0, "spine_core": 0}
    # 145 racks: each rail a 2-tier Clos of its own: ⌈145/72⌉ = 3 leaves, spines = smallest divisor of
    # 72 ≥ ⌈3·72/144⌉ = 2 → 2; 72 · (3 + 2) = 360 switches, leaf_spine 72·3·72 = 15,552.
    size = RO.size(145 * 18, spec(144, 4, per_domain=18))
    assert (size.tiers, size.leaf_switches, size.spine_switches) == (2, 216, 144)
    assert size.links["leaf_spine"] == 15_552


def test_rail_only_has_no_spine_above_the_rails():
    # At most 2 tiers per rail (the per-rail Clos of [F3]); 2 tiers hold 144·72 = 10,368 racks of
    # 18 nodes = 186,624 nodes at k = 144.
    s = spec(144, 4, per_domain=18)
    assert (RO.max_nodes(s, 1), RO.max_nodes(s, 2), RO.max_nodes(s, 3)) == (144 * 18, 186_624, 0)
    assert RO.size(18, s, tiers=3) is None
    assert RO.size(186_624 + 18, s) is None
    assert RO.pod_nodes(s) == 0
    # 20 nodes (a partial second domain, e.g. spares bought per tray): every rail takes ⌈20/18⌉ = 2
    # endpoints; a switch serves ⌊144/2⌋ = 72 whole rails (issue 24), so the 72 rails share ⌈72/72⌉ = 1 switch
    # (was one switch per rail, 72, at 1.4 % port use); node–leaf links are the NICs present, 20·4 = 80.
    partial = RO.size(20, s)
    assert (partial.tiers, partial.total_switches, partial.links["node_leaf"], partial.endpoints) == (1, 1, 80, 80)


def test_rail_only_on_one_node_domains_is_the_multi_plane_fabric():
    # With 8-GPU servers a rail is a NIC position of the node: the multi-plane fabric's planes.
    assert same_network_as("rail-only", spec(64, 8)) == ["multi-plane"]
    assert same_network_as("rail-only", spec(64, 1)) == ["multi-plane", "fat-tree"]
    assert same_network_as("rail-only", spec(144, 4, per_domain=18)) == []
    for nodes in (100, 1000, 2048):
        a, b = RO.size(nodes, spec(64, 8)), MP.size(nodes, spec(64, 8))
        assert (a.tiers, a.switches, a.links) == (b.tiers, b.switches, b.links)


# ------------------------------------------------------------------------------- above the pods


def test_oversubscribed_tier_above_the_pods_by_hand():
    # Llama 3 [F8]: 1:7 above the pods. k = 64 spines split 7:1: up = 2·⌊64/16⌋ = 8, down =
    # min(56, 7·8) = 56 (56:8 = 7). 8,192 nodes × 8 rails: 2,048 leaves in ⌈2048/56⌉ = 37 pods of up
    # to 56 leaves; 37·32 = 1,184 spines; cores per spine plane = smallest divisor of 8 ≥ ⌈37·8/64⌉
    # = 5 → 8, so 32·8 = 256 cores; spine_core = 1,184·8 = 9,472 links (non-blocking: 65,536).
    size = FT.size(8192, spec(64, 8, pod=7))
    assert (size.tiers, size.pods, size.above_pod_oversubscription) == (3, 37, 7.0)
    assert (size.leaf_switches, size.spine_switches, size.core_switches) == (2048, 1184, 256)
    assert size.links["spine_core"] == 9_472
    assert FT.size(8192, spec(64, 8)).links["spine_core"] == 65_536
    # Bigger pods raise the 3-tier limit: ⌊64·56/8⌋·32 = 14,336 nodes (non-blocking 8,192).
    assert FT.max_nodes(spec(64, 8, pod=7), 3) == 14_336


def test_pods_and_what_the_ratio_leaves_alone():
    # A pod holds ⌊s_down/rails⌋ leaf groups of k_down nodes: ⌊32/8⌋·32 = 128 nodes non-blocking (the
    # SuperPOD's 4 pods of 128 nodes at 512 nodes), ⌊56/8⌋·32 = 224 at 7:1; a multi-plane pod is
    # 56·32 = 1,792 nodes of every plane.
    assert FT.pod_nodes(spec(64, 8)) == 128
    assert FT.pod_nodes(spec(64, 8, pod=7)) == 224
    assert MP.pod_nodes(spec(64, 8, pod=7)) == 1792
    # 1- and 2-tier fabrics have no tier above the pods: the same counts at any ratio (32 nodes: 1 tier;
    # 256 nodes: 8·⌈256/32⌉ = 64 leaves ≤ 64, 2 tiers).
    for nodes in (32, 256):
        a, b = FT.size(nodes, spec(64, 8, pod=7)), FT.size(nodes, spec(64, 8))
        assert (a.tiers, a.switches, a.links, a.above_pod_oversubscription) == (b.tiers, b.switches, b.links, 1.0)


# ------------------------------------------------------------------------------- every plane is a fat tree


@settings(max_examples=300, deadline=None)
@given(nodes=st.integers(1, 70_000), rails=st.sampled_from([2, 4, 8]), k=st.sampled_from([40, 64, 128, 144]),
       o=st.sampled_from([1, 2, 3]), pod=st.sampled_from([1, 3, 7]))
def test_multi_plane_is_rails_one_rail_fat_trees(nodes, rails, k, o, pod):
    size = MP.size(nodes, spec(k, rails, o, pod))
    plane = size_fabric(nodes, 1, k, o, None, pod)
    if plane is not None and plane.tiers == 1:
        plane = size_fabric(nodes, 1, k, o, 2, pod)
    if plane is None:
        assert size is None and nodes > MP.max_nodes(spec(k, rails, o, pod), 3)
        return
    assert size.tiers == plane.tiers
    assert size.switches == {r: rails * n for r, n in plane.switches.items()}
    assert size.links == {t: rails * n for t, n in plane.links.items()}


@settings(max_examples=200, deadline=None)
@given(racks=st.integers(1, 12_000), rails=st.sampled_from([1, 2, 4]), k=st.sampled_from([64, 144]))
def test_rail_only_is_one_rail_fat_trees_of_racks(racks, rails, k):
    size = RO.size(18 * racks, spec(k, rails, per_domain=18))
    rail = size_fabric(racks, 1, k, 1)
    if rail is None or rail.tiers == 3:
        assert size is None
        return
    if rail.tiers == 1:  # issue 24: one switch serves ⌊k/racks⌋ whole rails of the R = 18·rails
        assert size.switches == {"leaf": -(-18 * rails // (k // racks)), "spine": 0, "core": 0}
    else:
        assert size.switches == {r: 18 * rails * n for r, n in rail.switches.items()}
    assert size.links == {t: 18 * rails * n for t, n in rail.links.items()}


# ------------------------------------------------------------------------------- bills of materials


def _fabric_lines(design) -> dict:
    return {(line.description.split(":")[0], line.part): line.quantity for line in design.bom
            if line.category in ("switch", "link")}


def test_multi_plane_bill_beats_the_fat_tree_on_striping():
    # Test catalog (tests/builders.py): 504 eight-GPU nodes, 8 × 800G XDR NICs, 144-port XDR switches.
    # Fat tree: 8·⌈504/72⌉ = 56 leaves; spines = smallest divisor of 72 ≥ ⌈56·72/144⌉ = 28 → 36; 92.
    # Multi-plane: per plane 7 leaves, smallest divisor of 72 ≥ ⌈7·72/144⌉ = 4 → 4 spines; 8·11 = 88.
    # Links alike: node_leaf 504·8 = 4,032 (xdr-nl-opt: 2 links per switch-end module → 2,016, 4,032 at
    # the NICs), leaf_spine 56·72 = 4,032 (xdr-ls-opt: 2,016 modules at each end).
    from builders import make_catalog, make_scenario

    from solver.costing import design_cost

    args = (make_scenario(), make_catalog(), "hgx-t", "xdr-nic", 8, "xdr-144", 1)
    mp = design_cost(*args, domains=504, fabric_family="multi-plane")
    ft = design_cost(*args, domains=504)
    links = {("node_leaf cable", "xdr-nl-opt"): 4032, ("node_leaf switch-end module (2 link/module)", "xdr-nl-opt"): 2016,
             ("node_leaf far-end module (1 link/module)", "xdr-nl-opt"): 4032, ("leaf_spine cable", "xdr-ls-opt"): 4032,
             ("leaf_spine switch-end module (2 link/module)", "xdr-ls-opt"): 2016,
             ("leaf_spine far-end module (2 link/module)", "xdr-ls-opt"): 2016}
    assert _fabric_lines(mp) == {("leaf switch", "xdr-144"): 56, ("spine switch", "xdr-144"): 32, **links}
    assert _fabric_lines(ft) == {("leaf switch", "xdr-144"): 56, ("spine switch", "xdr-144"): 36, **links}
    # 4 fewer $100,000 switches (and their racks' share); everything else equal
    switches_usd = sum(line.extended_usd for line in ft.bom if line.category == "switch") - \
        sum(line.extended_usd for line in mp.bom if line.category == "switch")
    assert switches_usd == 400_000
    assert mp.to_dict()["fabric"]["family"] == "multi-plane" and mp.fabric.planes == 8


def test_rail_only_bill_on_nvl72_racks():
    # 2 NVL72-class racks (36 trays × 4 NICs, NICs included in the rack), 144-port switches:
    # rail-only = 72 rails of 2 endpoints; a switch serves ⌊144/2⌋ = 72 whole rails (issue 24; was one
    # switch per rail, 72): ⌈72/72⌉ = 1 switch; node_leaf 36·4 = 144 links,
    # ⌈144/2⌉ = 72 switch-end modules and 144 NIC-end modules; no switch-to-switch links. The fat
    # tree puts all q = min(4, ⌊144/36⌋) = 4 rail groups on one switch.
    from builders import make_catalog, make_scenario

    from solver.costing import design_cost

    args = (make_scenario(), make_catalog(), "nvl72-t", "xdr-nic", 4, "xdr-144", 1)
    ro = design_cost(*args, domains=2, fabric_family="rail-only")
    assert _fabric_lines(ro) == {("leaf switch", "xdr-144"): 1, ("node_leaf cable", "xdr-nl-opt"): 144,
                                 ("node_leaf switch-end module (2 link/module)", "xdr-nl-opt"): 72,
                                 ("node_leaf far-end module (1 link/module)", "xdr-nl-opt"): 144}
    assert design_cost(*args, domains=2).fabric.total_switches == 1
