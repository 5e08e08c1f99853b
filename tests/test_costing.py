"""The bill of materials, power and cost (solver/costing/table.py; SPEC §6): hand-worked designs.

Every expected number is worked out by hand in a comment; the catalog comes from tests/builders.py
so that prices are round and independent of the shipped catalog.
"""
from __future__ import annotations

import pytest
from builders import make_catalog, make_scenario

from solver.costing import design_cost, network_racks, units_per_rack
from solver.errors import CatalogCannotBuild


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
    # 2 NVL72 domains: units = 2 racks; nodes = 2·18 = 36 trays × 4 rails = 144 endpoints; gpus = 36·4 = 144.
    # 36 · 4 = 144 ≤ 144 ports → 1 tier of one switch (SPEC §5.3: a fat tree's one tier is one switch); node_leaf = 144.
    d = design_cost(make_scenario(), make_catalog(), "nvl72-t", "xdr-nic", 4, "xdr-144", 1, domains=2)
    assert (d.units, d.nodes, d.gpus, d.domains) == (2, 36, 144, 2)
    assert (d.fabric.tiers, d.fabric.leaf_switches) == (1, 1)
    cats = [l.category for l in d.bom]
    assert "nic" not in cats  # NICs come inside the rack
    compute = [l for l in d.bom if l.category == "compute"]
    assert [(l.quantity, l.extended_usd) for l in compute] == [(2, 6_000_000)]
    # Each NVL72 is its own rack (2, not bought again); 1 switch × 4 RU, 2.5 kW → 1 network rack.
    assert (d.racks_compute, d.racks_network, d.racks) == (2, 1, 3)
    assert [l.quantity for l in d.bom if l.category == "rack"] == [1]
    # IT W: 2·120,000 + 1·2,500 + ⌈144/2⌉·25 + 144·16 = 240,000 + 2,500 + 1,800 + 2,304 = 246,604.
    assert d.it_power_kw == pytest.approx(246.604)
    # 4 racks = 72 trays × 4 rails = 288 endpoints > 144 ports: 2 tiers, 4 leaves (one per rail) and
    # the smallest divisor of 72 ≥ ⌈4·72/144⌉ = 2 → 2 spines, never 2 spine-less switches.
    d = design_cost(make_scenario(), make_catalog(), "nvl72-t", "xdr-nic", 4, "xdr-144", 1, domains=4)
    assert (d.fabric.tiers, d.fabric.leaf_switches, d.fabric.spine_switches) == (2, 4, 2)


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
                             "core_switches": 0, "links": {"node_leaf": 768, "leaf_spine": 768, "spine_core": 0},
                             # 2 tiers: no pods, so no tier above them; one plane of 64-port switches
                             "above_pod_oversubscription": 1.0, "radix": 64, "planes": 1, "pods_per_plane": 0}
    assert out["racks"] == 25
    assert set(out["power_kw"]) == {"it", "facility"}
    for key in ("category", "part", "description", "quantity", "unit_price_usd", "extended_usd",
                "price_source", "price_date"):
        assert key in out["bom"][0]


def test_errors_and_unbuildable():
    cat, sc = make_catalog(), make_scenario()
    with pytest.raises(CatalogCannotBuild, match="not compatible"):
        design_cost(sc, cat, "nvl72-t", "ndr-nic", 4, "ndr-64", 1, domains=1)
    with pytest.raises(CatalogCannotBuild, match="scale-out NICs per node"):
        design_cost(sc, cat, "hgx-t", "ndr-nic", 3, "ndr-64", 1, domains=1)
    with pytest.raises(CatalogCannotBuild, match="unknown switch"):
        design_cost(sc, cat, "hgx-t", "ndr-nic", 8, "nope", 1, domains=1)
    # A 10 kW node does not fit in a 5 kW rack.
    with pytest.raises(CatalogCannotBuild, match="does not fit"):
        design_cost(sc, make_catalog(rack_kw=5), "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=1)
    # 8,193 nodes × 8 rails on 64 ports: 3-tier limit ⌊64·32/8⌋·32 = 8,192 nodes → None.
    assert design_cost(sc, cat, "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=8_193) is None
    assert design_cost(sc, cat, "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=8_192) is not None
    # Forced 1 tier with 65 nodes → None.
    assert design_cost(sc, cat, "hgx-t", "ndr-nic", 8, "ndr-64", 1, domains=65, tiers=1) is None
