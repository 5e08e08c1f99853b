"""A site's energisation phases applied to a plan's periods (issue 43b, SPEC §6.3).

A plan period that starts at date t_p = start_year + p · period_years may use only the power energised by then
(`Site.power_mw_at(t_p)`, the last phase dated ≤ t_p). Each period's scenario gets the cap

    facility_power_kw_p = min(own cap, MW(t_p) · 1,000 / (peak_to_average · s_max,p))      (site_phase_cap[p])

on the design's nameplate facility kW (IT kW · PUE), where s_max,p is the largest `sustained_power_fraction`
among the platforms period p allows (docs/site.md: provisioned = s · IT kW · PUE · headroom). With one
fraction among the allowed platforms the cap is exact; with several it is conservative, and a note says so.
The MILP's period_caps and the enumeration oracle both read the period scenario, so they apply the same cap.
Cooling is not a plan decision: the plan keeps the scenario's PUE (tco.pue or the catalog facility's).
"""
from __future__ import annotations

import math

from ..inputs.schema import Catalog
from ..inputs.site_schema import Site
from ..optimize.site import sustained_fraction


def period_date(start_year: float, period_years: float, p: int) -> str:
    """The start of period p as YYYY-MM (the month the fractional year falls in)."""
    t = start_year + p * period_years
    year = math.floor(t + 1e-9)
    month = min(12, 1 + math.floor((t - year) * 12 + 1e-6))
    return f"{year:04d}-{month:02d}"


def site_phase_cap_kw(site: Site, date: str, platforms: list[str] | None, catalog: Catalog) -> tuple[float, str]:
    """(the cap on nameplate facility kW for a period starting at `date`, a note). ValueError when nothing is
    energised by then."""
    mw = site.power_mw_at(date)
    plats = [p for p in catalog.platforms if platforms is None or p.id in platforms]
    fractions = sorted({sustained_fraction(p) for p in plats}) or [1.0]
    s = fractions[-1]
    cap = mw * 1000.0 / (site.peak_to_average * s)
    note = (f"{date}: site power {mw:g} MW energised → facility ≤ {cap:,.0f} kW at nameplate "
            f"(÷ headroom {site.peak_to_average:g} ÷ sustained draw {s:g})")
    if len(fractions) > 1:
        note += f"; the allowed platforms draw {', '.join(f'{f:g}' for f in fractions)} of nameplate: the largest is used (conservative)"
    return cap, note
