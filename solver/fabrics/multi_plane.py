"""The multi-plane fat tree (SPEC §5.1; DeepSeek's MPFT, docs/sources.md [F1]): every rail is its
own independent fat tree ("plane"), and no switch joins two planes.

A node's NIC j is an endpoint of plane j only, so each plane is the §5 tree with one rail and the
node count of the cluster, built `rails` times:

| tiers | one plane holds | the cluster holds |
|---|---|---|
| 2 | ⌊k/1⌋·k_down nodes (k²/2 non-blocking) | rails·k²/2 endpoints |
| 3 | k·s_down·k_down nodes (k³/4 non-blocking) | rails·k³/4 endpoints |

So the same tier count holds `rails` times the endpoints of one rail-optimised fat tree: DeepSeek
joins 2,048 eight-GPU nodes (16,384 GPUs) in two tiers of 64-port switches, 8 planes of 64 leaves +
32 spines = 768 switches and 16,384 leaf–spine links, where a fat tree needs three tiers.
Counts: switches and links of one plane (`fat_tree` rules with rails = 1) times the planes.
One tier is not offered: one switch per plane is the fat tree's one-tier layer (which already puts
whole rail groups on separate switches) with more switches and the same links, never cheaper.

Traffic between GPUs whose NICs sit on different planes must first cross NVLink inside a node
(NCCL's PXN, or DeepEP's forwarding); which traffic classes pay for that is `perf/crossing.py`.
With one rail the multi-plane fabric *is* the fat tree (`twin`).
"""
from __future__ import annotations

from typing import Any

from . import fat_tree
from .base import FabricConstants, FabricSize, FabricSpec

NAME = "multi-plane"


class MultiPlane:
    """The `multi-plane` family (see the module docstring)."""

    name = NAME
    milp_block = fat_tree.MILP_BLOCK
    min_tiers = 2
    max_tiers = 3
    planes_by_domain_position = False
    vocabulary = fat_tree.TREE_VOCABULARY  # a tree's words (leaf, spine; node_leaf, leaf_spine)

    def max_nodes(self, spec: FabricSpec, tiers: int) -> int:
        """The capacity of one plane: the fat tree's with one rail (0 below 2 tiers)."""
        if tiers < self.min_tiers:
            return 0
        return fat_tree.max_nodes(spec.radix, 1, spec.oversubscription, tiers, spec.above_pod_oversubscription)

    def size(self, nodes: int, spec: FabricSpec, tiers: int | None = None) -> FabricSize | None:
        return fat_tree.size_tree(NAME, nodes, 1, spec.radix, spec.oversubscription, tiers,
                                  above_pod_oversubscription=spec.above_pod_oversubscription, planes=spec.rails_per_node,
                                  min_tiers=self.min_tiers)

    def constants(self, spec: FabricSpec) -> FabricConstants:
        return fat_tree.tree_constants(spec, rails=1, planes=spec.rails_per_node, node_group=1, min_tiers=self.min_tiers,
                                       max_tiers=self.max_tiers)

    def planes(self, spec: FabricSpec) -> int:
        """One plane per rail."""
        return spec.rails_per_node

    def pod_nodes(self, spec: FabricSpec) -> int:
        """A pod of one plane: s_down leaves of k_down nodes (every plane has the same pods)."""
        return fat_tree.pod_nodes(spec.radix, 1, spec.oversubscription, spec.above_pod_oversubscription)

    def twin(self, spec: FabricSpec) -> str | None:
        """With one rail there is one plane: the fat tree, switch for switch."""
        return fat_tree.NAME if spec.rails_per_node == 1 else None

    def add_milp(self, m: Any, archs: list[int]) -> None:
        fat_tree.add_tree_rows(m, archs)

    def milp_switches(self, m: Any, a: int) -> dict[str, Any]:
        return fat_tree.tree_switches(m, a)

    def milp_links(self, m: Any, a: int) -> dict[str, Any]:
        return fat_tree.tree_links(m, a)
