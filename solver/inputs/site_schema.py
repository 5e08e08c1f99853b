"""Power-first sites (SPEC §6.3, issue 43): the `site:` block of a scenario and the catalog's GPU
`power_profiles:`. Workload-agnostic on purpose (power and racks in, caps out): training solves and, later,
serving fleets read the same block. solver/optimize/site.py turns it into decisions.

Builds on schema_base.py only, so no import cycle.
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from .schema_base import Date, Identifier, Strict

CoolingType = Literal["air", "liquid"]


class SitePhase(Strict):
    """One energisation step: from `energised` on, the site has `power_mw` in all (not in addition)."""

    energised: Date
    """Date the power is available (YYYY, YYYY-MM or YYYY-MM-DD)."""
    power_mw: Annotated[float, Field(gt=0, le=1e5)]
    """Power the utility delivers to the site from that date, MW (the facility's peak draw must fit)."""


class CoolingOption(Strict):
    """A cooling type the site can build: its PUE, the densest rack it cools and what it costs."""

    type: CoolingType
    """air (rear-door heat exchangers or CRAH) or liquid (direct-to-chip with CDUs)."""
    pue: Annotated[float, Field(ge=1, le=3)]
    """Facility power ÷ IT power with this cooling."""
    rack_kw_max: Annotated[float, Field(gt=0, le=1000)]
    """The most IT power one rack may draw with this cooling, kW (per-hall limit)."""
    capex_usd_per_kw: Annotated[float, Field(ge=0, le=1e5)] = 0.0
    """Cooling plant the design must buy per kW of IT load (CDUs, rear-door heat exchangers), USD."""
    racks_max: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    """Racks the halls with this cooling hold (compute and network racks); null: no limit."""
    source: str = Field(min_length=1)
    """Where the PUE, density and price come from, or "estimate: …"."""


class Site(Strict):
    """A site's power by energisation phase and the cooling it can build (SPEC §6.3)."""

    power: list[SitePhase] = Field(min_length=1)
    """Energisation phases, in date order."""
    cooling: list[CoolingOption] = Field(min_length=1)
    """The cooling types to choose from (one per type)."""
    peak_to_average: Annotated[float, Field(ge=1, le=3)] = 1.0
    """Headroom: the provisioned power must cover the average facility draw times this (load swings)."""
    at: Date | None = None
    """Which phase a solve uses: the power energised by this date (None: the last phase)."""
    power_profiles: bool = True
    """Choose each GPU's power profile (catalog `power_profiles:`) as a decision; false: rated power only."""

    @field_validator("power")
    @classmethod
    def _one_phase_per_date(cls, phases: list[SitePhase]) -> list[SitePhase]:
        """Two phases energised on the same date would give the site two powers from that day (issue 47s: the last
        was taken silently): refused, with both phases named."""
        first: dict[str, int] = {}
        for i, phase in enumerate(phases):
            if phase.energised in first:
                j = first[phase.energised]
                raise ValueError(f"phases {j} and {i} (from 0) are both energised on {phase.energised} "
                                 f"({phases[j].power_mw:g} MW and {phase.power_mw:g} MW): give one phase per date, its "
                                 "power_mw the site's total from that date")
            first[phase.energised] = i
        return phases

    @model_validator(mode="after")
    def _ordered(self) -> Site:
        dates = [p.energised for p in self.power]
        if dates != sorted(dates):
            raise ValueError("power phases must be in date order (energised)")
        if self.at is not None and self.at < dates[0]:
            raise ValueError(f"at: {self.at} is before the first power phase (energised {dates[0]}): set `at` to "
                             f"{dates[0]} or later, or leave it out (the last phase)")
        types = [c.type for c in self.cooling]
        if len(set(types)) != len(types):
            raise ValueError("one cooling option per type")
        return self

    def power_mw_at(self, date: str | None = None) -> float:
        """The site's power at `date` (default `at`, else the last phase): the last phase energised by then."""
        when = date or self.at
        phases = [p for p in self.power if when is None or p.energised <= when]
        if not phases:
            raise ValueError(f"no power is energised by {when}")
        return phases[-1].power_mw


class PowerProfile(Strict):
    """A GPU run at a lower power limit (catalog `power_profiles:`), with the throughput it keeps."""

    id: Identifier
    gpu: Identifier
    """The catalog GPU it applies to."""
    gpu_w: Annotated[float, Field(gt=0, le=1e4)]
    """The GPU's power limit in this profile, W (below its tdp_w)."""
    relative_throughput: Annotated[float, Field(gt=0, le=1)]
    """Training throughput kept at that limit, as a fraction of the rated-power throughput."""
    source: str = Field(min_length=1)
    is_estimate: bool = False
