"""The bill of materials' vocabulary (SPEC §6): `Parts` (the catalog entries one architecture buys), `Quantities`
(how many of each: integers, model expressions or lower bounds) and `Line` (one priced line before evaluation).

Every costing module reads these types — table.py's category table, owned.py's inventory netting and
bom.py's evaluated lines — so they live in this leaf module that imports none of them (issue 39: no import
cycle, annotation-only imports included).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..inputs.schema import ExtraCost, Link, Nic, Platform, Rack, Switch

# ----------------------------------------------------------------------------------- parts


@dataclass(frozen=True)
class Parts:
    """The catalog entries one architecture buys. `nic` is None when the platform includes its
    scale-out NICs; `compute_rack` is None when the unit ships as its own rack (NVL72); a link
    tier is absent when no catalog option reaches it."""

    platform: Platform
    nic: Nic | None
    switch: Switch
    rails_per_node: int
    links: dict[str, Link]
    compute_rack: Rack | None
    network_rack: Rack
    extras: tuple[ExtraCost, ...] = ()
    nic_config: Any = None  # the NicConfiguration bought (costing/facility.py); None = catalog lists none
    nic_label: str = ""  # the NIC's name (for the uncabled-NIC line when the platform includes them)
    site: tuple = ()  # the site lines (storage, management, cooling, installation) of the platform
    spare_power_fraction: float = 1.0  # a hot spare idles: this fraction of the unit's power (catalog reliability)

    @property
    def hardware_fraction(self) -> float:
        """F = Σ of the fraction-of-hardware extra rules (support contracts, …)."""
        return hardware_fraction(self.extras)


def hardware_fraction(extras) -> float:
    """F = Σ fraction_of_hardware over the extra cost rules that have one."""
    return float(sum(e.fraction_of_hardware for e in extras if e.fraction_of_hardware is not None))


# ----------------------------------------------------------------------------------- quantities


@dataclass
class Quantities:
    """How many of each part: integers (the evaluator), Pyomo expressions (the model) or lower
    bounds (the bound pruning). `nodes` counts spares; `links` are cables per tier; `modules` per
    (tier, end)."""

    units: Any
    spare_units: Any
    nodes: Any
    switches: dict[str, Any] = field(default_factory=dict)
    links: dict[str, Any] = field(default_factory=dict)
    modules: dict[tuple[str, str], Any] = field(default_factory=dict)
    compute_racks: Any = 0
    network_racks: Any = 0
    site: dict[str, Any] | None = None  # site line id → count (the model's per-point sums); None = closed form
    cabled_nodes: Any = None  # nodes cabled to the compute fabric (job + packed spares; None = every node): the SUs


# ----------------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class Line:
    """One priced line before evaluation: the quantity may be an int or a model expression.

    `stock` is the key owned inventory nets against ("" = the part id); `owned_from` = (catalog id,
    num, den) says how owned items of that id count in this line's units: ⌊count · num / den⌋
    (None = the part id, 1, 1; a twin-port module line is (link id, 1, 2); per-node extras are
    (platform id, nodes per unit, 1))."""

    category: str
    part: str
    description: str
    quantity: Any
    unit_price_usd: float
    power_w: float  # per unit
    priced: Any  # the catalog entry with price_source, price_date, price_is_estimate
    stock: str = ""
    owned_from: tuple[str, int, int] | None = None
    included: bool = False  # paid for in the unit price: shown at $0 in the bill of materials

    @property
    def key(self) -> str:
        """The stock key this line draws owned units from."""
        return self.stock or self.part

    def owned_units(self, owned: dict[str, int]) -> int:
        """Owned units available to this line's key: ⌊count · num / den⌋ of its owned_from id."""
        ident, num, den = self.owned_from or (self.part, 1, 1)
        return owned.get(ident, 0) * num // den
