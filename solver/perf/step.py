"""The step time of one synchronous training step (SPEC §4.2, §4.5): compute, pipeline bubble and
what each traffic class leaves exposed.

    step = T_comp + bubble + Σ_k exposed_k,   exposed_k from the class's window rule (traffic.py)

Pure functions of plain floats, no I/O: `evaluate`, the design space (and through it the MILP's
coefficients) and the bounds all call `performance`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..inputs.schema import Workload
from .hardware import Hardware
from .layout import Layout
from .memory import memory_activations_gb, memory_states_gb
from .model import flops_per_step, parameter_count
from .moe import compute_s as moe_compute_s
from .traffic import BY_NAME, TRAFFIC_CLASSES, ClassTraffic, StepContext, evaluate_class

DOMINANT_SHARE = 0.10  # a term is "dominant" from this share of the step time


@dataclass(frozen=True)
class Performance:
    """Every term of one step (SPEC §4, §8.3). Times in s, bytes per GPU per step, memory in GB."""

    params: int
    flops_model: float
    flops_hardware: float
    gpus: int
    microbatches: int
    compute_s: float
    bubble_s: float
    traffic: dict[str, ClassTraffic]  # registry order
    step_time_s: float
    memory_states_gb: float
    memory_activations_gb: float
    hbm_usable_gb: float
    peak_tflops: float
    dominant_terms: tuple[str, ...] = field(default=())

    @property
    def exposed_comm_s(self) -> float:
        return sum(t.exposed_s for t in self.traffic.values())

    @property
    def nvlink_bytes(self) -> float:
        return sum(t.nvlink_bytes for t in self.traffic.values())

    @property
    def scaleout_bytes(self) -> float:
        return sum(t.scaleout_bytes for t in self.traffic.values())

    @property
    def memory_per_gpu_gb(self) -> float:
        return self.memory_states_gb + self.memory_activations_gb

    @property
    def fits_memory(self) -> bool:
        return self.memory_per_gpu_gb <= self.hbm_usable_gb

    @property
    def mfu(self) -> float:
        """MFU = F_model / (T·N·peak·1e12)."""
        return self.flops_model / (self.step_time_s * self.gpus * self.peak_tflops * 1e12)

    @property
    def hardware_tflops_per_gpu(self) -> float:
        return self.flops_hardware / (self.step_time_s * self.gpus) / 1e12

    def breakdown_s(self) -> dict[str, float]:
        """compute + bubble + Σ_k exposed_k = step_time_s (exposed_comm is their communication part)."""
        return {"compute": self.compute_s, "bubble": self.bubble_s,
                **{k: t.exposed_s for k, t in self.traffic.items()}, "exposed_comm": self.exposed_comm_s}

    def to_dict(self) -> dict:
        """The performance pieces of a design in the JSON result (SPEC §8.3)."""
        per_class = {k: {"nvlink": t.nvlink_bytes, "scaleout": t.scaleout_bytes} for k, t in self.traffic.items()}
        return {
            "step_time_s": self.step_time_s,
            "breakdown_s": self.breakdown_s(),
            "comm_s": {k: t.time_s for k, t in self.traffic.items()},
            "traffic": {k: t.to_dict() for k, t in self.traffic.items()},
            "bytes_per_gpu": {"nvlink": self.nvlink_bytes, "scaleout": self.scaleout_bytes, **per_class},
            "flops_per_step": {"model": self.flops_model, "hardware": self.flops_hardware},
            "mfu": self.mfu,
            "hardware_tflops_per_gpu": self.hardware_tflops_per_gpu,
            "memory_per_gpu_gb": self.memory_per_gpu_gb,
            "memory_gb": {"states": self.memory_states_gb, "activations": self.memory_activations_gb,
                          "usable_hbm": self.hbm_usable_gb, "fits": self.fits_memory},
            "params": self.params,
            "gpus": self.gpus,
            "microbatches": self.microbatches,
            "dominant_terms": list(self.dominant_terms),
        }


def compute_s(flops_hardware: float, gpus: int, hw: Hardware) -> float:
    """T_comp = F_hw / (N · peak · 1e12 · η_compute). SPEC 4.2."""
    return flops_hardware / (gpus * hw.peak_tflops * 1e12 * hw.compute_efficiency)


def bubble_s(compute: float, layout: Layout, microbatches: int) -> float:
    """1F1B bubble (interleaved when v > 1): T_comp · (p − 1)/(v · m). SPEC 4.2."""
    return compute * (layout.pp - 1) / (layout.vp * microbatches)


def _dominant(terms: dict[str, float], step: float) -> tuple[str, ...]:
    """Terms from DOMINANT_SHARE of the step upward, largest first (always at least one)."""
    ranked = sorted(terms, key=lambda k: terms[k], reverse=True)
    big = tuple(k for k in ranked if terms[k] >= DOMINANT_SHARE * step)
    return big or (ranked[0],)


def performance(workload: Workload, layout: Layout, hw: Hardware, overlap: dict[str, float] | None = None,
                ) -> Performance:
    """Step time and every term of it. SPEC 4.2–4.6.

    step = T_comp + bubble + Σ_k exposed_k. The layout is assumed placeable (see
    `layout.placement_problem`); m = B/(d·b) is then an integer. Stages may hold a fractional
    number of layers: L/p is used as a real number.
    """
    params = parameter_count(workload.model)
    flops_model, flops_hw = flops_per_step(workload)
    n = layout.gpus
    micro = layout.microbatches(workload.global_batch_size)
    comp = moe_compute_s(workload, layout, hw) if workload.model.moe is not None else compute_s(flops_hw, n, hw)
    bubble = bubble_s(comp, layout, micro)
    phi = overlap if overlap is not None else {tc.name: tc.default_overlap for tc in TRAFFIC_CLASSES}
    ctx = StepContext(workload, layout, hw, params, micro, comp, phi)
    traffic = {tc.name: evaluate_class(tc, ctx) for tc in TRAFFIC_CLASSES}
    step = comp + bubble + sum(t.exposed_s for t in traffic.values())
    terms = {"compute": comp, "bubble": bubble, **{k: t.exposed_s for k, t in traffic.items()}}
    return Performance(
        params=params, flops_model=flops_model, flops_hardware=flops_hw, gpus=n, microbatches=micro,
        compute_s=comp, bubble_s=bubble, traffic=traffic, step_time_s=step,
        memory_states_gb=memory_states_gb(workload, layout, params),
        memory_activations_gb=memory_activations_gb(workload, layout),
        hbm_usable_gb=hw.hbm_usable_gb, peak_tflops=hw.peak_tflops, dominant_terms=_dominant(terms, step),
    )


def tokens_per_s_per_gpu(workload: Workload, perf: Performance) -> float:
    """Throughput B·s / (step · N), the unit NeMo and Megatron-Bridge publish."""
    return workload.global_batch_size * workload.model.seq_len / (perf.step_time_s * perf.gpus)


__all__ = ["BY_NAME", "Performance", "bubble_s", "compute_s", "performance", "tokens_per_s_per_gpu"]
