"""The serving replica's physics (SPEC §4.9; docs/model.md "Serving"): memory and KV room, prefill time, the
decode step, and the TP/EP collectives inside the scale-up domain or across the scale-out fabric.

G = dp·tp·pp GPUs per replica; wb, kvb bytes per weight and KV element; P_nr = P_stored − P_routed (sharded tp·pp
ways, replicated over dp), P_routed sharded over all G GPUs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .hardware import GIB_PER_GB
from .serving_model import (
    decode_attention_flops_per_token,
    dtype_bytes,
    expected_experts_touched,
    kv_bytes_per_sequence,
    kv_shards,
    prefill_attention_flops,
    serving_weights,
)

GB = 1e9
US = 1e-6
ALPHA_SCALEUP_S = 8.0 * US
"""α_up: the fixed time of one small collective (an all-reduce, a dispatch or a combine) inside the scale-up domain
(one-shot NVLink all-reduce kernels, docs/model.md "Serving"; estimate)."""
ALPHA_SCALEOUT_S = 25.0 * US
"""α_so: the same across the scale-out fabric (NIC, switch and proxy latency; estimate)."""
ACTIVATION_BYTES_PER_TOKEN_HIDDEN = 16.0
"""Activation workspace per prefill-chunk token and hidden unit, bytes (residual, norms, QKV and MLP buffers; a
stated estimate: 8 BF16 vectors of width h per token)."""


@dataclass(frozen=True)
class ServingHardware:
    """Peaks and efficiencies of one (GPU, platform, stack, precision)."""

    peak_flops: float  # dense peak at the precision, FLOP/s
    hbm_byte_s: float  # hbm_tbyte_s · η_hbm, B/s
    prefill_efficiency: float  # η_pf
    decode_efficiency: float  # η_dc
    moe_efficiency: float  # on routed-expert FLOPs
    ep_imbalance: float  # u_ep: the most loaded expert-parallel GPU's tokens ÷ the mean (ep > 1)
    step_overhead_s: float
    seq_overhead_s: float  # per sequence of an attention rank per step
    layer_overhead_s: float  # per layer per step
    comm_overlap: float
    scaleup_byte_s: float  # nvlink_gbyte_s · η_ar (the profile's allreduce_efficiency, else nvlink_efficiency)
    scaleup_a2a_byte_s: float  # nvlink_gbyte_s · alltoall_efficiency (else nvlink_efficiency)
    scaleout_byte_s: float  # per GPU per direction
    domain: int  # GPUs per scale-up domain
    usable_hbm_gb: float  # hbm_gb · 2^30/10^9 − platform.hbm_reserve_gb
    weight_bytes: float  # wb
    kv_bytes: float  # kvb
    scaleup_ring_step_s: float = 0.0  # α_step of a PCIe path (NCCL ring steps); 0 = one-shot kernels (NVLink, IF)


PCIE_RING_STEP_DEFAULT_S = 5.7 * US
"""NCCL's PCI ring/Simple step latency (docs/sources.md [P3]) when a PCIe platform states no scaleup_latency_us."""


def scaleup_path(platform: Any, profile: Any) -> tuple[float, float]:
    """(η of a TP all-reduce, α per ring step) on the platform's scale-up path. NVLink and Infinity Fabric run the
    stacks' one-shot all-reduce kernels (P2P over a full mesh: α_up, the profile's fitted η_ar, which is NVLink's,
    applies on NVLink only; Infinity Fabric at its measured nvlink_efficiency). Over PCIe the stacks fall back to
    NCCL rings: the platform's measured nvlink_efficiency and its scaleup_latency_us per ring step (issue 46)."""
    fabric = getattr(platform, "scaleup_fabric", "nvlink")
    if fabric == "nvlink":
        return profile.allreduce_efficiency or platform.nvlink_efficiency, 0.0
    if fabric == "pcie":
        lat = getattr(platform, "scaleup_latency_us", None)
        return platform.nvlink_efficiency, (lat * US if lat is not None else PCIE_RING_STEP_DEFAULT_S)
    return platform.nvlink_efficiency, 0.0


def peak_tflops(gpu: Any, precision: str) -> float:
    """Dense tensor peak at the precision, read through the catalog GPU's one accessor (`Gpu.peak_tflops` of its
    `dense_tflops` map: fp4 → the FP4 peak, or the BF16 peak without FP4 cores, W4A16; fp8; bf16)."""
    return float(gpu.peak_tflops(precision))


def hardware_of(ctx: Any) -> ServingHardware:
    """The replica's hardware: peaks from the catalog GPU, efficiencies from the stack's serving profile for this GPU
    and precision, scale-up bandwidth from the platform (TP all-reduce at the profile's η_ar of it), usable HBM =
    hbm_gb·2^30/10^9 − hbm_reserve_gb."""
    profile = ctx.stack.serving
    tune = profile.tuning(ctx.gpu.id, ctx.precision)
    overhead_ms = tune.step_overhead_ms if tune.step_overhead_ms is not None else profile.step_overhead_ms
    seq_us = tune.seq_overhead_us if tune.seq_overhead_us is not None else profile.seq_overhead_us
    layer_us = tune.layer_overhead_us if tune.layer_overhead_us is not None else profile.layer_overhead_us
    p = ctx.platform
    a2a = getattr(p, "alltoall_efficiency", None) or p.nvlink_efficiency
    eta_ar, ring_step_s = scaleup_path(p, profile)
    return ServingHardware(
        peak_flops=peak_tflops(ctx.gpu, ctx.precision) * 1e12, hbm_byte_s=ctx.gpu.hbm_tbyte_s * 1e12 * tune.hbm_efficiency,
        prefill_efficiency=tune.prefill_efficiency, decode_efficiency=tune.decode_efficiency,
        moe_efficiency=profile.moe_efficiency,
        ep_imbalance=tune.ep_imbalance if tune.ep_imbalance is not None else profile.ep_imbalance, step_overhead_s=overhead_ms * 1e-3, seq_overhead_s=seq_us * US,
        layer_overhead_s=layer_us * US, comm_overlap=profile.comm_overlap,
        scaleup_byte_s=p.nvlink_gbyte_s * eta_ar * GB, scaleup_a2a_byte_s=p.nvlink_gbyte_s * a2a * GB,
        scaleout_byte_s=max(ctx.scaleout_gbyte_s_per_gpu, 1e-9) * GB, domain=p.gpus_per_domain,
        usable_hbm_gb=ctx.gpu.hbm_gb * GIB_PER_GB - p.hbm_reserve_gb, weight_bytes=dtype_bytes(ctx.precision),
        kv_bytes=dtype_bytes(ctx.kv_cache_dtype), scaleup_ring_step_s=ring_step_s)


# ------------------------------------------------------------------------------------------------ memory


@dataclass(frozen=True)
class ReplicaMemory:
    weights_gb: float
    activations_gb: float
    kv_gb: float  # KV of the layout's concurrency at full context
    kv_room_gb: float
    max_concurrency: int

    @property
    def total_gb(self) -> float:
        return self.weights_gb + self.activations_gb + self.kv_gb


def weight_bytes_per_gpu(ctx: Any, hw: ServingHardware, layout: Any) -> float:
    """M_w = wb·(P_nr/(tp·pp) + P_routed/G)."""
    w = serving_weights(ctx.model)
    return hw.weight_bytes * ((w.stored - w.routed) / (layout.tp * layout.pp) + w.routed / layout.gpus)


def kv_bytes_per_gpu_sequence(ctx: Any, layout: Any, context: float) -> float:
    """KV bytes one sequence keeps on one GPU: kv_bytes_per_sequence(c) / (pp·kv_shards(tp)) (GQA heads split over
    min(tp, a_kv) ranks; the MLA latent whole on every TP rank)."""
    return kv_bytes_per_sequence(ctx.model, ctx.kv_cache_dtype, context) / (layout.pp * kv_shards(ctx.model, layout.tp))


def memory_per_gpu(ctx: Any, hw: ServingHardware, layout: Any, context: float) -> ReplicaMemory:
    """Room = usable HBM − M_w − M_act (M_act = chunk·h·16 B / tp); max concurrency = dp·⌊room / KV per GPU and
    sequence at full context⌋; the layout's KV = (b/dp)·KV per GPU and sequence."""
    weights = weight_bytes_per_gpu(ctx, hw, layout) / GB
    chunk = ctx.stack.serving.chunk_tokens
    act = chunk * ctx.model.hidden_size * ACTIVATION_BYTES_PER_TOKEN_HIDDEN / layout.tp / GB
    room = hw.usable_hbm_gb - weights - act
    per_seq = kv_bytes_per_gpu_sequence(ctx, layout, context) / GB
    most = layout.dp_attention * math.floor(room / per_seq) if room > 0 and per_seq > 0 else 0
    kv = math.ceil(layout.concurrency / layout.dp_attention) * per_seq
    return ReplicaMemory(weights, act, kv, max(room, 0.0), max(most, 0))


# ------------------------------------------------------------------------------------------------ collectives


@dataclass(frozen=True)
class CommTime:
    seconds: float
    scaleout_gbyte: float  # bytes per GPU that cross the scale-out fabric, GB


def scaleout_share(group: int, domain: int) -> float:
    """χ_so = (g − min(g, D))/(g − 1): the share of a g-GPU group's peers outside one's D-GPU scale-up domain."""
    if group <= 1:
        return 0.0
    return (group - min(group, domain)) / (group - 1)


def tp_allreduce(hw: ServingHardware, tp: int, tokens: float, hidden: int, ops: float) -> CommTime:
    """T_tp = ops·(α + 2(tp−1)/tp·n·h·2 B / bw): `ops` all-reduces of n tokens' BF16 hidden state; over the scale-up
    domain when tp ≤ D (α = α_up, or 2(tp−1)·α_step for a PCIe ring), else the scale-out bandwidth and α_so."""
    if tp <= 1 or ops <= 0:
        return CommTime(0.0, 0.0)
    per_op = 2.0 * (tp - 1) / tp * tokens * hidden * 2.0
    if tp <= hw.domain:
        alpha = 2 * (tp - 1) * hw.scaleup_ring_step_s if hw.scaleup_ring_step_s > 0 else ALPHA_SCALEUP_S
        return CommTime(ops * (alpha + per_op / hw.scaleup_byte_s), 0.0)
    return CommTime(ops * (ALPHA_SCALEOUT_S + per_op / hw.scaleout_byte_s), ops * per_op / GB)


def ep_alltoall(hw: ServingHardware, ep: int, tokens_per_gpu: float, hidden: int, top_k: int, layers: float) -> CommTime:
    """T_ep = layers·(2α + max((1 − χ)·V·u_ep/bw_a2a,up, χ·V/bw_so)), V = n·k·h·(1 + 2) B·(ep − 1)/ep per GPU and layer
    (FP8 dispatch, BF16 combine); χ = scaleout_share(ep, D); α_so when χ > 0, (ep − 1)·α_step over PCIe. u_ep (fitted on single-domain
    attention-DP runs) slows the in-domain part; the scale-out part moves at the NIC configuration's measured
    all-to-all bandwidth, which already is what DeepEP-style dispatch reaches."""
    if ep <= 1 or layers <= 0 or top_k <= 0:
        return CommTime(0.0, 0.0)
    volume = tokens_per_gpu * top_k * hidden * 3.0 * (ep - 1) / ep
    chi = scaleout_share(ep, hw.domain)
    up_alpha = (ep - 1) * hw.scaleup_ring_step_s if hw.scaleup_ring_step_s > 0 else ALPHA_SCALEUP_S
    alpha = ALPHA_SCALEOUT_S if chi > 0 else up_alpha
    per_layer = 2 * alpha + max((1 - chi) * volume * hw.ep_imbalance / hw.scaleup_a2a_byte_s,
                                chi * volume / hw.scaleout_byte_s)
    return CommTime(layers * per_layer, layers * chi * volume / GB)


def pp_send(hw: ServingHardware, layout: Any, tokens: float, hidden: int) -> CommTime:
    """Pipeline sends: (pp − 1) boundaries × n·h·2 B per step, across the scale-out fabric when the replica spans
    domains (the time is left out: one small message per stage, overlapped with the next microbatch)."""
    if layout.pp <= 1 or layout.gpus <= hw.domain:
        return CommTime(0.0, 0.0)
    return CommTime(0.0, (layout.pp - 1) * tokens * hidden * 2.0 / layout.gpus / GB)


# ------------------------------------------------------------------------------------------------ prefill


@dataclass(frozen=True)
class PrefillTime:
    latency_s: float  # one prompt alone through the replica
    work_s: float  # replica-seconds one prompt occupies in a prefill server (prompts batched up to chunk_tokens)
    chunk_s: float  # replica-seconds it adds to aggregated decode steps (its FLOPs and collectives; weights shared)
    scaleout_gbyte: float  # per GPU per prompt


def routed_factor(hw: ServingHardware, ep: int) -> float:
    """u/μ_moe: routed-expert work runs at μ_moe of the dense efficiency and, with ep > 1, waits for the most loaded
    expert-parallel GPU (u_ep × the mean tokens)."""
    return (hw.ep_imbalance if ep > 1 else 1.0) / hw.moe_efficiency


def _split_flops_s(dense_flops: float, routed_flops: float, hw: ServingHardware, efficiency: float, ep: int) -> float:
    """(F_dense + F_routed·u/μ_moe) / (peak·η)."""
    return (dense_flops + routed_flops * routed_factor(hw, ep)) / (hw.peak_flops * efficiency)


def prefill_time(ctx: Any, hw: ServingHardware, layout: Any, prompt: float, hit: float) -> PrefillTime:
    """F_pf = 2·P_act,mm·T_new + attention(T, T_c) (quadratic); T_new = T·(1 − hit), T_c = T·hit; F_d its dense part
    (attention, shared and dense MLPs, head), F_r the routed experts.
    C_pf = F_pf/(G·peak·η_pf) + T_comm/pp (the chunk cost inside aggregated steps, weights read by the step anyway);
    W_pf = max(F_pf/(G·peak·η_pf), M_w/(pp·bw_hbm)·min(1, T_new/chunk)) + T_comm/pp (a prefill server keeps dp·pp
    prompts in flight and batches them up to `chunk_tokens`, reading the weights once per chunk);
    T_pf = max((F_d/tp + F_r·u/(dp·tp))/(peak·η_pf), M_w/bw_hbm) + T_comm,1 (one prompt alone: its dense work on one
    attention rank of tp GPUs, the stages in turn; its all-to-all leaves that rank's tp GPUs)."""
    m, w = ctx.model, serving_weights(ctx.model)
    new, cached = prompt * (1.0 - hit), prompt * hit
    routed = 2.0 * w.routed_active * new
    dense = 2.0 * (w.active_matmul - w.routed_active) * new + prefill_attention_flops(m, prompt, cached)
    g, dp, tp_size = layout.gpus, layout.dp_attention, layout.tp
    compute = _split_flops_s(dense, routed, hw, hw.prefill_efficiency, layout.ep) / g
    alone = (dense / tp_size + routed * routed_factor(hw, layout.ep) / (dp * tp_size)) / (
        hw.peak_flops * hw.prefill_efficiency)
    weights = weight_bytes_per_gpu(ctx, hw, layout) / hw.hbm_byte_s / layout.pp
    tp = tp_allreduce(hw, tp_size, new / dp, m.hidden_size, 2.0 * m.layers)
    ep = ep_alltoall(hw, layout.ep, new / g * layout.pp, m.hidden_size, w.top_k, w.moe_layers)
    if dp > 1:
        tp_alone = tp_allreduce(hw, tp_size, new, m.hidden_size, 2.0 * m.layers).seconds
        ep_alone = ep_alltoall(hw, layout.ep, new / tp_size, m.hidden_size, w.top_k, w.moe_layers).seconds
    else:
        tp_alone, ep_alone = tp.seconds, ep.seconds
    pps = pp_send(hw, layout, new, m.hidden_size)
    comm = (tp.seconds + ep.seconds) / layout.pp
    share = min(1.0, new / ctx.stack.serving.chunk_tokens)
    return PrefillTime(latency_s=max(alone, layout.pp * weights) + tp_alone + ep_alone,
                       work_s=max(compute, weights * share) + comm, chunk_s=compute + comm,
                       scaleout_gbyte=tp.scaleout_gbyte + ep.scaleout_gbyte + pps.scaleout_gbyte)


# ------------------------------------------------------------------------------------------------ decode


@dataclass(frozen=True)
class DecodeStep:
    step_s: float  # TPOT of the decode step alone
    memory_s: float
    compute_s: float
    comm_s: float
    scaleout_gbyte: float  # per GPU per step
    bound: str


def decode_step(ctx: Any, hw: ServingHardware, layout: Any, batch: float, context: float) -> DecodeStep:
    """T_dec = pp·(max(W_mb/bw_hbm, F_mm/(peak·η_dc)) + max(K_mb/bw_hbm, F_att/(peak·η_dc)) + (1 − o)·T_comm,mb
    + t_layer·L/pp) + t_ovh + t_seq·b/dp, per microbatch of b/pp: the weight GEMMs and the attention kernel run one
    after the other, each at its own roofline (issue 40 follow-up: one max over their summed bytes and FLOPs let
    a compute-bound GEMM hide the KV reads):
    W_mb = wb·((P_nr − V·h)/(tp·pp) + P_routed/(G·pp)·touched(b/pp)/E) (the input embedding is gathered by row, not
    streamed);  K_mb = (b/pp/dp)·KV_gpu,seq(c);
    F_mm = (b/pp)·2·P_act,mm/(pp·dp·tp) (routed part × u/μ_moe);  F_att = (b/pp)·attention(c)/(pp·dp·tp)."""
    m, w, pp, dp = ctx.model, serving_weights(ctx.model), layout.pp, layout.dp_attention
    mb = batch / pp
    nonrouted = hw.weight_bytes * (w.stored - w.routed - w.gathered) / (layout.tp * pp)
    routed = hw.weight_bytes * w.routed / layout.gpus / pp if w.routed else 0.0
    if routed:
        routed *= expected_experts_touched(w.experts, w.top_k, mb) / w.experts
    kv = mb / dp * kv_bytes_per_gpu_sequence(ctx, layout, context)
    weights_s, kv_s = (nonrouted + routed) / hw.hbm_byte_s, kv / hw.hbm_byte_s
    ranks = pp * dp * layout.tp
    gemm_s = _split_flops_s(mb * 2.0 * (w.active_matmul - w.routed_active), mb * 2.0 * w.routed_active, hw,
                            hw.decode_efficiency, layout.ep) / ranks
    attention_s = mb * decode_attention_flops_per_token(m, context) / (hw.peak_flops * hw.decode_efficiency) / ranks
    memory_s, compute_s = weights_s + kv_s, gemm_s + attention_s
    tp = tp_allreduce(hw, layout.tp, mb / dp, m.hidden_size, 2.0 * m.layers / pp)
    ep = ep_alltoall(hw, layout.ep, mb / (dp * layout.tp), m.hidden_size, w.top_k, w.moe_layers / pp)
    pps = pp_send(hw, layout, batch, m.hidden_size)
    comm = (tp.seconds + ep.seconds) * (1.0 - hw.comm_overlap)
    kernels = hw.layer_overhead_s * m.layers / pp
    core = max(weights_s, gemm_s) + max(kv_s, attention_s)
    step = pp * (core + comm + kernels) + hw.step_overhead_s + hw.seq_overhead_s * batch / dp
    return DecodeStep(step_s=step, memory_s=memory_s, compute_s=compute_s, comm_s=comm,
                      scaleout_gbyte=pp * (tp.scaleout_gbyte + ep.scaleout_gbyte) + pps.scaleout_gbyte,
                      bound="memory" if memory_s >= compute_s else "compute")
