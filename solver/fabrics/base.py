"""What every scale-out fabric family provides (SPEC §5, §5.1), behind one small interface.

A family (one module each: `fat_tree.py`, …) states, side by side:
- its capacity: the largest node count a tier count holds (`max_nodes`);
- its closed-form sizing for the evaluator (`size` → `FabricSize`, role-keyed switch counts and
  per-tier link counts);
- its rows in the optimisation model (`add_milp`: variables and constraints for the architectures
  of the family, and `milp_switches` / `milp_links`: the same role-keyed counts as expressions).
The bill of materials (costing.py) prices any `FabricSize` or MILP counts the same way, role by role
and tier by tier, so a new family is one new module plus a registry entry in `fabrics/__init__.py`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

LINK_TIERS = ("node_leaf", "leaf_spine", "spine_core")
SWITCH_ROLES = ("leaf", "spine", "core")


@dataclass(frozen=True)
class FabricSize:
    """Switch and link counts of one sized fabric.

    switches: role → count (leaf, spine, core); links: tier → count (node_leaf, leaf_spine,
    spine_core); endpoints = nodes · rails. k_down/k_up are the leaf's down and up ports (for 1 tier
    k_down = k, k_up = 0 and oversubscription = 1: no uplinks). `detail` holds family-specific counts
    (pods, planes) for reports.
    """

    family: str
    tiers: int
    k: int
    k_down: int
    k_up: int
    oversubscription: float
    switches: dict[str, int]
    links: dict[str, int]
    endpoints: int
    detail: dict[str, int] = field(default_factory=dict)

    @property
    def total_switches(self) -> int:
        return sum(self.switches.values())

    @property
    def leaf_switches(self) -> int:
        return self.switches.get("leaf", 0)

    @property
    def spine_switches(self) -> int:
        return self.switches.get("spine", 0)

    @property
    def core_switches(self) -> int:
        return self.switches.get("core", 0)

    @property
    def pods(self) -> int:
        return self.detail.get("pods", 0)


@dataclass(frozen=True)
class FabricConstants:
    """The per-architecture constants the optimisation model needs from a family."""

    k: int
    k_down: int
    k_up: int
    rails: int
    cap: dict[int, int]  # tier count → max nodes


class FabricFamily(Protocol):
    """The interface of one fabric family (see the module docstring)."""

    name: str

    def max_nodes(self, radix: int, rails: int, oversubscription: float, tiers: int) -> int: ...

    def size(self, nodes: int, rails: int, radix: int, oversubscription: float,
             tiers: int | None = None) -> FabricSize | None: ...

    def constants(self, radix: int, rails: int, oversubscription: float) -> FabricConstants: ...

    def add_milp(self, m: Any, archs: list[int]) -> None: ...

    def milp_switches(self, m: Any, a: int) -> dict[str, Any]: ...

    def milp_links(self, m: Any, a: int) -> dict[str, Any]: ...
