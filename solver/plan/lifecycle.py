"""Parts that age (SPEC §6.3 Lifecycle, issue 43): the catalog's `lifecycle:` windows and price trends
applied to a plan's periods.

Period p of a plan with start year S and period length Y covers [S + p·Y, S + (p+1)·Y). A part (looked
up by its own id, else, for a platform, by its GPU's id) is orderable in period p when its window
overlaps the period:

    available_from < S + (p+1)·Y   and   end(orderable_until) > S + p·Y

where end() is the end of the date's resolution (2026 → 2027.0, 2026-12 → 2027.0). The plan MILP fixes
bought[p,g,key] = 0 for a key whose part is not orderable (`orderable_window`), and the ledger buys each
unit in the cheapest period it is orderable in (none: the plan is infeasible). A part with a
`price_change_per_year` t is priced in period p at (1 + t)^(p·Y) of its catalog price, instead of the
plan's category factor. Without `start_year` the windows cannot be placed and are not applied (a note).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..inputs.lifecycle_schema import Lifecycle, year_of
from ..inputs.schema import Catalog
from ..units import DAYS_PER_YEAR


def _end(date: str) -> float:
    """The end of a Date's resolution as a fractional year."""
    start = year_of(date)
    assert start is not None
    parts = date.split("-")
    return start + (1.0 if len(parts) == 1 else 1.0 / 12.0 if len(parts) == 2 else 1.0 / DAYS_PER_YEAR)


def lifecycle_of(catalog: Catalog, part: str) -> Lifecycle | None:
    """The lifecycle entry of a part: its own id, else its platform's GPU id."""
    entries = catalog.by_id("lifecycle")
    if part in entries:
        return entries[part]
    platform = catalog.by_id("platforms").get(part)
    return entries.get(platform.gpu) if platform is not None else None


def orderable(entry: Lifecycle | None, start: float, end: float) -> bool:
    """available_from < end and end(orderable_until) > start (no entry or no date: no limit)."""
    if entry is None:
        return True
    opens = year_of(entry.available_from)
    if opens is not None and opens >= end - 1e-9:
        return False
    return entry.orderable_until is None or _end(entry.orderable_until) > start + 1e-9


@dataclass
class PlanLifecycle:
    """The windows and trends of one plan: per period its years and, per part asked, the verdicts."""

    catalog: Catalog
    years: list[tuple[float, float]]  # (start, end) of each period
    period_years: float
    _memo: dict = field(default_factory=dict)

    def orderable(self, p: int, part: str) -> bool:
        key = ("o", p, part)
        if key not in self._memo:
            self._memo[key] = orderable(lifecycle_of(self.catalog, part), *self.years[p])
        return self._memo[key]

    def factor(self, p: int, part: str, category_factor: float) -> float:
        """(1 + t)^(p·Y) for a part with a trend t, else the plan's category factor."""
        entry = lifecycle_of(self.catalog, part)
        if entry is None or entry.price_change_per_year is None:
            return category_factor
        return float((1 + entry.price_change_per_year) ** (p * self.period_years))

    def window_text(self, part: str) -> str:
        entry = lifecycle_of(self.catalog, part)
        if entry is None:
            return "no window"
        return f"{entry.available_from or '…'} to {entry.orderable_until or '…'}"


def plan_lifecycle(catalog: Catalog, start_year: int | None, period_years: float, periods: int) -> PlanLifecycle | None:
    """The plan's lifecycle, or None when the catalog has none or the plan has no start year."""
    if not catalog.lifecycle or start_year is None:
        return None
    years = [(start_year + p * period_years, start_year + (p + 1) * period_years) for p in range(periods)]
    return PlanLifecycle(catalog, years, period_years)
