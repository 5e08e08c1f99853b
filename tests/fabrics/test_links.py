"""Link options and their parts (solver/fabrics/links.py): reach, price, whole modules."""
from __future__ import annotations

import pytest
from builders import make_catalog

from solver.errors import CatalogCannotBuild
from solver.fabrics.links import choose_link, link_for, link_parts

# ----------------------------------------------------------------------------------- links and racks


def test_choose_link_by_reach_and_price():
    cat = make_catalog()
    # 2 m: copper ($100/link) reaches and is cheaper than optics (50 + 1000/2 + 600 = $1,150/link).
    assert choose_link(cat, "ndr", "node_leaf", 2).id == "ndr-nl-dac"
    # 10 m: only the 50 m optic reaches.
    assert choose_link(cat, "ndr", "node_leaf", 10).id == "ndr-nl-opt"
    with pytest.raises(CatalogCannotBuild, match="reaches 1000 m"):
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
