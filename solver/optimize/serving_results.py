"""A serving fleet's result objects (SPEC §4.9, §8.3): `FleetDesign` (its pools, latencies with intervals, costs,
USD per million tokens; `to_dict` is the JSON design with its `serving` block) and `FleetResult` (ranked designs).

The fleet's figures (names as SPEC §4.9):
    ttft_p90_s        the aggregated or prefill pool's TTFT p90 at the peak (queueing and KV transfer included)
    tpot_p90_ms       the aggregated or decode replica's time per output token, ms
    tokens_per_s_per_user = 1000 / tpot_p90_ms
    output_tokens_per_s_per_gpu   the decode (or aggregated) replica's, at its concurrency
    input_tokens_per_s_per_gpu    the prefill (or aggregated) replica's, at its sustainable rate
    requests_per_s_capacity       min over pools of replicas · rate (before the utilisation headroom)
    kv_transfer_gbyte_s           λ_peak · KV bytes of one prompt (disaggregated; 0 aggregated)
    usd_per_million_output_tokens TCO / (λ_mean · O · 86,400 · 365 · years) · 10⁶ (and per million input tokens)
Intervals: the replica model's p10–p90 factors on throughput f10 ≤ 1 ≤ f90 give tokens/s per user ×[f10, f90] and
TPOT ÷[f90, f10]; TTFT scales like the prefill time, ÷[f90, f10].
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..units import DAYS_PER_YEAR, SECONDS_PER_DAY


@dataclass(frozen=True)
class Pool:
    """One pool of a fleet: its candidate (machine, layout, performance), replicas, TTFT and costed BOM."""

    role: str
    option: Any  # design_space.serving.PoolOption
    replicas: int
    ttft_s: float
    cost: Any  # costing.CostedDesign

    @property
    def gpus(self) -> int:
        return self.replicas * self.option.gpus_per_replica

    @property
    def identity(self) -> tuple:
        return (self.role,) + self.option.machine.key

    def to_dict(self) -> dict:
        o, lay, perf = self.option, self.option.layout, self.option.perf
        m = o.machine
        return {"role": self.role, "platform": m.platform, "tp": lay.tp, "pp": lay.pp, "ep": lay.ep,
                "dp_attention": getattr(lay, "dp_attention", 1), "concurrency": lay.concurrency,
                "replicas": self.replicas, "gpus": self.gpus, "gpus_per_replica": o.gpus_per_replica,
                "nodes": self.cost.nodes, "domains": self.cost.domains,
                "nic": m.nic, "rails_per_node": m.rails_per_node, "switch": m.switch, "fabric": m.fabric,
                "tiers": self.cost.fabric.tiers, "ttft_p90_s": self.ttft_s if self.role != "decode" else None,
                "tpot_ms": perf.tpot_s * 1000.0 if self.role != "prefill" else None,
                "requests_per_s_per_replica": perf.requests_per_s,
                "requests_per_s_capacity": self.replicas * perf.requests_per_s,
                "memory_gb_per_gpu": perf.memory_gb_per_gpu, "kv_cache_gb_per_gpu": perf.kv_cache_gb_per_gpu,
                "max_concurrency": perf.max_concurrency, "scaleout_gbyte_s_per_gpu": perf.scaleout_gbyte_s_per_gpu,
                "scaleout_capacity_gbyte_s_per_gpu": m.scaleout_gbyte_s_per_gpu,
                "capex_usd": self.cost.capex_usd, "tco_usd": self.cost.tco_usd,
                "power_kw": self.cost.facility_power_kw, "racks": self.cost.racks,
                "flags": list(perf.flags)}


@dataclass
class FleetDesign:
    """A fleet: one aggregated pool, or a prefill and a decode pool."""

    mode: str
    pools: tuple[Pool, ...]
    peak_rps: float
    mean_rps: float
    input_tokens: int
    output_tokens: int
    tco_years: float
    objective: str = "capex"
    rank: int = 0
    schedule: dict | None = None  # with a diurnal profile: the pools hour by hour (optimize/serving_schedule.py)
    night_training: dict | None = None  # the training job on the off-peak GPUs (optimize/serving_night.py)

    def pool(self, role: str) -> Pool | None:
        return next((p for p in self.pools if p.role == role), None)

    @property
    def front(self) -> Pool:
        """The pool that takes prompts (aggregated or prefill)."""
        p = self.pool("aggregated") or self.pool("prefill")
        assert p is not None
        return p

    @property
    def back(self) -> Pool:
        """The pool that decodes (aggregated or decode)."""
        p = self.pool("aggregated") or self.pool("decode")
        assert p is not None
        return p

    @property
    def capex_usd(self) -> float:
        return sum(p.cost.capex_usd for p in self.pools)

    @property
    def tco_usd(self) -> float:
        return sum(p.cost.tco_usd for p in self.pools)

    @property
    def objective_usd(self) -> float:
        return self.tco_usd if self.objective == "tco" else self.capex_usd

    @property
    def gpus(self) -> int:
        return sum(p.cost.gpus for p in self.pools)

    @property
    def power_kw(self) -> float:
        return sum(p.cost.facility_power_kw for p in self.pools)

    @property
    def racks(self) -> int:
        return sum(p.cost.racks for p in self.pools)

    @property
    def tpot_s(self) -> float:
        return float(self.back.option.perf.tpot_s)

    @property
    def identity(self) -> tuple:
        return (self.mode,) + tuple(p.identity for p in self.pools)

    @property
    def label(self) -> str:
        """`role platform tp/ep ×replicas` per pool, joined by +."""
        return " + ".join(f"{p.role} {p.option.machine.platform} tp{p.option.layout.tp} ep{p.option.layout.ep} "
                          f"×{p.replicas}" for p in self.pools)

    @property
    def interval(self) -> tuple[float, float]:
        """(p10, p90) factors on throughput: the widest of the pools'."""
        lo = min(p.option.perf.interval[0] for p in self.pools)
        hi = max(p.option.perf.interval[1] for p in self.pools)
        return lo, hi

    def usd_per_million(self, tokens_per_request: int) -> float:
        """TCO / (λ_mean · tokens per request · 86,400 · 365 · years) · 10⁶."""
        served = self.mean_rps * tokens_per_request * SECONDS_PER_DAY * DAYS_PER_YEAR * self.tco_years
        return self.tco_usd / served * 1e6 if served > 0 else float("inf")

    @property
    def kv_transfer_gbyte_s(self) -> float:
        p = self.pool("prefill")
        return self.peak_rps * p.option.perf.kv_transfer_gbyte_per_request if p is not None else 0.0

    def serving_dict(self) -> dict:
        """The SPEC §4.9 `serving` block."""
        f10, f90 = self.interval
        back, front = self.back.option.perf, self.front.option.perf
        tpot_ms = back.tpot_s * 1000.0
        ttft = self.front.ttft_s
        return {
            "mode": self.mode,
            "pools": [p.to_dict() for p in self.pools],
            "ttft_p90_s": ttft, "ttft_p90_s_interval": [ttft / f90, ttft / f10],
            "tpot_p90_ms": tpot_ms, "tpot_p90_ms_interval": [tpot_ms / f90, tpot_ms / f10],
            "tokens_per_s_per_user": 1000.0 / tpot_ms,
            "tokens_per_s_per_user_interval": [1000.0 / tpot_ms * f10, 1000.0 / tpot_ms * f90],
            "output_tokens_per_s_per_gpu": back.output_tokens_per_s_per_gpu,
            "output_tokens_per_s_per_gpu_interval": [back.output_tokens_per_s_per_gpu * f10,
                                                     back.output_tokens_per_s_per_gpu * f90],
            "input_tokens_per_s_per_gpu": front.input_tokens_per_s_per_gpu,
            "fleet_output_tokens_per_s_per_gpu_at_peak": self.peak_rps * self.output_tokens / max(self.gpus, 1),
            "requests_per_s_capacity": min(p.replicas * p.option.perf.requests_per_s for p in self.pools),
            "peak_requests_per_s": self.peak_rps, "mean_requests_per_s": self.mean_rps,
            "kv_cache_gb_per_gpu": back.kv_cache_gb_per_gpu,
            "kv_transfer_gbyte_s": self.kv_transfer_gbyte_s,
            "usd_per_million_output_tokens": self.usd_per_million(self.output_tokens),
            "usd_per_million_input_tokens": self.usd_per_million(self.input_tokens),
            "interval": {"p10": f10, "p90": f90},
            "flags": sorted({f for p in self.pools for f in p.option.perf.flags} | set(self.fleet_flags())),
            **({"schedule": self.schedule} if self.schedule is not None else {}),
            **({"night_training": self.night_training} if self.night_training is not None else {}),
        }

    def fleet_flags(self) -> list[str]:
        """What the fleet's pricing leaves out."""
        if self.mode != "disaggregated":
            return []
        return [f"the KV cache moves prefill → decode at {self.kv_transfer_gbyte_s:.1f} GB/s at the peak over the pools' "
                "scale-out NICs (counted in their bandwidth); the ports joining the two pools' fabrics are not priced"]

    def to_dict(self) -> dict:
        bom = [dict(line.to_dict(), pool=p.role) for p in self.pools for line in p.cost.bom]
        return {"rank": self.rank, "objective_usd": self.objective_usd, "capex_usd": self.capex_usd,
                "tco_usd": self.tco_usd, "gpus": self.gpus, "nodes": sum(p.cost.nodes for p in self.pools),
                "racks": self.racks, "power_kw": {"facility": self.power_kw},
                "platform": "+".join(dict.fromkeys(p.option.machine.platform for p in self.pools)),
                "serving": self.serving_dict(),
                "fabric": {p.role: p.cost.fabric_dict() for p in self.pools},
                "bom": bom}


@dataclass
class FleetResult:
    """The ranked fleets of a serving scenario (`status` optimal | infeasible), as SolveResult for training."""

    scenario: str
    status: str
    designs: list[FleetDesign]
    objective: str
    explanation: str | None = None
    solve_time_s: float = 0.0
    stats: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    frontier: list[dict] | None = None
    warnings: list[str] = field(default_factory=list)
    kind: str = "inference"
    notes: list[str] = field(default_factory=list)  # e.g. what the scale-up domain bought (serving_scaleup_value.py)
    site: dict | None = None  # the power-first site's variants and choice (optimize/serving_site.py)

    def to_dict(self) -> dict:
        out = {"schema": "fabricplan.result/1", "scenario": self.scenario, "workload_kind": self.kind,
               "status": self.status, "objective": self.objective, "solve_time_s": self.solve_time_s,
               "explanation": self.explanation, "designs": [d.to_dict() for d in self.designs],
               "stats": self.stats, "timings": self.timings, "warnings": self.warnings, "notes": self.notes}
        if self.frontier is not None:
            out["frontier"] = self.frontier
        if self.site is not None:
            out["site"] = self.site
        return out
