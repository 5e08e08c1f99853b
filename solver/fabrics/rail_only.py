"""The rail-only network (SPEC §5.1; Wang et al., docs/sources.md [F3]): no switch joins two rails,
and a rail is the set of GPUs (NICs) at the same position of every NVLink domain.

A domain of `nodes_per_domain` nodes with `rails` NICs each has R = rails·nodes_per_domain NIC
positions, so the network is R independent rails, each with one endpoint per domain. A rail is one
switch (the paper's "rail switch": no spine) while the domains fit its ports, and a two-tier Clos
of its own beyond that (the paper's per-rail Clos); a third tier is not built (that would be a
multi-plane fat tree of another name):

| tiers | one rail holds | switches |
|---|---|---|
| 1 | domains ≤ k | ⌈R / ⌊k / domains⌋⌉ (a switch serves several whole rails where its ports allow) |
| 2 | domains ≤ k·k_down | R·(leaves + spines) of a one-rail fat tree of `domains` endpoints |

On 8-GPU servers (one node per domain) the rails are the multi-plane fabric's planes (`twin`); on
NVL72 racks (18 nodes of 4 NICs) a rail is one GPU position of every rack, so 72 rail switches of
144 ports join 144 racks (10,368 GPUs) in one tier. Cross-rail traffic crosses NVLink first; which
traffic classes pay for that is `perf/crossing.py`.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any

from . import fat_tree
from .base import FabricConstants, FabricSize, FabricSpec

NAME = "rail-only"


class RailOnly:
    """The `rail-only` family (see the module docstring)."""

    name = NAME
    milp_block = fat_tree.MILP_BLOCK
    min_tiers = 1
    max_tiers = 2
    planes_by_domain_position = True
    vocabulary = fat_tree.TREE_VOCABULARY  # a tree's words (leaf, spine; node_leaf, leaf_spine)

    def max_nodes(self, spec: FabricSpec, tiers: int) -> int:
        """nodes_per_domain × the domains one rail holds (0 for 3 tiers)."""
        if tiers > self.max_tiers:
            return 0
        return spec.nodes_per_domain * fat_tree.max_nodes(spec.radix, 1, spec.oversubscription, tiers)

    def size(self, nodes: int, spec: FabricSpec, tiers: int | None = None) -> FabricSize | None:
        """Every rail sized for ⌈nodes / nodes_per_domain⌉ domains (a partial domain still takes a
        port on every rail); the node–leaf links are the NICs present, rails · nodes."""
        domains = -(-nodes // spec.nodes_per_domain)
        rails = self.planes(spec)
        size = None
        if tiers in (None, 1):  # one tier: whole rails share a switch, like the fat tree's rail groups
            one = fat_tree.size_tree(NAME, domains, rails, spec.radix, spec.oversubscription, 1, max_tiers=1)
            size = replace(one, planes=rails) if one is not None else None
        if size is None and tiers != 1:
            size = fat_tree.size_tree(NAME, domains, 1, spec.radix, spec.oversubscription, tiers,
                                      planes=rails, min_tiers=2, max_tiers=self.max_tiers)
        if size is None:
            return None
        return replace(size, links={**size.links, self.vocabulary.node_link: nodes * spec.rails_per_node}, endpoints=nodes * spec.rails_per_node)

    def constants(self, spec: FabricSpec) -> FabricConstants:
        const = fat_tree.tree_constants(spec, rails=1, planes=self.planes(spec), node_group=spec.nodes_per_domain,
                                        min_tiers=self.min_tiers, max_tiers=self.max_tiers)
        return replace(const, one_tier_rails=self.planes(spec), one_tier_planes=1)

    def planes(self, spec: FabricSpec) -> int:
        """R = rails·nodes_per_domain: one rail per NIC position of the NVLink domain."""
        return spec.rails_per_node * spec.nodes_per_domain

    def pod_nodes(self, spec: FabricSpec) -> int:
        """No third tier, so no pods."""
        return 0

    def twin(self, spec: FabricSpec) -> str | None:
        """With one node per domain the rails are the multi-plane fabric's planes."""
        return "multi-plane" if spec.nodes_per_domain == 1 else None

    def add_milp(self, m: Any, archs: list[int]) -> None:
        fat_tree.add_tree_rows(m, archs)

    def milp_switches(self, m: Any, a: int) -> dict[str, Any]:
        return fat_tree.tree_switches(m, a)

    def milp_links(self, m: Any, a: int) -> dict[str, Any]:
        return fat_tree.tree_links(m, a)
