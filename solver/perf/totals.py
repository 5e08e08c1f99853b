"""Parameter count and FLOPs of any model: the dense formulas (`perf/model.py`, SPEC §4.1) or the
Mixture-of-Experts ones (`perf/moe.py`, SPEC §4.7). Both build on model.py's attention terms; this module sits
above the two, so neither imports the other's caller (no import cycle)."""
from __future__ import annotations

from ..inputs.schema import TransformerShape, Workload
from . import moe
from .memo import by_identity
from .model import dense_flops_per_step, dense_parameter_count


@by_identity
def parameter_count(model: TransformerShape) -> int:
    """P: `model.dense_parameter_count`, or a Mixture-of-Experts model's published total (`moe.parameter_counts`)."""
    if model.moe is not None:
        return int(round(moe.parameter_counts(model).total))
    return dense_parameter_count(model)


@by_identity
def flops_per_step(workload: Workload) -> tuple[float, float]:
    """(F_model, F_hardware) per step: `model.dense_flops_per_step`, or Megatron's convention for a
    Mixture-of-Experts model (`moe.flops_per_step`)."""
    if workload.model.moe is not None:
        return moe.flops_per_step(workload)
    return dense_flops_per_step(workload)
