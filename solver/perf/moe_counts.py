"""Mixture-of-Experts shapes, parameter counts and FLOPs (SPEC §4.7; notation of perf/moe.py, which re-exports
them)."""
from __future__ import annotations

from dataclasses import dataclass

from ..inputs.schema import MoeShape, TransformerShape, Workload
from .memo import by_identity
from .model import (
    attention_core_flops_per_key,
    attention_core_flops_per_token,
    attention_params_per_layer,
)

# ----------------------------------------------------------------------------------- shapes


@dataclass(frozen=True)
class LayerCounts:
    """L_d, L_m of the main model and L'_d, L'_m with the MTP layers (each repeats the last layer's kind)."""

    dense: int
    moe: int
    dense_with_mtp: int
    moe_with_mtp: int


@by_identity
def layer_counts(model: TransformerShape) -> LayerCounts:
    """L_m from `layer_pattern` (1 = MoE) or L − dense_layers; MTP layers follow the last layer."""
    moe = moe_shape(model)
    pattern = moe.layer_pattern or [0] * moe.dense_layers + [1] * (model.layers - moe.dense_layers)
    moe_layers = sum(pattern)
    dense_layers = model.layers - moe_layers
    mtp = moe.mtp_layers
    last_moe = pattern[-1] == 1
    return LayerCounts(dense_layers, moe_layers, dense_layers + (0 if last_moe else mtp), moe_layers + (mtp if last_moe else 0))


def moe_shape(model: TransformerShape) -> MoeShape:
    """The model's Mixture-of-Experts block (asserts the model has one)."""
    assert model.moe is not None, "a Mixture-of-Experts model"
    return model.moe


def ffn_matrices(model: TransformerShape) -> int:
    """Weight matrices per feed-forward block: 3 for SwiGLU (gate, up, down), else 2."""
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


@by_identity
def parameter_counts(model: TransformerShape) -> MoeParams:
    """docs/model.md §MoE, per layer with norms (2h) as in perf/model.py:
    P = L·(P_att + 2h) + L_d·k_ff·h·f + L_m·(E·k_ff·h·f_e + k_ff·h·n_s·f_s + h·E) + h + V·h·(1 tied, 2 untied)
    active: E → k.  One MTP layer adds P_att + its MLP (the last layer's kind) + 2h² (projection) + 3h.
    """
    moe, h = moe_shape(model), model.hidden_size
    counts, k_ff = layer_counts(model), ffn_matrices(model)
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
    moe, h, a = moe_shape(model), model.hidden_size, model.attention_heads
    counts, k_ff, mtp = layer_counts(model), ffn_matrices(model), moe.mtp_layers
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
    pad = capacity_multiplier(moe_shape(workload.model))
    return (3 * f.routed + again_routed) * pad, 3 * (f.total - f.routed) + again_other


def flops_per_step(workload: Workload) -> tuple[float, float]:
    """(F_model, F_hardware) per step: B·s·F_tok and B·s·(routed + other hardware FLOPs per token)."""
    tokens = workload.global_batch_size * workload.model.seq_len
    routed, other = hardware_flops_per_token(workload)
    return tokens * 3 * token_flops(workload.model).total, tokens * (routed + other)
