"""Stale prices (issue 45 item 6): the parts of the ranked designs whose catalog `price_date` is older than the
scenario's `price_max_age_months` (default 12), named per part in one warning, and their quoted lead times.

A date is read at the latest day it can mean: "2024" as 2024-12-31, "2024-08" as 2024-08-31, so a price is called
old only when every day it may stand for is older than the limit. Age in months = days / (365 / 12) (`units.DAYS_PER_MONTH`).
"""
from __future__ import annotations

import calendar
import datetime

from ..units import DAYS_PER_MONTH


def latest_day(price_date: str) -> datetime.date | None:
    """The last day a YYYY, YYYY-MM or YYYY-MM-DD date can mean (None for an empty or unreadable date)."""
    parts = [int(x) for x in price_date.split("-") if x.isdigit()] if price_date else []
    if not parts:
        return None
    year = parts[0]
    month = parts[1] if len(parts) > 1 else 12
    day = parts[2] if len(parts) > 2 else calendar.monthrange(year, month)[1]
    try:
        return datetime.date(year, month, day)
    except ValueError:
        return None


def age_months(price_date: str, today: datetime.date) -> float | None:
    """Months from the latest day `price_date` can mean to `today` (None when it cannot be read)."""
    day = latest_day(price_date)
    return None if day is None else (today - day).days / DAYS_PER_MONTH


def stale_prices(designs, max_age_months: float, today: datetime.date | None = None) -> list[tuple[str, str, float]]:
    """(part, price_date, age in months) of every bought BOM line of the designs older than the limit, one per
    part and date, oldest first."""
    today = today or datetime.date.today()
    found: dict[tuple[str, str], float] = {}
    for d in designs:
        for line in d.cost.bom:
            if line.owned or line.included or line.extended_usd <= 0:
                continue
            age = age_months(line.price_date, today)
            if age is not None and age > max_age_months:
                found[line.part, line.price_date] = age
    return sorted(((p, date, a) for (p, date), a in found.items()), key=lambda x: (-x[2], x[0]))


def price_age_warning(designs, max_age_months: float, today: datetime.date | None = None) -> str | None:
    """'prices older than 12 months (price_date in the catalog; check them before ordering): qm9700 2024-08
    (28 months), …' or None."""
    stale = stale_prices(designs, max_age_months, today)
    if not stale:
        return None
    parts = ", ".join(f"{part} {date} ({age:.0f} months)" for part, date, age in stale)
    return (f"prices older than {max_age_months:g} months (price_date in the catalog; check them before ordering, "
            f"or set price_max_age_months): {parts}")
