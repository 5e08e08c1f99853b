"""Fabric, BOM, power and cost model (solver/fabrics/fat_tree.py, solver/costing.py; SPEC §5, §6).

Every expected number is worked out by hand in a comment, or is a published fat-tree capacity
(Al-Fares, Loukissas, Vahdat, SIGCOMM 2008, §3; reference/calibration.md §4e). The catalog is built
here so that prices are round and independent of the shipped catalog.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.costing import design_cost, network_racks, units_per_rack
from solver.fabrics.fat_tree import max_nodes, size_fabric, split_ports
from solver.fabrics.links import choose_link, link_for, link_parts
from solver.inputs.schema import Catalog, Scenario
from solver.integers import divisors

SRC = {"source": "test", "price_source": "test", "price_date": "2025-01"}


def _link(link_id, generation, tier, medium, reach_m, cable, sw=(0, 0, 1), far=(0, 0, 1)):
    """sw/far = (module_usd, module_w, links_per_module)."""
    return {
        "id": link_id, "description": link_id, "generation": generation, "tier": tier, "medium": medium,
        "max_reach_m": reach_m, "cable_usd": cable,
        "switch_end_module_usd": sw[0], "switch_end_module_w": sw[1], "switch_end_links_per_module": sw[2],
        "far_end_module_usd": far[0], "far_end_module_w": far[1], "far_end_links_per_module": far[2],
        **SRC,
    }


def make_catalog(node_leaf_m=10.0, rack_kw=40.0) -> Catalog:
    return Catalog.model_validate({
        "gpus": [{
            "id": "gpu-t", "name": "GPU", "vendor": "v", "bf16_dense_tflops": 1000, "fp8_dense_tflops": 2000,
            "hbm_gb": 180, "hbm_tbyte_s": 8, "tdp_w": 1000,
            "compute_efficiency": {"bf16": 0.4, "fp8": 0.3}, "compute_efficiency_source": "t", "source": "t",
        }],
        "platforms": [
            {"id": "hgx-t", "name": "HGX test", "gpu": "gpu-t", "gpus_per_domain": 8, "gpus_per_node": 8,
             "nodes_per_domain": 1, "nvlink_gbyte_s": 900, "nvlink_efficiency": 0.8,
             "scaleout_nics_per_node": [1, 2, 4, 8], "compatible_nics": ["ndr-nic", "xdr-nic"], "unit": "node",
             "unit_price_usd": 300_000, "unit_power_kw": 10.0, "unit_ru": 8, "includes_scaleout_nics": False,
             **SRC},
            {"id": "nvl72-t", "name": "NVL72 test", "gpu": "gpu-t", "gpus_per_domain": 72, "gpus_per_node": 4,
             "nodes_per_domain": 18, "nvlink_gbyte_s": 900, "nvlink_efficiency": 0.8,
             "scaleout_nics_per_node": [4], "compatible_nics": ["xdr-nic"], "unit": "domain",
             "unit_price_usd": 3_000_000, "unit_power_kw": 120.0, "unit_ru": 48, "unit_is_rack": True,
             "includes_scaleout_nics": True, **SRC},
        ],
        "nics": [
            {"id": "ndr-nic", "name": "NDR NIC", "speed_gbps": 400, "fabric": "infiniband", "generation": "ndr",
             "power_w": 20, "efficiency": 0.9, "efficiency_source": "t", "unit_price_usd": 1_500, **SRC},
            {"id": "xdr-nic", "name": "XDR NIC", "speed_gbps": 800, "fabric": "infiniband", "generation": "xdr",
             "power_w": 25, "efficiency": 0.9, "efficiency_source": "t", "unit_price_usd": 2_000, **SRC},
            {"id": "eth-nic", "name": "Eth NIC", "speed_gbps": 400, "fabric": "ethernet", "generation": "800gbe",
             "power_w": 20, "efficiency": 0.9, "efficiency_source": "t", "unit_price_usd": 1_000, **SRC},
        ],
        "switches": [
            {"id": "ndr-64", "name": "NDR 64-port", "fabric": "infiniband", "generation": "ndr", "radix": 64,
             "port_speed_gbps": 400, "power_w": 1_000, "ru": 1, "unit_price_usd": 30_000, **SRC},
            {"id": "xdr-144", "name": "XDR 144-port", "fabric": "infiniband", "generation": "xdr", "radix": 144,
             "port_speed_gbps": 800, "power_w": 2_500, "ru": 4, "unit_price_usd": 100_000, **SRC},
        ],
        "links": [
            # NDR: passive copper node-leaf (3 m, no modules); optical node-leaf (twin-port at the
            # switch, single-port at the NIC); optical leaf-spine and spine-core (twin-port both ends).
            _link("ndr-nl-dac", "ndr", "node_leaf", "copper", 3, 100),
            _link("ndr-nl-opt", "ndr", "node_leaf", "optical", 50, 50, sw=(1_000, 15, 2), far=(600, 8, 1)),
            _link("ndr-ls-opt", "ndr", "leaf_spine", "optical", 100, 60, sw=(1_000, 16, 2), far=(1_000, 16, 2)),
            _link("ndr-sc-opt", "ndr", "spine_core", "optical", 500, 80, sw=(1_200, 17, 2), far=(1_200, 17, 2)),
            _link("xdr-nl-opt", "xdr", "node_leaf", "optical", 500, 70, sw=(2_000, 25, 2), far=(1_000, 16, 1)),
            _link("xdr-ls-opt", "xdr", "leaf_spine", "optical", 500, 70, sw=(2_000, 25, 2), far=(2_000, 25, 2)),
            _link("xdr-sc-opt", "xdr", "spine_core", "optical", 500, 70, sw=(2_000, 25, 2), far=(2_000, 25, 2)),
        ],
        "racks": [{"id": "rack-42u", "name": "42U rack", "usable_kw": rack_kw, "usable_ru": 42,
                   "unit_price_usd": 5_000, **SRC}],
        "facility": {"pue": 1.25, "usd_per_kwh": 0.10, "compute_rack": "rack-42u", "network_rack": "rack-42u",
                     "link_distance_m": {"node_leaf": node_leaf_m, "leaf_spine": 30, "spine_core": 60},
                     "source": "test"},
    })


def make_scenario(**extra) -> Scenario:
    return Scenario.model_validate({
        "name": "t",
        "workload": {"model": {"layers": 2, "hidden_size": 64, "ffn_hidden_size": 256, "attention_heads": 4,
                               "vocab_size": 1000, "seq_len": 128}, "global_batch_size": 8},
        "target": {"step_time_s": 1.0},
        **extra,
    })


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
    # Al-Fares et al. 2008 §3 (calibration.md §4e): k = 64 non-blocking holds k²/2 = 2,048 endpoints
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
    # calibration.md §4e: k = 144 → k²/2 = 10,368 hosts in 2 tiers (144 leaves + 72 spines).
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


def test_one_tier():
    # 32 nodes ≤ 64 ports → 1 tier: q = min(8, ⌊64/32⌋) = 2 rail groups per switch, ⌈8/2⌉ = 4 switches.
    size = size_fabric(32, 8, 64, 1)
    assert (size.tiers, size.leaf_switches, size.spine_switches) == (1, 4, 0)
    assert size.links == {"node_leaf": 256, "leaf_spine": 0, "spine_core": 0}
    # 1 tier ignores oversubscription: same count at o = 2.
    assert size_fabric(32, 8, 64, 2).leaf_switches == 4
    # 48 nodes: q = min(8, ⌊64/48⌋ = 1) = 1 → 8 switches.
    assert size_fabric(48, 8, 64, 1).leaf_switches == 8
    # 65 nodes cannot be 1 tier on 64 ports.
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


# ----------------------------------------------------------------------------------- links and racks


def test_choose_link_by_reach_and_price():
    cat = make_catalog()
    # 2 m: copper ($100/link) reaches and is cheaper than optics (50 + 1000/2 + 600 = $1,150/link).
    assert choose_link(cat, "ndr", "node_leaf", 2).id == "ndr-nl-dac"
    # 10 m: only the 50 m optic reaches.
    assert choose_link(cat, "ndr", "node_leaf", 10).id == "ndr-nl-opt"
    with pytest.raises(ValueError, match="reaches 1000 m"):
        choose_link(cat, "ndr", "node_leaf", 1000)
    with pytest.raises(ValueError):
        choose_link(cat, "hdr", "node_leaf", 1)


def test_link_per_link_cost_and_parts():
    cat = make_catalog()
    link = link_for(cat, cat.by_id("switches")["ndr-64"], "leaf_spine")
    # leaf_spine at 30 m: 60 + 1000/2 + 1000/2 = $1,060; W: 16/2 + 16/2 = 16.
    assert (link.usd_per_link, link.w_per_link) == (1060.0, 16.0)
    # twin-port modules on 5 links: ⌈5/2⌉ = 3 at the switch, 5 single-port at the NIC.
    parts = link_parts(5, cat.by_id("links")["ndr-nl-opt"])
    assert (parts.cables, parts.switch_end_modules, parts.far_end_modules) == (5, 3, 5)


def test_units_per_rack_and_network_racks():
    cat = make_catalog()
    hgx, rack = cat.by_id("platforms")["hgx-t"], cat.by_id("racks")["rack-42u"]
    # 40 kW / 10 kW = 4, 42 RU / 8 RU = 5 → 4 (power-bound).
    assert units_per_rack(hgx, rack) == 4
    # 100 kW rack: 10 by power, 5 by space → 5 (space-bound).
    assert units_per_rack(hgx, make_catalog(rack_kw=100).by_id("racks")["rack-42u"]) == 5
    assert units_per_rack(cat.by_id("platforms")["nvl72-t"], rack) == 1
    switch = cat.by_id("switches")["xdr-144"]
    # 11 × 4 RU = 44 RU / 42 = 1.05; 11 × 2.5 kW = 27.5 / 40 = 0.69 → 2 racks.
    assert network_racks(switch, rack, 11) == 2
    # 16 switches × 2.5 kW = 40 kW / 40 = 1.0 exactly; 64 RU / 42 = 1.52 → 2.
    assert network_racks(switch, rack, 16) == 2


# ----------------------------------------------------------------------------------- BOM and cost


def _qty(design, category, part, prefix=""):
    """(quantity, extended_usd) of the one BOM line of this category and part whose description
    starts with `prefix`."""
    found = [l for l in design.bom if l.category == category and l.part == part
             and l.description.startswith(prefix)]
    assert len(found) == 1, found
    return found[0].quantity, found[0].extended_usd


def test_pinned_hgx_design_bom_an_architect_would_sign_off():
    """Acceptance: a user can evaluate any pinned design and get a BOM an InfiniBand architect
    would sign off. 96 HGX nodes × 8 NDR rails on 64-port switches, non-blocking."""
    design = design_cost(make_scenario(), make_catalog(), "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=96)
    assert (design.fabric.tiers, design.fabric.leaf_switches, design.fabric.spine_switches) == (2, 24, 16)
    # compute 96 × 300,000 = 28,800,000; NICs 96·8 = 768 × 1,500 = 1,152,000.
    assert _qty(design, "compute", "hgx-t") == (96, 28_800_000)
    assert _qty(design, "nic", "ndr-nic") == (768, 1_152_000)
    # leaf 24 × 30,000 = 720,000; spine 16 × 30,000 = 480,000.
    assert _qty(design, "switch", "ndr-64", "leaf") == (24, 720_000)
    assert _qty(design, "switch", "ndr-64", "spine") == (16, 480_000)
    # node_leaf at 10 m → optics: 768 cables × 50 = 38,400; ⌈768/2⌉ = 384 twin-port × 1,000 = 384,000;
    # 768 NIC-end × 600 = 460,800.
    assert _qty(design, "link", "ndr-nl-opt", "node_leaf cable") == (768, 38_400)
    assert _qty(design, "link", "ndr-nl-opt", "node_leaf switch-end") == (384, 384_000)
    assert _qty(design, "link", "ndr-nl-opt", "node_leaf far-end") == (768, 460_800)
    # leaf_spine 768 links: cables 768 × 60 = 46,080; 384 modules × 1,000 at each end = 384,000 each.
    assert _qty(design, "link", "ndr-ls-opt", "leaf_spine cable") == (768, 46_080)
    assert _qty(design, "link", "ndr-ls-opt", "leaf_spine switch-end") == (384, 384_000)
    assert _qty(design, "link", "ndr-ls-opt", "leaf_spine far-end") == (384, 384_000)
    # compute racks ⌈96/4⌉ = 24 × 5,000 = 120,000; network: 40 switches, 40 RU/42 = 0.95,
    # 40 kW/40 kW = 1.0 → 1 rack = 5,000.
    assert _qty(design, "rack", "rack-42u", "compute") == (24, 120_000)
    assert _qty(design, "rack", "rack-42u", "network") == (1, 5_000)
    # nothing else was bought: 1 compute + 1 NIC + 2 switch + 2 tiers × 3 link + 2 rack = 12 lines.
    assert len(design.bom) == 12
    # capex: 28,800,000 + 1,152,000 + 720,000 + 480,000 + (38,400 + 384,000 + 460,800)
    #        + (46,080 + 384,000 + 384,000) + 120,000 + 5,000 = 32,974,280
    assert design.capex_usd == pytest.approx(32_974_280, abs=1e-6)
    assert design.capex_usd == sum(l.extended_usd for l in design.bom)
    # IT power W: compute 96·10,000 = 960,000; NICs 768·20 = 15,360; switches 40·1,000 = 40,000;
    # node_leaf modules 384·15 + 768·8 = 11,904; leaf_spine 2·384·16 = 12,288 → 1,039,552 W.
    assert design.it_power_kw == pytest.approx(1_039.552)
    # facility = 1,039.552 · 1.25 = 1,299.44 kW; TCO = capex + 5 · 8,760 · 1,299.44 · 0.10
    #          = 32,974,280 + 5,691,547.2 = 38,665,827.2
    assert design.facility_power_kw == pytest.approx(1_299.44)
    assert design.tco_usd == pytest.approx(38_665_827.2)
    assert (design.racks_compute, design.racks_network, design.racks) == (24, 1, 25)
    assert (design.nodes, design.gpus) == (96, 768)


def test_spares_contingency_and_tco_overrides():
    # 3 HGX nodes, 1 rail, spare 0.5 → ⌈1.5⌉ = 2 spares → 5 nodes on the fabric: 1 tier,
    # q = min(1, ⌊64/5⌋) = 1 → 1 switch; 5 node_leaf links.
    scenario = make_scenario(
        constraints={"spare_nodes_fraction": 0.5, "contingency_fraction": 0.10},
        tco={"years": 3, "usd_per_kwh": 0.2, "pue": 1.5},
    )
    d = design_cost(scenario, make_catalog(), "hgx-t", "ndr-nic", 1, "ndr-64", 1, domains=3)
    assert (d.units, d.spare_units, d.nodes, d.gpus) == (3, 2, 5, 40)
    assert (d.fabric.tiers, d.fabric.leaf_switches, d.fabric.links["node_leaf"]) == (1, 1, 5)
    by_category = {}
    for line in d.bom:
        by_category[line.category] = by_category.get(line.category, 0) + line.extended_usd
    # compute 3 × 300,000 = 900,000; spares 2 × 300,000 = 600,000; NICs 5 × 1,500 = 7,500;
    # switch 30,000; links 5·50 + ⌈5/2⌉·1,000 + 5·600 = 6,250; racks ⌈5/4⌉ = 2 compute + 1 network
    # = 3 × 5,000 = 15,000. Subtotal 1,558,750; contingency 10 % = 155,875; capex 1,714,625.
    assert by_category == pytest.approx({"compute": 900_000, "spares": 600_000, "nic": 7_500,
                                         "switch": 30_000, "link": 6_250, "rack": 15_000,
                                         "contingency": 155_875})
    assert d.capex_usd == pytest.approx(1_714_625)
    # IT W: 5·10,000 + 5·20 + 1,000 + 3·15 + 5·8 = 51,185 → facility 51.185·1.5 = 76.7775 kW.
    # TCO = 1,714,625 + 3 · 8,760 · 76.7775 · 0.2 = 1,714,625 + 403,542.54 = 2,118,167.54
    assert d.it_power_kw == pytest.approx(51.185)
    assert d.facility_power_kw == pytest.approx(76.7775)
    assert d.tco_usd == pytest.approx(2_118_167.54)
    assert d.it_power_kw == pytest.approx(sum(l.quantity * l.power_w for l in d.bom) / 1000)


def test_spare_fraction_ignores_float_noise():
    # 0.07 · 100 = 7.000000000000001 in floating point; the spares are 7, not 8.
    d = design_cost(make_scenario(constraints={"spare_nodes_fraction": 0.07}), make_catalog(),
                    "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=100)
    assert (d.spare_units, d.nodes) == (7, 107)
    # spares are on the fabric: leaves = 8·⌈107/32⌉ = 32; spines ≥ ⌈32·32/64⌉ = 16 → 16.
    assert (d.fabric.leaf_switches, d.fabric.spine_switches) == (32, 16)


def test_nvl72_bought_in_whole_racks():
    # 4 NVL72 domains: units = 4 racks; nodes = 4·18 = 72 trays × 4 rails; gpus = 72·4 = 288.
    # 72 ≤ 144 → 1 tier: q = min(4, ⌊144/72⌋) = 2 → 2 switches; node_leaf = 288 links.
    d = design_cost(make_scenario(), make_catalog(), "nvl72-t", "xdr-nic", 4, "xdr-144", 1, domains=4)
    assert (d.units, d.nodes, d.gpus, d.domains) == (4, 72, 288, 4)
    assert (d.fabric.tiers, d.fabric.leaf_switches) == (1, 2)
    cats = [l.category for l in d.bom]
    assert "nic" not in cats  # NICs come inside the rack
    compute = [l for l in d.bom if l.category == "compute"]
    assert [(l.quantity, l.extended_usd) for l in compute] == [(4, 12_000_000)]
    # Each NVL72 is its own rack (4, not bought again); switches 2 × 4 RU, 5 kW → 1 network rack.
    assert (d.racks_compute, d.racks_network, d.racks) == (4, 1, 5)
    assert [l.quantity for l in d.bom if l.category == "rack"] == [1]
    # IT W: 4·120,000 + 2·2,500 + ⌈288/2⌉·25 + 288·16 = 480,000 + 5,000 + 3,600 + 4,608 = 493,208.
    assert d.it_power_kw == pytest.approx(493.208)


def test_copper_links_have_no_module_lines():
    # node_leaf at 2 m → copper DAC, whose modules are free and draw nothing: cable line only.
    d = design_cost(make_scenario(), make_catalog(node_leaf_m=2), "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=32)
    node_leaf = [l for l in d.bom if l.description.startswith("node_leaf")]
    # 32 nodes · 8 rails = 256 cables × $100 = $25,600.
    assert [(l.part, l.quantity, l.extended_usd) for l in node_leaf] == [("ndr-nl-dac", 256, 25_600)]


def test_to_dict_has_spec_keys():
    d = design_cost(make_scenario(), make_catalog(), "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=96)
    out = d.to_dict()
    assert out["fabric"] == {"family": "fat-tree", "nic": "ndr-nic", "rails_per_node": 8, "switch": "ndr-64", "tiers": 2,
                             "oversubscription": 1.0, "leaf_switches": 24, "spine_switches": 16,
                             "core_switches": 0, "links": {"node_leaf": 768, "leaf_spine": 768, "spine_core": 0}}
    assert out["racks"] == 25
    assert set(out["power_kw"]) == {"it", "facility"}
    for key in ("category", "part", "description", "quantity", "unit_price_usd", "extended_usd",
                "price_source", "price_date"):
        assert key in out["bom"][0]


def test_errors_and_unbuildable():
    cat, sc = make_catalog(), make_scenario()
    with pytest.raises(ValueError, match="not compatible"):
        design_cost(sc, cat, "nvl72-t", "ndr-nic", 4, "ndr-64", 1, domains=1)
    with pytest.raises(ValueError, match="scale-out NICs per node"):
        design_cost(sc, cat, "hgx-t", "ndr-nic", 3, "ndr-64", 1, domains=1)
    with pytest.raises(ValueError, match="unknown switch"):
        design_cost(sc, cat, "hgx-t", "ndr-nic", 8, "nope", 1, domains=1)
    # A 10 kW node does not fit in a 5 kW rack.
    with pytest.raises(ValueError, match="does not fit"):
        design_cost(sc, make_catalog(rack_kw=5), "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=1)
    # 8,193 nodes × 8 rails on 64 ports: 3-tier limit ⌊64·32/8⌋·32 = 8,192 nodes → None.
    assert design_cost(sc, cat, "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=8_193) is None
    assert design_cost(sc, cat, "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=8_192) is not None
    # Forced 1 tier with 65 nodes → None.
    assert design_cost(sc, cat, "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=65, tiers=1) is None
