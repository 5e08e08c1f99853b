"""Serving-stack profiles (SPEC §4.9): what a catalog `stacks:` entry of `kind: inference` carries.

A serving stack (TensorRT-LLM, vLLM, SGLang) turns the replica model's roofline (solver/perf/serving.py) into
time with few fitted numbers, per GPU family and precision: the fraction of the dense peak prefill reaches,
the fraction decode's GEMMs reach when compute-bound, the achieved fraction of the HBM bandwidth when
memory-bound, and a fixed per-step overhead (scheduler, sampling, launches). The values are fitted on
published serving benchmarks (tests/data/serving-runs.csv; docs/model.md "Serving"), with the p10–p90
interval of the fit's out-of-sample residuals.

Entries name catalog GPU ids or `any`; an id the catalog does not (yet) list is allowed (AMD families
mi300x, mi325x, mi355x may come from another catalog file).
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .schema_base import Strict

ServingIdentifier = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")]
ServingPrecision = Literal["bf16", "fp8", "fp4"]
Efficiency = Annotated[float, Field(gt=0, le=1)]
ANY = "any"
Regime = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*:(bf16|fp8|fp4):(dense|moe)$")]


class ServingGpu(Strict):
    """A serving stack's efficiencies on some GPUs (one family) at some precisions."""

    gpus: list[ServingIdentifier] = Field(min_length=1)
    """Catalog GPU ids (one family, e.g. [h100-sxm, h200]); `any` = every GPU no other entry names."""
    precisions: list[ServingPrecision] = ["bf16", "fp8", "fp4"]
    """The weight/GEMM precisions this entry applies to (first matching entry wins)."""
    prefill_efficiency: Efficiency
    """η_pf: fraction of the dense peak at the precision that prefill (GEMMs + attention) reaches."""
    decode_efficiency: Efficiency
    """η_dc: fraction of the dense peak that a compute-bound decode step reaches."""
    hbm_efficiency: Efficiency
    """η_hbm: achieved fraction of the GPU's `hbm_tbyte_s` while decode streams weights and KV cache."""
    step_overhead_ms: Annotated[float, Field(ge=0, le=1000)] | None = None
    """Fixed time per decode step, ms (null = the profile's)."""
    seq_overhead_us: Annotated[float, Field(ge=0, le=10_000)] | None = None
    """Host time per sequence and decode step, µs (null = the profile's)."""
    layer_overhead_us: Annotated[float, Field(ge=0, le=10_000)] | None = None
    """Fixed kernel time per layer and decode step, µs (null = the profile's)."""
    ep_imbalance: Annotated[float, Field(ge=1, le=10)] | None = None
    """u_ep on these GPUs (null = the profile's): the stack's expert-parallel layers over another scale-up path
    (e.g. NCCL all-to-all over PCIe) than the NVLink runs the profile's value was fitted on (issue 46)."""
    source: str = ""
    """Where the values come from (docs/model.md "Serving")."""


class ServingProfile(Strict):
    """The inference part of a `kind: inference` stack."""

    step_overhead_ms: Annotated[float, Field(ge=0, le=1000)] = 2.0
    """t_ovh: fixed time per decode step (scheduling, sampling, kernel launches not hidden by graphs), ms."""
    seq_overhead_us: Annotated[float, Field(ge=0, le=10_000)] = 0.0
    """t_seq: host time per sequence of an attention rank per decode step (scheduling, sampling, detokenisation), µs."""
    layer_overhead_us: Annotated[float, Field(ge=0, le=10_000)] = 0.0
    """t_layer: fixed kernel time per layer of a decode step (launch, prologue and tail of the layer's kernels), µs."""
    chunk_tokens: Annotated[int, Field(ge=16, le=1_000_000)] = 8192
    """Prefill tokens per step in aggregated serving (chunked prefill budget, `max_num_batched_tokens`)."""
    max_batch_size: Annotated[int, Field(ge=1, le=1_000_000)] = 2048
    """Most sequences one attention rank decodes together (the scheduler's `max_batch_size` / `max_num_seqs`)."""
    moe_efficiency: Annotated[float, Field(gt=0, le=2)] = 1.0
    """Multiplies η_pf and η_dc on the routed-expert FLOPs of a Mixture-of-Experts model (grouped GEMMs)."""
    ep_imbalance: Annotated[float, Field(ge=1, le=10)] = 1.0
    """u_ep: with expert parallelism, the most loaded GPU's routed tokens ÷ the mean (it sets the pace of each MoE
    layer: expert GEMMs and all-to-all)."""
    allreduce_efficiency: Annotated[float, Field(gt=0, le=1)] | None = None
    """η_ar: the fraction of the platform's scale-up bandwidth (nvlink_gbyte_s) a decode/prefill TP all-reduce
    reaches (ring bytes 2(tp−1)/tp·n·h·2 B); null = the platform's nvlink_efficiency."""
    comm_overlap: Annotated[float, Field(ge=0, le=1)] = 0.0
    """Share of the decode step's TP/EP communication hidden behind compute (two-batch overlap)."""
    gpus: list[ServingGpu] = Field(min_length=1)
    """Efficiencies per GPU family and precision."""
    measured: list[Regime] = []
    """Regimes with a published measurement in the fit, `gpu:precision:dense|moe` (others are flagged)."""
    interval_p10: Annotated[float, Field(gt=0, le=1)] = 0.8  # p10 ≤ 1 ≤ p90: the bounds order the pair
    """p10 multiplicative factor on throughput (out-of-sample residuals of the fit)."""
    interval_p90: Annotated[float, Field(ge=1, le=10)] = 1.2
    """p90 multiplicative factor on throughput."""
    source: str = ""

    def tuning(self, gpu_id: str, precision: str) -> ServingGpu:
        """The first entry naming this GPU at this precision, else the first `any` entry at it, else the first
        entry naming the GPU, else the first entry."""
        return self.tuning_match(gpu_id, precision)[0]

    def tuning_match(self, gpu_id: str, precision: str) -> tuple[ServingGpu, bool]:
        """`tuning`'s entry, and True when it is made for this GPU (by id or `any`) at this precision; False when it
        is borrowed from another precision or GPU (the serving outputs flag it: perf/serving.py `regime_flags`)."""
        for own, pred in ((True, lambda e: gpu_id in e.gpus and precision in e.precisions),
                          (True, lambda e: ANY in e.gpus and precision in e.precisions),
                          (False, lambda e: gpu_id in e.gpus)):
            hit = next((e for e in self.gpus if pred(e)), None)
            if hit is not None:
                return hit, own
        return self.gpus[0], False

    def is_measured(self, gpu_id: str, precision: str, moe: bool) -> bool:
        """True when the fit holds a measurement of this regime."""
        return f"{gpu_id}:{precision}:{'moe' if moe else 'dense'}" in self.measured
