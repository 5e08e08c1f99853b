"""Software-stack profiles (SPEC §4.8): the catalog's `stacks:` list and what a scenario's
`workload.stack` takes from its profile.

The same GPUs run 15–50 % faster or slower under different training stacks (kernels, TP overlap,
schedules). A profile carries what differs between stacks:

- per GPU (a list of catalog GPU ids): factors on the GPU's own `compute_model` (GEMM efficiency per
  precision, attention efficiency) and the TP-overlap share ψ (userbuffers, async TP);
- the DP (and FSDP) overlap share, the pipeline schedule, the default gradient-reduce dtype and
  optimizer sharding, and the MoE dispatcher and overlap defaults.

Scenario fields override the profile: `resolve_stack` fills only the fields a scenario leaves out
(pydantic's `model_fields_set`), so an explicit `overlap:`, `grad_reduce_dtype:` or
`expert_dispatch:` always wins. The physics that reads a profile (factors, ψ) is in
`solver/perf/stacks.py`.

This module imports nothing from `schema.py` (schema.py imports it); its models derive from `schema_base.Strict`,
as every input model does.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from .precisions import PrecisionName
from .schema_base import Strict
from .serving_stacks import ServingProfile

StackIdentifier = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")]
Share = Annotated[float, Field(ge=0, le=1)]
Factor = Annotated[float, Field(gt=0, le=4)]
DEFAULT_STACK = "megatron"
"""The stack a scenario runs on when it names none (Megatron-LM / NeMo / Megatron-Bridge)."""
ANY_GPU = "any"
"""A `StackGpu.gpus` entry that matches every GPU (the stack's fallback tuning)."""


class StackGpu(Strict):
    """A stack's tuning on some GPUs: factors on each GPU's `compute_model` and the TP-overlap share ψ."""

    gpus: list[StackIdentifier] = Field(min_length=1)
    """Catalog GPU ids this entry applies to (one GPU generation, e.g. [h100-sxm, h200]); `any` = every GPU
    no other entry names."""
    gemm_factor: dict[PrecisionName, Factor] = {}
    """κ_gemm by precision name, e.g. `{bf16: 0.73, fp8: 0.73}`: multiplies the GPU's
    `compute_model.gemm_efficiency` at that precision (the result is capped at 1); a precision left out takes its
    stand-in's factor (solver/inputs/precisions.py), else 1."""
    attention_factor: Factor = 1.0
    """Multiplies the GPU's `compute_model.attention_efficiency` (the attention kernel; capped at 1)."""
    tp_overlap: Share | None = None
    """ψ: the share of the step's linear-GEMM time that hides TP communication on these GPUs (exposed TP =
    max(0, T_tp − ψ·T_gemm)); null = the stack's `tp_overlap`."""
    source: str = ""
    """Where the values come from (docs/model.md "Stacks", a calibration overlay's provenance)."""


class StackDispatch(Strict):
    """A stack's Mixture-of-Experts defaults (the scenario's `workload.expert_dispatch` fields win)."""

    dispatcher: Literal["flat", "hierarchical"] | None = None
    """null = the schema default (`flat`)."""
    overlap: Literal["none", "shared_expert", "batch_overlap"] | None = None
    """null = the schema default (`none`)."""


class Stack(Strict):
    """One software-stack profile of the catalog's `stacks:` list (SPEC §4.8)."""

    id: StackIdentifier
    name: str = Field(min_length=1)
    description: str = ""
    kind: Literal["training", "inference"] = "training"
    """`training` (SPEC §4.8) or `inference`: a serving stack whose `serving:` block the replica model reads
    (SPEC §4.9, solver/inputs/serving_stacks.py)."""
    serving: ServingProfile | None = None
    """The serving efficiencies (required when kind is inference)."""
    tp_overlap: Share = 0.0
    """ψ on GPUs no `gpus` entry gives one: the share of the linear-GEMM time that hides TP communication."""
    dp_overlap: Share = 1.0
    """φ of the data-parallel reduce-scatter and all-gather in their windows (overlap.dp_rs, overlap.dp_ag)."""
    pp_overlap: Share = 1.0
    """φ of an interleaved pipeline's sends behind the next chunk's compute (overlap.pp)."""
    pipeline_schedule: Literal["interleaved", "1f1b", "none"] = "interleaved"
    """interleaved: vp may exceed 1; 1f1b: vp = 1 unless the scenario allows more; none: no pipeline
    parallelism (pp = 1) unless the scenario allows it."""
    grad_reduce_dtype: Literal["fp32", "bf16"] = "fp32"
    """Default `workload.grad_reduce_dtype`."""
    optimizer: Literal["replicated", "distributed", "fsdp"] = "distributed"
    """Default `workload.optimizer` (fsdp stacks shard everything)."""
    selective_policy: Literal["attention", "op"] = "attention"
    """Default `workload.selective_policy`: what the stack's `selective` recompute keeps (torchtitan: `op`)."""
    expert_dispatch: StackDispatch = StackDispatch()
    """Default MoE dispatcher and all-to-all overlap."""
    gpus: list[StackGpu] = []
    """Per-GPU tuning; a GPU no entry names (and no `any` entry) runs at its own compute_model, ψ = tp_overlap."""
    source: str = Field(min_length=1)
    """Where the profile comes from (docs/sources.md, docs/model.md "Stacks")."""

    @model_validator(mode="after")
    def _serving_with_kind(self) -> Stack:
        if self.kind == "inference" and self.serving is None:
            raise ValueError("a stack of kind inference needs its `serving:` block (solver/inputs/serving_stacks.py)")
        if self.kind == "training" and self.serving is not None:
            raise ValueError("`serving:` belongs to a stack of kind inference: add `kind: inference`")
        return self

    def tuning(self, gpu_id: str) -> StackGpu | None:
        """The entry naming this GPU, else the `any` entry, else None."""
        for entry in self.gpus:
            if gpu_id in entry.gpus:
                return entry
        return next((e for e in self.gpus if ANY_GPU in e.gpus), None)


NEUTRAL_STACK = Stack(id=DEFAULT_STACK, name="Megatron-LM / NeMo / Megatron-Bridge (neutral: no catalog stacks)",
                      source="built in: a catalog without a `stacks:` list runs every GPU at its own compute_model")
"""The profile used when the catalog has no `stacks:` list and the scenario names the default stack."""


def stack_of(catalog: Any, stack_id: str) -> Stack | None:
    """The catalog's profile of this id; the neutral profile for the default id when the catalog lists no
    stacks (a catalog built in code, a user catalog without the block); None when unknown."""
    stacks = catalog.by_id("stacks") if hasattr(catalog, "stacks") else {}
    if stack_id in stacks:
        return stacks[stack_id]
    return NEUTRAL_STACK if stack_id == DEFAULT_STACK and not stacks else None


def _workload_defaults(workload: Any, stack: Stack) -> dict:
    given = workload.model_fields_set
    update: dict[str, Any] = {}
    for name in ("grad_reduce_dtype", "optimizer", "selective_policy"):
        if name not in given:
            update[name] = getattr(stack, name)
    dispatch = workload.expert_dispatch
    ed = {k: getattr(stack.expert_dispatch, k) for k in ("dispatcher", "overlap")
          if getattr(stack.expert_dispatch, k) is not None and k not in dispatch.model_fields_set}
    if ed:
        update["expert_dispatch"] = dispatch.model_copy(update=ed)
    return update


def _overlap_defaults(overlap: Any, stack: Stack) -> dict:
    given = overlap.model_fields_set
    update: dict[str, Any] = {}
    if "dp" not in given:
        for name in ("dp_rs", "dp_ag"):
            if name not in given:
                update[name] = stack.dp_overlap
    if "pp" not in given:
        update["pp"] = stack.pp_overlap
    return update


def _schedule_defaults(scenario: Any, stack: Stack) -> dict:
    """1f1b: parallelism.vp = 1; none: parallelism.pp = 1; unless the scenario allows or pins its own."""
    par, pin = scenario.parallelism, scenario.pin
    name = {"1f1b": "vp", "none": "pp"}.get(stack.pipeline_schedule)
    if name is None or getattr(par, name) is not None or getattr(pin, name) is not None:
        return {}
    return {name: 1}


def resolve_stack(scenario: Any, catalog: Any) -> Any:
    """The scenario with its stack's defaults filled in where it gives no value of its own (SPEC §4.8).
    Idempotent: a resolved scenario resolves to itself. Unknown stacks are left for the located check
    (`scenario.check_against_catalog`)."""
    stack = stack_of(catalog, scenario.workload.stack)
    if stack is None:
        return scenario
    update: dict[str, Any] = {}
    wl = _workload_defaults(scenario.workload, stack)
    if wl:
        update["workload"] = scenario.workload.model_copy(update=wl)
    ov = _overlap_defaults(scenario.overlap, stack)
    if ov:
        update["overlap"] = scenario.overlap.model_copy(update=ov)
    sched = _schedule_defaults(scenario, stack)
    if sched:
        update["parallelism"] = scenario.parallelism.model_copy(update=sched)
    return scenario.model_copy(update=update) if update else scenario
