"""What owning a cluster costs beyond its purchase (SPEC §6.3, issue 43): the `ownership:` block of a
scenario. solver.costing.owned.ownership_cost does the arithmetic; every default below carries its
source in `OWNERSHIP_SOURCES` (docs/sources.md [W1]–[W6]), and the outputs list each input with it.

Builds on schema_base.py only, so no import cycle.
"""
from __future__ import annotations

from typing import Annotated

from pydantic import Field

from .schema_base import Strict

OWNERSHIP_SOURCES: dict[str, str] = {
    "depreciation_years": "Amazon 10-K FY2024: servers and networking equipment of the AI fleet from 6 to 5 "
                          "years from 2025-01-01 (docs/sources.md [W1])",
    "residual_fraction": "estimate: 10 % of the purchase price resold after the depreciation life; no public "
                         "series of used-GPU-cluster prices (docs/sources.md [W2])",
    "colocation_usd_per_kw_month": "CBRE North America Data Center Trends H2 2024 (2025-02-26): average asking "
                                   "rate $184.06 per kW-month, 250–500 kW, primary markets (docs/sources.md [W3])",
    "support_fraction_per_year": "estimate: hardware support and software subscriptions at 4 % of capex a "
                                 "year; vendors quote these only (docs/sources.md [W4])",
    "staff_usd_per_gpu_year": "estimate: 2 engineers at $200,000 a year per 1,000 GPUs = $400 per GPU-year "
                              "(docs/sources.md [W5])",
    "cost_of_capital": "estimate: 8 % a year, the discount rate of the plan example in docs/plan.md (docs/sources.md [W6])",
}
"""The source of each default; a value the scenario sets is reported as `scenario`."""


class Ownership(Strict):
    """The cost of owning beyond the purchase and the energy, spread over the hardware's economic life."""

    depreciation_years: Annotated[float, Field(gt=0, le=20)] = 5.0
    """Economic life of the hardware, years: the purchase less its residual value is spread over it."""
    residual_fraction: Annotated[float, Field(ge=0, lt=1)] = 0.10
    """Resale value at the end of the life, as a fraction of capex."""
    colocation_usd_per_kw_month: Annotated[float, Field(ge=0, le=10_000)] = 184.06
    """Colocation or building cost per kW of IT load per month (the site's space, cooling and power plant;
    the energy itself is the TCO's $/kWh)."""
    support_fraction_per_year: Annotated[float, Field(ge=0, le=1)] = 0.04
    """Support contracts (hardware and software) per year, as a fraction of capex."""
    staff_usd_per_gpu_year: Annotated[float, Field(ge=0, le=100_000)] = 400.0
    """Operations staff per owned GPU per year, USD."""
    cost_of_capital: Annotated[float, Field(ge=0, le=1)] = 0.08
    """Financing: the yearly cost of the capital tied up (on the average book value)."""

    def sources(self) -> dict[str, str]:
        """{field: source}: `scenario` for a value the scenario set to other than the default."""
        fields = type(self).model_fields
        return {name: ("scenario" if getattr(self, name) != fields[name].default else OWNERSHIP_SOURCES[name])
                for name in OWNERSHIP_SOURCES}
