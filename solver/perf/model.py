"""Model size and FLOPs of a dense decoder-only transformer (SPEC §4.1).

Notation: L layers, h hidden, f ffn hidden, a heads, a_kv kv heads, h_kv = h·a_kv/a, V vocab,
s sequence, B global batch (sequences).
"""
from __future__ import annotations

from functools import lru_cache

from ..inputs.schema import TransformerShape, Workload


def kv_hidden_size(model: TransformerShape) -> float:
    """h_kv = h · a_kv / a (the width of K and V under grouped-query attention)."""
    kv_heads = model.kv_heads or model.attention_heads
    return model.hidden_size * kv_heads / model.attention_heads


def matmul_params_per_layer(model: TransformerShape) -> float:
    """P_mm = h·(h + 2·h_kv) + h·h + k_ff·h·f, k_ff = 3 (swiglu) or 2 (gelu). SPEC 4.1."""
    h = model.hidden_size
    k_ff = 3 if model.ffn_type == "swiglu" else 2
    return h * (h + 2 * kv_hidden_size(model)) + h * h + k_ff * h * model.ffn_hidden_size


@lru_cache(maxsize=256)
def parameter_count(model: TransformerShape) -> int:
    """P = L·(P_mm + 2·h) + h + V·h·(1 if tied else 2).

    Two norm weight vectors per layer plus the final norm; biases and learned position
    embeddings are left out (under 0.1 % of any model here).
    """
    h = model.hidden_size
    embeddings = model.vocab_size * h * (1 if model.tied_embeddings else 2)
    return int(round(model.layers * (matmul_params_per_layer(model) + 2 * h) + h + embeddings))


@lru_cache(maxsize=256)
def flops_per_step(workload: Workload) -> tuple[float, float]:
    """(F_model, F_hardware) per step. SPEC 4.1.

    F_model = 3·B·s·(L·(2·P_mm + 4·s·h) + 2·h·V)
    F_hw    = F_model + B·s·L·(2·P_mm + 4·s·h)   (full recompute: one more forward of every layer)
            = F_model + B·s·L·4·s·h              (selective: the attention core again)
    """
    m = workload.model
    h, s, L = m.hidden_size, m.seq_len, m.layers
    tokens = workload.global_batch_size * s
    layer_forward = 2 * matmul_params_per_layer(m) + 4 * s * h
    model_flops = 3 * tokens * (L * layer_forward + 2 * h * m.vocab_size)
    if workload.activation_recompute == "full":
        extra = tokens * L * layer_forward
    elif workload.activation_recompute == "selective":
        extra = tokens * L * 4 * s * h
    else:
        extra = 0.0
    return float(model_flops), float(model_flops + extra)
