"""Typed results: one evaluated design, and the ranked answer of a solve (SPEC §8.3).

`make_design` is the single evaluator of a chosen design: the performance model (solver/perf)
plus the fabric family, bill of materials and cost model (solver/fabrics, costing.py). `evaluate`,
the exhaustive enumeration, the bound pruning and the decoding of every MILP solution all go
through it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .costing import CostedDesign, design_cost
from .design_space import Architecture, hardware_of
from .inputs.schema import Catalog, Constraints, Pin, Scenario
from .perf.coverage import uncalibrated
from .perf.layout import Layout
from .perf.step import Performance, margins, meets_target, performance
from .perf.traffic import overlap_for
from .perf.uncertainty import Regime, design_regime, point_factor, step_time_interval_s

SCHEMA = "fabricplan.result/1"
TIGHT = 0.05  # a requirement with less than 5 % slack is reported as binding


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
    margins: dict = field(default_factory=dict)  # slack_fraction, compute_slowdown, bandwidth_derate it survives
    uncalibrated: list = field(default_factory=list)  # regimes no calibration row covers (perf.coverage)
    stack: str = "megatron"  # workload.stack (SPEC 4.8)
    precision: str = "bf16"
    quantile: float | None = None  # robustness.quantile: meet the target at this quantile of the step time

    @property
    def regime(self) -> Regime:
        """The calibration regime of the step time (stack · GPU · precision · dominant term, perf/uncertainty.py)."""
        return design_regime(self.stack, self.gpu, self.precision, self.perf.compute_s + self.perf.bubble_s,
                             self.perf.step_time_s)

    @property
    def step_time_interval_s(self) -> tuple[float, float]:
        """[p10, p90] of the step time from the regime's calibration residuals."""
        return step_time_interval_s(self.perf.step_time_s, self.regime)

    @property
    def quantile_factor(self) -> float:
        """k_q of the design's regime under robustness.quantile (1 without it)."""
        return point_factor(self.stack, self.gpu, self.precision, self.perf.compute_s + self.perf.bubble_s,
                            self.perf.step_time_s, self.quantile)

    @property
    def tiers(self) -> int:
        return self.cost.fabric.tiers

    @property
    def identity(self) -> tuple:
        a = self.architecture
        return (a.platform, a.nic, a.rails_per_node, a.switch, self.tiers, a.oversubscription, a.fabric,
                a.above_pod_oversubscription)

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
        return self.cost.tco_usd if self.objective == "tco" else self.cost.capex_usd

    @property
    def train_days(self) -> float | None:
        """Days to train the scenario's train_tokens: steps·step_time / (goodput·86,400)."""
        if self.train_steps is None:
            return None
        return self.train_steps * self.perf.step_time_s / (self.goodput * 86_400.0)

    @property
    def label(self) -> str:
        return self.architecture.label(self.tiers)

    @property
    def meets_target(self) -> bool:
        """The step time meets the target, and still does with the margins the scenario demands."""
        return meets_target(self.perf, self.target_step_time_s, self.compute_slowdown, self.bandwidth_derate,
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
            "target_step_time_s": self.target_step_time_s,
            "meets_target": self.meets_target,
            "train_days": self.train_days,
            "margins": self.margins,
            "uncalibrated": list(self.uncalibrated),
            "binding_constraints": self.binding,
        }
        cost = self.cost.to_dict()
        out["fabric"] = cost["fabric"]
        # the architecture's ratio: the step time applies it even when the cluster fits one switch layer
        out["fabric"]["oversubscription"] = self.architecture.oversubscription
        out["bom"] = cost["bom"]
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
    perf = performance(scenario.workload, layout, hw, overlap_for(scenario))
    cost = design_cost(scenario, catalog, arch.platform, arch.nic, arch.rails_per_node, arch.switch,
                       arch.oversubscription, layout.domains, tiers, arch.fabric, arch.above_pod_oversubscription)
    if cost is None:
        return None
    rob = scenario.robustness
    design = Design(arch, layout, plat.gpu, plat.gpus_per_domain, perf, cost, target_step_time_s, scenario.objective,
                    train_steps=scenario.train_steps(), goodput=scenario.target.goodput,
                    compute_slowdown=rob.compute_slowdown, bandwidth_derate=rob.bandwidth_derate,
                    stack=scenario.workload.stack, precision=scenario.workload.precision, quantile=rob.quantile)
    design.margins = margins(perf, target_step_time_s)
    design.uncalibrated = uncalibrated(hw, layout, perf, scenario.workload.precision)
    design.binding = binding_constraints(design, scenario)
    return design


def within_caps(design: Design, con: Constraints, pin: Pin) -> bool:
    """Every cap of the scenario holds for this design (and a pinned node count is its job's)."""
    c = design.cost
    if pin.nodes is not None and c.job_nodes != pin.nodes:
        return False
    checks = ((con.max_gpus, c.gpus), (con.budget_usd, c.capex_usd), (con.facility_power_kw, c.facility_power_kw),
              (con.max_racks, c.racks))
    return all(cap is None or value <= cap * (1 + 1e-9) for cap, value in checks)


def binding_constraints(design: Design, scenario: Scenario) -> list[dict]:
    """Every requirement with its value, limit and slack; `binding` when the slack is under 5 %."""
    con = scenario.constraints
    rows = [] if design.target_step_time_s == float("inf") else [
        _row("step_time", "step time", design.perf.step_time_s, design.target_step_time_s, "s")]
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
        text = f"{what} {value:,.1f}{(' ' + unit) if unit else ''} of {limit:,.1f}{(' ' + unit) if unit else ''} ({value / limit:.0%})"
    return {"name": name, "value": value, "limit": limit, "unit": unit, "slack_fraction": slack,
            "binding": 0 <= slack <= TIGHT, "violated": slack < -1e-9, "text": text}


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
    stack: str = "megatron"  # workload.stack: the software stack every step time assumes (SPEC 4.8)

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
        return out

    def table(self):
        """One tidy row per ranked design (a pandas DataFrame)."""
        import pandas as pd  # lazy: the command line does not need pandas

        rows = []
        for d in self.designs:
            lay = d.layout
            rows.append({
                "rank": d.rank, "architecture": d.label, "platform": d.architecture.platform,
                "nic": d.architecture.nic, "rails_per_node": d.architecture.rails_per_node,
                "switch": d.architecture.switch, "tiers": d.tiers, "oversubscription": d.architecture.oversubscription,
                "gpus": d.cost.gpus, "nodes": d.cost.nodes, "tp": lay.tp, "cp": lay.cp, "pp": lay.pp, "vp": lay.vp,
                "dp": lay.dp, "microbatch_size": lay.microbatch_size, "ep": lay.ep, "etp": lay.etp,
                "step_time_s": d.perf.step_time_s,
                "mfu": d.perf.mfu, "capex_usd": d.cost.capex_usd, "tco_usd": d.cost.tco_usd,
                "facility_power_kw": d.cost.facility_power_kw, "racks": d.cost.racks,
            })
        return pd.DataFrame(rows)
