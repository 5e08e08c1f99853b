"""Owned inventory and extra cost lines in the bill of materials (solver/costing/table.py; SPEC §6.1).

Every expected number is worked out by hand in a comment, on the round-number catalog of
tests/builders.py (the pinned 96-node HGX design of tests/test_costing.py: 96 nodes × 8 NDR rails,
2 tiers of 64-port switches, 24 leaves + 16 spines, capex $32,974,280 and IT 1,039.552 kW there).
"""
from __future__ import annotations

import pytest
from builders import make_catalog, make_scenario

from solver.costing import Line, design_cost, lines_capex_usd, stock_of

HGX = ("hgx-t", "ndr-nic", 8, "ndr-64", 1)

OWNED = {"hgx-t": 64, "ndr-nic": 600, "ndr-64": 30, "ndr-nl-opt": 500, "rack-42u": 10}


def _design(**scenario):
    return design_cost(make_scenario(**scenario), make_catalog(), *HGX, domains=96)


def _lines(design, category, owned):
    return [(l.part, l.description.split(":")[0], l.quantity, l.extended_usd) for l in design.bom
            if l.category == category and l.owned == owned]


def test_owned_parts_are_reused_at_no_capex_and_only_the_difference_is_bought():
    d = _design(inventory=OWNED)
    # compute: 96 nodes needed, 64 owned → 32 bought × 300,000 = 9,600,000
    assert _lines(d, "compute", True) == [("hgx-t", "owned", 64, 0.0)]
    assert _lines(d, "compute", False) == [("hgx-t", "HGX test (per node)", 32, 9_600_000)]
    # NICs: 96·8 = 768 needed, 600 owned → 168 × 1,500 = 252,000
    assert _lines(d, "nic", False) == [("ndr-nic", "NDR NIC, 8 per node", 168, 252_000)]
    # switches: 24 leaf + 16 spine = 40, 30 owned: the leaves take 24, the spines 6, 10 spines bought
    # × 30,000 = 300,000 (the leaf line is wholly owned: no bought leaf line is left)
    assert [q for _, _, q, _ in _lines(d, "switch", True)] == [24, 6]
    assert _lines(d, "switch", False) == [("ndr-64", "spine switch", 10, 300_000)]
    # node_leaf links, 500 owned: cables 768 − 500 = 268 × 50 = 13,400; twin-port switch-end modules
    # 384 − ⌊500/2⌋ = 134 × 1,000 = 134,000; NIC-end modules 768 − 500 = 268 × 600 = 160,800
    bought_links = {desc: (q, usd) for part, desc, q, usd in _lines(d, "link", False) if part == "ndr-nl-opt"}
    assert bought_links == {"node_leaf cable": (268, 13_400), "node_leaf switch-end module (2 link/module)": (134, 134_000),
                            "node_leaf far-end module (1 link/module)": (268, 160_800)}
    # racks: 24 compute + 1 network, 10 owned (to the compute line first) → 14 + 1 bought × 5,000 = 75,000
    assert _lines(d, "rack", True) == [("rack-42u", "owned", 10, 0.0)]
    assert sum(usd for *_, usd in _lines(d, "rack", False)) == 75_000
    # capex = 9,600,000 + 252,000 + 300,000 + (13,400 + 134,000 + 160,800) + 814,080 (leaf_spine links,
    # none owned: 46,080 + 384,000 + 384,000) + 75,000 = 11,349,280
    assert d.capex_usd == pytest.approx(11_349_280, abs=1e-6)
    assert d.capex_usd == sum(l.extended_usd for l in d.bom)


def test_owned_parts_still_draw_power_and_pay_energy_in_tco():
    owned, fresh = _design(inventory=OWNED), _design()
    # every part is powered whoever paid for it: IT power is the greenfield design's 1,039.552 kW
    assert owned.it_power_kw == pytest.approx(1_039.552)
    assert owned.it_power_kw == pytest.approx(sum(l.quantity * l.power_w for l in owned.bom) / 1000)
    # TCO = capex bought + 5 · 8,760 · 1,039.552 · 1.25 · 0.10 = 11,349,280 + 5,691,547.2
    assert owned.tco_usd == pytest.approx(11_349_280 + 5_691_547.2)
    assert fresh.tco_usd - fresh.capex_usd == pytest.approx(owned.tco_usd - owned.capex_usd)


def test_idle_owned_hardware_is_reported_with_its_value():
    d = _design(inventory={**OWNED, "hgx-t": {"count": 100, "purchase_year": 2023}, "nvl72-t": 2})
    use = {u.part: u for u in d.inventory}
    # 100 HGX nodes owned, the design needs 96: 4 idle × 300,000 = 1,200,000
    assert (use["hgx-t"].used, use["hgx-t"].idle, use["hgx-t"].idle_value_usd) == (96, 4, 1_200_000)
    assert use["hgx-t"].purchase_year == 2023
    # two NVL72 racks the HGX design cannot use: wholly idle, 2 × 3,000,000
    assert (use["nvl72-t"].used, use["nvl72-t"].idle_value_usd) == (0, 6_000_000)
    # 500 node_leaf links, all used (768 needed); value per link = 50 + 1,000/2 + 600 = 1,150
    assert (use["ndr-nl-opt"].idle, use["ndr-nl-opt"].unit_price_usd) == (0, 1_150)
    assert d.to_dict()["inventory"][0]["part"] == "hgx-t"
    # no inventory, no inventory key: greenfield JSON is unchanged
    assert "inventory" not in _design().to_dict()
    assert all("owned" not in line.to_dict() for line in _design().bom)


def test_owned_nvl72_racks_count_in_whole_domains():
    cat = make_catalog()
    d = design_cost(make_scenario(inventory={"nvl72-t": 1}), cat, "nvl72-t", "xdr-nic", 4, "xdr-144", 1, domains=2)
    # two domains needed, one owned: one 3,000,000 rack bought; both racks draw 120 kW
    assert [(l.quantity, l.extended_usd, l.owned) for l in d.bom if l.category == "compute"] == [
        (1, 0.0, True), (1, 3_000_000, False)]
    assert sum(l.quantity * l.power_w for l in d.bom if l.category == "compute") == 240_000


EXTRAS = [
    {"name": "storage", "per_node_usd": 1_000, "price_source": "test", "price_date": "2025"},
    {"name": "installation", "per_gpu_usd": 100, "price_source": "test", "price_date": "2025"},
    {"name": "support", "fraction_of_hardware": 0.10, "price_source": "test", "price_date": "2025",
     "price_is_estimate": True},
]


def test_extra_cost_lines_by_rule_complete_the_capex():
    d = _design(extra_costs=EXTRAS)
    extra = {l.part: (l.quantity, l.extended_usd) for l in d.bom if l.category == "extra"}
    # storage 96 nodes × 1,000 = 96,000; installation 768 GPUs × 100 = 76,800;
    # support 10 % of the hardware lines 32,974,280 = 3,297,428
    assert extra == {"storage": (96, 96_000), "installation": (768, 76_800), "support": (1, pytest.approx(3_297_428))}
    # capex = 32,974,280 + 96,000 + 76,800 + 3,297,428 = 36,444,508
    assert d.capex_usd == pytest.approx(36_444_508)
    # with 5 % contingency on everything: 36,444,508 · 1.05 = 38,266,733.4
    d = _design(extra_costs=EXTRAS, constraints={"contingency_fraction": 0.05})
    assert d.capex_usd == pytest.approx(38_266_733.4)
    assert [l.category for l in d.bom][-4:] == ["extra", "extra", "extra", "contingency"]


def test_owned_nodes_bring_their_own_per_node_and_per_gpu_extras():
    d = _design(extra_costs=EXTRAS[:2], inventory={"hgx-t": 64})
    extra = {l.part: l.quantity for l in d.bom if l.category == "extra" and not l.owned}
    # 96 − 64 = 32 nodes bought: 32 storage lines, 32 · 8 = 256 installations
    assert extra == {"storage": 32, "installation": 256}


def test_netted_lower_bound_never_exceeds_the_netted_cost_of_more():
    """bought = max(0, needed − owned) is non-decreasing in needed: the bound pruning's premise."""
    cat = make_catalog()
    plat = cat.by_id("platforms")["hgx-t"]
    owned = {"hgx-t": 10}
    costs = []
    for units in range(0, 30):
        lines = [Line("compute", "hgx-t", "n", units, plat.unit_price_usd, 10_000.0, plat)]
        costs.append(lines_capex_usd(lines, 0.0, owned))
        assert stock_of(lines, owned)["hgx-t"].bought() == max(0, units - 10)
    assert costs == sorted(costs)
    assert costs[10] == 0 and costs[11] == 300_000


def test_bill_of_materials_keeps_owned_lines_that_cost_and_draw_nothing():
    """An owned rack (price 0 once owned, no power) is still listed, so the report shows what is reused."""
    d = _design(inventory={"rack-42u": 3})
    owned = [l for l in d.bom if l.owned]
    assert [(l.part, l.quantity, l.power_w) for l in owned] == [("rack-42u", 3, 0.0)]
