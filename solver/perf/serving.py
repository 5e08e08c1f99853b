"""The serving replica model (SPEC §4.9; docs/model.md "Serving"): memory, prefill, decode step, chunked prefill,
KV transfer, and the rate one replica sustains. `replica_performance` is the one entry point the fleet design space,
the MILP and `evaluate` use; `ttft_p90_s` (perf/serving_queue.py) adds the queueing wait.

A replica is one model instance over G = dp_attention·tp·pp GPUs: tp-way tensor parallel, pp pipeline stages
(decode runs pp microbatches of b/pp sequences in flight), Mixture-of-Experts routed experts spread over all G
GPUs (ep ≤ G peers exchange tokens: dispatch and combine); dp_attention > 1 is attention data parallelism
(DeepSeek/SGLang "DP attention": each rank holds its own sequences' KV and replicates the attention weights).
The scale-up domain (platform.gpus_per_domain GPUs at nvlink_gbyte_s·nvlink_efficiency per GPU and direction —
NVLink, Infinity Fabric or PCIe alike) carries TP and EP traffic inside it; what crosses it rides the scale-out
NICs at `scaleout_gbyte_s_per_gpu`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Protocol

from .serving_coverage import coverage_flags
from .serving_model import (
    dtype_bytes,
    expected_experts_touched,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    kv_shards,
    serving_weights,
)
from .serving_queue import ttft_p90_s
from .serving_step import (
    ALPHA_SCALEOUT_S,
    ServingHardware,
    decode_step,
    hardware_of,
    memory_per_gpu,
    prefill_time,
)

__all__ = ["ReplicaLayout", "ReplicaPerf", "ServingModelContext", "TrafficShape", "replica_performance",
           "ttft_p90_s", "kv_bytes_per_token", "kv_bytes_per_sequence", "serving_weights", "dtype_bytes",
           "expected_experts_touched", "kv_shards", "ServingHardware", "max_throughput_concurrency",
           "kv_transfer_time_s", "kv_cache_dtype_of"]

ROLES = ("aggregated", "prefill", "decode")
UNMEASURED_WIDENING = 1.25
"""An unmeasured regime's interval is widened by this factor on each side (p10 ÷, p90 ×)."""


def kv_cache_dtype_of(workload: Any) -> str:
    """The KV cache's element type a serving workload runs with: its `kv_cache_dtype`, else bf16 with bf16 weights
    and fp8 otherwise (workload_schema.Workload.kv_cache_dtype)."""
    return workload.kv_cache_dtype or ("bf16" if workload.precision == "bf16" else "fp8")


@dataclass(frozen=True)
class ServingModelContext:
    """Everything constant across layouts for one (model, platform, stack, precision)."""

    model: Any  # TransformerShape (dense or MoE, GQA or MLA), as the training side parses it
    gpu: Any  # catalog Gpu
    platform: Any  # catalog Platform: the scale-up domain = gpus_per_domain GPUs at nvlink_gbyte_s·nvlink_efficiency
    scaleout_gbyte_s_per_gpu: float  # the NIC configuration's effective scale-out bandwidth per GPU per direction
    stack: Any  # catalog Stack of kind inference (its `serving:` profile)
    precision: str  # weights and GEMMs: bf16 | fp8 | fp4
    kv_cache_dtype: str  # bf16 | fp8 | fp4


@dataclass(frozen=True)
class ReplicaLayout:
    """One replica's parallel layout and batch. GPUs = dp_attention·tp·pp; ep ≤ GPUs (1 for a dense model)."""

    tp: int
    pp: int
    ep: int
    concurrency: int  # sequences decoded together per replica (the batch b)
    role: str = "aggregated"  # aggregated | prefill | decode
    dp_attention: int = 1  # attention data parallelism (MoE wide-EP decode); 1 = attention is tensor parallel

    @property
    def gpus(self) -> int:
        return self.dp_attention * self.tp * self.pp


class TrafficLike(Protocol):
    input_tokens: float
    output_tokens: float


@dataclass(frozen=True)
class TrafficShape:
    """The traffic a replica sees: mean input (prompt) and output tokens per request, prefix-cache hit share."""

    input_tokens: float
    output_tokens: float
    prefix_cache_hit: float = 0.0


@dataclass(frozen=True)
class ReplicaPerf:
    fits: bool
    memory_gb_per_gpu: float  # weights + activations + the KV cache of `concurrency` sequences at full context
    kv_cache_gb_per_gpu: float  # the KV cache of `concurrency` sequences at full context (input + output)
    max_concurrency: int  # sequences the KV room holds at full context
    prefill_s: float  # one prompt's prefill time (no queueing); aggregated: chunks interleaved with decode steps
    tpot_s: float  # decode time per output token at `concurrency` and the mean context (aggregated: with chunks)
    tokens_per_s_per_user: float  # 1 / tpot
    output_tokens_per_s_per_gpu: float  # b / tpot / GPUs (prefill role: 0)
    requests_per_s: float  # sustainable request rate of the replica (role-aware)
    kv_transfer_gbyte_per_request: float  # prefill → decode (disaggregated): input tokens × KV bytes per token
    scaleout_gbyte_s_per_gpu: float  # bytes/s per GPU on the scale-out fabric (TP/EP/PP crossing the domain, KV)
    interval: tuple[float, float]  # p10 / p90 multiplicative factors on throughput
    flags: tuple[str, ...]
    gpus: int = 0
    decode_step_s: float = 0.0  # the decode step alone (no prefill chunks)
    input_tokens_per_s_per_gpu: float = 0.0  # prompt tokens/s per GPU at requests_per_s
    bound: str = ""  # memory | compute: what sets the decode step
    kv_transfer_s: float = 0.0  # prefill/decode roles: one prompt's KV over the replica's scale-out NICs (0 aggregated)


def _traffic(traffic: Any) -> TrafficShape:
    return TrafficShape(float(traffic.input_tokens), float(traffic.output_tokens),
                        float(getattr(traffic, "prefix_cache_hit", 0.0) or 0.0))


def regime_flags(ctx: ServingModelContext, layout: ReplicaLayout) -> tuple[str, ...]:
    """Flags of regimes without a published measurement (SPEC §4.9) and of approximations in force."""
    profile = ctx.stack.serving
    moe = ctx.model.moe is not None
    flags = []
    if not profile.is_measured(ctx.gpu.id, ctx.precision, moe):
        flags.append(f"no published serving measurement for {ctx.gpu.id} {ctx.stack.id} {ctx.precision} "
                     f"{'MoE' if moe else 'dense'}: the fit's nearest values, interval widened")
    tune, own = profile.tuning_match(ctx.gpu.id, ctx.precision)
    if not own:
        flags.append(f"{ctx.stack.id} has no {ctx.precision} tuning for {ctx.gpu.id}: η_pf, η_dc, η_hbm and the "
                     f"overheads are borrowed from its entry for {', '.join(tune.gpus)} at {'/'.join(tune.precisions)}")
    if ctx.precision == "fp4" and "fp4" not in getattr(ctx.gpu, "dense_tflops", {}):
        flags.append(f"{ctx.gpu.id} has no FP4 tensor cores: 4-bit weights run weight-only (W4A16) at its BF16 peak")
    if layout.gpus > ctx.platform.gpus_per_domain:
        flags.append(f"replica of {layout.gpus} GPUs spans scale-up domains of {ctx.platform.gpus_per_domain}: "
                     "TP/EP traffic crosses the scale-out fabric")
    return tuple(flags)


def interval_of(ctx: ServingModelContext, layout: ReplicaLayout) -> tuple[float, float]:
    """(p10, p90) factors on throughput: the profile's (out-of-sample residuals), widened for unmeasured regimes."""
    profile = ctx.stack.serving
    if profile.is_measured(ctx.gpu.id, ctx.precision, ctx.model.moe is not None):
        return profile.interval_p10, profile.interval_p90
    return profile.interval_p10 / UNMEASURED_WIDENING, profile.interval_p90 * UNMEASURED_WIDENING


def _check(ctx: ServingModelContext, layout: ReplicaLayout) -> None:
    if layout.role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, not {layout.role!r}")
    if min(layout.tp, layout.pp, layout.ep, layout.dp_attention, layout.concurrency) < 1:
        raise ValueError("tp, pp, ep, dp_attention and concurrency must be ≥ 1")
    if layout.ep > layout.gpus:
        raise ValueError(f"ep = {layout.ep} exceeds the replica's {layout.gpus} GPUs")
    if getattr(ctx.stack, "serving", None) is None:
        raise ValueError(f"stack {ctx.stack.id!r} is not a serving stack (kind: inference)")


def kv_transfer_time_s(gbyte: float, gbyte_s: float) -> float:
    """T_kv = α_so + KV_GB / bw: one prompt's KV cache (input tokens × KV bytes per token) over a link of `gbyte_s`
    (the prefill replica's scale-out NICs in parallel by default; a caller placing both replicas in one scale-up domain
    passes the domain's bandwidth)."""
    return ALPHA_SCALEOUT_S + gbyte / max(gbyte_s, 1e-9)


def max_throughput_concurrency(ctx: ServingModelContext, layout: ReplicaLayout, traffic: Any) -> int:
    """b_max = min(KV-room concurrency at full context, dp·max_batch_size): the batch a saturated replica runs."""
    t = _traffic(traffic)
    probe = replace(layout, concurrency=1)
    mem = memory_per_gpu(ctx, hardware_of(ctx), probe, t.input_tokens + t.output_tokens)
    return max(1, min(mem.max_concurrency, layout.dp_attention * ctx.stack.serving.max_batch_size))


def replica_performance(ctx: ServingModelContext, layout: ReplicaLayout, traffic: Any) -> ReplicaPerf:
    """The replica's memory, prefill time, TPOT, rates and fabric load (docs/model.md "Serving").

    aggregated: TPOT_agg = T_dec(b, c) + (b/O)·C_pf (chunked prefill of the requests that enter per step);
                requests/s = b/(O·TPOT_agg); prefill_s = T_pf + ⌈I_new/chunk⌉·T_dec
    prefill:    requests/s = 1/W_pf (W_pf: the prompt's prefill work per replica); prefill_s = T_pf
    decode:     TPOT = T_dec(b, c); requests/s = b/(O·TPOT)
    with c = I + O/2 the mean context, I_new = I·(1 − prefix_cache_hit).
    """
    _check(ctx, layout)
    t = _traffic(traffic)
    hw = hardware_of(ctx)
    mem = memory_per_gpu(ctx, hw, layout, t.input_tokens + t.output_tokens)
    pf = prefill_time(ctx, hw, layout, t.input_tokens, t.prefix_cache_hit)
    dec = decode_step(ctx, hw, layout, layout.concurrency, t.input_tokens + t.output_tokens / 2)
    g, b, out = layout.gpus, layout.concurrency, max(t.output_tokens, 1.0)
    kv_gb = t.input_tokens * kv_bytes_per_token(ctx.model, ctx.kv_cache_dtype) / 1e9
    if layout.role == "prefill":
        tpot, prefill_s, rate, out_per_gpu = dec.step_s, pf.latency_s, 1.0 / pf.work_s, 0.0
        so_gb_s = pf.scaleout_gbyte / pf.work_s / g + rate * kv_gb / g
    elif layout.role == "decode":
        tpot, prefill_s = dec.step_s, pf.latency_s
        rate, out_per_gpu = b / (out * tpot), b / tpot / g
        so_gb_s = dec.scaleout_gbyte / tpot / g + rate * kv_gb / g
    else:
        tpot = dec.step_s + (b / out) * pf.chunk_s
        new_tokens = t.input_tokens * (1.0 - t.prefix_cache_hit)
        chunk = ctx.stack.serving.chunk_tokens
        prefill_s = pf.latency_s + math.ceil(new_tokens / chunk) * dec.step_s
        rate, out_per_gpu = b / (out * tpot), b / tpot / g
        so_gb_s = (dec.scaleout_gbyte + (b / out) * pf.scaleout_gbyte) / tpot / g
    fits = mem.max_concurrency >= (b if layout.role != "prefill" else 1)
    return ReplicaPerf(
        fits=fits, memory_gb_per_gpu=mem.total_gb, kv_cache_gb_per_gpu=mem.kv_gb, max_concurrency=mem.max_concurrency,
        prefill_s=prefill_s, tpot_s=tpot, tokens_per_s_per_user=1.0 / tpot, output_tokens_per_s_per_gpu=out_per_gpu,
        requests_per_s=rate, kv_transfer_gbyte_per_request=kv_gb if layout.role != "aggregated" else 0.0,
        scaleout_gbyte_s_per_gpu=so_gb_s, interval=interval_of(ctx, layout),
        flags=regime_flags(ctx, layout) + coverage_flags(ctx, layout, t.input_tokens + t.output_tokens),
        gpus=g, decode_step_s=dec.step_s, input_tokens_per_s_per_gpu=rate * t.input_tokens / g, bound=dec.bound,
        kv_transfer_s=kv_transfer_time_s(kv_gb, ctx.scaleout_gbyte_s_per_gpu * g) if layout.role != "aggregated" else 0.0)
