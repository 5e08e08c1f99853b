"""A fleet through the day (optimize/serving_schedule.py): with a diurnal profile, each hour's replicas meet that
hour's load within the rows, never exceed what was bought, and the idle GPU-hours add up."""
from __future__ import annotations

import math

import pytest

from solver.optimize.serving_solve import solve_fleet

from .fleet_scenarios import scenario

PROFILE = [1.0] * 16 + [4.0] * 8  # mean 2, peak factor 2


def test_hourly_replicas_and_idle_gpus():
    # 2e9 tokens/day of 2,500-token requests: mean 9.259 requests/s; the quiet hours carry 1/2 of it, the busy 2×
    r = solve_fleet(scenario(**{"serving.traffic": {"tokens_per_day": 2e9, "diurnal": PROFILE, "input_tokens": 2000,
                                                    "output_tokens": 500}}), top_k=1)
    d = r.designs[0]
    sched = d.serving_dict()["schedule"]
    mean = 2e9 / 86_400 / 2500
    assert [h["requests_per_s"] for h in sched["hours"]] == pytest.approx([mean * x / 2 for x in PROFILE])
    total = 0
    for h in sched["hours"]:
        idle = 0
        for p in d.pools:
            need = h["replicas"][p.role]
            rate = p.option.perf.requests_per_s
            assert need <= p.replicas
            assert need >= min(p.replicas, math.ceil(h["requests_per_s"] / (rate * 0.8) - 1e-9))
            idle += (p.replicas - need) * p.option.gpus_per_replica
        assert h["idle_gpus"] == idle
        total += idle
    assert sched["idle_gpu_hours_per_day"] == total
    quiet, busy = sched["hours"][0], sched["hours"][-1]
    assert quiet["idle_gpus"] >= busy["idle_gpus"]


def test_no_schedule_without_a_profile():
    assert "schedule" not in solve_fleet(scenario(), top_k=1).designs[0].serving_dict()
