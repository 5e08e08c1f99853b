"""Memory per GPU (SPEC §4.6): model states and activations of one layout.

States, per parameter of the GPU's shard P/(t·p): bf16 weights (2 B), main gradients at
`grad_reduce_dtype` (4 B fp32, Megatron-LM's default; 2 B bf16), fp32 master weights and two Adam
moments (12 B). distributed shards the 12 over d; fsdp shards everything over d and, when it does not
reshard after the forward, holds the stage's bf16 weights gathered through the backward (+2 B).

Activations, per layer and microbatch, with sequence parallelism (everything ÷ t·c; Korthikanti et
al. 2022 counted per tensor for the layer at hand), in units of s·b·h bytes:

    12                 the two norms' inputs and outputs (8), Q and the attention output (4)
    + 4·h_kv/h         K and V (FlashAttention keeps Q, K, V and the output; Q and the output are in the 12)
    + k_act·f/h        MLP: SwiGLU keeps gate, up and their product (6·f/h); GeLU its input and output (4·f/h)
    + 2 (GeLU models)  GPT-style dropout masks on the two block outputs
    + 5·a·s/h          without FlashAttention and recompute: the s×s softmax, its dropout mask and output

which is Korthikanti's 34 + 5as/h for GPT (f = 4h, h_kv = h). With FP8 GEMMs the tensors only a GEMM
keeps — the two norm outputs and the down-projection's input (f/h of the MLP term) — are kept as FP8
copies, one byte instead of two (TransformerEngine saves the cast input for the weight gradient): −2 − f/h.
Selective recompute (or FlashAttention)
drops the s² term; full recompute keeps only each layer's input, 2·s·b·h/(t·c), plus one layer's full
activations while it is recomputed. The first pipeline stage holds L/p layers of n_f microbatches,
n_f = min(m, p) for 1F1B and min(m, p + (p − 1)/v) interleaved (Korthikanti: p·(1 + (p−1)/(p·v)));
the last stage holds one microbatch plus the logits' fp32 softmax, b·(s/c)·(V/t)·4 B. A
balanced pipeline split puts (L + 2)/p − 1 layers on the first and last stages. The GPU that needs
most sets the memory.
"""
from __future__ import annotations

from ..inputs.schema import Workload
from .layout import Layout
from .model import kv_hidden_size
from .moe import layer_activation_bytes as moe_layer_activation_bytes
from .moe import parameter_groups

GB = 1e9
WEIGHT_BYTES = 2  # bf16 weights
MAIN_GRAD_BYTES = {"fp32": 4, "bf16": 2}
OPTIMIZER_BYTES = 12  # fp32 master weights + two Adam moments
BLOCK_COEF = 12  # norms and block inputs, in s·b·h bytes
DROPOUT_COEF = 2  # GeLU (GPT-style) models: two dropout masks
ATTENTION_MATRIX_COEF = 5  # Korthikanti et al.: 5·a·s²·b bytes of softmax and dropout
FULL_RECOMPUTE_ACTIVATION_COEF = 2  # only each layer's input (bf16) is kept
FP8_SAVED_COEF = 2  # FP8: the two norm outputs are kept in one byte instead of two
FSDP_GATHERED_LAYERS = 2  # FSDP holds the computing layer's and the prefetched layer's bf16 weights gathered
OP_SAC_KEPT_COEF = 4  # per-op selective checkpointing keeps the layer input and the attention output (2 + 2)
LOGITS_BYTES = 4  # the loss keeps the fp32 softmax of the logits for its backward (fused cross-entropy)


def memory_states_gb(workload: Workload, layout: Layout, params: int) -> float:
    """Per parameter group (`moe.parameter_groups`: a dense model's P/(t·p) over the d·c ranks; a Mixture-of-Experts
    model also its routed experts P_exp/(etp·ep·p) over the edp ranks, SPEC 4.7; `shard_ranks`), shard·(2 + β_grad +
    12/size) distributed, (2 + β_grad + 12) replicated, shard·((β_grad + 12)/size + 2·min(1, 2/(L/p))) fsdp (the
    fp32 master is the shard; bf16 weights only for the two layers gathered at a time; 2·shard when fsdp keeps the
    stage's weights gathered). SPEC 4.6, issue 41."""
    grad = MAIN_GRAD_BYTES[workload.grad_reduce_dtype]
    stage_layers = max(1.0, workload.model.layers / layout.pp)
    total = 0.0
    for group in parameter_groups(workload, layout, params):
        size = shard_ranks(group, layout)
        if workload.optimizer == "fsdp":
            # the fp32 master is the sharded parameter; bf16 copies exist only while gathered: FSDP_GATHERED_LAYERS
            # layers at a time (the one computing and the one prefetched), or the whole stage without resharding
            per_param = (grad + OPTIMIZER_BYTES) / size + WEIGHT_BYTES * (
                1.0 if not workload.fsdp_reshard_after_forward else min(1.0, FSDP_GATHERED_LAYERS / stage_layers))
        elif workload.optimizer == "distributed":
            per_param = WEIGHT_BYTES + grad + OPTIMIZER_BYTES / size
        else:
            per_param = WEIGHT_BYTES + grad + OPTIMIZER_BYTES
        total += group.shard * per_param
    return total / GB


def shard_ranks(group, layout: Layout) -> int:
    """Ranks the optimizer state (distributed) or everything (fsdp) of a parameter group shards over: the group's
    d ranks times the c context-parallel ranks for the non-expert parameters (Megatron's distributed optimizer and
    torchtitan's FSDP shard over the data-and-context-parallel group: CP ranks hold the same weights), the edp
    ranks for routed experts (edp already counts the CP ranks: ep·etp·edp = t·c·d)."""
    return group.size * layout.cp if group.stride == layout.tp * layout.cp else group.size


def layer_activation_coef(workload: Workload, tp: int) -> float:
    """Bytes one layer keeps per microbatch, in units of s·b·h/(t·c) (no or selective recompute)."""
    m = workload.model
    h = m.hidden_size
    gelu = m.ffn_type != "swiglu"
    if workload.activation_recompute == "selective" and workload.selective_policy == "op":
        return per_op_selective_coef(workload)
    coef = BLOCK_COEF + 4 * kv_hidden_size(m) / h + (4 if gelu else 6) * m.ffn_hidden_size / h
    if gelu:
        coef += DROPOUT_COEF
    if workload.precision == "fp8":
        coef -= FP8_SAVED_COEF + m.ffn_hidden_size / h
    if workload.activation_recompute == "none" and not workload.flash_attention:
        coef += ATTENTION_MATRIX_COEF * m.attention_heads * m.seq_len / h
    return coef


def per_op_selective_coef(workload: Workload) -> float:
    """torchtitan's per-op selective checkpointing (`selective_policy: op`), in s·b·h/(t·c) bytes per layer: the
    layer input (2) and the attention output (2) are kept, and every other matmul output — half of q (2), k and v
    (2·h_kv/h each), the attention projection (2), the MLP up projections (2·k_up·f/h) and the down projection (2)
    — the rest is recomputed: 4 + (6 + 4·h_kv/h + 2·k_up·f/h)/2 = 7 + 2·h_kv/h + k_up·f/h (Llama 3 8B: 14.5, against
    34 for Megatron's attention-only `selective`). Its recompute time is inside the stack's fitted GEMM factor."""
    m = workload.model
    h = m.hidden_size
    k_up = 2 if m.ffn_type == "swiglu" else 1
    return OP_SAC_KEPT_COEF + (6 + 4 * kv_hidden_size(m) / h + 2 * k_up * m.ffn_hidden_size / h) / 2


def end_stage_layers(workload: Workload, layout: Layout) -> float:
    """Transformer layers on the first (and last) stage: L/p, or (L + 2)/p − 1 with a balanced split."""
    p = layout.pp
    if p > 1 and workload.pipeline_split == "balanced":
        return (workload.model.layers + 2) / p - 1
    return workload.model.layers / p


def in_flight_microbatches(layout: Layout, microbatches: int) -> float:
    """n_f on the first stage: min(m, p) for 1F1B; min(m, p + (p − 1)/v) interleaved."""
    p, v = layout.pp, layout.vp
    full = p if v == 1 else p + (p - 1) / v
    return min(float(microbatches), full)


def memory_activations_gb(workload: Workload, layout: Layout, microbatches: int | None = None) -> float:
    """Activations (and logits) of the GPU that needs most: the first stage's L/p layers × n_f microbatches,
    or the last stage's one microbatch plus its logits. SPEC 4.6. A Mixture-of-Experts layer keeps
    `moe.layer_activation_bytes` (SPEC 4.7) in place of the dense layer's coefficient."""
    m = workload.model
    t, c = layout.tp, layout.cp
    micro = microbatches if microbatches is not None else workload.global_batch_size // (layout.dp * layout.microbatch_size)
    sbh = m.seq_len * layout.microbatch_size * m.hidden_size / (t * c)
    layers = end_stage_layers(workload, layout)
    if m.moe is not None:
        full_layer = moe_layer_activation_bytes(workload, layout)
    else:
        full_layer = layer_activation_coef(workload, t) * sbh
    if workload.activation_recompute == "full":
        kept, working = FULL_RECOMPUTE_ACTIVATION_COEF * sbh, full_layer
    else:
        kept, working = full_layer, 0.0
    first = layers * in_flight_microbatches(layout, micro) * kept + working
    logits = LOGITS_BYTES * layout.microbatch_size * m.seq_len / c * m.vocab_size / t
    last = layers * kept + working + logits
    if layout.pp == 1:
        return (first + logits) / GB
    return max(first, last) / GB


def memory_per_gpu_gb(workload: Workload, layout: Layout, params: int) -> float:
    """States plus activations of the GPU that needs most (what `Performance.memory_per_gpu_gb` reports)."""
    return memory_states_gb(workload, layout, params) + memory_activations_gb(workload, layout)
