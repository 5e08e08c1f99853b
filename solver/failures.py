"""Failures, checkpoints and spares of a design (SPEC §6.2; docs/model.md "Goodput").

The formulas are in solver/perf/goodput.py; this module counts what the job depends on and sizes
the hot spares:

- `spare_units`: hot-spare compute units so that every job domain is available with probability
  `availability` over a repair time (Poisson), a domain's unused GPUs counted as in-domain spares;
  the bill of materials (costing/table.py) prices them, so the evaluator, the MILP and the bounds see them.
- `job_parts`: the parts whose failure stops the job, by fabric family (blast radius): its GPUs,
  nodes and NICs; on a fat tree (and each plane of a multi-plane fabric) the node–leaf links and the
  leaves of its nodes (a spine or leaf uplink failure is routed around); on a rail-only fabric every
  switch and link of its rails (a rail has no second path).
- `job_reliability`: interruptions per day, job MTBF, the Young/Daly checkpoint interval and goodput.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .inputs.schema import Catalog, Platform, Scenario
from .perf import goodput as g
from .perf.totals import parameter_count

PART_KINDS = ("gpu", "software", "node", "nic", "link", "switch")


@dataclass(frozen=True)
class SpareRule:
    """How many spare units a design buys: ⌈fraction · units⌉ (constraints.spare_nodes_fraction), or more
    when the availability rule is on (`availability` None = off)."""

    fraction: float = 0.0
    availability: float | None = None
    repair_h: float = 0.0
    gpu_per_h: float = 0.0  # hardware interruptions per GPU-hour (scaled)
    node_per_h: float = 0.0  # per node-hour, GPUs excluded

    def node_rate_per_h(self, platform: Platform) -> float:
        """A node (tray) is lost to a GPU or a host failure: gpus_per_node · λ_gpu + λ_node."""
        return platform.gpus_per_node * self.gpu_per_h + self.node_per_h


def spare_rule(scenario: Scenario, catalog: Catalog) -> SpareRule:
    """The scenario's spare rule; the availability rule needs the catalog's failure data."""
    fraction = scenario.constraints.spare_nodes_fraction
    rel, data = scenario.reliability, catalog.reliability
    if data is None or not rel.spares:
        return SpareRule(fraction)
    scale = rel.failure_rate_scale
    return SpareRule(fraction, rel.availability, rel.repair_h, float(g.per_hour(data.gpu.annual_failure_rate * scale)),
                     float(g.per_hour(data.node.annual_failure_rate * scale)))


def spare_units(platform: Platform, domains: int, gpus_per_domain_used: int | None, rule: SpareRule) -> int:
    """Hot-spare units: max(⌈fraction · units⌉, spare domains · units per domain), where

        s_in   = (G − G_u) / gpus_per_node             spare nodes inside each domain (G_u < G)
        q      = P(Poisson(n_d · λ_n · T_r) > s_in)     a domain loses more nodes than it holds spare
        spares = least S with P(Poisson(D · q) ≤ S) ≥ availability

    for D job domains of n_d nodes, λ_n = gpus_per_node · λ_gpu + λ_node and repair time T_r. An
    HGX node is its own domain (s_in = 0, q = 1 − e^{−λ_n T_r}); an NVL72 rack is a domain of 18
    trays, and a 64-of-72 layout holds 2 spare trays in every rack. Memoised on the platform's numbers
    (the design space and the costing ask it for the same few domain counts thousands of times)."""
    return _spare_units(platform.nodes_per_domain, platform.unit == "node", platform.gpus_per_domain,
                        platform.gpus_per_node, domains, gpus_per_domain_used or platform.gpus_per_domain, rule)


@lru_cache(maxsize=1 << 16)
def _spare_units(nodes_per_domain: int, unit_is_node: bool, gpus_per_domain: int, gpus_per_node: int, domains: int,
                 used: int, rule: SpareRule) -> int:
    per_domain = nodes_per_domain if unit_is_node else 1
    units = domains * per_domain
    by_fraction = math.ceil(rule.fraction * units - 1e-9) if rule.fraction > 0 else 0
    if rule.availability is None or domains <= 0:
        return by_fraction
    inside = (gpus_per_domain - used) // gpus_per_node
    mean = nodes_per_domain * (gpus_per_node * rule.gpu_per_h + rule.node_per_h) * rule.repair_h
    q = float(g.poisson_tail(mean, inside))
    return max(by_fraction, g.poisson_quantile(domains * q, rule.availability) * per_domain)


# ----------------------------------------------------------------------------------- the job


@dataclass(frozen=True)
class Inputs:
    """The failure rates (per part-hour, scaled) and the checkpoint and restart settings of a scenario."""

    rates_per_h: dict
    checkpoint_bytes: float
    write_gbyte_s: float | None  # absolute (scenario), else per GPU below
    write_gbyte_s_per_gpu: float
    restart_s: float
    in_target: bool  # the step-time target applies to step ÷ goodput
    planned_per_h: float = 0.0  # planned interruptions per hour (each a restart, no rework)
    rate_scale: float = 1.0  # reliability.failure_rate_scale


def inputs_for(scenario: Scenario, catalog: Catalog) -> Inputs | None:
    """The goodput inputs, or None when the catalog has no failure data (goodput is then target.goodput)."""
    data = catalog.reliability
    if data is None:
        return None
    rel = scenario.reliability
    rates = {kind: float(g.per_hour(getattr(data, kind).annual_failure_rate * rel.failure_rate_scale))
             for kind in PART_KINDS}
    params = parameter_count(scenario.workload.model)
    return Inputs(rates, params * rel.checkpoint_bytes_per_param, rel.checkpoint_write_gbyte_s,
                  data.checkpoint_write_gbyte_s_per_gpu, rel.restart_min * 60.0, goodput_in_target(scenario),
                  rel.planned_interruptions_per_day / 24.0, rel.failure_rate_scale)


def goodput_in_target(scenario: Scenario) -> bool:
    """The target applies to the effective step (step ÷ goodput): a target in training days, or
    `reliability.apply_to_target`; never when `target.goodput` is given (the manual override)."""
    t = scenario.target
    if t.goodput is not None:
        return False
    return t.train_days is not None or scenario.reliability.apply_to_target


def job_parts(family: str, gpus, job_nodes, rails: int, fabric=None, total_nodes=None) -> dict:
    """The parts whose failure stops the job (counts may be arrays over d).

    gpu, software: the job's GPUs; node: its nodes; nic: nodes · rails. Network, by fabric family:
    fat tree and multi-plane: the node–leaf links (nodes · rails) and the leaves serving the job's
    nodes (leaves · job nodes / nodes); rail-only: its node links and every switch and switch-to-switch link,
    times the job's share of the nodes. Without a sized fabric (`fabric` None) the switches count 0 and the links are the
    node–leaf ones: a lower bound on the rate of every switch choice (the design space's pruning).
    """
    nodes = np.asarray(job_nodes, dtype=float)
    out = {"gpu": np.asarray(gpus, dtype=float), "node": nodes, "nic": nodes * rails, "link": nodes * rails,
           "switch": np.zeros_like(nodes)}
    out["software"] = out["gpu"]
    if fabric is None:
        return out
    share = nodes / float(total_nodes or 1)
    if family == "rail-only":  # its own node links, and its share of the links between switches
        node_link = fabric.vocabulary.node_link
        above = float(sum(n for tier, n in fabric.links.items() if tier != node_link))
        out["link"] = nodes * rails + share * above
        out["switch"] = share * float(fabric.total_switches)
    else:
        out["switch"] = share * float(fabric.edge_switches)
    return out


def interruptions_per_h(inputs: Inputs, parts: dict):
    """λ_job = Σ_kind count_kind · rate_kind, per hour."""
    return sum(parts[kind] * inputs.rates_per_h[kind] for kind in PART_KINDS)


def write_gbyte_s(inputs: Inputs, gpus):
    """Checkpoint write bandwidth: the scenario's, else the catalog's per GPU × the job's GPUs."""
    if inputs.write_gbyte_s is not None:
        return inputs.write_gbyte_s
    return inputs.write_gbyte_s_per_gpu * np.asarray(gpus, dtype=float)


def goodput_of(inputs: Inputs, parts: dict):
    """Goodput of the job with these parts (`perf.goodput.goodput`); arrays welcome."""
    mtbf = g.job_mtbf_h(interruptions_per_h(inputs, parts))
    delta = g.checkpoint_write_s(inputs.checkpoint_bytes, write_gbyte_s(inputs, parts["gpu"]))
    return g.goodput(delta, mtbf, inputs.restart_s, inputs.planned_per_h)


@dataclass
class JobReliability:
    """What a design's report shows of its failures, checkpoints and spares."""

    goodput: float
    interruptions_per_day: float
    job_mtbf_h: float
    checkpoint_interval_min: float
    checkpoint_write_s: float
    restart_min: float
    spare_units: int
    spare_gpus_in_domains: int
    in_target: bool
    per_day: dict = field(default_factory=dict)  # interruptions per day by part kind
    planned_per_day: float = 0.0
    assumptions: str = ""  # what the goodput rests on, printed beside it


    def to_dict(self) -> dict:
        return {"goodput": self.goodput, "interruptions_per_day": self.interruptions_per_day,
                "job_mtbf_h": self.job_mtbf_h if math.isfinite(self.job_mtbf_h) else None,
                "checkpoint_interval_min": self.checkpoint_interval_min,
                "checkpoint_write_s": self.checkpoint_write_s, "restart_min": self.restart_min,
                "spare_units": self.spare_units, "spare_gpus_in_domains": self.spare_gpus_in_domains,
                "goodput_in_target": self.in_target, "interruptions_per_day_by_part": dict(self.per_day),
                "planned_interruptions_per_day": self.planned_per_day, "goodput_assumptions": self.assumptions}


def job_reliability(inputs: Inputs, parts: dict, spares: int, spare_gpus_in_domains: int) -> JobReliability:
    """The report of one design: λ_job, M, τ = √(2δM), goodput (perf/goodput.py)."""
    rate = float(interruptions_per_h(inputs, parts))
    mtbf = float(g.job_mtbf_h(rate))
    delta = float(g.checkpoint_write_s(inputs.checkpoint_bytes, write_gbyte_s(inputs, parts["gpu"])))
    tau = float(g.young_daly_interval_s(delta, mtbf)) if math.isfinite(mtbf) else math.inf
    good = float(g.goodput(delta, mtbf, inputs.restart_s, inputs.planned_per_h))
    per_day = {kind: float(parts[kind] * inputs.rates_per_h[kind] * 24.0) for kind in PART_KINDS}
    write = float(np.sum(write_gbyte_s(inputs, parts["gpu"])))
    return JobReliability(good, rate * 24.0, mtbf, tau / 60.0, delta, inputs.restart_s / 60.0, spares,
                          spare_gpus_in_domains, inputs.in_target, per_day, inputs.planned_per_h * 24.0,
                          assumptions_text(inputs, write))


def failure_domain_text(platform: Platform) -> str:
    """What one failure takes out on this platform (SPEC §5.3), for the goodput's assumptions."""
    if platform.unit == "node":
        return f"failure domain: the node ({platform.gpus_per_node} GPUs), replaced by a hot-spare node"
    return (f"failure domain: a GPU or host fault takes its tray ({platform.gpus_per_node} GPUs), replaced by an idle "
            "tray or a spare rack; NVLink switch-tray and whole-rack faults (the rack's NVLink domain) are not "
            "counted: no public rate")


def assumptions_text(inputs: Inputs, write_gbyte_s_total: float) -> str:
    """What a goodput figure rests on (SPEC §5.3), printed beside it in every output."""
    scale = f" × {inputs.rate_scale:g}" if inputs.rate_scale != 1 else ""
    return (f"restart {inputs.restart_s / 60:g} min [G5]; Llama 3 failure rates{scale} [G1]; "
            f"{inputs.planned_per_h * 24:g} planned stops/day [G1]; checkpoints at {write_gbyte_s_total:,.0f} GB/s "
            "(storage not in capex)")


def job_nodes_of(gpus, gpus_per_node: int):
    """Nodes the job's GPUs sit on: ⌈GPUs / gpus_per_node⌉ (arrays welcome)."""
    return -(-np.asarray(gpus) // gpus_per_node)


def point_goodput(inputs: Inputs, family_name: str, spec, gpus: int, gpus_per_node: int, total_nodes: int, rails: int,
                  tiers: int | None):
    """Goodput of one design-space point on one architecture: its fabric sized for the job's nodes
    (`total_nodes`: spares excluded, they take its free ports, fabrics/spares.py) on `tiers` tiers (`fabrics.family(...).size`), then `goodput_of(job_parts)`. The
    design space (pruning bound, fabric None: `job_parts`) and the MILP's step-time rows call this."""
    from .fabrics import family

    fabric = family(family_name).size(total_nodes, spec, tiers) if spec is not None else None
    parts = job_parts(family_name, gpus, job_nodes_of(gpus, gpus_per_node), rails, fabric, total_nodes)
    return float(goodput_of(inputs, parts))
