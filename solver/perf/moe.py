"""Mixture-of-Experts physics (SPEC §4.7): parameters, FLOPs, compute time, memory and the
expert-parallel all-to-all of a model with `workload.model.moe`. The shapes, parameter counts and
FLOPs live in perf/moe_counts.py, the all-to-all and parameter groups in perf/moe_traffic.py, the stored
activations in perf/moe_memory.py; this module holds the compute time and re-exports them all (import from here).

Notation (docs/model.md §MoE): E experts, k = top_k, f_e expert width, n_s shared experts of width
f_s, L_d dense and L_m MoE layers, n_mtp multi-token-prediction layers, L'_m / L'_d the MoE / dense
layer counts with the MTP layers added (an MTP layer repeats the last layer's kind), P_att one
attention block's weights (perf/model.py), k_ff = 3 (swiglu) or 2 (gelu). Layout: t, c, p, d, ep,
etp, edp = t·c·d/(ep·etp), N = t·c·p·d, G_u GPUs per domain, B global batch, s sequence, b
microbatch. Pure functions of plain numbers; step.py, memory.py and traffic.py call them when the
model has `moe`, and each formula is written once here.

FLOPs follow Megatron's MoE convention (docs/sources.md [M5][M9]; docs/model.md §MoE): the attention
core counts the causal mask, routed experts count k times, the router is left out. Compute time uses the
GEMM-shape model of perf/compute.py (`microbatch_compute`): every GEMM, the routed experts' grouped GEMMs
included, is timed from its per-GPU shape by `compute.gemm_s`; the routed experts run at ε (`expert_efficiency`,
fitted on the MoE calibration runs) × the GEMM efficiency of their shape. With a flat compute efficiency (a
scenario override) `compute_s` keeps the FLOP-rate form.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..inputs.schema import TransformerShape, Workload
from .compute import (
    ATTENTION_BACKWARD_OVER_FORWARD,
    BF16_BYTES,
    ELEMENTWISE_BACKWARD_OVER_FORWARD,
    ELEMENTWISE_HBM_EFFICIENCY,
    FP8_BYTES,
    FP8_CAST_BYTES,
    TBYTE,
    TFLOP,
    ComputeParams,
    Gemm,
    MicrobatchCompute,
    gemm_s,
    logits_gemm,
    pacing_stage,
)
from .hardware import Hardware
from .layout import Layout
from .model import (
    attention_core_flops_per_token,
    attention_params_per_layer,
    kv_hidden_size,
)
from .moe_counts import (
    LayerCounts,
    MoeParams,
    TokenFlops,
    capacity_multiplier,
    flops_per_step,
    hardware_flops_per_token,
    layer_counts,
    load_factor,
    moe_recomputed,
    moe_shape,
    parameter_counts,
    recompute_flops,
    shared_width,
    token_flops,
)
from .moe_memory import (
    activation_bytes_per_token,
    gemm_input_bytes,
    layer_activation_bytes,
    moe_mlp_bytes_per_token,
)
from .moe_traffic import (
    COMBINE_BYTES,
    DISPATCH_BYTES,
    ParamGroup,
    TpCollective,
    ep_bytes,
    ep_domains,
    ep_window_pieces,
    exchange_bytes_per_copy,
    node_limit,
    parameter_groups,
    remote_domains,
    sm_penalty,
    tp_collectives,
)

DEFAULT_EXPERT_EFFICIENCY = 0.38  # ε when the catalog gives none: the Blackwell BF16 fit (an estimate elsewhere)
GB = 1e9

__all__ = [
    "COMBINE_BYTES",
    "DEFAULT_EXPERT_EFFICIENCY",
    "DISPATCH_BYTES",
    "EXPERT_BYTES_PER_HIDDEN",
    "EXPERT_BYTES_PER_WIDTH",
    "FORWARD_SHARE",
    "GB",
    "LayerCounts",
    "MoeMicrobatch",
    "MoeParams",
    "ParamGroup",
    "TokenFlops",
    "TpCollective",
    "activation_bytes_per_token",
    "capacity_multiplier",
    "compute_s",
    "ep_bytes",
    "ep_domains",
    "ep_window_pieces",
    "exchange_bytes_per_copy",
    "expert_efficiency",
    "flat_shares",
    "flops_per_step",
    "gemm_input_bytes",
    "hardware_flops_per_token",
    "layer_activation_bytes",
    "layer_counts",
    "load_factor",
    "microbatch_compute",
    "moe_mlp_bytes_per_token",
    "moe_recomputed",
    "node_limit",
    "parameter_counts",
    "parameter_groups",
    "recompute_flops",
    "remote_domains",
    "routed_bytes_per_token",
    "shared_expert_s",
    "shared_width",
    "sm_penalty",
    "token_flops",
    "tp_collectives",
]


# ----------------------------------------------------------------------------------- compute

# Memory-bound work of one routed token copy in one MoE layer, forward + backward, in bytes per hidden
# element and per expert-width element (an accounting of Megatron's MoE layer, docs/model.md §MoE):
# forward permute, dispatch buffers, sort by expert, unsort, combine buffers, unpermute and weighting
# ≈ 20·h; SwiGLU reads 2f_e and writes f_e in bf16 ≈ 6·f_e; backward about twice the forward.
EXPERT_BYTES_PER_HIDDEN = 60.0
EXPERT_BYTES_PER_WIDTH = 18.0
FORWARD_SHARE = 1.0 / 3.0  # the forward's part of that work (what recomputation repeats)


def expert_efficiency(hw: Hardware) -> float:
    """ε: routed-expert (grouped) GEMMs run at ε × the GEMM efficiency of their shape (catalog
    `expert_efficiency` per GPU and precision, fitted on the MoE calibration runs, docs/model.md §MoE). The
    shape itself (rows per expert, expert width) is timed by `compute.gemm_s`; ε is what a grouped GEMM of
    many small experts loses beyond that (routing, padding to tile sizes, the per-expert prologue)."""
    return hw.expert_efficiency if hw.expert_efficiency is not None else DEFAULT_EXPERT_EFFICIENCY


def _routed_bytes_per_copy(workload: Workload) -> tuple[float, float]:
    """(forward, total) memory-bound bytes of one routed token copy in one MoE layer (60·h + 18·f_e, the
    forward a third; recompute repeats the forward, moe_act the activation's share)."""
    m, moe = workload.model, moe_shape(workload.model)
    h, f_e = m.hidden_size, moe.expert_ffn_hidden_size
    per_copy = EXPERT_BYTES_PER_HIDDEN * h + EXPERT_BYTES_PER_WIDTH * f_e
    forward = FORWARD_SHARE * per_copy
    if moe_recomputed(workload):
        per_copy *= 1 + FORWARD_SHARE
    elif "moe_act" in workload.recompute_modules:
        per_copy += FORWARD_SHARE * EXPERT_BYTES_PER_WIDTH * f_e
    return forward, per_copy


def routed_bytes_per_token(workload: Workload) -> float:
    """Memory-bound bytes per token in the routed experts: k·L'_m copies of (60·h + 18·f_e), + the
    forward's third again when the MoE layer is recomputed (6·f_e for moe_act alone), × c_f when padded."""
    m, moe = workload.model, moe_shape(workload.model)
    return moe.top_k * layer_counts(m).moe_with_mtp * _routed_bytes_per_copy(workload)[1] * capacity_multiplier(moe)


def compute_s(workload: Workload, layout: Layout, hw: Hardware) -> float:
    """Flat compute model (a scenario `efficiency.compute_efficiency`, or a GPU without `compute_model`):
    T_comp = B·s/N · [F_other/P + u_eff·(F_routed/(ε·P) + Q_routed/BW)]   (SPEC 4.7)

    P = peak·1e12·η_compute, BW = hbm_tbyte_s·1e12, ε = `expert_efficiency`; F per token (hardware FLOPs),
    Q the routed experts' memory-bound bytes per token (`routed_bytes_per_token`)."""
    assert hw.compute_efficiency is not None, "the flat compute model needs compute_efficiency"
    moe = moe_shape(workload.model)
    routed, other = hardware_flops_per_token(workload)
    flops_per_s = hw.peak_tflops * 1e12 * hw.compute_efficiency
    imbalance = load_factor(moe) / capacity_multiplier(moe)  # padding is already in F_routed and Q_routed
    memory_s = routed_bytes_per_token(workload) / (hw.hbm_tbyte_s * 1e12) if hw.hbm_tbyte_s else 0.0
    per_token = other / flops_per_s + imbalance * (routed / (expert_efficiency(hw) * flops_per_s) + memory_s)
    return workload.global_batch_size * workload.model.seq_len * per_token / layout.gpus


def shared_expert_s(workload: Workload, layout: Layout, hw: Hardware) -> float:
    """Flat compute model: the shared experts' compute per step (forward, backward, recompute) at η_compute."""
    assert hw.compute_efficiency is not None, "the flat compute model needs compute_efficiency"
    f = token_flops(workload.model)
    shared = (3 + (1 if moe_recomputed(workload) else 0)) * f.shared
    tokens = workload.global_batch_size * workload.model.seq_len
    return tokens * shared / (layout.gpus * hw.peak_tflops * 1e12 * hw.compute_efficiency)


def flat_shares(workload: Workload) -> tuple[float, float, float]:
    """(forward, linear GEMM, attention core) shares of the hardware FLOPs (the flat model's windows)."""
    f = token_flops(workload.model)
    routed, other = hardware_flops_per_token(workload)
    total = routed + other
    again_core = f.core if workload.activation_recompute in ("full", "selective") else 0.0
    core = 3 * f.core + again_core
    return f.total / total, (total - core) / total, core / total


# ----------------------------------------------------------------------------------- GEMM-shape compute


@dataclass(frozen=True)
class MoeMicrobatch:
    """One microbatch on the pacing stage (GEMM-shape model, SPEC 4.2 + 4.7): the compute split the step model
    needs, and the shared experts' time (what `overlap: shared_expert` hides the all-to-all behind)."""

    compute: MicrobatchCompute
    shared_expert_s: float


def _gemm_pass_times(g: Gemm, params: ComputeParams, fp8: bool, efficiency_factor: float = 1.0,
                     group: float = 1.0) -> tuple[float, float]:
    """(forward, backward) of a GEMM, or of a grouped GEMM of `group` equal GEMMs launched once (the fixed
    overhead t₀ counted once per pass); efficiency × `efficiency_factor` (ε for routed experts)."""
    low = fp8 and g.fp8
    precision = "fp8" if low else "bf16"
    eff = params.gemm_efficiency[precision] * efficiency_factor
    kw = dict(tflops=params.tflops[precision], efficiency=eff, hbm_tbyte_s=params.hbm_tbyte_s,
              overhead_s=0.0, operand_bytes=FP8_BYTES if low else BF16_BYTES)
    t0 = params.gemm_overhead_s
    forward = group * gemm_s(g.m, g.n, g.k, **kw) + t0
    backward = group * (gemm_s(g.m, g.k, g.n, **kw) + gemm_s(g.n, g.k, g.m, **kw)) + 2 * t0
    return forward, backward


def _attention_widths(model: TransformerShape) -> tuple[float, float]:
    """(input projections, output projection) widths of one attention block: P_att = h·w_in + a·d_v·h."""
    h, a = model.hidden_size, model.attention_heads
    d_v = model.mla.v_head_dim if model.mla is not None else (model.head_dim or h / a)
    out = a * d_v
    return (attention_params_per_layer(model) - out * h) / h, out


def microbatch_compute(workload: Workload, layout: Layout, params: ComputeParams, epsilon: float) -> MoeMicrobatch:
    """One microbatch of a Mixture-of-Experts model on the pacing stage, timed GEMM by GEMM (`compute.gemm_s`,
    the GPU's fitted `compute_model`) like a dense model's (`compute.microbatch_compute`), per layer and
    microbatch with T = b·s/c tokens:

        attention   qkv (T, w_in/t, h), attn_out (T, h, a·d_v/t)       every layer and MTP layer
        dense MLP   ffn_up (T, k_up·f/t, h), ffn_down (T, h, f/t)     L'_d layers
        shared      (T, k_up·n_s·f_s/t, h), (T, h, n_s·f_s/t)          L'_m layers
        routed      E/ep experts of M_e = u_eff·T·k·ep·etp/(t·E) rows: (M_e, k_up·f_e/etp, h), (M_e, h, f_e/etp),
                    one grouped GEMM per pass at ε × the GEMM efficiency, + the routed copies' memory-bound
                    bytes (`routed_bytes_per_token`) at hbm_tbyte_s
        attention core (FlashAttention) the causal QKᵀ and AV FLOPs per layer (MLA and sliding windows as
                    counted by perf/model.py) at the BF16 peak · η_attn, backward 2.5 × forward
        element-wise norms, residuals, RoPE, the dense and shared activations as in `compute` (÷ t)
        logits      (T, V/t, h) in BF16 on the last stage, once per MTP layer more

    Recompute: full repeats every forward; the `mlp` module the dense MLPs; `moe` the routed and shared
    experts; `mla_up_proj` the MLA up-projections (their share of qkv). The MTP layers run on the last
    stage with the logits. Per-layer averages over the L layers set the pacing stage (`pacing_stage`)."""
    m, moe = workload.model, moe_shape(workload.model)
    fp8 = workload.precision == "fp8"
    t, counts = layout.tp, layer_counts(m)
    h, k_up = m.hidden_size, 2 if m.ffn_type == "swiglu" else 1
    tokens = layout.microbatch_size * m.seq_len / layout.cp
    full = workload.activation_recompute == "full"
    modules = workload.recompute_modules

    def passes(g: Gemm, again: bool, factor: float = 1.0, group: float = 1.0) -> tuple[float, float]:
        fwd, bwd = _gemm_pass_times(g, params, fp8, factor, group)
        return fwd, bwd + (fwd if (again or full) else 0.0)

    w_in, w_out = _attention_widths(m)
    qkv_f, qkv_b = passes(Gemm("qkv", tokens, w_in / t, h, True), False)
    if "mla_up_proj" in modules and m.mla is not None:  # the up-projections' share of qkv runs again
        up = token_flops(m).mla_up / (2.0 * w_in * h * (m.layers + moe.mtp_layers))
        qkv_b += up * qkv_f
    out_f, out_b = passes(Gemm("attn_out", tokens, h, w_out / t, True), False)
    mlp_f, mlp_b = (0.0, 0.0)
    if counts.dense_with_mtp:
        up_f, up_b = passes(Gemm("ffn_up", tokens, k_up * m.ffn_hidden_size / t, h, True), "mlp" in modules)
        dn_f, dn_b = passes(Gemm("ffn_down", tokens, h, m.ffn_hidden_size / t, True), "mlp" in modules)
        mlp_f, mlp_b = up_f + dn_f, up_b + dn_b
    again_moe = moe_recomputed(workload)
    shared_f = shared_b = 0.0
    width = shared_width(moe)
    if width:
        su_f, su_b = passes(Gemm("shared_up", tokens, k_up * width / t, h, True), again_moe)
        sd_f, sd_b = passes(Gemm("shared_down", tokens, h, width / t, True), again_moe)
        shared_f, shared_b = su_f + sd_f, su_b + sd_b
    experts = moe.experts / layout.ep
    rows = load_factor(moe) * tokens * moe.top_k * layout.ep * layout.etp / (t * moe.experts)
    f_e = moe.expert_ffn_hidden_size / layout.etp
    eu_f, eu_b = passes(Gemm("routed_up", rows, k_up * f_e, h, True), again_moe, epsilon, experts)
    ed_f, ed_b = passes(Gemm("routed_down", rows, h, f_e, True), again_moe, epsilon, experts)
    copies = tokens / t * moe.top_k * load_factor(moe)  # the busiest rank's routed copies (padding included)
    fwd_bytes, all_bytes = _routed_bytes_per_copy(workload)
    mem_f = copies * fwd_bytes / (params.hbm_tbyte_s * TBYTE)
    mem_b = copies * all_bytes / (params.hbm_tbyte_s * TBYTE) - mem_f
    routed_f, routed_b = eu_f + ed_f + mem_f, eu_b + ed_b + mem_b
    # attention core, FlashAttention (causal, executed FLOPs), per layer on average
    core = tokens / t * attention_core_flops_per_token(m, causal=True) / m.layers
    att_f = core / (params.tflops["bf16"] * TFLOP * params.attention_efficiency)
    att_b = ATTENTION_BACKWARD_OVER_FORWARD * att_f + (att_f if full else 0.0)
    # element-wise: norms, residuals, RoPE on every layer; the dense and shared activations
    base = (4 * h + 6 * h + 2 * (h + kv_hidden_size(m))) * BF16_BYTES
    dense_act, shared_act = 3 * m.ffn_hidden_size * BF16_BYTES, 3 * width * BF16_BYTES
    casts = (3 * h * FP8_CAST_BYTES) if fp8 else 0.0
    hbm = params.hbm_tbyte_s * TBYTE * ELEMENTWISE_HBM_EFFICIENCY
    ew_layer = (base + casts) * tokens / t / hbm
    ew_dense = (dense_act + (m.ffn_hidden_size * FP8_CAST_BYTES if fp8 else 0.0)) * tokens / t / hbm
    ew_shared = (shared_act + (width * FP8_CAST_BYTES if fp8 else 0.0)) * tokens / t / hbm
    L = m.layers
    share_d, share_m = counts.dense / L, counts.moe / L  # average layer of the L main layers

    ew = (ew_layer + share_d * ew_dense + share_m * ew_shared)
    layer_f = qkv_f + out_f + att_f + ew + share_d * mlp_f + share_m * (shared_f + routed_f)
    layer_b = (qkv_b + out_b + att_b + ELEMENTWISE_BACKWARD_OVER_FORWARD * ew + (ew if full else 0.0)
               + share_d * mlp_b + share_m * (shared_b + routed_b))
    # the last stage: the logits (once more per MTP layer) and the MTP layers (the last layer's kind)
    log_f, log_b = _gemm_pass_times(logits_gemm(m, layout), params, fp8)
    mtp = moe.mtp_layers
    last_moe = counts.moe_with_mtp > counts.moe
    mtp_layer_f = qkv_f + out_f + att_f + ew_layer + (shared_f + routed_f + ew_shared if last_moe else mlp_f + ew_dense)
    mtp_layer_b = (qkv_b + out_b + att_b + ELEMENTWISE_BACKWARD_OVER_FORWARD * ew_layer
                   + (shared_b + routed_b if last_moe else mlp_b))
    proj_f, proj_b = (_gemm_pass_times(Gemm("mtp_proj", tokens, h / t, 2 * h, True), params, fp8) if mtp else (0.0, 0.0))
    tail_f = (1 + mtp) * log_f + mtp * (mtp_layer_f + proj_f)
    tail_b = (1 + mtp) * log_b + mtp * (mtp_layer_b + proj_b)
    layers, on_last = pacing_stage(workload, layout, layer_f + layer_b, tail_f + tail_b)
    share = 1.0 if on_last else 0.0
    gemms_f = qkv_f + out_f + share_d * mlp_f + share_m * (shared_f + eu_f + ed_f)
    gemms_b = qkv_b + out_b + share_d * mlp_b + share_m * (shared_b + eu_b + ed_b)
    fams = {"qkv": layers * (qkv_f + qkv_b), "attn_out": layers * (out_f + out_b),
            "ffn": layers * share_d * (mlp_f + mlp_b), "shared_experts": layers * share_m * (shared_f + shared_b),
            "routed_experts": layers * share_m * (routed_f + routed_b), "attention": layers * (att_f + att_b),
            "elementwise": layers * (ew * (1 + ELEMENTWISE_BACKWARD_OVER_FORWARD) + (ew if full else 0.0)),
            "logits": share * (tail_f + tail_b)}
    mb = MicrobatchCompute(layers * layer_f + share * tail_f, layers * layer_b + share * tail_b, fams,
                           layers * (gemms_f + gemms_b) + share * (tail_f + tail_b), layers * (att_f + att_b))
    return MoeMicrobatch(mb, layers * share_m * (shared_f + shared_b))
