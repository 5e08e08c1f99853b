"""Stored activation bytes of a Mixture-of-Experts model (SPEC §4.6, §4.7; notation of perf/moe.py, which
re-exports them)."""
from __future__ import annotations

from ..inputs.schema import Workload
from .layout import Layout
from .moe_counts import (
    ffn_matrices,
    layer_counts,
    load_factor,
    moe_shape,
    shared_width,
)

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
    dense = 2.0 * h if "mlp" in modules else beta * h + 2.0 * (ffn_matrices(m) - 1) * f + beta * f
    return attention, dense


def moe_mlp_bytes_per_token(workload: Workload, layout: Layout) -> float:
    """Stored bytes of one MoE MLP per local token: the shared experts (2(k_ff − 1) + β_in)·n_s·f_s ÷ t and
    k·u_eff routed copies of (β_in·h·etp + 2(k_ff − 1)·f_e + β_in·f_e + 2h·etp)/t (input, gate and up,
    activation, output kept for the probability-weighted combine; moe_act recompute drops the
    activation; the etp peers' copies are gathered and f_e is split etp ways); `moe` recompute keeps
    only the layer input 2h."""
    m, moe, beta = workload.model, moe_shape(workload.model), gemm_input_bytes(workload)
    if "moe" in workload.recompute_modules:
        return 2.0 * m.hidden_size
    k_ff, f_e = ffn_matrices(m), moe.expert_ffn_hidden_size
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
