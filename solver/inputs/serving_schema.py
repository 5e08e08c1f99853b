"""Typed serving inputs (SPEC §4.9): the `serving:` block of a `workload.kind: inference` scenario (traffic,
latency targets, disaggregation) and the serving pins (`pin: {platform, tp, pp, ep, concurrency, replicas}` or
`pin: {prefill: {…}, decode: {…}}`).

A field's docstring is its description (`Strict`, schema_base.py). Units are in the field names.
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..units import SECONDS_PER_DAY
from .schema_base import Identifier, PosInt, Strict

HOURS = 24


class Traffic(Strict):
    """The load to serve: a peak request rate, or tokens per day with a peak-to-mean ratio or a 24-hour profile."""

    requests_per_s: Annotated[float, Field(gt=0, le=1e9)] | None = None
    """Requests per second at the peak (give this, or tokens_per_day)."""
    tokens_per_day: Annotated[float, Field(gt=0, le=1e18)] | None = None
    """Input plus output tokens served per day; the mean request rate is tokens_per_day / 86,400 /
    (input_tokens + output_tokens), the peak that times peak_to_mean (or the diurnal profile's max / mean)."""
    peak_to_mean: Annotated[float, Field(ge=1, le=100)] | None = None
    """With tokens_per_day: the peak hour's load over the day's mean."""
    diurnal: Annotated[list[Annotated[float, Field(ge=0, le=1e12)]], Field(min_length=24, max_length=24)] | None = None
    """With tokens_per_day: 24 relative loads, one per hour (any scale); peak_to_mean = max / mean."""
    input_tokens: Annotated[int, Field(ge=1, le=10_000_000)]
    """Mean prompt length, tokens."""
    output_tokens: Annotated[int, Field(ge=1, le=10_000_000)]
    """Mean generated length, tokens."""
    input_tokens_p90: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    """90th-percentile prompt length (optional; reported, the model uses the mean)."""
    output_tokens_p90: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    """90th-percentile generated length (optional; reported, the model uses the mean)."""
    prefix_cache_hit: Annotated[float, Field(ge=0, lt=1)] = 0.0
    """Share of prompt tokens found in the prefix cache (not prefilled again)."""

    @model_validator(mode="after")
    def _one_rate(self) -> Traffic:
        if (self.requests_per_s is None) == (self.tokens_per_day is None):
            raise ValueError("give either requests_per_s (at the peak) or tokens_per_day (with peak_to_mean or diurnal)")
        if self.tokens_per_day is not None and (self.peak_to_mean is None) == (self.diurnal is None):
            raise ValueError("tokens_per_day needs exactly one of peak_to_mean or diurnal (24 hourly loads)")
        if self.requests_per_s is not None and (self.peak_to_mean is not None or self.diurnal is not None):
            raise ValueError("requests_per_s is the peak already: leave out peak_to_mean and diurnal")
        if self.diurnal is not None and not sum(self.diurnal) > 0:
            raise ValueError("diurnal: at least one hour must carry load")
        return self

    def peak_factor(self) -> float:
        """Peak over mean load: peak_to_mean, or max(diurnal) / mean(diurnal), or 1 for a peak rate."""
        if self.diurnal is not None:
            return max(self.diurnal) / (sum(self.diurnal) / HOURS)
        return self.peak_to_mean if self.peak_to_mean is not None else 1.0

    def peak_requests_per_s(self) -> float:
        """λ at the peak: requests_per_s, or tokens_per_day / 86,400 / (input + output) · peak factor."""
        if self.requests_per_s is not None:
            return self.requests_per_s
        assert self.tokens_per_day is not None  # _one_rate
        return self.tokens_per_day / SECONDS_PER_DAY / (self.input_tokens + self.output_tokens) * self.peak_factor()

    def mean_requests_per_s(self) -> float:
        """The day's mean request rate (the peak rate itself when only a peak is given)."""
        return self.peak_requests_per_s() / self.peak_factor()


class Slo(Strict):
    """Latency targets, at the 90th percentile, and the utilisation headroom."""

    ttft_p90_s: Annotated[float, Field(gt=0, le=3600)]
    """Time to first token, 90th percentile, s (queueing at the prefill servers included)."""
    tpot_p90_ms: Annotated[float, Field(gt=0, le=1e6)] | None = None
    """Time per output token, 90th percentile, ms (give this or tokens_per_s_per_user)."""
    tokens_per_s_per_user: Annotated[float, Field(gt=0, le=1e6)] | None = None
    """The decode speed each user sees, tokens/s (= 1000 / tpot_p90_ms)."""
    utilisation_max: Annotated[float, Field(gt=0, le=1)] = 0.8
    """The busiest a server may be at the peak: capacity · utilisation_max ≥ peak traffic."""

    @model_validator(mode="after")
    def _one_speed(self) -> Slo:
        if self.tpot_p90_ms is not None and self.tokens_per_s_per_user is not None:
            raise ValueError("give tpot_p90_ms or tokens_per_s_per_user, not both (one is 1000 / the other)")
        return self

    def tpot_max_s(self) -> float:
        """The TPOT bound, s: tpot_p90_ms / 1000, or 1 / tokens_per_s_per_user; infinite when neither is given
        (objective: fastest then maximises tokens/s per user)."""
        if self.tpot_p90_ms is not None:
            return self.tpot_p90_ms / 1000.0
        if self.tokens_per_s_per_user is not None:
            return 1.0 / self.tokens_per_s_per_user
        return float("inf")


Disaggregation = Literal["off", "on", "auto"]
DEFAULT_CONCURRENCY = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512)


class NightTraining(Strict):
    """A training job run on the fleet's off-peak GPUs (with a diurnal profile): what they train per day."""

    scenario: str = Field(min_length=1, max_length=4096)
    """A training scenario file (relative to this scenario's file): its workload and layout allow-lists."""
    hours: Annotated[int, Field(ge=1, le=23)] = 8
    """Hours a day the job runs, on the GPUs idle in at least that many hours."""


class Serving(Strict):
    """A serving fleet's mission (SPEC §4.9): peak traffic within the latency targets."""

    traffic: Traffic
    slo: Slo
    disaggregation: Disaggregation = "auto"
    """`off`: one aggregated pool; `on`: a prefill and a decode pool; `auto`: the cheaper of the two."""
    concurrency: PosInt | Annotated[list[PosInt], Field(min_length=1, max_length=64)] | None = None
    """Sequences a replica decodes together (its batch): the allowed values (default 1, 2, 4, … 512)."""
    platforms_per_pool: Literal["any", "same"] = "any"
    """Disaggregated fleets: `any` lets prefill and decode use different platforms; `same` keeps one."""
    night_training: NightTraining | None = None
    """With a diurnal profile: a training job on the off-peak GPUs of the fleet's decode (or aggregated) pool."""

    @model_validator(mode="after")
    def _night_needs_a_day(self) -> Serving:
        if self.night_training is not None and self.traffic.diurnal is None:
            raise ValueError("night_training needs a 24-hour traffic.diurnal profile (the idle hours come from it)")
        return self

    def concurrency_values(self) -> tuple[int, ...]:
        c = self.concurrency
        if c is None:
            return DEFAULT_CONCURRENCY
        return tuple(sorted(set(c))) if isinstance(c, list) else (c,)


class PoolPin(Strict):
    """One pool of a serving fleet, pinned (any field left out is optimised)."""

    platform: Identifier | None = None
    nic: Identifier | None = None
    rails_per_node: PosInt | None = None
    switch: Identifier | None = None
    tp: PosInt | None = None
    pp: PosInt | None = None
    ep: PosInt | None = None
    concurrency: PosInt | None = None
    """Sequences the replica decodes together."""
    replicas: PosInt | None = None
    """Replicas in the pool (at least what the traffic and the TTFT target need)."""
