"""Typed scenario inputs (SPEC §3): the target, constraints, parallelism, overlap and robustness, pins,
sweeps, owned hardware, extra costs, multi-period plans and the `Scenario` that holds them with its workload.

Re-exported by `schema.py` (import from there); a field's docstring is its description (`Strict`, schema_base.py).
Validation that needs the catalog too lives in `scenario.py`.
"""
from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator, model_serializer, model_validator

from ..units import SECONDS_PER_DAY
from .catalog_schema import FabricFamilyName, Fraction, Positive
from .nic_configs import CapexScope, NicConfigChoice
from .ownership_schema import Ownership
from .reliability import ScenarioReliability
from .schema_base import Date, Identifier, PosInt, Strict
from .serving_schema import PoolPin, Serving
from .site_schema import Site
from .user_row_schema import UserRow
from .workload_schema import TransformerShape, Workload


class Target(Strict):
    step_time_s: Annotated[float, Field(gt=0, le=10000000.0)] | None = None
    """The step time to meet, s."""
    train_tokens: Annotated[float, Field(gt=0, le=1e+18)] | None = None
    """Tokens to train on: with train_days instead of step_time_s, or alone to show each design's training days."""
    train_days: Annotated[float, Field(gt=0, le=100000.0)] | None = None
    """Days to train train_tokens in."""
    goodput: Annotated[float, Field(gt=0, le=1)] | None = None
    """Fraction of wall-clock time spent on training steps (restarts, failures and checkpoints take the rest), given
    by hand: the step-time target is train_days·86,400·goodput / steps, and training days = steps·step_time /
    (goodput·86,400). Null = computed per design from the catalog's failure data (docs/model.md "Goodput"), or 1
    without it."""

    @model_validator(mode="after")
    def _one_way(self) -> Target:
        by_time = self.step_time_s is not None
        if by_time and self.train_days is not None:
            raise ValueError("give either step_time_s, or train_tokens with train_days, not both")
        if self.train_days is not None and self.train_tokens is None:
            raise ValueError("train_days needs train_tokens (the tokens to train on in that time)")
        if self.goodput is not None and self.goodput != 1.0 and self.train_tokens is None:
            raise ValueError("goodput needs train_tokens: it scales the training days of train_tokens")
        return self

    @property
    def given(self) -> bool:
        """A step time follows from the target (step_time_s, or train_tokens with train_days)."""
        return self.step_time_s is not None or self.train_days is not None


CAPS = ("budget_usd", "facility_power_kw", "max_gpus", "max_racks")
# an allow-list is a value or a non-empty list (an empty one used to mean "all": leave the key out for that)
IntChoice = PosInt | Annotated[list[PosInt], Field(min_length=1)] | None
Ratio = Annotated[float, Field(ge=1, le=64)]
FloatChoice = Ratio | Annotated[list[Ratio], Field(min_length=1)] | None
IdChoice = Identifier | Annotated[list[Identifier], Field(min_length=1)] | None


class Constraints(Strict):
    max_gpus: Annotated[int, Field(ge=1, le=100000000)] | None = None
    """At most this many GPUs bought."""
    budget_usd: Annotated[float, Field(gt=0, le=100000000000000.0)] | None = None
    """Capex at most this, USD."""
    facility_power_kw: Annotated[float, Field(gt=0, le=1000000000.0)] | None = None
    """Facility power (IT × PUE) at most this, kW."""
    max_racks: Annotated[int, Field(ge=1, le=10000000)] | None = None
    """At most this many racks."""
    platforms: IdChoice = None
    gpus: IdChoice = None
    nics: IdChoice = None
    switches: IdChoice = None
    rails_per_node: IntChoice = None
    """Allowed scale-out NICs per node."""
    oversubscription: FloatChoice = None
    """Allowed leaf down:up ratios (1 = non-blocking)."""
    above_pod_oversubscription: FloatChoice = None
    """Allowed down:up ratios of the tier above the pods (the spine's uplinks in 3-tier fabrics;
    Llama 3's 1:7 is 7). Designs of 1 or 2 tiers have no such tier. Null = [1]."""
    fabrics: FabricFamilyName | Annotated[list[FabricFamilyName], Field(min_length=1)] | None = None
    """Allowed fabric families: fat-tree, multi-plane, rail-only. Null = the deployed ones (fat-tree,
    multi-plane); rail-only only when named here (SPEC §5.2)."""
    nic_configurations: NicConfigChoice = None
    """NIC configurations (catalog nic_configurations) besides the reference ones: `any`, or a list of
    configuration ids. Null = reference configurations only."""
    spare_nodes_fraction: Annotated[float, Field(ge=0, le=1)] = 0.0
    """Spare compute units bought and cabled, as a fraction of the job's units."""
    contingency_fraction: Annotated[float, Field(ge=0, le=1)] = 0.0
    """Contingency added to capex, as a fraction."""
    user: list[UserRow] | None = None
    """Your own linear rows on the training MILP, e.g. `- expr: "nodes[hgx-h200] <= 64"` (inputs/user_row_schema.py;
    docs/architecture.md "A user's own constraint")."""

    @model_serializer(mode="wrap")
    def _rows_when_given(self, handler: Any) -> Any:
        """A dump leaves `user` out when no row is given, so a scenario dumps (and a sweep hashes) as before it
        existed."""
        data = handler(self)
        if self.user is None and isinstance(data, dict):
            data.pop("user", None)
        return data


class Parallelism(Strict):
    """Allowed values of each layout dimension: a scalar pins it, a list allows, null = defaults."""

    tp: IntChoice = None
    cp: IntChoice = None
    pp: IntChoice = None
    vp: IntChoice = None
    microbatch_size: IntChoice = None
    ep: IntChoice = None
    """Expert parallelism (Mixture-of-Experts only); null = 1, 2, 4, … 64 that divide the experts."""
    etp: IntChoice = None
    """Expert tensor parallelism (Mixture-of-Experts only); null = 1."""


class EfficiencyOverrides(Strict):
    compute_efficiency: Fraction | None = None
    nvlink_efficiency: Fraction | None = None
    nic_efficiency: Fraction | None = None


class Overlap(Strict):
    """Share φ_k of each class's schedule window (SPEC §4.5) its communication can hide behind: 1 = the
    whole window, 0 = exposed. null = the default (docs/model.md "Overlap windows")."""

    tp: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of the layer's GEMM time that hides TP (TP comm overlap; default 0, exposed)."""
    cp: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of the layer's attention core that hides the CP exchange (default 1; 0 for all-gather CP)."""
    pp: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of the next chunk's compute that hides an interleaved pipeline's sends (default 1; 1F1B blocks)."""
    dp: Annotated[float, Field(ge=0, le=1)] | None = None
    """Sets dp_rs and dp_ag together (each may be given on its own)."""
    dp_rs: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of the last microbatch's backward (fsdp: every backward) that hides the gradient reduce-scatter."""
    dp_ag: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of the first microbatch's forward (fsdp: every pass) that hides the parameter all-gather."""


class Robustness(Strict):
    """Margins a design must keep (SPEC §4.5): it must still meet the target with compute this much slower,
    and (separately) with scale-out bandwidth this much lower."""

    compute_slowdown: Annotated[float, Field(ge=0, le=10)] = 0.0
    """Uniform compute slowdown to survive, as a fraction (0.1 = compute takes 10 % longer)."""
    bandwidth_derate: Annotated[float, Field(ge=0, lt=1)] = 0.0
    """Uniform loss of scale-out bandwidth to survive, as a fraction (0.2 = 80 % of the bandwidth left)."""
    quantile: Annotated[float, Field(ge=0.5, le=0.95)] | None = None
    """Meet the target at this quantile of the step time (0.9 = p90): each design's step time × (1 + the quantile
    of the calibration residuals of its regime; solver/perf/uncertainty.py). null = the nominal step time."""


class Tco(Strict):
    years: Annotated[float, Field(gt=0, le=50)] = 5.0
    usd_per_kwh: Annotated[float, Field(ge=0, le=10)] | None = None
    pue: Annotated[float, Field(ge=1, le=5)] | None = None


class Pin(Strict):
    platform: Identifier | None = None
    nic: Identifier | None = None
    rails_per_node: PosInt | None = None
    switch: Identifier | None = None
    tiers: Annotated[int, Field(ge=1, le=3)] | None = None
    oversubscription: Annotated[float, Field(ge=1, le=64)] | None = None
    above_pod_oversubscription: Annotated[float, Field(ge=1, le=64)] | None = None
    """Down:up of the tier above the pods (3-tier designs only)."""
    fabric: FabricFamilyName | None = None
    """Fabric family: fat-tree, multi-plane or rail-only."""
    tp: PosInt | None = None
    cp: PosInt | None = None
    pp: PosInt | None = None
    vp: PosInt | None = None
    dp: PosInt | None = None
    microbatch_size: PosInt | None = None
    gpus_per_domain_used: PosInt | None = None
    nodes: PosInt | None = None
    ep: PosInt | None = None
    """Expert parallelism (Mixture-of-Experts only)."""
    etp: PosInt | None = None
    """Expert tensor parallelism (Mixture-of-Experts only)."""
    concurrency: PosInt | None = None
    """Serving (kind: inference): sequences a replica decodes together, aggregated pool."""
    replicas: PosInt | None = None
    """Serving: replicas of the aggregated pool."""
    prefill: PoolPin | None = None
    """Serving: the prefill pool of a disaggregated fleet ({platform, tp, pp, ep, concurrency, replicas})."""
    decode: PoolPin | None = None
    """Serving: the decode pool of a disaggregated fleet."""


class SweepRange(Strict):
    start: float
    stop: float
    step: Annotated[float, Field(gt=0)]


class SweepGrowth(Strict):
    factor: Annotated[float, Field(gt=0, le=1000)]
    steps: Annotated[int, Field(ge=1, le=1000)]
    per: str = Field(default="year", min_length=1, max_length=40)
    """What one step of growth stands for (the value grows `factor`× per year, quarter, generation…);
    the sweep workbook and plot number the points 0, 1, … `steps` on an axis named after it."""


class SweepParameter(Strict):
    path: str = Field(min_length=1)
    values: list[float | str] | None = Field(default=None, min_length=1, max_length=10_000)
    """The values, one per point: numbers, or words for a word field (precision, a platform id)."""
    range: SweepRange | None = None
    growth: SweepGrowth | None = None
    round_to_int: bool | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> SweepParameter:
        given = [k for k in ("values", "range", "growth") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of values, range or growth (got {given or 'none'})")
        return self


class NamedModel(Strict):
    name: str = Field(min_length=1)
    model: TransformerShape
    global_batch_size: PosInt | None = None
    step_time_s: Positive | None = None


class Sweep(Strict):
    combine: Literal["product", "zip"] = "product"
    parameters: list[SweepParameter] = []
    models: list[NamedModel] = []


# ----------------------------------------------------------------------------------- owned hardware, extra costs, plans


PRICE_CATEGORIES = ("compute", "nic", "switch", "link", "rack", "extra")
"""Bill-of-materials categories a plan's price factors apply to (spares follow compute)."""
PriceCategory = Literal["compute", "nic", "switch", "link", "rack", "extra"]
Year = Annotated[int, Field(ge=1950, le=2200)]


class OwnedPart(Strict):
    """Hardware the buyer already owns, with the year it was bought."""

    count: Annotated[int, Field(ge=0, le=100_000_000)]
    """How many: nodes (or whole domains for a platform bought per domain, e.g. NVL72 racks), NICs,
    switches, complete links (cable and the modules at both ends) or racks."""
    purchase_year: Year | None = None
    """Calendar year it was bought: with plan.start_year it gives the part's age and straight-line
    book value over tco.years in the plan's report (reports only; owned parts cost nothing to reuse)."""

    @model_validator(mode="before")
    @classmethod
    def _bare_count(cls, data: Any) -> Any:
        """`dgx-h100: 64` is short for `dgx-h100: {count: 64}`."""
        if isinstance(data, int) and not isinstance(data, bool):
            return {"count": data}
        return data


class ExtraCost(Strict):
    """A cost line by rule that makes capex complete for finance (storage, front-end network, support,
    installation): exactly one of per_node_usd, per_gpu_usd or fraction_of_hardware."""

    name: Identifier
    """Short name, shown as the BOM line's part (e.g. storage, front-end-network, support)."""
    description: str = ""
    per_node_usd: Annotated[float, Field(ge=0, le=1e9)] | None = None
    """USD per node bought (spares included); owned nodes of the design's platform bring their own."""
    per_gpu_usd: Annotated[float, Field(ge=0, le=1e9)] | None = None
    """USD per GPU bought (spares included); owned GPUs of the design's platform bring their own."""
    fraction_of_hardware: Annotated[float, Field(ge=0, le=10)] | None = None
    """Fraction of the hardware lines bought (compute, spares, NICs, switches, links, racks, and the site's
    storage fabric, management switches and cooling plant; not installation), e.g. a support contract at
    0.08 of the hardware price."""
    price_source: str = Field(min_length=1)
    """Where the rule comes from (docs/sources.md [n], a quote) or how it was estimated."""
    price_date: Date
    """Date of the figure: YYYY, YYYY-MM or YYYY-MM-DD."""
    price_is_estimate: bool = False
    """True when the figure is an estimate."""

    @model_validator(mode="after")
    def _one_rule(self) -> ExtraCost:
        given = [k for k in ("per_node_usd", "per_gpu_usd", "fraction_of_hardware") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of per_node_usd, per_gpu_usd or fraction_of_hardware (got {given or 'none'})")
        return self


class PlanGrowth(Strict):
    """A growth rule for one numeric scenario field: value in period p = the scenario's value · factor^p."""

    path: str = Field(min_length=1)
    """Dotted path of a numeric scenario field, e.g. workload.global_batch_size."""
    factor: Annotated[float, Field(gt=0, le=1000)]
    """Growth per period (1.5 = +50 % a period)."""
    round_to_int: bool | None = None
    """Round to whole numbers (default: integer fields are rounded half up, like the sweep's)."""


class PlanPeriod(Strict):
    """One period of a plan given explicitly: field values and price factors that hold in it."""

    label: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    """Name in reports, at most 200 characters (default: the year, or "period p")."""
    set: dict[str, float] = {}
    """Dotted numeric scenario field → value in this period (after the growth rules), e.g.
    {workload.global_batch_size: 3072, target.step_time_s: 8}."""
    price_factors: dict[PriceCategory, Annotated[float, Field(gt=0, le=100)]] = {}
    """Category → multiplier on the catalog's unit prices for what is bought in this period
    (overrides price_change_per_year for that category)."""


class Plan(Strict):
    """A multi-period purchase plan (SPEC §6.1): one MILP over all periods, hardware carried forward."""

    periods: Annotated[int, Field(ge=1, le=20)] | Annotated[list[PlanPeriod], Field(min_length=1, max_length=20)]
    """The number of periods, or one block per period."""
    start_year: Year | None = None
    """Calendar year of the first period (labels; the age of owned parts)."""
    period_years: Annotated[float, Field(gt=0, le=50)] = 1.0
    """Length of a period in years: discounting, price trends and (TCO) the energy paid per period."""
    growth: list[PlanGrowth] = []
    """Growth rules applied to every period (explicit `set` values override them)."""
    price_change_per_year: dict[PriceCategory, Annotated[float, Field(gt=-1, le=10)]] = {}
    """Category → yearly price change, compounding: factor = (1 + change)^(p · period_years); −0.2 = −20 %/year."""
    discount_rate: Annotated[float, Field(ge=0, le=1)] = 0.0
    """Yearly discount rate: spend in period p is weighed by (1 + rate)^−(p · period_years)."""
    architectures: Literal["keep_one", "allow_second"] = "keep_one"
    """keep_one: every period's job runs on one architecture that grows; allow_second: the jobs may move
    once to a second, newly built architecture (the first cluster stays, available for other work)."""
    resale_fraction: Annotated[float, Field(ge=0, lt=1)] | None = None
    """Retire and resell (issue 43b): each cluster's hardware is sold at the end of the last period it runs the
    jobs, at this fraction of its catalog price × that period's price factor (solver/plan/resale.py); null: kept."""

    @property
    def count(self) -> int:
        """Number of periods."""
        return self.periods if isinstance(self.periods, int) else len(self.periods)


class Scenario(Strict):
    name: Identifier
    description: str = ""
    catalog: list[str] = []
    workload: Workload
    target: Target = Target()
    """The step time to meet; only `objective: fastest` may leave it out."""
    constraints: Constraints = Constraints()
    parallelism: Parallelism = Parallelism()
    efficiency: EfficiencyOverrides = EfficiencyOverrides()
    overlap: Overlap = Overlap()
    robustness: Robustness = Robustness()
    """Margins the MILP enforces: compute_slowdown and bandwidth_derate (SPEC §4.5)."""
    objective: Literal["capex", "tco", "fastest", "rent_or_buy"] = "capex"
    """`capex` or `tco`: the cheapest design meeting the target; `fastest`: the shortest step time within the
    caps (budget_usd, facility_power_kw, max_gpus, max_racks), then the cheapest (SPEC §7); `rent_or_buy`:
    the designs of `tco`, then owning and renting each (catalog rentals) ranked together (solver/rentals.py)."""
    tco: Tco = Tco()
    top_k: Annotated[int, Field(ge=1, le=100)] = 5
    pin: Pin = Pin()
    sweep: Sweep = Sweep()
    inventory: dict[Identifier, OwnedPart] = {}
    """Hardware already owned: catalog id → count (or {count, purchase_year}). The optimiser reuses
    owned parts at no capex (they still draw power) and buys only the difference."""
    extra_costs: list[ExtraCost] = []
    """Cost lines by rule (storage, front-end network, support, installation): the BOM's `extra` category."""
    capex_scope: CapexScope = "complete"
    """`complete`: capex includes the catalog's site lines (storage fabric, management networks, cooling
    plant, installation); `compute_fabric_only`: leaves them out, for comparisons with earlier answers."""
    plan: Plan | None = None
    """A multi-period purchase plan (`fabricplan plan`); solve and sweep ignore it."""
    reliability: ScenarioReliability = ScenarioReliability()
    """Checkpoints, restarts and hot spares (goodput, SPEC §6.2)."""
    ownership: Ownership = Ownership()
    """What owning costs beyond the purchase and the energy (life, residual, colocation, support, staff, financing)."""
    site: Site | None = None
    """A power-first site (phases of MW, cooling types, headroom): `solve` chooses the cooling and the GPU power profile."""
    serving: Serving | None = None
    """The serving fleet's traffic and latency targets (workload.kind: inference only, SPEC §4.9)."""
    price_max_age_months: Annotated[float, Field(gt=0, le=1200)] = 12.0
    """A warning names every part of a ranked design whose catalog price_date is older than this many months
    (a year-only date counts from its year's end); check those prices before ordering (issue 45)."""

    @field_validator("catalog", mode="before")
    @classmethod
    def _catalog_list(cls, value):
        return [value] if isinstance(value, str) else value

    @model_validator(mode="before")
    @classmethod
    def _serving_needs_its_kind(cls, data: Any) -> Any:
        # without it the workload is read as training and reports a missing global_batch_size, not the cause
        wl = data.get("workload") if isinstance(data, dict) else None
        if data and isinstance(wl, dict) and data.get("serving") is not None and "kind" not in wl:
            raise ValueError("`serving:` needs workload.kind: inference (add `kind: inference` under workload:)")
        return data

    @model_validator(mode="after")
    def _target_or_fastest(self) -> Scenario:
        if (self.workload.kind == "inference") != (self.serving is not None):
            raise ValueError("workload.kind: inference needs the `serving:` block, and `serving:` needs "
                             "workload.kind: inference")
        if self.serving is not None:
            return self._serving_mission()
        if self.pin.concurrency or self.pin.replicas or self.pin.prefill or self.pin.decode:
            raise ValueError("pin: concurrency, replicas, prefill and decode apply to serving (workload.kind: inference)")
        if not self.target.given and self.objective != "fastest":
            raise ValueError("target: give step_time_s, or train_tokens with train_days (only objective: fastest "
                             "may leave the target out)")
        if self.objective == "fastest" and self.site is None and \
                not any(getattr(self.constraints, cap) is not None for cap in CAPS):
            raise ValueError("objective: fastest needs a cap to stay within: set constraints.budget_usd, "
                             "facility_power_kw, max_gpus or max_racks")
        return self

    def _serving_mission(self) -> Scenario:
        if self.target.given:
            raise ValueError("a serving fleet's targets are serving.slo and serving.traffic: leave `target:` out")
        if (self.pin.prefill is not None or self.pin.decode is not None) and any(
                getattr(self.pin, k) is not None for k in ("platform", "tp", "pp", "ep", "concurrency", "replicas")):
            raise ValueError("pin either the aggregated pool ({platform, tp, pp, ep, concurrency, replicas}) or "
                             "`prefill:` and `decode:`, not both")
        if self.objective == "fastest" and self.site is None and \
                not any(getattr(self.constraints, cap) is not None for cap in CAPS):  # a site caps the power
            raise ValueError("objective: fastest needs a cap to stay within: set constraints.budget_usd, "
                             "facility_power_kw, max_gpus or max_racks")
        split = self.pin.prefill is not None or self.pin.decode is not None
        pooled = any(getattr(self.pin, k) is not None for k in ("tp", "pp", "ep", "concurrency", "replicas"))
        assert self.serving is not None
        if split and self.serving.disaggregation == "off":
            raise ValueError("pin.prefill/pin.decode describe a disaggregated fleet but serving.disaggregation is off")
        if pooled and self.serving.disaggregation == "on":
            raise ValueError("pin {tp, pp, ep, concurrency, replicas} describes the aggregated pool but "
                             "serving.disaggregation is on: pin prefill: and decode: instead")
        return self

    def train_steps(self) -> int | None:
        """Optimizer steps to train target.train_tokens: ⌈train_tokens / (B·s)⌉ (None without train_tokens)."""
        if self.target.train_tokens is None:
            return None
        tokens_per_step = self.workload.global_batch_size * self.workload.model.seq_len
        return math.ceil(self.target.train_tokens / tokens_per_step)

    def owned_counts(self) -> dict[str, int]:
        """Catalog id → owned count (parts owned 0 times are left out)."""
        return {ident: item.count for ident, item in self.inventory.items() if item.count > 0}

    def target_step_time_s(self) -> float:
        """The step-time target: step_time_s, or train_days·86,400·goodput / ⌈train_tokens / (B·s)⌉;
        infinite for `objective: fastest` without a target (the caps bound the design instead)."""
        t = self.target
        if t.step_time_s is not None:
            return t.step_time_s
        steps = self.train_steps()
        if t.train_days is None or steps is None:
            return math.inf  # objective: fastest without a target (_target_or_fastest)
        return t.train_days * SECONDS_PER_DAY * (t.goodput if t.goodput is not None else 1.0) / steps


def as_list(choice) -> list | None:
    """A scalar-or-list allow-list as a list (None stays None = everything allowed)."""
    if choice is None:
        return None
    return list(choice) if isinstance(choice, list) else [choice]
