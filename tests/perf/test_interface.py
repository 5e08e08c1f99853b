"""The performance-model interface (issue 39 item 1; solver/perf/interface.py, docs/architecture.md "A new workload
kind"): the training step is its first implementation and returns exactly what `perf.step.performance` returns;
the serving replica its second; a toy workload kind is added behind it here, in the test, with its schema and its
report section, without touching solver/design_space or solver/optimize."""
from __future__ import annotations

import math
from dataclasses import dataclass

import pytest
from pydantic import Field

import solver
from solver.inputs.schema import Strict
from solver.perf.interface import WORKLOADS, PerformanceModel, PointPerf, TrainingContext, model_for, register
from solver.perf.layout import Layout
from solver.perf.step import performance
from solver.perf.traffic import overlap_for


def test_the_registry_has_training_and_inference():
    assert set(WORKLOADS) >= {"training", "inference"}
    assert isinstance(model_for("training"), PerformanceModel)
    with pytest.raises(KeyError, match="registered"):
        model_for("no-such-kind")


def test_training_step_through_the_interface_is_the_step_model():
    """Same numbers as perf.step.performance for a shipped example's layout (behaviour unchanged)."""
    from solver.design_space.allowlists import hardware_of
    from solver.design_space.identity import PerfClass

    ls = solver.load_scenario("scenarios/llama3-70b.yaml")
    cat = solver.load_catalog()
    sc = ls.scenario
    hw = hardware_of(sc, cat, PerfClass(platform="hgx-h100", nic="cx7-ndr", rails_per_node=8, oversubscription=1.0))
    layout = Layout(tp=8, cp=1, pp=4, vp=1, dp=32, microbatch_size=1, gpus_per_domain_used=8)
    direct = performance(sc.workload, layout, hw, overlap_for(sc))
    via = model_for("training").point(TrainingContext(sc.workload, hw, overlap_for(sc)), layout)
    assert via.time_s == direct.step_time_s
    assert via.rate_per_s == pytest.approx(1 / direct.step_time_s)
    assert via.memory_gb_per_gpu == direct.memory_per_gpu_gb and via.fits == direct.fits_memory
    assert via.bytes_per_gpu["scaleout"] == direct.scaleout_bytes
    assert set(via.bytes_per_gpu) >= set(direct.traffic)


# ------------------------------------------------------------------ a toy workload kind, added in the test


class EmbeddingJob(Strict):
    """The toy kind's schema: an embedding service (encoder only, no decode)."""

    params: float = Field(gt=0)
    """Model parameters."""
    tokens_per_request: int = Field(ge=1)
    """Tokens embedded per request."""


@dataclass(frozen=True)
class EmbeddingContext:
    job: EmbeddingJob
    peak_tflops: float
    efficiency: float
    hbm_gb: float


class EmbeddingModel:
    """Compute-bound: one request costs 2·P·T FLOPs; a batch of b requests takes b·2PT / (peak·η) seconds."""

    kind = "toy-embedding"

    def point(self, context: EmbeddingContext, point: int) -> PointPerf:
        flops = 2 * context.job.params * context.job.tokens_per_request * point
        t = flops / (context.peak_tflops * 1e12 * context.efficiency)
        weights_gb = 2 * context.job.params / 1e9
        return PointPerf(time_s=t, rate_per_s=point / t, memory_gb_per_gpu=weights_gb, fits=weights_gb <= context.hbm_gb,
                         bytes_per_gpu={}, flags=("toy model: no published measurement",))


def embedding_report(perf: PointPerf) -> dict:
    """The toy kind's report section."""
    return {"requests_per_s": perf.rate_per_s, "batch_s": perf.time_s, "flags": list(perf.flags)}


def replicas_for(model: PerformanceModel, context, point, demand_per_s: float, utilisation_max: float) -> int:
    """A consumer written against the protocol only (what a fleet sizer asks of any kind): ⌈λ / (rate · u)⌉."""
    perf = model.point(context, point)
    assert perf.fits
    return math.ceil(demand_per_s / (perf.rate_per_s * utilisation_max))


def test_a_toy_workload_kind_plugs_in_behind_the_interface():
    register(EmbeddingModel())  # the one registry line a new kind adds
    try:
        model = model_for("toy-embedding")
        ctx = EmbeddingContext(EmbeddingJob(params=1e9, tokens_per_request=512), peak_tflops=1000.0, efficiency=0.5,
                               hbm_gb=80.0)
        perf = model.point(ctx, 64)
        # by hand: 2·1e9·512·64 = 6.5536e13 FLOPs at 500 TFLOP/s = 0.131072 s; 64 / 0.131072 = 488.28 requests/s
        assert perf.time_s == pytest.approx(0.131072)
        assert perf.rate_per_s == pytest.approx(488.28125)
        assert embedding_report(perf)["requests_per_s"] == pytest.approx(488.28125)
        # 2,000 requests/s at ≤ 80 % busy: ⌈2000 / (488.28 · 0.8)⌉ = ⌈5.12⌉ = 6 replicas
        assert replicas_for(model, ctx, 64, 2000.0, 0.8) == 6
    finally:
        WORKLOADS.pop("toy-embedding", None)
