"""A serving fleet through the day (SPEC §4.9, a step toward the day/night stretch): with a 24-hour `diurnal`
profile, the replicas each pool needs hour by hour and the GPUs it leaves idle — the off-peak capacity a buyer can
lend to training at night (DeepSeek moves inference nodes to training at night).

Hour h carries λ_h = λ_mean · d_h / mean(d). A pool needs r_h = the fewest replicas with r · rate · u_max ≥ λ_h and
TTFT_p90(λ_h, r) ≤ the target (the same rows as the MILP, design_space/serving.py), at most the replicas bought;
idle GPUs_h = (replicas − r_h) · GPUs per replica; idle GPU-hours per day = Σ_h idle GPUs_h.
"""
from __future__ import annotations

from ..design_space.serving import replicas_for_peak, ttft_of
from .serving_results import FleetDesign

HOURS = 24


def replicas_at(pool, rate_rps: float, ttft_max_s: float, u: float) -> int:
    """r_h for one pool at λ = rate_rps (capped at the replicas bought)."""
    perf, role, b = pool.option.perf, pool.role, pool.option.layout.concurrency
    r = min(replicas_for_peak(float(perf.requests_per_s), rate_rps, u), pool.replicas) if rate_rps > 0 else 0
    while role != "decode" and 0 < r < pool.replicas and ttft_of(perf, role, rate_rps, r, b) > ttft_max_s:
        r += 1
    return r


def hourly_schedule(design: FleetDesign, diurnal: list[float], ttft_max_s: float, u: float) -> dict:
    """Per hour: λ_h, each pool's replicas needed and the idle GPUs; and the day's idle GPU-hours."""
    mean = sum(diurnal) / HOURS
    hours = []
    for h, load in enumerate(diurnal):
        lam = design.mean_rps * load / mean
        pools = {p.role: replicas_at(p, lam, ttft_max_s, u) for p in design.pools}
        idle = sum((p.replicas - pools[p.role]) * p.option.gpus_per_replica for p in design.pools)
        hours.append({"hour": h, "requests_per_s": lam, "replicas": pools, "idle_gpus": idle})
    return {"hours": hours, "idle_gpu_hours_per_day": float(sum(x["idle_gpus"] for x in hours)),
            "job_gpus": sum(p.replicas * p.option.gpus_per_replica for p in design.pools)}
