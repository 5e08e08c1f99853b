"""Cables and optics (SPEC §5): which catalog link option builds each tier of a fabric.

Among the catalog links of the switch's generation, the tier and the port split in use (`breakout`:
1 = native ports, 2 = ports split in two) whose `max_reach_m` ≥ the facility's `link_distance_m`
for that tier, the cheapest per link (then lowest W, then id): copper is used where it reaches. Per tier the BOM buys `cables = links` and ⌈links / links_per_module⌉
modules at each end (a twin-port module serves two links).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import CatalogCannotBuild
from ..inputs.schema import TIERS, Catalog, Facility, Link, Switch


def default_facility() -> Facility:
    """The schema's facility defaults, for a catalog without a facility block."""
    return Facility(source="schema defaults (catalog has no facility)")


def facility_of(catalog: Catalog) -> Facility:
    return catalog.facility if catalog.facility is not None else default_facility()


def choose_link(catalog: Catalog, generation: str, tier: str, distance_m: float, breakout: int = 1) -> Link:
    """Cheapest link option (usd_per_link, then w_per_link, then id) of this generation, tier and
    port split whose max_reach_m ≥ distance_m."""
    if tier not in TIERS:
        raise ValueError(f"tier must be one of {TIERS}, got {tier!r}")
    options = [x for x in catalog.links if x.generation == generation and x.tier == tier and x.breakout == breakout]
    reaching = [x for x in options if x.max_reach_m >= distance_m]
    if not reaching:
        have = ", ".join(f"{x.id} ({x.max_reach_m:g} m)" for x in options) or "none"
        split = f" for ports split {breakout} ways" if breakout > 1 else ""
        raise CatalogCannotBuild(f"no {generation} link{split} for tier {tier} reaches {distance_m:g} m; "
                                 f"catalog options: {have}")
    return min(reaching, key=lambda x: (x.usd_per_link, x.w_per_link, x.id))


def link_for(catalog: Catalog, switch: Switch, tier: str, breakout: int = 1) -> Link:
    """The link option used for `tier` with this switch (its ports split `breakout` ways), at the
    facility's link distance."""
    distance_m = getattr(facility_of(catalog).link_distance_m, tier)
    return choose_link(catalog, switch.generation, tier, distance_m, breakout)


@dataclass(frozen=True)
class LinkParts:
    """Cables and modules of one tier: cables = links, modules = ⌈links / links_per_module⌉."""

    cables: int
    switch_end_modules: int
    far_end_modules: int


def link_parts(links: int, link: Link) -> LinkParts:
    """cables = links; modules per end = ⌈links / links_per_module⌉ (a twin-port module serves two)."""
    return LinkParts(cables=links, switch_end_modules=math.ceil(links / link.switch_end_links_per_module),
                     far_end_modules=math.ceil(links / link.far_end_links_per_module))
