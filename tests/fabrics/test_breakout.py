"""Port breakout from catalog data (solver/fabrics/breakout.py, SPEC §5.1): the radix and port speed
in use, the breakout link kinds, and the bill of materials of a broken-out switch, by hand.

The test catalog (tests/builders.py) has `eth-800`: 64 × 800G ports, `breakout: [2]`, $40,000, and
links for its ports split 1:2 (`breakout: 2`); the SN5600 numbers are docs/sources.md [F5].
"""
from __future__ import annotations

import pytest
from builders import make_catalog, make_scenario
from pydantic import ValidationError

from solver.costing import design_cost
from solver.design_space import switch_serves_nic
from solver.errors import CatalogCannotBuild
from solver.fabrics import FabricSpec, family
from solver.fabrics.breakout import port_mode, serves
from solver.inputs.schema import Catalog, Switch


def test_port_mode_splits_only_as_listed():
    cat = make_catalog()
    eth = cat.by_id("switches")["eth-800"]
    assert port_mode(eth, 800) == port_mode(eth, 800.0)
    assert (port_mode(eth, 800).radix, port_mode(eth, 800).breakout) == (64, 1)  # native
    mode = port_mode(eth, 400)  # 800 / 400 = 2, listed: 2 · 64 = 128 ports of 400G
    assert (mode.radix, mode.speed_gbps, mode.breakout) == (128, 400, 2)
    assert port_mode(eth, 200) is None  # 800 / 200 = 4 is not listed
    assert port_mode(eth, 300) is None  # not a whole split
    assert port_mode(eth, 1600) is None  # faster than the port
    four = eth.model_copy(update={"breakout": [2, 4]})
    assert (port_mode(four, 200).radix, port_mode(four, 200).breakout) == (256, 4)


def test_a_switch_serves_a_nic_of_its_fabric_at_a_listed_split():
    cat = make_catalog()
    sw, nics = cat.by_id("switches"), cat.by_id("nics")
    assert serves(sw["eth-800"], nics["eth-nic"]).radix == 128  # Ethernet 400G on 800G ports split 1:2
    assert switch_serves_nic(sw["eth-800"], nics["eth-nic"])
    assert serves(sw["ndr-64"], nics["eth-nic"]) is None  # InfiniBand switch, Ethernet NIC
    assert serves(sw["xdr-144"], nics["ndr-nic"]) is None  # 800G switch without a listed split
    assert serves(sw["ndr-64"], nics["ndr-nic"]).breakout == 1


def test_breakout_capacities_of_the_sn5600_at_400g():
    # docs/sources.md §fabrics: SN5600 at 400G is k = 128: k²/2 = 8,192 endpoints in 2 tiers, k³/4 =
    # 524,288 in 3 (at 800G: 2,048 and 65,536).
    ft = family("fat-tree")
    assert ft.max_nodes(FabricSpec(radix=128, rails_per_node=1), 2) == 8_192
    assert ft.max_nodes(FabricSpec(radix=128, rails_per_node=1), 3) == 524_288
    assert ft.max_nodes(FabricSpec(radix=64, rails_per_node=1), 3) == 65_536


def test_broken_out_switch_bill_of_materials_by_hand():
    # 256 eight-GPU nodes, 8 × 400G NICs, on eth-800 at 128 × 400G: 256 > 128 → 2 tiers;
    # leaves = 8·⌈256/64⌉ = 32, spines = smallest divisor of 64 ≥ ⌈32·64/128⌉ = 16 → 16: 48 switches.
    # (At 64 ports: 8·⌈256/32⌉ = 64 leaves + 32 spines = 96.)
    # Links: node_leaf 256·8 = 2,048 (eth-nl-split, 10 m ≤ 50 m), leaf_spine 32·64 = 2,048 (eth-ls-split).
    # Modules: node_leaf ⌈2048/2⌉ = 1,024 twin-port at the switch, 2,048 at the NICs;
    #          leaf_spine 1,024 at each end.
    d = design_cost(make_scenario(), make_catalog(), "hgx-t", "eth-nic", 8, "eth-800", 1, domains=256)
    f = d.fabric
    assert (f.k, f.tiers, f.leaf_switches, f.spine_switches) == (128, 2, 32, 16)
    assert f.links == {"node_leaf": 2048, "leaf_spine": 2048, "spine_core": 0}
    lines = {(line.category, line.description.split(":")[0], line.part): (line.quantity, line.extended_usd)
             for line in d.bom if line.category in ("switch", "link")}
    assert lines == {
        ("switch", "leaf switch", "eth-800"): (32, 1_280_000),
        ("switch", "spine switch", "eth-800"): (16, 640_000),
        ("link", "node_leaf cable", "eth-nl-split"): (2048, 2048 * 40),
        ("link", "node_leaf switch-end module (2 link/module)", "eth-nl-split"): (1024, 1024 * 900),
        ("link", "node_leaf far-end module (1 link/module)", "eth-nl-split"): (2048, 2048 * 500),
        ("link", "leaf_spine cable", "eth-ls-split"): (2048, 2048 * 50),
        ("link", "leaf_spine switch-end module (2 link/module)", "eth-ls-split"): (1024, 1024 * 900),
        ("link", "leaf_spine far-end module (2 link/module)", "eth-ls-split"): (1024, 1024 * 900),
    }
    # fabric capex = 48·40,000 + 2,048·40 + 1,024·900 + 2,048·500 + 2,048·50 + 2·1,024·900 = $5,893,120
    assert sum(v for _, v in lines.values()) == 5_893_120


def test_breakout_without_split_links_cannot_be_built():
    data = make_catalog().model_dump()
    data["links"] = [link for link in data["links"] if link["breakout"] == 1]
    with pytest.raises(CatalogCannotBuild, match="ports split 2 ways"):
        design_cost(make_scenario(), Catalog.model_validate(data), "hgx-t", "eth-nic", 8, "eth-800", 1, domains=8)


def test_breakout_list_is_validated():
    base = make_catalog().by_id("switches")["eth-800"].model_dump()
    with pytest.raises(ValidationError, match="twice"):
        Switch.model_validate({**base, "breakout": [2, 2]})
    with pytest.raises(ValidationError):
        Switch.model_validate({**base, "breakout": [1]})  # a split is at least 2
