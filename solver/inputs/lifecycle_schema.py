"""When a part can be ordered and how its price moves (SPEC §6.3 Lifecycle, issue 43): the catalog's
`lifecycle:` section, one entry per part id or per GPU (a GPU id covers every platform built on it).
solver/plan/lifecycle.py applies it to a plan: nothing is bought outside its window, and a part with a
price trend is priced by it instead of the plan's category change.

Kept apart from the part entries so that a lifecycle update never touches them. Builds on
schema_base.py only, so no import cycle.
"""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .schema_base import Date, Identifier, Strict


class Lifecycle(Strict):
    """The orderable window and price trend of a catalog part (or of every platform of a GPU)."""

    id: Identifier
    """A catalog part id (platform, NIC, switch, link, rack) or a GPU id (all its platforms)."""
    available_from: Date | None = None
    """First date it can be ordered (YYYY, YYYY-MM or YYYY-MM-DD); None: always could."""
    orderable_until: Date | None = None
    """Last date it can be ordered; None: no end announced."""
    price_change_per_year: Annotated[float, Field(gt=-1, le=1)] | None = None
    """Yearly relative price change once orderable (e.g. −0.15); None: the plan's category change applies."""
    source: str = Field(min_length=1)
    """Where the dates and the trend come from (docs/sources.md entry), or "estimate: …"."""
    is_estimate: bool = False
    """True when the dates or the trend are estimates."""


def year_of(date: str | None) -> float | None:
    """A Date as a fractional year: 2027 → 2027.0, 2027-07 → 2027.5, 2027-07-01 → 2027.5 (month start)."""
    if date is None:
        return None
    parts = [int(x) for x in date.split("-")]
    return parts[0] + ((parts[1] - 1) / 12.0 if len(parts) > 1 else 0.0)
