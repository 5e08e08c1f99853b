"""Scale-out fabric families (SPEC §5, §5.1). One module per family; this registry names them."""
from .base import LINK_TIERS, SWITCH_ROLES, FabricConstants, FabricFamily, FabricSize
from .fat_tree import FatTree

FAMILIES: dict[str, FabricFamily] = {family.name: family for family in (FatTree(),)}
DEFAULT_FAMILY = "fat-tree"


def family(name: str) -> FabricFamily:
    return FAMILIES[name]


__all__ = ["DEFAULT_FAMILY", "FAMILIES", "LINK_TIERS", "SWITCH_ROLES", "FabricConstants", "FabricFamily",
           "FabricSize", "family"]
