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
    BF16_BYTES,
    ELEMENTWISE_BACKWARD_OVER_FORWARD,
    ELEMENTWISE_HBM_EFFICIENCY,
    FP8_CAST_BYTES,
    TBYTE,
    ComputeParams,
    ComputePlan,
    Gemm,
    MicrobatchCompute,
    Part,
    flash_attention_s,
    gemm_part,
    logits_gemm,
    time_plan,
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
    "moe_plan",
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


def _attention_widths(model: TransformerShape) -> tuple[float, float]:
    """(input projections, output projection) widths of one attention block: P_att = h·w_in + a·d_v·h."""
    h, a = model.hidden_size, model.attention_heads
    d_v = model.mla.v_head_dim if model.mla is not None else (model.head_dim or h / a)
    out = a * d_v
    return (attention_params_per_layer(model) - out * h) / h, out


MOE_FAMILIES = ("qkv", "attn_out", "ffn", "shared_experts", "routed_experts", "attention", "elementwise", "logits")


def _routed_part(workload: Workload, layout: Layout, params: ComputeParams, epsilon: float, again: bool) -> Part:
    """The routed experts of one MoE layer: E/ep experts of M_e = u_eff·T·k·ep·etp/(t·E) rows, up and down as one
    grouped GEMM per pass at ε × the GEMM efficiency, + the routed copies' memory-bound bytes at hbm_tbyte_s."""
    m, moe, t = workload.model, moe_shape(workload.model), layout.tp
    tokens = layout.microbatch_size * m.seq_len / layout.cp
    k_up = 2 if m.ffn_type == "swiglu" else 1
    experts = moe.experts / layout.ep
    rows = load_factor(moe) * tokens * moe.top_k * layout.ep * layout.etp / (t * moe.experts)
    f_e = moe.expert_ffn_hidden_size / layout.etp
    fp8 = workload.precision == "fp8"
    up = gemm_part(Gemm("routed_up", rows, k_up * f_e, m.hidden_size, True), params, fp8, factor=epsilon,
                   group=experts, grouped=True, again=again)
    down = gemm_part(Gemm("routed_down", rows, m.hidden_size, f_e, True), params, fp8, factor=epsilon,
                     group=experts, grouped=True, again=again)
    copies = tokens / t * moe.top_k * load_factor(moe)  # the busiest rank's routed copies (padding included)
    fwd_bytes, all_bytes = _routed_bytes_per_copy(workload)
    mem_f = copies * fwd_bytes / (params.hbm_tbyte_s * TBYTE)
    mem_b = copies * all_bytes / (params.hbm_tbyte_s * TBYTE) - mem_f
    return Part(family="routed_experts", parts=(up, down, Part(mem_f, mem_b)))


def _mlp_parts(workload: Workload, layout: Layout, params: ComputeParams, prefix: str, width: float,
               again: bool) -> tuple[Part, ...]:
    """Up and down GEMMs of a dense FFN of `width` (a dense MLP, or the n_s shared experts as one), none if 0."""
    m, t = workload.model, layout.tp
    if not width:
        return ()
    tokens = layout.microbatch_size * m.seq_len / layout.cp
    h, k_up = m.hidden_size, 2 if m.ffn_type == "swiglu" else 1
    fp8 = workload.precision == "fp8"
    return (gemm_part(Gemm(f"{prefix}_up", tokens, k_up * width / t, h, True), params, fp8, grouped=True, again=again),
            gemm_part(Gemm(f"{prefix}_down", tokens, h, width / t, True), params, fp8, grouped=True, again=again))


def _attention_parts(workload: Workload, layout: Layout, params: ComputeParams) -> tuple[Part, Part, Part]:
    """qkv (T, w_in/t, h) (its MLA up-projection share again with `mla_up_proj`), attn_out (T, h, a·d_v/t), and the
    FlashAttention core (causal, MLA and sliding windows as counted by perf/model.py), per layer on average."""
    m, t, moe = workload.model, layout.tp, moe_shape(workload.model)
    full = workload.activation_recompute == "full"
    tokens = layout.microbatch_size * m.seq_len / layout.cp
    h = m.hidden_size
    w_in, w_out = _attention_widths(m)
    up = 0.0
    if "mla_up_proj" in workload.recompute_modules and m.mla is not None:  # the up-projections' share of qkv again
        up = token_flops(m).mla_up / (2.0 * w_in * h * (m.layers + moe.mtp_layers))
    fp8 = workload.precision == "fp8"
    qkv = gemm_part(Gemm("qkv", tokens, w_in / t, h, True), params, fp8, "qkv", grouped=True, again=full,
                    again_share=up)
    out = gemm_part(Gemm("attn_out", tokens, h, w_out / t, True), params, fp8, "attn_out", grouped=True, again=full)
    core = tokens / t * attention_core_flops_per_token(m, causal=True) / m.layers
    att_f, att_b = flash_attention_s(core, params, 1.0 if full else 0.0)
    return qkv, out, Part(att_f, att_b, "attention")


def microbatch_compute(workload: Workload, layout: Layout, params: ComputeParams, epsilon: float) -> MoeMicrobatch:
    """One microbatch of a Mixture-of-Experts model on the pacing stage: its plan (`moe_plan`) timed by the one
    compute path of dense models too (`compute.time_plan`; every GEMM by `compute.gemm_s` with the GPU's fitted
    `compute_model`), per layer and microbatch with T = b·s/c tokens:

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
    plan = moe_plan(workload, layout, params, epsilon)
    mb = time_plan(plan, workload, layout)
    return MoeMicrobatch(mb, mb.by_family_s["shared_experts"])


def moe_plan(workload: Workload, layout: Layout, params: ComputeParams, epsilon: float) -> ComputePlan:
    """The plan of an average layer of the L main layers (dense share L_d/L, MoE share L_m/L; t₀ once per GEMM
    pass), and of the last stage's tail: the logits, once more per MTP layer, and the MTP layers (the last
    layer's kind, their element-wise backward without the MLP activations)."""
    m, moe = workload.model, moe_shape(workload.model)
    fp8 = workload.precision == "fp8"
    t, counts = layout.tp, layer_counts(m)
    h = m.hidden_size
    tokens = layout.microbatch_size * m.seq_len / layout.cp
    full = workload.activation_recompute == "full"
    again_moe = moe_recomputed(workload) or full
    qkv, out, att = _attention_parts(workload, layout, params)
    mlp = _mlp_parts(workload, layout, params, "ffn", m.ffn_hidden_size if counts.dense_with_mtp else 0,
                     "mlp" in workload.recompute_modules or full)
    width = shared_width(moe)
    shared = Part(family="shared_experts", parts=_mlp_parts(workload, layout, params, "shared", width, again_moe))
    routed = _routed_part(workload, layout, params, epsilon, again_moe)
    # element-wise: norms, residuals, RoPE on every layer; the dense and shared activations
    base = (4 * h + 6 * h + 2 * (h + kv_hidden_size(m))) * BF16_BYTES
    dense_act, shared_act = 3 * m.ffn_hidden_size * BF16_BYTES, 3 * width * BF16_BYTES
    casts = (3 * h * FP8_CAST_BYTES) if fp8 else 0.0
    hbm = params.hbm_tbyte_s * TBYTE * ELEMENTWISE_HBM_EFFICIENCY
    ew_layer = (base + casts) * tokens / t / hbm
    ew_dense = (dense_act + (m.ffn_hidden_size * FP8_CAST_BYTES if fp8 else 0.0)) * tokens / t / hbm
    ew_shared = (shared_act + (width * FP8_CAST_BYTES if fp8 else 0.0)) * tokens / t / hbm
    share_d, share_m = counts.dense / m.layers, counts.moe / m.layers  # average layer of the L main layers
    ew = (ew_layer + share_d * ew_dense + share_m * ew_shared)
    elementwise = Part(ew, ELEMENTWISE_BACKWARD_OVER_FORWARD * ew + (ew if full else 0.0), "elementwise")
    layer = (qkv, out, att, elementwise, Part(family="ffn", parts=mlp, share=share_d),
             Part(parts=(shared, routed), share=share_m))
    experts = routed.parts[:2] if routed.parts else ()
    gemm_parts = (qkv, out, Part(parts=mlp, share=share_d), Part(parts=(Part(parts=shared.parts), *experts),
                                                                  share=share_m))
    logits = gemm_part(logits_gemm(m, layout), params, fp8, grouped=True)
    mtp = moe.mtp_layers
    if not mtp:
        return ComputePlan(layer, (logits,), MOE_FAMILIES, gemm_parts=gemm_parts)
    kind = ((shared, routed, Part(ew_shared, 0.0)) if counts.moe_with_mtp > counts.moe
            else (Part(parts=mlp), Part(ew_dense, 0.0)))
    mtp_layer = Part(parts=(qkv, out, att, Part(ew_layer, ELEMENTWISE_BACKWARD_OVER_FORWARD * ew_layer),
                            Part(parts=kind)))
    proj = gemm_part(Gemm("mtp_proj", tokens, h / t, 2 * h, True), params, fp8, grouped=True)
    tail = (Part(parts=(logits,), share=1 + mtp), Part(parts=(mtp_layer, proj), share=mtp))
    return ComputePlan(layer, tail, MOE_FAMILIES, gemm_parts=gemm_parts)
