"""What a serving replica needs to know about the model (SPEC §4.9): weight bytes, active FLOPs per token, KV
cache bytes per token and per sequence, decode/prefill attention FLOPs. Built on the training side's parsing of
the model (perf/model.py, perf/moe_counts.py): one formula each, no second parameter count.

Notation as perf/model.py: L layers, h hidden, a heads, a_kv kv heads, d_h head width, V vocab; MLA: kv_r
(kv_lora_rank), d_r (qk_rope_head_dim); MoE: E experts, k top-k, L_m MoE layers.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..inputs.schema import TransformerShape
from .memo import by_identity
from .model import attention_core_flops_per_key, head_dim
from .moe_counts import layer_counts, parameter_counts
from .totals import parameter_count

# Bytes per element of weights / KV cache. NVFP4 stores 4-bit values plus one FP8 scale per 16 (4.5 bits).
DTYPE_BYTES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp4": 0.5625}


def dtype_bytes(dtype: str) -> float:
    """Bytes per element: bf16 2, fp8 1, fp4 0.5625 (NVFP4: 4 bits + an FP8 scale per 16 values)."""
    return DTYPE_BYTES[dtype]


@dataclass(frozen=True)
class ServingWeights:
    """Parameter counts a replica needs (weights, not bytes)."""

    stored: float  # every weight the replica holds (MTP layers left out: not served here)
    routed: float  # routed-expert weights (0 for a dense model): sharded over all GPUs of the replica
    active_matmul: float  # weights one token multiplies: active params − the input embedding table
    routed_active: float  # routed-expert weights one token multiplies (k experts per MoE layer)
    gathered: float  # the input embedding table (V·h, untied): held in memory, gathered by row, not streamed per step
    experts: int  # E (0 for dense)
    top_k: int
    moe_layers: int


@by_identity
def serving_weights(model: TransformerShape) -> ServingWeights:
    """P_stored = P (perf/totals.parameter_count); P_routed = L_m·E·k_ff·h·f_e; P_act,mm = P_active − V·h (the
    input embedding is a gather, not a matmul; tied embeddings count once as the output head)."""
    embedding = 0.0 if model.tied_embeddings else model.vocab_size * model.hidden_size
    if model.moe is None:
        p = float(parameter_count(model))
        return ServingWeights(stored=p, routed=0.0, active_matmul=p - embedding, routed_active=0.0, gathered=embedding,
                              experts=0, top_k=0, moe_layers=0)
    counts = parameter_counts(model)
    moe = model.moe
    k_ff = 3 if model.ffn_type == "swiglu" else 2
    expert = k_ff * model.hidden_size * moe.expert_ffn_hidden_size
    lm = layer_counts(model).moe
    return ServingWeights(stored=counts.total, routed=lm * moe.experts * expert, active_matmul=counts.active - embedding,
                          routed_active=lm * moe.top_k * expert, gathered=embedding, experts=moe.experts, top_k=moe.top_k,
                          moe_layers=lm)


def kv_elements_per_token_layer(model: TransformerShape) -> float:
    """Elements cached per token and layer: 2·a_kv·d_h (GQA: K and V), kv_r + d_r (MLA: the compressed latent and
    the shared rotary key)."""
    if model.mla is not None:
        return float(model.mla.kv_lora_rank + model.mla.qk_rope_head_dim)
    return 2.0 * (model.kv_heads or model.attention_heads) * head_dim(model)


def kv_bytes_per_token(model: TransformerShape, kv_dtype: str) -> float:
    """KV bytes per token = L·2·a_kv·d_h·bytes (GQA) or L·(kv_r + d_r)·bytes (MLA) — every layer, no window."""
    return model.layers * kv_elements_per_token_layer(model) * dtype_bytes(kv_dtype)


def kv_bytes_per_sequence(model: TransformerShape, kv_dtype: str, context: float) -> float:
    """KV bytes of one sequence at context c: per token and layer × (L_full·c + L_window·min(c, W)); sliding-window
    layers keep only the last W tokens."""
    per = kv_elements_per_token_layer(model) * dtype_bytes(kv_dtype)
    window = model.sliding_window
    if window is None:
        return model.layers * per * context
    return per * ((model.layers - window.layers) * context + window.layers * min(context, window.tokens))


def kv_shards(model: TransformerShape, tp: int) -> int:
    """The TP ranks a sequence's KV is split over: min(tp, a_kv) for GQA (heads beyond a_kv are replicated); 1 for
    MLA (every TP rank holds the whole latent)."""
    if model.mla is not None:
        return 1
    return max(1, min(tp, model.kv_heads or model.attention_heads))


def decode_attention_flops_per_token(model: TransformerShape, context: float) -> float:
    """FLOPs of one new token's attention over c cached keys, summed over layers: 2·a·(d_qk + d_v)·c per layer
    (GQA; perf/model.attention_core_flops_per_key, non-causal), 2·a·(2·kv_r + d_r)·c under MLA with absorbed
    up-projections (scores against the latent and rotary key, values from the latent); windowed layers see
    min(c, W)."""
    if model.mla is not None:
        x = model.mla
        per_key = 2.0 * model.attention_heads * (2 * x.kv_lora_rank + x.qk_rope_head_dim)
    else:
        per_key = attention_core_flops_per_key(model, causal=False)
    window = model.sliding_window
    if window is None:
        return model.layers * per_key * context
    return per_key * ((model.layers - window.layers) * context + window.layers * min(context, window.tokens))


def prefill_attention_flops(model: TransformerShape, prompt: float, cached: float = 0.0) -> float:
    """Causal attention FLOPs of prefilling positions cached..prompt of one prompt: Σ_t 2·a·(d_qk + d_v)·t per layer
    = a·(d_qk + d_v)·(T² − T_c²) per layer (quadratic in the prompt); windowed layers see min(t, W)."""
    per_key = attention_core_flops_per_key(model, causal=False)
    window = model.sliding_window
    full = 0.5 * per_key * (prompt ** 2 - cached ** 2)
    if window is None:
        return model.layers * full
    w = float(window.tokens)
    new = prompt - cached
    windowed = per_key * min(full / per_key, w * new)
    return (model.layers - window.layers) * full + window.layers * windowed


def expected_experts_touched(experts: int, top_k: int, tokens: float) -> float:
    """E·(1 − (1 − k/E)^n): distinct experts a layer's n tokens route to (uniform routing)."""
    if experts <= 0:
        return 0.0
    return experts * (1.0 - (1.0 - top_k / experts) ** max(tokens, 0.0))
