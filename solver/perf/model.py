"""Model size and FLOPs of a dense decoder-only transformer (SPEC §4.1). Mixture-of-Experts models build on
the attention terms here in `perf/moe.py` (SPEC §4.7); `perf/totals.py` picks one or the other for any model.

Notation: L layers, h hidden, f ffn hidden, a heads, a_kv kv heads, d_h head width (h/a unless
given), h_kv = a_kv·d_h, V vocab, s sequence, B global batch (sequences).
"""
from __future__ import annotations

from ..inputs.schema import TransformerShape, Workload


def head_dim(model: TransformerShape) -> float:
    """d_h: the model's `head_dim`, else h / a."""
    return model.head_dim or model.hidden_size / model.attention_heads


def kv_hidden_size(model: TransformerShape) -> float:
    """h_kv = a_kv · d_h (the width of K and V under grouped-query attention; h·a_kv/a when d_h = h/a)."""
    kv_heads = model.kv_heads or model.attention_heads
    return kv_heads * head_dim(model)


def attention_params_per_layer(model: TransformerShape) -> float:
    """GEMM weights of one attention block (norms left out).

    GQA: P_att = h·(a·d_h + 2·h_kv) + a·d_h·h   (= h·(h + 2h_kv) + h² when d_h = h/a)
    MLA: P_att = q_r·(h + a·(d_n + d_r)) + h·(kv_r + d_r) + kv_r·a·(d_n + d_v) + a·d_v·h
         (without query compression, q_r = null: h·a·(d_n + d_r) replaces the first term)
    """
    h, a = model.hidden_size, model.attention_heads
    if model.mla is not None:
        x = model.mla
        q = a * (x.qk_nope_head_dim + x.qk_rope_head_dim)
        query = x.q_lora_rank * (h + q) if x.q_lora_rank is not None else h * q
        return (query + h * (x.kv_lora_rank + x.qk_rope_head_dim)
                + x.kv_lora_rank * a * (x.qk_nope_head_dim + x.v_head_dim) + a * x.v_head_dim * h)
    width = a * head_dim(model)
    return h * (width + 2 * kv_hidden_size(model)) + width * h


def attention_core_flops_per_key(model: TransformerShape, causal: bool) -> float:
    """Forward FLOPs of QKᵀ and AV per token, layer and sequence position: 2·a·(d_qk + d_v), × ½ when causal
    (d_qk = d_n + d_r and d_v from `mla` under MLA, both d_h otherwise)."""
    qk: float
    v: float
    if model.mla is not None:
        qk, v = model.mla.qk_nope_head_dim + model.mla.qk_rope_head_dim, model.mla.v_head_dim
    else:
        qk = v = head_dim(model)
    return 2 * model.attention_heads * (qk + v) * (0.5 if causal else 1.0)


def attention_core_flops_per_token(model: TransformerShape, causal: bool) -> float:
    """Forward FLOPs per token of QKᵀ and AV, summed over the layers: 2·s_eff·a·(d_qk + d_v) per layer
    (= 4·s·h for GQA with d_h = h/a), halved when `causal` (Megatron's MoE convention counts the
    causal mask; SPEC 4.1's dense convention does not). A sliding-window layer sees s_eff = min(s, 2W)
    in the causal count (W keys per query instead of s/2 on average)."""
    s = model.seq_len
    per_position = attention_core_flops_per_key(model, causal)
    window = model.sliding_window
    windowed = window.layers if window is not None else 0
    full = per_position * s * (model.layers - windowed)
    if window is None:
        return full
    keys = min(s, 2 * window.tokens) if causal else min(s, window.tokens)
    return full + per_position * keys * windowed


def matmul_params_per_layer(model: TransformerShape) -> float:
    """P_mm = P_att + k_ff·h·f, k_ff = 3 (swiglu) or 2 (gelu); P_att = h·(h + 2·h_kv) + h² for
    multi-head/grouped-query attention with d_h = h/a. SPEC 4.1."""
    k_ff = 3 if model.ffn_type == "swiglu" else 2
    return attention_params_per_layer(model) + k_ff * model.hidden_size * model.ffn_hidden_size


def dense_parameter_count(model: TransformerShape) -> int:
    """P = L·(P_mm + 2·h) + h + V·h·(1 if tied else 2) of a dense model (`totals.parameter_count` for any).

    Two norm weight vectors per layer plus the final norm; biases and learned position
    embeddings are left out (under 0.1 % of any model here).
    """
    h = model.hidden_size
    embeddings = model.vocab_size * h * (1 if model.tied_embeddings else 2)
    return int(round(model.layers * (matmul_params_per_layer(model) + 2 * h) + h + embeddings))


def dense_flops_per_step(workload: Workload) -> tuple[float, float]:
    """(F_model, F_hardware) per step of a dense model (`totals.flops_per_step` for any). SPEC 4.1.

    F_model = 3·B·s·(L·2·P_mm + C + 2·h·V),  C = attention core per token (4·s·h per layer)
    F_hw    = F_model + B·s·(L·2·P_mm + C)   (full recompute: one more forward of every layer)
            = F_model + B·s·C                (selective: the attention core again)
    """
    m = workload.model
    h, s, L = m.hidden_size, m.seq_len, m.layers
    tokens = workload.global_batch_size * s
    core = attention_core_flops_per_token(m, causal=False)
    layers_forward = L * 2 * matmul_params_per_layer(m) + core
    model_flops = 3 * tokens * (layers_forward + 2 * h * m.vocab_size)
    if workload.activation_recompute == "full":
        extra = tokens * layers_forward
    elif workload.activation_recompute == "selective":
        extra = tokens * core
    else:
        extra = 0.0
    return float(model_flops), float(model_flops + extra)
