"""Typed results: one evaluated design, and the ranked answer of a solve (SPEC §8.3).

`make_design` is the single evaluator of a chosen design: the performance model (solver/perf)
plus the fabric family, bill of materials and cost model (solver/fabrics, costing/table.py). `evaluate`,
the exhaustive enumeration, the bound pruning and the decoding of every MILP solution all go
through it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .confidence import confidence, overlay_note
from .costing import CostedDesign, caps_exceeded, cost_for_objective_usd, design_cost
from .costing.facility import config_for
from .design_space import Architecture, hardware_of
from .fabrics import caveat
from .fabrics.references import FabricFacts, fabric_caveats, reference_design
from .failures import JobReliability, failure_domain_text, inputs_for, job_nodes_of, job_parts, job_reliability
from .figures import figures_of
from .inputs.schema import Catalog, Constraints, Pin, Scenario
from .perf.coverage import uncalibrated
from .perf.interface import TrainingContext, model_for
from .perf.layout import Layout
from .perf.network_load import load_flag, load_report
from .perf.step import Performance, margins, meets_target
from .perf.traffic import overlap_for
from .perf.uncertainty import Regime, design_regime, point_factor, step_time_interval_s
from .rentals import RentOrBuy, ranked_options, rent_or_buy
from .units import SECONDS_PER_DAY, SECONDS_PER_YEAR

SCHEMA = "fabricplan.result/1"
TIGHT = 0.05  # a requirement with less than 5 % slack is reported as binding


def cost_per_million_tokens_usd(cost_usd: float, tokens_per_step: int, step_time_s: float, goodput: float,
                                years: float) -> float:
    """cost_per_mtok = cost / (tokens trained over the amortisation period / 10^6), tokens trained =
    B·s / step_time · goodput · years · 8760 · 3600 (docs/model.md §Cost per million tokens)."""
    tokens = tokens_per_step / step_time_s * goodput * years * SECONDS_PER_YEAR
    return cost_usd / tokens * 1e6 if tokens > 0 else float("inf")


@dataclass
class Design:
    architecture: Architecture
    layout: Layout
    gpu: str
    gpus_per_domain: int
    perf: Performance
    cost: CostedDesign
    target_step_time_s: float
    objective: str  # capex | tco | fastest
    rank: int = 0
    binding: list = field(default_factory=list)
    train_steps: int | None = None  # ⌈train_tokens / (B·s)⌉ when the scenario gives train_tokens
    goodput: float = 1.0
    compute_slowdown: float = 0.0  # margins the scenario demands (robustness)
    bandwidth_derate: float = 0.0
    _margins: dict | None = field(default=None, repr=False)  # `margins`, once computed
    uncalibrated: list = field(default_factory=list)  # regimes no calibration row covers (perf.coverage)
    network_load: dict = field(default_factory=dict)  # perf.network_load.load_report
    caveats: list = field(default_factory=list)  # what a buyer must know before ordering it (orderability)
    nic_configuration: dict = field(default_factory=dict)  # {"id", "reference", "source"} (empty: none listed)
    reliability: JobReliability | None = None  # failures, checkpoints, goodput (None without failure data)
    tokens_per_step: int = 0  # B·s, for the cost per million tokens
    rent: RentOrBuy | None = None  # renting the same GPU-hours against owning (solver/rentals.py)
    stack: str = "megatron"  # workload.stack (SPEC 4.8)
    precision: str = "bf16"
    quantile: float | None = None  # robustness.quantile: meet the target at this quantile of the step time
    reference_design: str = "none"  # the published architecture it follows (fabrics/references.py), or "none (why)"
    moe: bool = False  # the workload is a Mixture-of-Experts model (its step time is judged by MoE runs)
    calibration_overlay: str = ""  # what a buyer's calibrate overlay covers (confidence.overlay_note)

    @property
    def margins(self) -> dict:
        """slack_fraction, and the compute_slowdown and bandwidth_derate it survives (perf.step.margins), computed on
        first use: about 70 step-time evaluations that the ranking's bound designs never need."""
        if self._margins is None:
            self._margins = margins(self.perf, self.target_step_time_s)
        return self._margins

    @property
    def regime(self) -> Regime:
        """The calibration regime of the step time (stack · GPU · precision · dominant term, perf/uncertainty.py)."""
        return design_regime(self.stack, self.gpu, self.precision, self.perf.compute_s + self.perf.bubble_s,
                             self.perf.step_time_s, self.moe)

    @property
    def step_time_interval_s(self) -> tuple[float, float]:
        """[p10, p90] of the step time from the regime's calibration residuals."""
        return step_time_interval_s(self.perf.step_time_s, self.regime)

    @property
    def quantile_factor(self) -> float:
        """k_q of the design's regime under robustness.quantile (1 without it)."""
        return point_factor(self.stack, self.gpu, self.precision, self.perf.compute_s + self.perf.bubble_s,
                            self.perf.step_time_s, self.quantile, self.moe)

    @property
    def tiers(self) -> int:
        return self.cost.fabric.tiers

    @property
    def identity(self) -> tuple:
        return self.architecture.identity(self.tiers)

    @property
    def layout_identity(self) -> tuple:
        lay = self.layout
        return self.identity + (lay.tp, lay.cp, lay.pp, lay.vp, lay.microbatch_size, lay.gpus_per_domain_used, lay.ep,
                                lay.etp)

    @property
    def platform_identity(self) -> tuple:
        return (self.architecture.platform,)

    def identity_by(self, distinct_by: str) -> tuple:
        """What makes two designs distinct in a ranking: architecture (default), platform or layout."""
        if distinct_by == "layout":
            return self.layout_identity
        return self.platform_identity if distinct_by == "platform" else self.identity

    @property
    def objective_usd(self) -> float:
        """The cost the ranking uses: TCO for `tco`, else capex (`fastest` breaks speed ties by capex)."""
        return cost_for_objective_usd(self.cost, self.objective)

    @property
    def train_days(self) -> float | None:
        """Days to train the scenario's train_tokens: steps·step_time / (goodput·86,400)."""
        if self.train_steps is None:
            return None
        if self.goodput <= 0:
            return float("inf")
        return self.train_steps * self.perf.step_time_s / (self.goodput * SECONDS_PER_DAY)

    @property
    def cost_per_million_tokens_usd(self) -> float:
        """The ranking's cost (TCO for `tco`, else capex) per million tokens trained in tco.years."""
        return cost_per_million_tokens_usd(self.objective_usd, self.tokens_per_step, self.perf.step_time_s,
                                           self.goodput, self.cost.tco_years)

    @property
    def label(self) -> str:
        return self.architecture.label(self.tiers)

    @property
    def effective_target_s(self) -> float:
        """The limit on the step time: the target, times the goodput when the target applies to the effective
        step (step ÷ goodput ≤ target ⇔ step ≤ target · goodput)."""
        rel = self.reliability
        return self.target_step_time_s * (rel.goodput if rel is not None and rel.in_target else 1.0)

    @property
    def meets_target(self) -> bool:
        """The step time meets the target (÷ goodput when it applies), and still does with the demanded margins."""
        return meets_target(self.perf, self.effective_target_s, self.compute_slowdown, self.bandwidth_derate,
                            self.quantile_factor)

    def uncertainty_dict(self) -> dict:
        """The regime asked for and used, its runs and quantiles, and the quantile step time under robustness."""
        reg = self.regime
        out = {"regime": reg.asked, "regime_used": reg.used, "runs": reg.rows, "q10": reg.q10, "q90": reg.q90,
               "text": reg.text()}
        if self.quantile is not None:
            out["quantile"] = self.quantile
            out["quantile_step_time_s"] = self.perf.step_time_s * self.quantile_factor
        return out

    def sort_key(self) -> tuple:
        """Cheapest first; at equal cost (to the cent) the faster design (SPEC §7). `fastest` ranks by
        step time first (ranking.same_speed decides ties)."""
        cost = (round(self.objective_usd, 2), self.perf.step_time_s, self.layout_identity, self.layout.dp)
        return ((self.perf.step_time_s,) + cost) if self.objective == "fastest" else cost

    def to_dict(self) -> dict:
        lay, perf = self.layout, self.perf
        out: dict[str, Any] = {
            "rank": self.rank,
            "architecture": self.label,
            "objective_usd": self.objective_usd,
            "capex_usd": self.cost.capex_usd,
            "tco_usd": self.cost.tco_usd,
            "platform": self.architecture.platform,
            "gpu": self.gpu,
            "gpus_per_domain": self.gpus_per_domain,
            "gpus": self.cost.gpus,
            "gpus_used": perf.gpus,
            "nodes": self.cost.nodes,
            "domains": self.cost.domains,  # NVLink domains of the job
            "spare_units": self.cost.spare_units,
            "spares": spares_of(self.cost),  # cabled into the job's free ports, or not (SPEC §5.3)
            "racks": self.cost.racks,
            "power_kw": {"it": self.cost.it_power_kw, "facility": self.cost.facility_power_kw},
            "parallelism": {
                "tp": lay.tp, "cp": lay.cp, "pp": lay.pp, "vp": lay.vp, "dp": lay.dp,
                "microbatch_size": lay.microbatch_size, "microbatches": perf.microbatches,
                "gpus_per_domain_used": lay.gpus_per_domain_used, "ep": lay.ep, "etp": lay.etp, "edp": lay.edp,
            },
            "step_time_s": perf.step_time_s,
            "step_time_interval_s": list(self.step_time_interval_s),
            "stack": self.stack,
            "uncertainty": self.uncertainty_dict(),
            "confidence": confidence(self).to_dict(),
            "target_step_time_s": self.target_step_time_s,
            "meets_target": self.meets_target,
            "train_days": self.train_days,
            **reliability_keys(self),
            "cost_per_million_tokens_usd": self.cost_per_million_tokens_usd,
            "margins": self.margins,
            "uncalibrated": list(self.uncalibrated),
            "network_load": self.network_load,
            "caveats": list(self.caveats),
            "reference_design": self.reference_design,
            "binding_constraints": self.binding,
        }
        cost = self.cost.to_dict()
        out["fabric"] = cost["fabric"]
        # the architecture's ratio: the step time applies it even when the cluster fits one switch layer
        out["fabric"]["oversubscription"] = self.architecture.oversubscription
        if self.nic_configuration:
            out["fabric"]["nic_configuration"] = self.nic_configuration
        out["bom"] = cost["bom"]
        if self.rent is not None:
            out["rent_or_buy"] = self.rent.to_dict()
        if "inventory" in cost:  # owned hardware: what the design reuses and what sits idle, with its value
            out["inventory"] = cost["inventory"]
        out["cost_per_gpu_usd"] = self.cost.capex_usd / max(1, self.cost.gpus)
        p = perf.to_dict()
        for key in ("breakdown_s", "comm_s", "traffic", "link_busy_s", "bytes_per_gpu", "flops_per_step", "mfu",
                    "hardware_tflops_per_gpu", "compute_efficiency", "memory_per_gpu_gb", "memory_gb", "params",
                    "dominant_terms"):
            out[key] = p[key]
        return out


def make_design(scenario: Scenario, catalog: Catalog, arch: Architecture, layout: Layout, target_step_time_s: float,
                tiers: int | None = None) -> Design | None:
    """Evaluate one design completely; None when its fabric cannot be built in ≤ 3 tiers."""
    plat = catalog.by_id("platforms")[arch.platform]
    hw = hardware_of(scenario, catalog, arch.perf)
    # evaluate reads the step through the performance-model interface (perf/interface.py: the same performance())
    perf = model_for("training").point(TrainingContext(scenario.workload, hw, overlap_for(scenario)), layout).detail
    cost = design_cost(scenario, catalog, arch.platform, arch.nic, arch.rails_per_node, arch.switch,
                       arch.oversubscription, layout.domains, tiers, arch.fabric, arch.above_pod_oversubscription,
                       layout.gpus_per_domain_used)
    if cost is None:
        return None
    rob = scenario.robustness
    rel = design_reliability(scenario, catalog, arch, layout, cost)
    manual = scenario.target.goodput
    goodput = manual if manual is not None else (rel.goodput if rel is not None else 1.0)
    design = Design(arch, layout, plat.gpu, plat.gpus_per_domain, perf, cost, target_step_time_s, scenario.objective,
                    train_steps=scenario.train_steps(), goodput=goodput,
                    compute_slowdown=rob.compute_slowdown, bandwidth_derate=rob.bandwidth_derate, reliability=rel,
                    tokens_per_step=scenario.workload.global_batch_size * scenario.workload.model.seq_len,
                    stack=scenario.workload.stack, precision=scenario.workload.precision, quantile=rob.quantile,
                    moe=scenario.workload.model.moe is not None)
    design.uncalibrated = uncalibrated(hw, layout, perf, scenario.workload.precision, design.moe)
    design.network_load = load_report(perf, scenario.workload.model.moe is not None)
    config = config_for(catalog, arch.platform, arch.rails_per_node)
    if config is not None:
        design.nic_configuration = {"id": config.id, "reference": config.reference, "source": config.source}
    facts = fabric_facts(catalog, design)
    design.reference_design = reference_design(facts)
    design.caveats = orderability_caveats(design) + fabric_caveats(facts, design.reference_design) + spare_caveats(cost)
    design.calibration_overlay = overlay_note(catalog, plat.gpu, scenario.workload.stack)
    design.binding = binding_constraints(design, scenario)
    design.rent = rent_or_buy(catalog, cost, catalog.by_id("nics")[arch.nic].speed_gbps, design.train_days,
                              scenario.ownership)
    return design


def fabric_facts(catalog: Catalog, design: Design) -> FabricFacts:
    """What the design's reference architecture depends on (fabrics/references.py)."""
    arch, config = design.architecture, design.nic_configuration
    switch = catalog.by_id("switches")[arch.switch]
    return FabricFacts(arch.platform, arch.fabric, arch.switch, switch.fabric == "ethernet", design.cost.fabric.tiers,
                       design.cost.job_nodes, arch.oversubscription, arch.above_pod_oversubscription,
                       not config or bool(config["reference"]))


def spares_of(cost: CostedDesign) -> dict:
    """The hot spares beside the cabled node count (SPEC §5.3)."""
    return {"units": cost.spare_units, "cabled_units": cost.cabled_spare_units,
            "uncabled_units": cost.spare_units - cost.cabled_spare_units, "job_nodes": cost.job_nodes,
            "cabled_nodes": cost.cabled_nodes}


def spare_caveats(cost: CostedDesign) -> list[str]:
    """Hot spares that do not fit the free ports of the job's leaf groups (fabrics/spares.py), stated."""
    left = cost.spare_units - cost.cabled_spare_units
    if left <= 0:
        return []
    what = "racks" if cost.nodes != cost.units + cost.spare_units else "nodes"
    edge = cost.fabric.vocabulary.edge_role  # the switches the nodes plug into (the trees' leaves)
    return [f"{left} of {cost.spare_units} spare {what} not cabled: no free {edge} port in the job's scalable units "
            f"(racked, powered; a new {edge} group would cable them)"]


def orderability_caveats(design: Design) -> list[str]:
    """What a buyer must know before ordering the design (SPEC §5.2): a fabric family nobody has deployed, a
    NIC configuration that is not the vendor's reference, a network load beyond every measured run."""
    out = []
    family_caveat = caveat(design.architecture.fabric)
    if family_caveat:
        out.append(family_caveat)
    config = design.nic_configuration
    if config and not config["reference"]:
        out.append(f"NIC configuration {config['id']} ({design.architecture.rails_per_node} scale-out NICs per node) is "
                   "not the reference configuration (one NIC per GPU): built on request only")
    flag = load_flag(design.network_load)
    if flag:
        out.append(flag)
    return out


def design_reliability(scenario: Scenario, catalog: Catalog, arch: Architecture, layout: Layout,
                       cost: CostedDesign) -> JobReliability | None:
    """Interruptions, MTBF, checkpoint interval and goodput of a sized design (solver/failures.py); None
    when the catalog has no failure data."""
    inputs = inputs_for(scenario, catalog)
    if inputs is None:
        return None
    plat = catalog.by_id("platforms")[arch.platform]
    job_nodes = job_nodes_of(layout.gpus, plat.gpus_per_node)
    parts = job_parts(arch.fabric, layout.gpus, job_nodes, arch.rails_per_node, cost.fabric, cost.job_nodes)
    in_domain = cost.domains * plat.gpus_per_domain - layout.gpus
    rel = job_reliability(inputs, parts, cost.spare_units, in_domain)
    rel.assumptions += "; " + failure_domain_text(plat)
    return rel


def reliability_keys(design: Design) -> dict:
    """The design's goodput keys of the JSON (SPEC §6.2): goodput, interruptions_per_day, job_mtbf_h,
    checkpoint_interval_min, spares, and the step time ÷ goodput."""
    rel = design.reliability
    if rel is None:
        return {"goodput": design.goodput}
    out = rel.to_dict()
    out["goodput"] = design.goodput
    out["computed_goodput"] = rel.goodput
    out["effective_step_time_s"] = design.perf.step_time_s / design.goodput if design.goodput > 0 else None
    return out


def within_caps(design: Design, con: Constraints, pin: Pin) -> bool:
    """Every cap of the scenario holds for this design (and a pinned node count is its job's)."""
    c = design.cost
    if pin.nodes is not None and c.job_nodes != pin.nodes:
        return False
    return not cap_problems(design, con)


def cap_problems(design: Design, con: Constraints) -> list[str]:
    """The caps of the scenario (budget, GPUs, power, racks) this design exceeds, each named with
    its value and limit (empty when within every cap): the one check (`costing.caps_exceeded`) of
    `within_caps`, the fully pinned `evaluate`, the explanations and the design space's cost bound."""
    return [f"{name}: {fmt.format(value)} over the cap of {fmt.format(cap)}"
            for name, value, cap, fmt in caps_exceeded(design.cost, con)]


def binding_constraints(design: Design, scenario: Scenario) -> list[dict]:
    """Every requirement with its value, limit and slack; `binding` when the slack is under 5 %."""
    con = scenario.constraints
    rows = [] if design.target_step_time_s == float("inf") else [
        _row("step_time", "step time", design.perf.step_time_s, design.effective_target_s, "s")]
    rows += [
        _row("memory_fit", "memory per GPU", design.perf.memory_per_gpu_gb, design.perf.hbm_usable_gb, "GB"),
    ]
    caps = (
        ("max_gpus", "GPUs", design.cost.gpus, con.max_gpus, ""),
        ("budget_usd", "budget", design.cost.capex_usd, con.budget_usd, "$"),
        ("facility_power_kw", "facility power", design.cost.facility_power_kw, con.facility_power_kw, "kW"),
        ("max_racks", "racks", design.cost.racks, con.max_racks, ""),
    )
    rows += [_row(*c) for c in caps if c[3] is not None]
    rob = scenario.robustness
    for name, what, key in (("compute_margin", "compute slowdown survived", "compute_slowdown"),
                             ("bandwidth_margin", "bandwidth derate survived", "bandwidth_derate")):
        demanded = getattr(rob, key)
        if demanded > 0:
            rows.append(_margin_row(name, what, design.margins[key], demanded))
    return rows


def _margin_row(name: str, what: str, survived: float, demanded: float) -> dict:
    """A demanded margin (scenario robustness) against the largest the design survives."""
    slack = (survived - demanded) / demanded
    return {"name": name, "value": survived, "limit": demanded, "unit": "", "slack_fraction": slack,
            "binding": 0 <= slack <= TIGHT, "violated": slack < -1e-9,
            "text": f"{what} {survived:.1%} (demanded {demanded:.1%})"}


def _row(name: str, what: str, value: float, limit: float, unit: str) -> dict:
    slack = (limit - value) / limit if limit else 0.0
    if unit == "$":
        text = f"{what} ${value:,.0f} of ${limit:,.0f} ({value / limit:.0%})"
    elif unit == "s":
        text = f"{what} {value:.2f} s of {limit:.2f} s"
    else:
        text = f"{what} {_count(value)}{(' ' + unit) if unit else ''} of {_count(limit)}{(' ' + unit) if unit else ''} ({value / limit:.0%})"
    return {"name": name, "value": value, "limit": limit, "unit": unit, "slack_fraction": slack,
            "binding": 0 <= slack <= TIGHT, "violated": slack < -1e-9, "text": text}


def _count(value: float) -> str:
    """A whole number without decimals (2,048 GPUs), anything else with one (1,234.5 kW)."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


# `SolveResult.table()`'s figures (`figures.FIGURES`), beside the architecture's parts and the layout, and its columns
TABLE_FIGURES = ("architecture", "fabric", "platform", "gpus", "nodes", "step_time_s", "mfu", "capex_usd", "tco_usd",
                 "facility_power_kw", "racks")
TABLE_COLUMNS = ("rank", "architecture", "fabric", "platform", "nic", "rails_per_node", "switch", "tiers",
                 "oversubscription", "gpus", "nodes", "tp", "cp", "pp", "vp", "dp", "microbatch_size", "ep", "etp",
                 "step_time_s", "mfu", "capex_usd", "tco_usd", "facility_power_kw", "racks")


@dataclass
class SolveResult:
    scenario: str
    status: str  # optimal | feasible | time_limit | infeasible (docs/reliability.md)
    designs: list[Design]
    solve_time_s: float
    gap: float | None = None
    explanation: str | None = None
    timings_s: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)
    solver: dict = field(default_factory=dict)
    warnings: list = field(default_factory=list)
    next_faster: dict | None = None  # the cheapest design strictly faster than #1 (optimize/frontier.py)
    frontier: dict | None = None  # `solve --frontier`: the cost–speed front (optimize/frontier.Frontier.to_dict)
    notes: list = field(default_factory=list)  # explanations of the answer (optimize/budget.py)
    input_warnings: list = field(default_factory=list)  # plausibility warnings of the scenario (file:line)
    stack: str = "megatron"  # workload.stack: the software stack every step time assumes (SPEC 4.8)
    assumptions: list = field(default_factory=list)  # what the loader assumed (model preset, params shape, batch)
    answer: str | None = None  # the answer in days for a target in tokens or days (optimize/answer.py)
    price_warning: str | None = None  # the ranked designs' parts priced longer ago than price_max_age_months
    space_memo: Any = field(default=None, repr=False, compare=False)  # design_space ScanMemo for the next solves

    def to_dict(self) -> dict:
        out = {
            "schema": SCHEMA,
            "scenario": self.scenario,
            "stack": self.stack,
            "status": self.status,
            "solve_time_s": self.solve_time_s,
            "gap": self.gap,
            "designs": [d.to_dict() for d in self.designs],
            "timings_s": self.timings_s,
            "design_space": self.stats,
            "solver": self.solver,
        }
        if self.explanation:
            out["explanation"] = self.explanation
        if self.warnings:
            out["warnings"] = list(self.warnings)
        if self.next_faster is not None:
            out["next_faster"] = self.next_faster
        if self.frontier is not None:
            out["frontier"] = self.frontier["points"]
            out["frontier_search"] = {k: v for k, v in self.frontier.items() if k != "points"}
        if self.notes:
            out["notes"] = list(self.notes)
        if self.assumptions:
            out["assumptions"] = list(self.assumptions)
        if self.answer:
            out["answer"] = self.answer
        if self.price_warning:
            out["price_age_warning"] = self.price_warning
        if self.input_warnings:
            out["input_warnings"] = list(self.input_warnings)
        if self.designs and self.designs[0].objective == "rent_or_buy":
            out["rent_or_buy"] = ranked_options(self.designs)
        return out

    def table(self):
        """One tidy row per ranked design (a pandas DataFrame)."""
        import pandas as pd  # lazy: the command line does not need pandas

        rows = []
        for d in self.designs:
            lay, a = d.layout, d.architecture
            row = {
                "rank": d.rank, **figures_of(d.to_dict(), TABLE_FIGURES),  # `figures.FIGURES`, as the JSON has them
                "nic": a.nic, "rails_per_node": a.rails_per_node, "switch": a.switch, "tiers": d.tiers,
                "oversubscription": a.oversubscription, "tp": lay.tp, "cp": lay.cp, "pp": lay.pp, "vp": lay.vp,
                "dp": lay.dp, "microbatch_size": lay.microbatch_size, "ep": lay.ep, "etp": lay.etp,
            }
            rows.append({key: row[key] for key in TABLE_COLUMNS})
        return pd.DataFrame(rows)
