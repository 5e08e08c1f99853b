"""Memory per GPU (SPEC §4.6): model states and activations of one layout."""
from __future__ import annotations

from ..inputs.schema import Workload
from .layout import Layout
from .moe import memory_activations_gb as moe_activations_gb
from .moe import parameter_groups

GB = 1e9
WEIGHT_BYTES = 2  # bf16 weights
GRAD_BYTES = 2  # bf16 gradients
OPTIMIZER_BYTES = 12  # fp32 master weights + two Adam moments
ACTIVATION_BYTES_PER_LAYER_COEF = 34  # Korthikanti et al. eq. 2: 34·s·b·h bytes per layer
ATTENTION_MATRIX_COEF = 5  # Korthikanti et al.: 5·a·s²·b bytes of softmax and dropout
FULL_RECOMPUTE_ACTIVATION_COEF = 2  # only each layer's input (bf16) is kept


def memory_states_gb(workload: Workload, layout: Layout, params: int) -> float:
    """P/(t·p)·(2 + β_grad + 12) bytes; the 12 ÷ d for `distributed`, everything ÷ d for `fsdp`. SPEC 4.6.

    Mixture-of-Experts models sum the same over their parameter groups (moe.parameter_groups): the
    routed experts P_exp/(etp·ep·p) ÷ edp, the rest (P − P_exp)/(t·p) ÷ d (SPEC 4.7).
    """
    total = 0.0
    for group in parameter_groups(workload, layout, params):
        if workload.optimizer == "fsdp":
            per_param = (WEIGHT_BYTES + GRAD_BYTES + OPTIMIZER_BYTES) / group.size
        elif workload.optimizer == "distributed":
            per_param = WEIGHT_BYTES + GRAD_BYTES + OPTIMIZER_BYTES / group.size
        else:
            per_param = WEIGHT_BYTES + GRAD_BYTES + OPTIMIZER_BYTES
        total += group.shard * per_param
    return total / GB


def memory_activations_gb(workload: Workload, layout: Layout) -> float:
    """Korthikanti et al. activations with sequence parallelism, per GPU. SPEC 4.6.

    per layer and microbatch: s·b·h·(34/t + 5·a·s/(h·t))/c   (none; FlashAttention drops 5·a·s/h)
                              34·s·b·h/(t·c)                  (selective)
                              2·s·b·h/c                       (full)
    × L/p layers × p in-flight microbatches (1F1B, first stage) = × L.
    Mixture-of-Experts models: `moe.memory_activations_gb`.
    """
    if workload.model.moe is not None:
        return moe_activations_gb(workload, layout)
    m = workload.model
    t, c = layout.tp, layout.cp
    sbh = m.seq_len * layout.microbatch_size * m.hidden_size
    if workload.activation_recompute == "full":
        per_layer = FULL_RECOMPUTE_ACTIVATION_COEF * sbh / c
    else:
        coef = ACTIVATION_BYTES_PER_LAYER_COEF / t
        if workload.activation_recompute == "none" and not workload.flash_attention:
            coef += ATTENTION_MATRIX_COEF * m.attention_heads * m.seq_len / (m.hidden_size * t)
        per_layer = sbh * coef / c
    return per_layer * m.layers / GB
