"""Scale-out fabric families (SPEC §5, §5.1). One module per family; this registry names them."""
from __future__ import annotations

from .base import LINK_TIERS, SWITCH_ROLES, FabricConstants, FabricFamily, FabricSize, FabricSpec
from .fat_tree import FatTree
from .multi_plane import MultiPlane
from .rail_only import RailOnly

FAMILIES: dict[str, FabricFamily] = {family.name: family for family in (FatTree(), MultiPlane(), RailOnly())}
DEFAULT_FAMILY = "fat-tree"


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


__all__ = ["DEFAULT_FAMILY", "FAMILIES", "LINK_TIERS", "SWITCH_ROLES", "FabricConstants", "FabricFamily",
           "FabricSize", "FabricSpec", "family", "same_network_as"]
