"""Scale-out fabric families (SPEC §5, §5.1). One module per family; this registry names them."""
from __future__ import annotations

from .base import (
    LINK_TIERS,
    POD_TIERS,
    SWITCH_ROLES,
    TIER_COUNTS,
    FabricConstants,
    FabricFamily,
    FabricSize,
    FabricSpec,
    has_pod_tier,
    tier_counts,
)
from .fat_tree import FatTree
from .multi_plane import MultiPlane
from .rail_only import RailOnly

FAMILIES: dict[str, FabricFamily] = {family.name: family for family in (FatTree(), MultiPlane(), RailOnly())}
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


def family(name: str) -> FabricFamily:
    return FAMILIES[name]


def same_network_as(name: str, spec: FabricSpec) -> list[str]:
    """The families that build exactly this family's network for `spec`, nearest first (multi-plane
    with one rail → fat-tree; rail-only on one-node domains → multi-plane → …)."""
    out: list[str] = []
    twin = family(name).twin(spec)
    while twin is not None and twin not in out:
        out.append(twin)
        twin = family(twin).twin(spec)
    return out


__all__ = ["CAVEATS", "DEFAULT_FAMILIES", "DEFAULT_FAMILY", "FAMILIES", "caveat", "LINK_TIERS", "POD_TIERS", "SWITCH_ROLES",
           "TIER_COUNTS", "FabricConstants", "FabricFamily", "FabricSize", "FabricSpec", "family", "has_pod_tier",
           "same_network_as", "tier_counts"]
