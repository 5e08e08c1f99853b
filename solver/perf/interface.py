"""The performance-model interface (issue 39 item 1, SPEC §2): what the design space, the bounds, the MILP's
coefficients and `evaluate` ask of a workload, per candidate point, whatever the workload is.

A workload kind is one `PerformanceModel`: given a fixed context (the workload on one machine: model, hardware,
stack) and a candidate point (a layout), it returns a `PointPerf`:

    time_s           the time the mission bounds (a training step; a serving replica's time per output token)
    rate_per_s       what the point delivers per second (training: steps/s = 1 / step; serving: requests/s)
    memory_gb_per_gpu, fits   the memory a GPU holds and whether it fits the usable HBM
    bytes_per_gpu    per traffic class: bytes per GPU (training: per step; serving: per second at the rate)
    power_w_per_gpu  the GPU's draw at the point (None = the platform's nameplate, as the costing assumes)
    flags            what the model has no measurement for (SPEC §4.8: every output says so)
    detail           the implementation's own result (`perf.step.Performance`, `perf.serving.ReplicaPerf`)

Two implementations ship: `TrainingStep` (SPEC §4, wrapping `perf.step.performance` unchanged) and
`ServingReplica` (SPEC §4.9, wrapping `perf.serving.replica_performance`). `WORKLOADS` is the registry, keyed by
`workload.kind`; adding a kind is one module implementing the protocol, its schema, its report section and one
line here (docs/architecture.md, "A new workload kind"; tests/perf/test_interface.py adds a toy one).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class PointPerf:
    """What a consumer of the performance model reads off one candidate point."""

    time_s: float
    rate_per_s: float
    memory_gb_per_gpu: float
    fits: bool
    bytes_per_gpu: Mapping[str, float] = field(default_factory=dict)
    power_w_per_gpu: float | None = None
    flags: tuple[str, ...] = ()
    detail: Any = field(default=None, compare=False, repr=False)


@runtime_checkable
class PerformanceModel(Protocol):
    """One workload kind's physics. `context` is constant over the points of one machine (what the kind needs:
    workload and hardware for training; a `ServingModelContext` for serving); `point` is one candidate layout."""

    kind: str

    def point(self, context: Any, point: Any) -> PointPerf:
        """The point's time, rate, memory, bytes per traffic class, power and flags."""
        ...


@dataclass(frozen=True)
class TrainingContext:
    """A training step's context: the workload, one machine's `Hardware`, the overlap shares."""

    workload: Any
    hardware: Any
    overlap: Mapping[str, float] | None = None


class TrainingStep:
    """SPEC §4: one synchronous training step (`perf.step.performance`, unchanged: the design space and
    `make_design` call the same function)."""

    kind = "training"

    def point(self, context: TrainingContext, point: Any) -> PointPerf:
        from .step import performance

        perf = performance(context.workload, point, context.hardware,
                           dict(context.overlap) if context.overlap is not None else None)
        per_class = {k: t.nvlink_bytes + t.scaleout_bytes for k, t in perf.traffic.items()}
        return PointPerf(time_s=perf.step_time_s, rate_per_s=1.0 / perf.step_time_s,
                         memory_gb_per_gpu=perf.memory_per_gpu_gb, fits=perf.fits_memory,
                         bytes_per_gpu={"nvlink": perf.nvlink_bytes, "scaleout": perf.scaleout_bytes, **per_class},
                         detail=perf)


class ServingReplica:
    """SPEC §4.9: one serving replica (`perf.serving.replica_performance`); `point` is a `ReplicaLayout`, the
    context a `ServingModelContext` plus the traffic (a `(context, traffic)` pair)."""

    kind = "inference"

    def point(self, context: Any, point: Any) -> PointPerf:
        from .serving import replica_performance

        ctx, traffic = context
        rp = replica_performance(ctx, point, traffic)
        return PointPerf(time_s=rp.tpot_s, rate_per_s=rp.requests_per_s, memory_gb_per_gpu=rp.memory_gb_per_gpu,
                         fits=rp.fits, bytes_per_gpu={"scaleout": rp.scaleout_gbyte_s_per_gpu * 1e9},
                         flags=tuple(rp.flags), detail=rp)


WORKLOADS: dict[str, PerformanceModel] = {
    "training": TrainingStep(),
    "inference": ServingReplica(),
}
"""The registry: workload.kind → its performance model (one line per kind)."""


def model_for(kind: str) -> PerformanceModel:
    """The performance model of a workload kind; KeyError names the kinds there are."""
    try:
        return WORKLOADS[kind]
    except KeyError:
        raise KeyError(f"no performance model for workload kind {kind!r} (registered: {sorted(WORKLOADS)})") from None


def register(model: PerformanceModel) -> None:
    """Add a workload kind's model to the registry (the one line a new kind adds, or a plug-in at run time)."""
    WORKLOADS[model.kind] = model
