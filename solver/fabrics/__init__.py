"""Scale-out fabric families (SPEC §5, §5.1). One module per family; the registry (`fabrics.base.FAMILIES`,
`register_family`) names them, and this package registers the shipped three."""
from __future__ import annotations

from .base import (
    FAMILIES,
    POD_TIERS,
    TIER_COUNTS,
    FabricConstants,
    FabricFamily,
    FabricSize,
    FabricSpec,
    FabricTier,
    FabricVocabulary,
    family,
    family_vocabulary,
    has_pod_tier,
    register_family,
    tier_counts,
)
from .fat_tree import FatTree
from .multi_plane import MultiPlane
from .rail_only import RailOnly

for _shipped in (FatTree(), MultiPlane(), RailOnly()):
    register_family(_shipped)
# The catalog's link keys (`inputs.schema.TIERS`: the catalog's words, not a family's): the shipped families' links
# are named after them. Which key builds a family's links is its vocabulary's `catalog_link`.
LINK_TIERS = ("node_leaf", "leaf_spine", "spine_core")
DEFAULT_FAMILY = "fat-tree"
# Families with a public deployment, in the design space by default (SPEC §5.2): the rail-optimised fat
# tree (NVIDIA DGX SuperPOD reference architectures) and the multi-plane fat tree (DeepSeek's Fire-Flyer 2
# and V3 clusters, docs/sources.md [F1][F2]); rail-only (Wang et al.) has none and is built only when named.
DEFAULT_FAMILIES = ("fat-tree", "multi-plane")
CAVEATS = {
    "rail-only": "rail-only fabric: no public deployment keeps no spine (NVIDIA's references, Meta, Alibaba HPN "
                 "and DeepSeek all do); the model prices no failure of a rail switch, which stops every job on it",
}


def caveat(name: str) -> str | None:
    """The caveat reported with every design on a non-reference family (None for the deployed ones)."""
    return CAVEATS.get(name)


def same_network_as(name: str, spec: FabricSpec) -> list[str]:
    """The families that build exactly this family's network for `spec`, nearest first (multi-plane
    with one rail → fat-tree; rail-only on one-node domains → multi-plane → …)."""
    out: list[str] = []
    twin = family(name).twin(spec)
    while twin is not None and twin not in out:
        out.append(twin)
        twin = family(twin).twin(spec)
    return out


__all__ = ["CAVEATS", "DEFAULT_FAMILIES", "DEFAULT_FAMILY", "FAMILIES", "caveat", "LINK_TIERS", "POD_TIERS",
           "TIER_COUNTS", "FabricConstants", "FabricFamily", "FabricSize", "FabricSpec", "FabricTier", "FabricVocabulary",
           "family", "family_vocabulary", "has_pod_tier", "register_family", "same_network_as", "tier_counts"]
