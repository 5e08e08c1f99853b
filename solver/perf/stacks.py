"""What a software-stack profile (SPEC §4.8, solver/inputs/stacks.py) does to the physics.

Two things, both applied once in `hardware.hardware_for`, so `evaluate`, the design space (and with it
the MILP's coefficients) and the bounds all see the same machine:

- `tuned_compute`: the GPU's compute model under the stack: η_gemm,p = min(1, κ_gemm,p · η_gemm,p(GPU)) per
  precision p, η_attn = min(1, κ_attn · η_attn(GPU)), κ the stack's factors for that GPU;
- `tp_overlap_share`: ψ, the share of the step's linear-GEMM time behind which TP communication hides:
  exposed_tp = max(0, T_tp − ψ·T_gemm) (`traffic.tp_window`); the scenario's `overlap.tp` wins when given.

Both are elementwise in their inputs: nothing here depends on the data-parallel degree d.
"""
from __future__ import annotations

from dataclasses import replace

from ..inputs.precisions import ByPrecision, resolved
from ..inputs.stacks import NEUTRAL_STACK, Stack, stack_of
from .compute import ComputeParams


def profile(catalog, stack_id: str) -> Stack:
    """The stack profile a scenario names (the neutral one when unknown: the loader has reported it)."""
    return stack_of(catalog, stack_id) or NEUTRAL_STACK


def tuned_compute(params: ComputeParams, stack: Stack, gpu_id: str) -> ComputeParams:
    """η_gemm,p (every precision p) and η_attn of the GPU times the stack's factors κ for it, each capped at 1."""
    tuning = stack.tuning(gpu_id)
    if tuning is None:
        return params
    factor = resolved(tuning.gemm_factor, 1.0)
    return replace(params,
                   gemm_efficiency=ByPrecision({p: min(1.0, eta * factor[p]) for p, eta in params.gemm_efficiency.items()}),
                   attention_efficiency=min(1.0, params.attention_efficiency * tuning.attention_factor))


def tp_overlap_share(stack: Stack, gpu_id: str, scenario_tp: float | None = None) -> float:
    """ψ: the scenario's overlap.tp when given, else the stack's value for this GPU, else the stack's default."""
    if scenario_tp is not None:
        return scenario_tp
    tuning = stack.tuning(gpu_id)
    if tuning is not None and tuning.tp_overlap is not None:
        return tuning.tp_overlap
    return stack.tp_overlap
