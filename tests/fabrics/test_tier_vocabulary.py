"""Tier counts are owned by the fabric families (issue 26 item 6): `fabrics.TIER_COUNTS` (one per link tier),
`POD_TIERS` (the count with a tier above the pods), `tier_counts(family)` and `has_pod_tier(family)`; outside
solver/fabrics no code spells the counts out (`(1, 2, 3)`, `max_tiers == 3`). Read from the source with `ast`."""
from __future__ import annotations

import ast
from pathlib import Path

from solver.fabrics import FAMILIES, LINK_TIERS, POD_TIERS, TIER_COUNTS, has_pod_tier, tier_counts

PACKAGE = Path(__file__).resolve().parents[2] / "solver"


def test_the_tier_counts_follow_the_tree_vocabulary():
    # a t-tier tree has the first t tiers of its vocabulary: leaf/node_leaf, spine/leaf_spine, core/spine_core
    assert TIER_COUNTS == (1, 2, 3)
    assert POD_TIERS == 3
    for fam in FAMILIES.values():
        assert fam.vocabulary.switch_roles == ("leaf", "spine", "core")
        assert fam.vocabulary.link_names == ("node_leaf", "leaf_spine", "spine_core")


def test_the_catalogs_link_tiers_build_the_families_links():
    # the catalog's `tier:` words (inputs, read before any fabric module) are the catalog link keys; every family's
    # tiers name one of them (the trees' links are named after them, one to one)
    from solver.inputs.schema import TIERS

    assert TIERS == LINK_TIERS == ("node_leaf", "leaf_spine", "spine_core")
    for fam in FAMILIES.values():
        assert {t.catalog_link for t in fam.vocabulary.tiers} <= set(TIERS)
        assert all(t.catalog_link == t.link for t in fam.vocabulary.tiers)


def test_each_family_states_its_tier_counts():
    # SPEC §5.1: the fat tree 1–3 tiers, multi-plane ≥ 2 (a plane of one switch is a fat tree), rail-only ≤ 2
    assert {name: tier_counts(f) for name, f in FAMILIES.items()} == {
        "fat-tree": (1, 2, 3), "multi-plane": (2, 3), "rail-only": (1, 2)}
    assert {name: has_pod_tier(f) for name, f in FAMILIES.items()} == {
        "fat-tree": True, "multi-plane": True, "rail-only": False}


def _spelled_out_tiers(tree: ast.AST) -> list[int]:
    """Lines with a literal (1, 2, 3) / [1, 2, 3] / {1, 2, 3}, or a comparison of `max_tiers` with a number."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)) and [getattr(e, "value", None) for e in node.elts] == [1, 2, 3]:
            lines.append(node.lineno)
        if isinstance(node, ast.Compare) and any(isinstance(x, ast.Attribute) and x.attr in ("max_tiers", "min_tiers")
                                                 for x in [node.left, *node.comparators]) \
                and any(isinstance(x, ast.Constant) for x in [node.left, *node.comparators]):
            lines.append(node.lineno)
    return sorted(lines)


def test_no_code_outside_the_fabrics_spells_the_tier_counts_out():
    found = {str(p.relative_to(PACKAGE)): lines for p in sorted(PACKAGE.rglob("*.py")) if "fabrics" not in p.parts
             if (lines := _spelled_out_tiers(ast.parse(p.read_text(encoding="utf-8"))))}
    assert not found, f"use fabrics.TIER_COUNTS / POD_TIERS / tier_counts / has_pod_tier: {found}"


def test_the_reader_finds_spelled_out_tiers():
    assert _spelled_out_tiers(ast.parse("x = [t for t in (1, 2, 3)]\nif f.max_tiers == 3: pass")) == [1, 2]
