"""The length of a year (and of a day), defined once (issue 47s): every energy bill, TCO, goodput rate, rental share, cost per
million tokens, price age and fractional date reads it from here.

A year is 365 days (8,760 h, 31,536,000 s), the year docs/model.md, docs/rent-or-buy.md and docs/workbook.md work
their hand calculations in (TCO = capex + years · 8,760 h · facility kW · $/kWh; a rental month is 730 h).
"""
from __future__ import annotations

DAYS_PER_YEAR = 365.0
HOURS_PER_YEAR = DAYS_PER_YEAR * 24.0  # 8,760 h
SECONDS_PER_YEAR = HOURS_PER_YEAR * 3600.0  # 31,536,000 s
SECONDS_PER_DAY = 24.0 * 3600.0  # 86,400 s: a training day, a serving day's tokens
DAYS_PER_MONTH = DAYS_PER_YEAR / 12.0  # 30.4167 days: a price's age in months
HOURS_PER_MONTH = HOURS_PER_YEAR / 12.0  # 730 h: a rental commitment month
