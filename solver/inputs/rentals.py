"""Rental offers in the catalog (SPEC §6.2, Rentals v3): a cloud or colocation offer of a platform
with its network, priced per GPU-hour, so that every design can show renting the same GPU-hours
next to owning it (solver/rentals.py does the arithmetic).

Imported by catalog_schema.py (the Catalog's `rentals:` list); builds on schema_base.py only, so no import cycle.
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .schema_base import Date, Identifier, PosInt, Strict

RentalTerm = Literal["on-demand", "capacity-block", "reserved"]


class Rental(Strict):
    """One rental offer: a platform (its GPU and NVLink domain) with a scale-out network, per GPU-hour."""

    id: Identifier
    provider: str = Field(min_length=1)
    """Who rents it out (a cloud, a GPU cloud, a colocation provider)."""
    offer: str = Field(min_length=1)
    """The provider's name for it (instance type, cluster product)."""
    platform: Identifier
    """Id of the catalog platform it rents: designs with the same GPU and NVLink domain size can rent it."""
    rails_per_node: PosInt
    """Scale-out NICs (rails) per node of the offer, counted at the catalog NIC's speed (e.g. 8 × 400 Gb/s)."""
    nic_speed_gbps: Annotated[float, Field(gt=0, le=1e5)]
    """Speed of one of those NICs, Gb/s."""
    usd_per_gpu_hour: Annotated[float, Field(gt=0, le=1000)]
    """Price of one GPU for one hour, US dollars (instance price ÷ GPUs per instance)."""
    term: RentalTerm
    """on-demand (no commitment), capacity-block (a reserved block paid up front) or reserved (a contract)."""
    commitment_months: Annotated[float, Field(ge=0, le=120)] = 0.0
    """The shortest term that is paid for, months (0: pay per hour used; 12: a one-year reservation)."""
    price_source: str = Field(min_length=1)
    """Where the price comes from: a published pricing page (docs/sources.md [Rn]) or a quote."""
    price_date: Date
    """Date of the price: YYYY, YYYY-MM or YYYY-MM-DD."""
    price_is_estimate: bool = False
    """True when the price is an estimate (a secondary source, a conversion or own arithmetic)."""
    max_gpus: PosInt | None = None
    """The largest block the provider rents in one order, GPUs (None: solver/rentals.DEFAULT_MAX_GPUS)."""
    max_gpus_source: str = ""
    """Where `max_gpus` comes from."""
