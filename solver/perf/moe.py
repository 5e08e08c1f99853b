"""Mixture-of-Experts physics (SPEC §4.7): parameters, FLOPs, compute time, memory and the
expert-parallel all-to-all of a model with `workload.model.moe`.

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
from math import comb

from ..inputs.schema import MoeShape, TransformerShape, Workload
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
from .layout import Layout, ranks_in_domain
from .model import (
    attention_core_flops_per_key,
    attention_core_flops_per_token,
    attention_params_per_layer,
    kv_hidden_size,
)

DEFAULT_EXPERT_EFFICIENCY = 0.38  # ε when the catalog gives none: the Blackwell BF16 fit (an estimate elsewhere)
DISPATCH_BYTES = {"bf16": 2.0, "fp8": 1.0 + 4.0 / 128}  # FP8 with one fp32 scale per 128 values ([M2] §2.3.2)
COMBINE_BYTES = 2.0  # combine (and both backward exchanges) in bf16
GB = 1e9


# ----------------------------------------------------------------------------------- shapes


@dataclass(frozen=True)
class LayerCounts:
    """L_d, L_m of the main model and L'_d, L'_m with the MTP layers (each repeats the last layer's kind)."""

    dense: int
    moe: int
    dense_with_mtp: int
    moe_with_mtp: int


def layer_counts(model: TransformerShape) -> LayerCounts:
    """L_m from `layer_pattern` (1 = MoE) or L − dense_layers; MTP layers follow the last layer."""
    moe = _moe(model)
    pattern = moe.layer_pattern or [0] * moe.dense_layers + [1] * (model.layers - moe.dense_layers)
    moe_layers = sum(pattern)
    dense_layers = model.layers - moe_layers
    mtp = moe.mtp_layers
    last_moe = pattern[-1] == 1
    return LayerCounts(dense_layers, moe_layers, dense_layers + (0 if last_moe else mtp), moe_layers + (mtp if last_moe else 0))


def _moe(model: TransformerShape) -> MoeShape:
    assert model.moe is not None, "a Mixture-of-Experts model"
    return model.moe


def _k_ff(model: TransformerShape) -> int:
    return 3 if model.ffn_type == "swiglu" else 2


def shared_width(moe: MoeShape) -> int:
    """n_s·f_s: the summed width of the shared experts (f_s defaults to f_e)."""
    return moe.shared_experts * (moe.shared_expert_ffn_hidden_size or moe.expert_ffn_hidden_size)


# ----------------------------------------------------------------------------------- parameters


@dataclass(frozen=True)
class MoeParams:
    """Parameter counts (weights, not bytes)."""

    total: float  # the main model: what publications call "total" (MTP layers not included)
    active: float  # per token: k routed experts instead of E
    routed: float  # routed-expert weights, MTP layers included: the bucket sharded over etp·ep·p
    stored: float  # everything the GPUs hold: total + the MTP layers


def parameter_counts(model: TransformerShape) -> MoeParams:
    """docs/model.md §MoE, per layer with norms (2h) as in perf/model.py:
    P = L·(P_att + 2h) + L_d·k_ff·h·f + L_m·(E·k_ff·h·f_e + k_ff·h·n_s·f_s + h·E) + h + V·h·(1 tied, 2 untied)
    active: E → k.  One MTP layer adds P_att + its MLP (the last layer's kind) + 2h² (projection) + 3h.
    """
    moe, h = _moe(model), model.hidden_size
    counts, k_ff = layer_counts(model), _k_ff(model)
    attention = attention_params_per_layer(model) + 2 * h
    dense_mlp = k_ff * h * model.ffn_hidden_size
    expert = k_ff * h * moe.expert_ffn_hidden_size
    shared_router = k_ff * h * shared_width(moe) + h * moe.experts
    embeddings = model.vocab_size * h * (1 if model.tied_embeddings else 2)
    base = model.layers * attention + counts.dense * dense_mlp + h + embeddings
    total = base + counts.moe * (moe.experts * expert + shared_router)
    active = base + counts.moe * (moe.top_k * expert + shared_router)
    mtp_moe = counts.moe_with_mtp - counts.moe
    mtp_dense = counts.dense_with_mtp - counts.dense
    mtp = (moe.mtp_layers * (attention + 2 * h * h + 3 * h) + mtp_dense * dense_mlp
           + mtp_moe * (moe.experts * expert + shared_router))
    return MoeParams(total=total, active=active, routed=counts.moe_with_mtp * moe.experts * expert, stored=total + mtp)


# ----------------------------------------------------------------------------------- FLOPs


@dataclass(frozen=True)
class TokenFlops:
    """Forward FLOPs per token by part, MTP layers included (Megatron's convention, [M5])."""

    routed: float  # 2·k_ff·h·f_e·k·L'_m
    shared: float  # 2·k_ff·h·n_s·f_s·L'_m
    dense_mlp: float  # 2·k_ff·h·f·L'_d
    attention: float  # 2·P_att·(L + n_mtp)
    mla_up: float  # the MLA up-projections inside `attention` (what `mla_up_proj` recompute repeats)
    core: float  # causal attention core, sliding windows as perf/model.py counts them
    logits: float  # 2·h·V·(1 + n_mtp)
    mtp_projection: float  # 2·2h²·n_mtp

    @property
    def layers(self) -> float:
        """Everything a full recompute repeats (all but the logits)."""
        return self.routed + self.shared + self.dense_mlp + self.attention + self.core + self.mtp_projection

    @property
    def total(self) -> float:
        return self.layers + self.logits


def token_flops(model: TransformerShape) -> TokenFlops:
    """Forward FLOPs per token; ×3 (forward + backward) gives Megatron's F_tok (docs/model.md §MoE):
    F_tok = 6·[h·(k_ff·f·L'_d + k_ff·f_e·k·L'_m + k_ff·f_s·n_s·L'_m) + P_att·(L + n_mtp) + 2·n_mtp·h²]
          + 6·w_core·s·(L + n_mtp) + 6·h·V·(1 + n_mtp)."""
    moe, h, a = _moe(model), model.hidden_size, model.attention_heads
    counts, k_ff, mtp = layer_counts(model), _k_ff(model), moe.mtp_layers
    all_layers = model.layers + mtp
    mla_up = 0.0
    if model.mla is not None:
        x = model.mla
        q_up = x.q_lora_rank * a * (x.qk_nope_head_dim + x.qk_rope_head_dim) if x.q_lora_rank is not None else 0
        mla_up = 2.0 * (q_up + x.kv_lora_rank * a * (x.qk_nope_head_dim + x.v_head_dim)) * all_layers
    core = (attention_core_flops_per_token(model, causal=True)
            + mtp * attention_core_flops_per_key(model, causal=True) * model.seq_len)
    return TokenFlops(
        routed=2.0 * k_ff * h * moe.expert_ffn_hidden_size * moe.top_k * counts.moe_with_mtp,
        shared=2.0 * k_ff * h * shared_width(moe) * counts.moe_with_mtp,
        dense_mlp=2.0 * k_ff * h * model.ffn_hidden_size * counts.dense_with_mtp,
        attention=2.0 * attention_params_per_layer(model) * all_layers,
        mla_up=mla_up, core=core, logits=2.0 * h * model.vocab_size * (1 + mtp), mtp_projection=4.0 * h * h * mtp)


def moe_recomputed(workload: Workload) -> bool:
    """The MoE layers run their forward twice (full recompute, or the `moe` recompute module)."""
    return workload.activation_recompute == "full" or "moe" in workload.recompute_modules


def recompute_flops(workload: Workload, f: TokenFlops) -> tuple[float, float]:
    """(routed, other) forward FLOPs per token run again by recomputation: full → every layer;
    selective → the attention core; modules: mla_up_proj → the MLA up-projections, mlp → the dense
    MLPs, moe → the routed and shared experts (moe_act and layernorm recompute no GEMM)."""
    if workload.activation_recompute == "full":
        return f.routed, f.layers - f.routed
    other = f.core if workload.activation_recompute == "selective" else 0.0
    modules = workload.recompute_modules
    other += (f.mla_up if "mla_up_proj" in modules else 0.0) + (f.dense_mlp if "mlp" in modules else 0.0)
    if "moe" in modules:
        return f.routed, other + f.shared
    return 0.0, other


def capacity_multiplier(moe: MoeShape) -> float:
    """Token copies an expert is given over the mean: c_f when padded to capacity, else 1."""
    return moe.capacity_factor if moe.pad_to_capacity and moe.capacity_factor is not None else 1.0


def load_factor(moe: MoeShape) -> float:
    """u_eff, the busiest expert rank's tokens over the mean: u (dropless); min(u, c_f) with a capacity
    (the excess is dropped before the exchange, [M3] @022bcb5); c_f when padded to capacity."""
    if moe.capacity_factor is None:
        return moe.load_imbalance
    if moe.pad_to_capacity:
        return moe.capacity_factor
    return min(moe.load_imbalance, moe.capacity_factor)


def hardware_flops_per_token(workload: Workload) -> tuple[float, float]:
    """(routed, other) hardware FLOPs per token: 3·forward + recomputed forward; padded capacity
    multiplies the routed part by c_f (padded rows are multiplied too, [M6])."""
    f = token_flops(workload.model)
    again_routed, again_other = recompute_flops(workload, f)
    pad = capacity_multiplier(_moe(workload.model))
    return (3 * f.routed + again_routed) * pad, 3 * (f.total - f.routed) + again_other


def flops_per_step(workload: Workload) -> tuple[float, float]:
    """(F_model, F_hardware) per step: B·s·F_tok and B·s·(routed + other hardware FLOPs per token)."""
    tokens = workload.global_batch_size * workload.model.seq_len
    routed, other = hardware_flops_per_token(workload)
    return tokens * 3 * token_flops(workload.model).total, tokens * (routed + other)


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
    m, moe = workload.model, _moe(workload.model)
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
    m, moe = workload.model, _moe(workload.model)
    return moe.top_k * layer_counts(m).moe_with_mtp * _routed_bytes_per_copy(workload)[1] * capacity_multiplier(moe)


def compute_s(workload: Workload, layout: Layout, hw: Hardware) -> float:
    """Flat compute model (a scenario `efficiency.compute_efficiency`, or a GPU without `compute_model`):
    T_comp = B·s/N · [F_other/P + u_eff·(F_routed/(ε·P) + Q_routed/BW)]   (SPEC 4.7)

    P = peak·1e12·η_compute, BW = hbm_tbyte_s·1e12, ε = `expert_efficiency`; F per token (hardware FLOPs),
    Q the routed experts' memory-bound bytes per token (`routed_bytes_per_token`)."""
    assert hw.compute_efficiency is not None, "the flat compute model needs compute_efficiency"
    moe = _moe(workload.model)
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
    eff = (params.gemm_efficiency_fp8 if low else params.gemm_efficiency_bf16) * efficiency_factor
    kw = dict(tflops=params.fp8_tflops if low else params.bf16_tflops, efficiency=eff, hbm_tbyte_s=params.hbm_tbyte_s,
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
    m, moe = workload.model, _moe(workload.model)
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
    att_f = core / (params.bf16_tflops * TFLOP * params.attention_efficiency)
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


# ----------------------------------------------------------------------------------- all-to-all


def exchange_bytes_per_copy(workload: Workload) -> float:
    """Σβ: bytes per hidden element and token copy over one step's exchanges: dispatch β_d + combine 2
    forward, 2 + 2 backward, and β_d + 2 again when the MoE layer is recomputed ([M6], [M2] §2.3.2)."""
    beta_d = DISPATCH_BYTES[workload.expert_dispatch.dispatch_dtype]
    total = beta_d + COMBINE_BYTES + 2 * COMBINE_BYTES
    return total + (beta_d + COMBINE_BYTES if moe_recomputed(workload) else 0.0)


def node_limit(moe: MoeShape, domains: int) -> float:
    """M_eff, the most domains a token can reach: `node_limit`, and with group-limited routing (G
    groups, top g) g·⌈D/G⌉ (a group spans D/G domains when G < D, else lies inside one); ≤ D."""
    limit = float(domains)
    if moe.node_limit is not None:
        limit = min(limit, moe.node_limit)
    if moe.router_groups is not None and moe.router_group_top_k is not None:
        limit = min(limit, moe.router_group_top_k * -(-domains // moe.router_groups))
    return limit


def remote_domains(moe: MoeShape, domains: int) -> float:
    """R, the other domains one token's k experts land in, expected under uniform routing:
    R = (D − 1)·[1 − C(E − E/D, k)/C(E, k)], capped by M_eff·(D − 1)/D when routing is node-limited
    (M_eff domains chosen, the token's own among them with probability M_eff/D)."""
    if domains <= 1:
        return 0.0
    e, k = moe.experts, moe.top_k
    per_domain = e // domains
    uniform = (domains - 1) * (1 - comb(e - per_domain, k) / comb(e, k))
    limit = node_limit(moe, domains)
    return min(uniform, limit * (domains - 1) / domains)


def ep_domains(layout: Layout) -> tuple[int, int]:
    """(n_in, D): ranks of one ep group (stride etp) per NVLink domain, and the domains it spans."""
    n_in = int(round(ranks_in_domain(layout.ep, layout.etp, layout.gpus_per_domain_used)))
    return n_in, layout.ep // n_in


def ep_bytes(workload: Workload, layout: Layout) -> tuple[float, float]:
    """(NVLink, scale-out) all-to-all bytes per GPU per step (SPEC 4.7, docs/model.md §MoE):
    V = (B·s/N)·L'_m·h·Σβ per token copy; k_eff = k·u_eff copies per token.
    flat:          NVLink V·k_eff·(n_in − 1)/ep,  scale-out V·k_eff·(ep − n_in)/ep
    hierarchical:  NVLink V·k_eff·(n_in − 1)/n_in, scale-out V·R·u_eff (one copy per other domain)."""
    if layout.ep == 1:
        return 0.0, 0.0
    moe, m = _moe(workload.model), workload.model
    tokens = workload.global_batch_size * m.seq_len / layout.gpus
    per_copy = tokens * layer_counts(m).moe_with_mtp * m.hidden_size * exchange_bytes_per_copy(workload)
    load = load_factor(moe)
    copies = moe.top_k * load
    n_in, domains = ep_domains(layout)
    if workload.expert_dispatch.dispatcher == "flat":
        return per_copy * copies * (n_in - 1) / layout.ep, per_copy * copies * (layout.ep - n_in) / layout.ep
    return per_copy * copies * (n_in - 1) / n_in, per_copy * remote_domains(moe, domains) * load


def sm_penalty(workload: Workload) -> float:
    """σ' = s/(1 − s): compute slows by this share of the time an overlapped dispatcher runs beside it,
    holding s of the SMs (`overlap_sm_fraction`); 0 without overlap (nothing runs beside it)."""
    dispatch = workload.expert_dispatch
    if dispatch.overlap == "none":
        return 0.0
    return dispatch.overlap_sm_fraction / (1.0 - dispatch.overlap_sm_fraction)


def ep_window_pieces(workload: Workload, layout: Layout, compute: float, shared_expert: float,
                     ) -> tuple[tuple[float, float], ...]:
    """The all-to-all's window pieces (a_i, W_i), exposed = max_i (a_i·T_ep − W_i) (SPEC 4.5, 4.7):
    (σ', 0) and (1, (1 − σ')·W). With W the time it can hide behind (0 for overlap none: on the
    critical path; the shared experts' compute of the step for shared_expert; T_comp for batch_overlap,
    [M1] §3.2.1, [M3]): T_ep ≤ W costs σ'·T_ep (compute slowed while the dispatcher holds SMs), a longer
    exchange T_ep − W + σ'·W. Windows are compute time: never NIC-dependent."""
    overlap = workload.expert_dispatch.overlap
    if overlap == "none" or layout.ep == 1:
        return ((1.0, 0.0),)
    window = compute if overlap == "batch_overlap" else shared_expert
    penalty = sm_penalty(workload)
    return ((penalty, 0.0), (1.0, (1.0 - penalty) * window))


# ----------------------------------------------------------------------------------- groups


@dataclass(frozen=True)
class ParamGroup:
    """Parameters one GPU holds and the group that holds the same shard (for gradients and the
    optimizer): `shard` weights per GPU, a group of `size` ranks at rank stride `stride`."""

    shard: float
    size: int
    stride: int


def parameter_groups(workload: Workload, layout: Layout, params: float) -> list[ParamGroup]:
    """Dense models: P/(t·p) over the d data-parallel ranks (stride t·c). MoE ([M10], docs/model.md §MoE):
    routed experts P_exp/(etp·ep·p) over the edp expert-data-parallel ranks (stride etp·ep), the rest
    (P_stored − P_exp)/(t·p) over the d ranks."""
    t, p = layout.tp, layout.pp
    dense = ParamGroup(params / (t * p), layout.dp, t * layout.cp)
    if workload.model.moe is None:
        return [dense]
    counts = parameter_counts(workload.model)
    rest = ParamGroup((counts.stored - counts.routed) / (t * p), layout.dp, t * layout.cp)
    experts = ParamGroup(counts.routed / (layout.etp * layout.ep * p), layout.edp, layout.etp * layout.ep)
    return [rest, experts]


@dataclass(frozen=True)
class TpCollective:
    """`count` all-reduce equivalents per step of `message` bytes over a group of `size` ranks inside one domain."""

    count: float
    size: int
    message: float


def tp_collectives(workload: Workload, layout: Layout, microbatches: int, message: float) -> list[TpCollective]:
    """Tensor-parallel traffic of an MoE model, per GPU per step (m·/p of the per-layer counts):
    attention 2 all-reduce equivalents per layer (+1 with full recompute), dense MLP and shared experts
    2 (+1); routed experts exchange over the etp group 2 (+1 if recomputed) of etp·k_eff·M/t (the
    tokens of the ep rank's etp peers are gathered); M = b·(s/c)·h·β as for dense layers."""
    m, moe = workload.model, _moe(workload.model)
    counts = layer_counts(m)
    per_pass = 3 if workload.activation_recompute == "full" else 2
    mlp_layers = counts.dense_with_mtp + (counts.moe_with_mtp if moe.shared_experts else 0)
    per_stage = microbatches / layout.pp
    out = [TpCollective(per_stage * per_pass * (m.layers + moe.mtp_layers + mlp_layers), layout.tp, message)]
    if layout.etp > 1:
        routed_pass = 3 if moe_recomputed(workload) else 2
        routed_message = message * layout.etp * moe.top_k * load_factor(moe) / layout.tp
        out.append(TpCollective(per_stage * routed_pass * counts.moe_with_mtp, layout.etp, routed_message))
    return out


# ----------------------------------------------------------------------------------- memory


def gemm_input_bytes(workload: Workload) -> float:
    """β_in: an FP8 GEMM keeps its (quantised) input for the weight gradient in 1 byte, bf16 in 2."""
    return 1.0 if workload.precision == "fp8" else 2.0


def activation_bytes_per_token(workload: Workload) -> tuple[float, float]:
    """Stored activation bytes per token of one attention block with both norms, and of one dense MLP
    (an estimate: no maintained formula covers MoE, [M11]; Korthikanti et al.'s terms without dropout,
    β_in from `gemm_input_bytes`, everything else bf16):
    attention  GQA: norm inputs 4h + QKV input β_in·h + Q, K, V 2(a·d_h + 2h_kv) + flash output 2a·d_h
               (+ a·d_h for the FP8 o-proj input); MLA: norm inputs 4h + down-projection input β_in·h +
               latents β_in(q_r + kv_r + d_r) + Q, K, V 2a(2(d_n + d_r) + d_v) + output 2a·d_v (+ a·d_v FP8);
               layernorm recompute drops the β_in·h, mla_up_proj drops Q, K, V
    dense MLP  β_in·h + 2(k_ff − 1)·f (gate and up, bf16) + β_in·f (activation); mlp recompute keeps 2h."""
    m, modules, beta = workload.model, workload.recompute_modules, gemm_input_bytes(workload)
    h, a = m.hidden_size, m.attention_heads
    gemm_in = 0.0 if "layernorm" in modules else beta * h
    fp8_out = 1.0 if beta == 1.0 else 0.0
    if m.mla is not None:
        x = m.mla
        qk = x.qk_nope_head_dim + x.qk_rope_head_dim
        qkv = 0.0 if "mla_up_proj" in modules else 2.0 * a * (2 * qk + x.v_head_dim)
        latents = beta * ((x.q_lora_rank or 0) + x.kv_lora_rank + x.qk_rope_head_dim)
        attention = 4.0 * h + gemm_in + latents + qkv + (2.0 + fp8_out) * a * x.v_head_dim
    else:
        d_h = m.head_dim or h / a
        kv = (m.kv_heads or a) * d_h
        attention = 4.0 * h + gemm_in + 2.0 * (a * d_h + 2 * kv) + (2.0 + fp8_out) * a * d_h
    f = m.ffn_hidden_size
    dense = 2.0 * h if "mlp" in modules else beta * h + 2.0 * (_k_ff(m) - 1) * f + beta * f
    return attention, dense


def moe_mlp_bytes_per_token(workload: Workload, layout: Layout) -> float:
    """Stored bytes of one MoE MLP per local token: the shared experts (2(k_ff − 1) + β_in)·n_s·f_s ÷ t and
    k·u_eff routed copies of (β_in·h·etp + 2(k_ff − 1)·f_e + β_in·f_e + 2h·etp)/t (input, gate and up,
    activation, output kept for the probability-weighted combine; moe_act recompute drops the
    activation; the etp peers' copies are gathered and f_e is split etp ways); `moe` recompute keeps
    only the layer input 2h."""
    m, moe, beta = workload.model, _moe(workload.model), gemm_input_bytes(workload)
    if "moe" in workload.recompute_modules:
        return 2.0 * m.hidden_size
    k_ff, f_e = _k_ff(m), moe.expert_ffn_hidden_size
    act = 0.0 if "moe_act" in workload.recompute_modules else beta * f_e
    copy = ((beta + 2.0) * m.hidden_size * layout.etp + 2.0 * (k_ff - 1) * f_e + act) / layout.tp
    shared = (2.0 * (k_ff - 1) + beta) * shared_width(moe) / layout.tp
    return shared + moe.top_k * load_factor(moe) * copy


def layer_activation_bytes(workload: Workload, layout: Layout) -> float:
    """Stored activation bytes of one layer and microbatch (no or selective recompute), averaged over the L
    layers with the MTP layers spread over them (SPEC 4.6 with the MoE MLP above): s·b/c tokens ×
    [L'_d·(attention + dense MLP)/t + L'_m·(attention/t + MoE MLP)] / L, + the s×s softmax without
    FlashAttention and recompute. perf/memory.py places it on the pipeline stages like a dense layer's
    (in-flight microbatches, full recompute, logits)."""
    m = workload.model
    counts = layer_counts(m)
    tokens = m.seq_len * layout.microbatch_size / layout.cp
    attention, dense = activation_bytes_per_token(workload)
    if workload.activation_recompute == "none" and not workload.flash_attention:
        attention += 5.0 * m.attention_heads * m.seq_len  # the s×s softmax and dropout, Korthikanti et al.
    per_token = (counts.dense_with_mtp * (attention + dense) / layout.tp
                 + counts.moe_with_mtp * (attention / layout.tp + moe_mlp_bytes_per_token(workload, layout)))
    return tokens * per_token / m.layers

