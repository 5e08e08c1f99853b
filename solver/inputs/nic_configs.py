"""Designs a buyer can order (SPEC §5.2): the NIC configurations each platform is sold with, and the
site cost lines (storage fabric, in-band and out-of-band management, liquid-cooling plant,
installation) that make capex complete. Both are catalog kinds merged by id like the others
(`inputs/catalog.py`); a catalog without them keeps the earlier behaviour (every rail count of
`rails_per_node_options`, no site lines)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from .schema_base import Date, Identifier, PosInt, Strict

NicConfigChoice = Literal["any"] | list[Identifier] | None
SITE_CATEGORIES = ("storage", "management", "cooling", "installation")
SiteCategory = Literal["storage", "management", "cooling", "installation"]
CapexScope = Literal["complete", "compute_fabric_only"]


class NicConfiguration(Strict):
    """One way a platform's scale-out NICs can be bought and cabled."""

    id: Identifier
    platform: Identifier
    """Id of the platform this configuration belongs to."""
    rails_per_node: PosInt
    """Scale-out NICs cabled per node (the rails): one of the platform's rails_per_node_options."""
    installed_per_node: PosInt
    """Scale-out NICs present per node: on-board NICs are paid for in the unit price whether cabled or
    not; for NICs bought as cards it equals rails_per_node (the other slots stay empty)."""
    included: bool
    """True when the NICs are on the board (or in the system) and their price is in the unit price."""
    reference: bool
    """True for the configuration the vendor's reference architecture cables (one NIC per GPU on HGX
    and NVL72); false ones are only in the design space when constraints.nic_configurations opens them."""
    source: str = Field(min_length=1)
    """Where the configuration is documented (docs/sources.md [n])."""
    node_end_links_per_module: Annotated[int, Field(ge=1, le=2)] = 1
    """NIC links one node-end optical module serves: 2 where the node's cages are twin-port OSFP serving two
    NICs each (DGX H100/B200: 4 cages → 8 ConnectX-7), which then take the switch end's twin-port module."""

    @model_validator(mode="after")
    def _installed(self) -> NicConfiguration:
        if self.installed_per_node < self.rails_per_node:
            raise ValueError(f"installed_per_node ({self.installed_per_node}) must be ≥ rails_per_node "
                             f"({self.rails_per_node}): a cabled NIC is an installed NIC")
        if not self.included and self.installed_per_node != self.rails_per_node:
            raise ValueError("NICs bought as cards (included: false) are installed only where cabled: "
                             "installed_per_node must equal rails_per_node")
        return self

    @property
    def uncabled_per_node(self) -> int:
        """Paid-for NICs per node left without a cable (on-board NICs not used as rails)."""
        return self.installed_per_node - self.rails_per_node if self.included else 0


class SiteLine(Strict):
    """A cost line outside the compute fabric, sized per scalable unit, per compute unit or per node
    from a reference architecture: quantity = per_count · ⌈nodes / nodes_per_scalable_unit⌉ (per
    `scalable_unit`), per_count · units (per `unit`, spares included), per_count · nodes (per `node`) or
    per_count once per design (per `cluster`: fabric managers, head and management servers)."""

    id: Identifier
    name: str
    category: SiteCategory
    """storage (storage fabric), management (in-band and out-of-band networks), cooling (liquid-cooling
    plant) or installation."""
    platforms: list[Identifier] = Field(min_length=1)
    """Ids of the platforms the line applies to."""
    per: Literal["scalable_unit", "unit", "node", "cluster"]
    fabrics: list[Literal["infiniband", "ethernet"]] | None = None
    """Only for designs whose compute fabric is one of these (null: every design), e.g. UFM for InfiniBand."""
    nodes_per_scalable_unit: PosInt | None = None
    """Nodes (servers or compute trays) of one scalable unit of the reference architecture (per: scalable_unit)."""
    per_count: Annotated[int, Field(ge=1, le=100000)]
    """Items per scalable unit, unit or node."""
    unit_price_usd: Annotated[float, Field(ge=0, le=1e12)]
    """Price of one item, USD (0 when `included`)."""
    power_w: Annotated[float, Field(ge=0, le=1e7)] = 0.0
    """Power of one item, W (counted in IT power)."""
    included: bool = False
    """True when the item ships inside the platform's unit and its price is in the unit price (shown, $0)."""
    price_source: str = Field(min_length=1)
    price_date: Date
    price_is_estimate: bool = False
    source: str = Field(min_length=1)
    """Where the count comes from (the reference architecture's table and section)."""

    @model_validator(mode="after")
    def _su(self) -> SiteLine:
        if (self.per == "scalable_unit") != (self.nodes_per_scalable_unit is not None):
            raise ValueError("nodes_per_scalable_unit is given exactly when per: scalable_unit")
        if self.included and self.unit_price_usd != 0:
            raise ValueError("an included item is priced in the platform's unit: unit_price_usd must be 0")
        return self
