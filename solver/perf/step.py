"""The step time of one synchronous training step (SPEC §4.2, §4.5): compute, pipeline bubble, what
each traffic class leaves exposed, and the links' capacity.

    schedule = T_comp + bubble + Σ_k exposed_k        exposed_k from the class's window rule (traffic.py)
    step     = max(schedule, Σ_k T_k^scale-out, Σ_k T_k^NVLink)     (every class shares the links)

Pure functions of plain floats, no I/O: `evaluate`, the design space (and through it the MILP's
coefficients) and the bounds all call `performance`; the margins (`step_time_under`) re-time the
same traffic.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..inputs.schema import Workload
from . import moe
from .compute import ComputeParams, MicrobatchCompute, microbatch_compute, optimizer_step_s
from .hardware import GB, LAUNCH_LATENCY_S, Hardware
from .layout import Layout
from .memo import by_identity
from .memory import memory_activations_gb, memory_states_gb
from .model import matmul_params_per_layer
from .totals import flops_per_step, parameter_count
from .traffic import BY_NAME, TIMINGS, TRAFFIC_CLASSES, ClassTraffic, StepContext, evaluate_class, link_times

DOMINANT_SHARE = 0.10  # a term is "dominant" from this share of the step time
MARGIN_CAP = 10.0  # margins are searched up to a 10× compute slowdown
MARGIN_TOLERANCE = 1e-4


@dataclass(frozen=True)
class ComputeTerms:
    """The step's compute on one GPU: T_comp, one microbatch's forward and backward (τ_f, τ_b), and the step's
    linear-GEMM and attention-core time (the windows TP comm overlap and CP use)."""

    compute_s: float
    forward_s: float
    backward_s: float
    gemm_s: float
    attention_s: float
    optimizer_s: float = 0.0
    microbatch: MicrobatchCompute | None = None
    microbatches: int = 0
    shared_expert_s: float = 0.0  # MoE: the shared experts' compute of the step (the all-to-all's shared_expert window)

    @property
    def by_family_s(self) -> dict[str, float]:
        """Seconds per step by matmul family, attention, element-wise work and the optimizer (GEMM-shape model)."""
        if self.microbatch is None:
            return {}
        return {**{k: v * self.microbatches for k, v in self.microbatch.by_family_s.items()}, "optimizer": self.optimizer_s}


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
    capacity_s: float = 0.0  # what the busiest link adds beyond the schedule (0 unless a link is the bottleneck)
    scaleout_busy_s: float = 0.0  # Σ_k scale-out time of every class
    nvlink_busy_s: float = 0.0  # Σ_k NVLink time of every class
    compute: ComputeTerms | None = None
    hw: Hardware | None = field(default=None, compare=False, repr=False)
    # per class (NVLink bytes, scale-out bytes, χ, χ_pod, NIC-independent latency s, network steps, pieces, timing): what
    # re-timing on another NIC needs, flattened once (the design space re-times every point per NIC)
    retiming: tuple = field(default=(), compare=False, repr=False)

    @property
    def dominant_terms(self) -> tuple[str, ...]:
        """The terms from DOMINANT_SHARE of the step upward, largest first (`_dominant`): compute, bubble, each
        class's exposure, the capacity term. Derived when read (reports), not on every evaluation."""
        named = {"compute": self.compute_s, "bubble": self.bubble_s,
                 **{k: t.exposed_s for k, t in self.traffic.items()}, "capacity": self.capacity_s}
        return _dominant(named, self.step_time_s)

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

    @property
    def compute_efficiency(self) -> float:
        """The effective fraction of the peak the math reaches: F_hw / (N · peak · T_comp)."""
        return self.flops_hardware / (self.gpus * self.peak_tflops * 1e12 * self.compute_s)

    def breakdown_s(self) -> dict[str, float]:
        """compute + bubble + Σ_k exposed_k + capacity = step_time_s (exposed_comm is their communication part)."""
        return {"compute": self.compute_s, "bubble": self.bubble_s,
                **{k: t.exposed_s for k, t in self.traffic.items()}, "capacity": self.capacity_s,
                "exposed_comm": self.exposed_comm_s}

    def to_dict(self) -> dict:
        """The performance pieces of a design in the JSON result (SPEC §8.3)."""
        per_class = {k: {"nvlink": t.nvlink_bytes, "scaleout": t.scaleout_bytes} for k, t in self.traffic.items()}
        out = {
            "step_time_s": self.step_time_s,
            "breakdown_s": self.breakdown_s(),
            "comm_s": {k: t.time_s for k, t in self.traffic.items()},
            "traffic": {k: t.to_dict() for k, t in self.traffic.items()},
            "link_busy_s": {"scaleout": self.scaleout_busy_s, "nvlink": self.nvlink_busy_s},
            "bytes_per_gpu": {"nvlink": self.nvlink_bytes, "scaleout": self.scaleout_bytes, **per_class},
            "flops_per_step": {"model": self.flops_model, "hardware": self.flops_hardware},
            "mfu": self.mfu,
            "hardware_tflops_per_gpu": self.hardware_tflops_per_gpu,
            "compute_efficiency": self.compute_efficiency,
            "memory_per_gpu_gb": self.memory_per_gpu_gb,
            "memory_gb": {"states": self.memory_states_gb, "activations": self.memory_activations_gb,
                          "usable_hbm": self.hbm_usable_gb, "fits": self.fits_memory},
            "params": self.params,
            "gpus": self.gpus,
            "microbatches": self.microbatches,
            "dominant_terms": list(self.dominant_terms),
        }
        if self.compute is not None and self.compute.by_family_s:
            out["compute_s_by_family"] = dict(self.compute.by_family_s)
        return out


# ------------------------------------------------------------------------------------ compute


def compute_s(flops_hardware: float, gpus: int, hw: Hardware) -> float:
    """Flat model: T_comp = F_hw / (N · peak · 1e12 · η_compute) (v1, or a scenario's compute_efficiency)."""
    assert hw.compute_efficiency is not None, "flat compute model needs compute_efficiency"
    return flops_hardware / (gpus * hw.peak_tflops * 1e12 * hw.compute_efficiency)


def _flop_shares(workload: Workload, flops_hardware: float) -> tuple[float, float, float]:
    """(forward, linear GEMM, attention core) shares of F_hw, for the flat model's windows."""
    m = workload.model
    tokens = workload.global_batch_size * m.seq_len
    lin = 2 * m.layers * matmul_params_per_layer(m) + 2 * m.hidden_size * m.vocab_size
    att = m.layers * 4 * m.seq_len * m.hidden_size
    again = {"full": (m.layers * 2 * matmul_params_per_layer(m), att), "selective": (0.0, att)}.get(
        workload.activation_recompute, (0.0, 0.0))
    forward = tokens * (lin + att) / flops_hardware
    return forward, tokens * (3 * lin + again[0]) / flops_hardware, tokens * (3 * att + again[1]) / flops_hardware


def optimizer_shard_params(workload: Workload, layout: Layout, params: int) -> float:
    """Parameters one GPU's optimizer updates: P/(t·p) replicated, P/(t·p·d) distributed and fsdp; summed over
    the parameter groups (`moe.parameter_groups`: a MoE model's routed experts shard over edp)."""
    groups = moe.parameter_groups(workload, layout, params)
    return sum(g.shard if workload.optimizer == "replicated" else g.shard / g.size for g in groups)


def compute_terms(workload: Workload, layout: Layout, hw: Hardware, params: int, flops_hardware: float,
                  microbatches: int) -> ComputeTerms:
    """T_comp = m·(τ_f + τ_b) + optimizer step (GEMM-shape model, SPEC §4.2), or the flat F_hw/(N·peak·η)."""
    if workload.model.moe is not None:
        return _moe_terms(workload, layout, hw, params, microbatches)
    if hw.compute is None:
        total = compute_s(flops_hardware, layout.gpus, hw)
        fwd, gemm, att = _flop_shares(workload, flops_hardware)
        tau = total / microbatches
        return ComputeTerms(total, fwd * tau, (1 - fwd) * tau, gemm * total, att * total)
    return _model_terms(workload, layout, hw.compute, params, microbatches)


@by_identity
def _per_workload(workload: Workload) -> dict:
    """A workload's microbatch computes by layout shape and hardware (`_microbatch`, `_moe_microbatch`): keyed by
    the workload's identity, as hashing a pydantic model on every call costs more than the lookup saves."""
    return {}


def _moe_microbatch(workload: Workload, tp: int, cp_: int, pp: int, microbatch_size: int, ep: int, etp: int,
                    params: ComputeParams, epsilon: float):
    memo, key = _per_workload(workload), ("moe", tp, cp_, pp, microbatch_size, ep, etp, params, epsilon)
    if key not in memo:
        lay = Layout(tp=tp, cp=cp_, pp=pp, vp=1, dp=1, microbatch_size=microbatch_size, gpus_per_domain_used=tp, ep=ep,
                     etp=etp)
        memo[key] = moe.microbatch_compute(workload, lay, params, epsilon)
    return memo[key]


def _moe_terms(workload: Workload, layout: Layout, hw: Hardware, params: int, microbatches: int) -> ComputeTerms:
    """Mixture-of-Experts compute (SPEC 4.7): the GEMM-shape model (`moe.microbatch_compute`) and the optimizer
    step over the parameter groups; with a flat compute efficiency, `moe.compute_s` split by FLOP shares."""
    if hw.compute is None:
        total = moe.compute_s(workload, layout, hw)
        fwd, gemm, att = moe.flat_shares(workload)
        tau = total / microbatches
        return ComputeTerms(total, fwd * tau, (1 - fwd) * tau, gemm * total, att * total,
                            shared_expert_s=moe.shared_expert_s(workload, layout, hw))
    mb = _moe_microbatch(workload, layout.tp, layout.cp, layout.pp, layout.microbatch_size, layout.ep, layout.etp,
                         hw.compute, moe.expert_efficiency(hw))
    opt = optimizer_step_s(optimizer_shard_params(workload, layout, params), hw.compute)
    c = mb.compute
    return ComputeTerms(microbatches * c.total_s + opt, c.forward_s, c.backward_s, microbatches * c.gemm_s,
                        microbatches * c.attention_s, opt, c, microbatches, microbatches * mb.shared_expert_s)


def _microbatch(workload: Workload, tp: int, cp_: int, pp: int, microbatch_size: int, params: ComputeParams):
    """One microbatch's compute does not depend on d or the placement: evaluated once per layout shape."""
    memo, key = _per_workload(workload), (tp, cp_, pp, microbatch_size, params)
    if key not in memo:
        lay = Layout(tp=tp, cp=cp_, pp=pp, vp=1, dp=1, microbatch_size=microbatch_size, gpus_per_domain_used=tp)
        memo[key] = microbatch_compute(workload, lay, params)
    return memo[key]


def _model_terms(workload: Workload, layout: Layout, cp: ComputeParams, params: int, microbatches: int) -> ComputeTerms:
    mb = _microbatch(workload, layout.tp, layout.cp, layout.pp, layout.microbatch_size, cp)
    opt = optimizer_step_s(optimizer_shard_params(workload, layout, params), cp)
    return ComputeTerms(microbatches * mb.total_s + opt, mb.forward_s, mb.backward_s, microbatches * mb.gemm_s,
                        microbatches * mb.attention_s, opt, mb, microbatches)


def bubble_s(terms: ComputeTerms, layout: Layout) -> float:
    """1F1B bubble (interleaved when v > 1): (p − 1)/v microbatch computes, = T_comp·(p − 1)/(v·m) without the
    optimizer step. SPEC 4.2."""
    return (terms.forward_s + terms.backward_s) * (layout.pp - 1) / layout.vp


def compute_and_bubble_s(workload: Workload, layout: Layout, hw: Hardware, params: int) -> float:
    """T_comp + bubble without the traffic: a lower bound on the step time on any NIC (cheap; the design space
    screens points with it)."""
    _, flops_hw = flops_per_step(workload)
    terms = compute_terms(workload, layout, hw, params, flops_hw, layout.microbatches(workload.global_batch_size))
    return terms.compute_s + bubble_s(terms, layout)


# ------------------------------------------------------------------------------------ step


def link_busy_s(traffic: dict[str, ClassTraffic], hw: Hardware) -> tuple[float, float]:
    """(Σ_k T_k^scale-out, Σ_k T_k^NVLink): the time each link needs for the whole step's bytes (SPEC 4.5 capacity),
    each class's bytes at its own timing's bandwidths (`traffic.link_times`)."""
    times = [link_times(t.timing, t.nvlink_bytes, t.scaleout_bytes, hw, t.chi, t.pod_crossing) for t in traffic.values()]
    return sum(so for _, so in times), sum(nvl for nvl, _ in times)


def _dominant(terms: dict[str, float], step: float) -> tuple[str, ...]:
    """Terms from DOMINANT_SHARE of the step upward, largest first (always at least one)."""
    ranked = sorted(terms, key=lambda k: terms[k], reverse=True)
    big = tuple(k for k in ranked if terms[k] >= DOMINANT_SHARE * step)
    return big or (ranked[0],)


def performance(workload: Workload, layout: Layout, hw: Hardware, overlap: dict[str, float] | None = None,
                ) -> Performance:
    """Step time and every term of it. SPEC 4.2–4.6.

    step = max(T_comp + bubble + Σ_k exposed_k, Σ_k T_k^scale-out, Σ_k T_k^NVLink). The layout is assumed
    placeable (see `layout.placement_problem`); m = B/(d·b) is then an integer. Stages may hold a
    fractional number of layers: L/p is used as a real number.
    """
    params = parameter_count(workload.model)
    flops_model, flops_hw = flops_per_step(workload)
    n = layout.gpus
    micro = layout.microbatches(workload.global_batch_size)
    terms = compute_terms(workload, layout, hw, params, flops_hw, micro)
    bubble = bubble_s(terms, layout)
    phi = overlap if overlap is not None else {tc.name: tc.default_overlap for tc in TRAFFIC_CLASSES}
    ctx = StepContext(workload, layout, hw, params, micro, terms.compute_s, phi, terms.forward_s, terms.backward_s,
                      terms.gemm_s, terms.attention_s, terms.shared_expert_s)
    traffic = {tc.name: evaluate_class(tc, ctx) for tc in TRAFFIC_CLASSES}
    schedule = terms.compute_s + bubble + sum(t.exposed_s for t in traffic.values())
    so_busy, nvl_busy = link_busy_s(traffic, hw)
    step = max(schedule, so_busy, nvl_busy)
    capacity = step - schedule
    return Performance(
        params=params, flops_model=flops_model, flops_hardware=flops_hw, gpus=n, microbatches=micro,
        compute_s=terms.compute_s, bubble_s=bubble, traffic=traffic, step_time_s=step,
        memory_states_gb=memory_states_gb(workload, layout, params),
        memory_activations_gb=memory_activations_gb(workload, layout, micro),
        hbm_usable_gb=hw.hbm_usable_gb, peak_tflops=hw.peak_tflops,
        capacity_s=capacity, scaleout_busy_s=so_busy, nvlink_busy_s=nvl_busy, compute=terms, hw=hw,
        retiming=tuple((k, t.nvlink_bytes, t.scaleout_bytes, t.chi, t.pod_crossing,
                        t.steps.launches * LAUNCH_LATENCY_S + t.steps.nvlink_steps * hw.scaleup_step_latency_s,
                        t.steps.scaleout_steps, t.pieces, t.timing) for k, t in traffic.items()),
    )


# ------------------------------------------------------------------------------------ margins


def derated(hw: Hardware, bandwidth_derate: float) -> Hardware:
    """The same machine with (1 − δ) of its scale-out bandwidth (collectives and the all-to-all alike)."""
    if bandwidth_derate == 0:
        return hw
    keep = 1 - bandwidth_derate
    flat, hier = hw.alltoall_flat_efficiency, hw.alltoall_hierarchical_efficiency
    return replace(hw, nic_efficiency=hw.nic_efficiency * keep, alltoall_flat_efficiency=flat * keep if flat else None,
                   alltoall_hierarchical_efficiency=hier * keep if hier else None)


@dataclass(frozen=True)
class PointTerms:
    """The step-time terms of one evaluated layout re-timed on one machine, under a margin condition:
    the schedule's compute (T_comp + bubble), each class's window pieces a_i·T_k − W_i, and the busier
    link's time. The design space multiplies them by d for the optimisation model's rows."""

    compute_s: float
    pieces: dict[str, tuple[float, ...]]
    capacity_s: float

    @property
    def step_time_s(self) -> float:
        """max(compute + Σ_k max(0, max_i piece_ki), capacity)."""
        exposed = sum(max([0.0, *p]) for p in self.pieces.values())
        return max(self.compute_s + exposed, self.capacity_s)


def _rates(hw: Hardware, bandwidth_derate: float) -> tuple[float, float, float, float, float]:
    """(s per NVLink byte, s per scale-out byte, α per network step, o − 1, o_pod − 1) with (1 − δ) of the
    scale-out bandwidth."""
    return (1.0 / (hw.nvlink_effective_gbyte_s * GB),
            1.0 / (hw.scaleout_effective_gbyte_s * (1.0 - bandwidth_derate) * GB),
            hw.nic_step_latency_s, hw.oversubscription - 1.0, hw.above_pod_oversubscription - 1.0)


def _retimed(entry: tuple, hw: Hardware, bandwidth_derate: float, rates: tuple) -> tuple[float, float, float]:
    """(T_k, NVLink s, scale-out s) of one `Performance.retiming` entry on `hw` with (1 − δ) of its scale-out
    bandwidth: collectives inline (`hardware.transfer_s`, the hot path of the design space), any other timing
    (the all-to-all) through `traffic.TIMINGS` on the derated machine."""
    _, nvl_b, so_b, chi, chi_pod, latency, so_steps, _, timing = entry
    inv_nvl, inv_so, alpha_so, extra, pod_extra = rates
    if timing == "collective":
        so_s = so_b * inv_so * (1.0 + chi * extra) * (1.0 + chi_pod * pod_extra)
        nvl_s = nvl_b * inv_nvl
        return nvl_s + so_s + latency + so_steps * alpha_so, nvl_s, so_s
    nvl_s, so_s = link_times(timing, nvl_b, so_b, derated(hw, bandwidth_derate), chi, chi_pod)
    links = max(nvl_s, so_s) if TIMINGS[timing].concurrent else nvl_s + so_s
    return links + latency + so_steps * alpha_so, nvl_s, so_s


def point_terms(perf: Performance, hw: Hardware, compute_slowdown: float = 0.0, bandwidth_derate: float = 0.0,
                ) -> PointTerms:
    """Re-time the step's traffic on `hw` with compute (1 + σ) slower and scale-out bandwidth (1 − δ) of itself.
    SPEC 4.5 margins: every window is compute time, so it stretches with the compute; latency does not derate.

    T(σ, δ) = max((1 + σ)(T_comp + bubble) + Σ_k max(0, max_i a_i·T_k(δ) − (1 + σ)·W_i), T^so(δ), T^nvl)

    T_k is `traffic.retime` (`hardware.transfer_s`) on the derated machine, computed from `Performance.retiming`.
    """
    k = 1.0 + compute_slowdown
    rates = _rates(hw, bandwidth_derate)
    pieces, so, nvl = {}, 0.0, 0.0
    for entry in perf.retiming:
        time, nvl_s, so_s = _retimed(entry, hw, bandwidth_derate, rates)
        pieces[entry[0]] = tuple(a * time - w * k for a, w in entry[7])
        so += so_s
        nvl += nvl_s
    return PointTerms(k * (perf.compute_s + perf.bubble_s), pieces, max(so, nvl))


def step_time_on(perf: Performance, hw: Hardware, compute_slowdown: float = 0.0, bandwidth_derate: float = 0.0,
                 ) -> float:
    """`point_terms(...).step_time_s` without building the pieces (the design space's feasibility scan)."""
    k = 1.0 + compute_slowdown
    rates = _rates(hw, bandwidth_derate)
    exposed = so = nvl = 0.0
    for entry in perf.retiming:
        time, nvl_s, so_s = _retimed(entry, hw, bandwidth_derate, rates)
        worst = 0.0
        for a, w in entry[7]:
            value = a * time - w * k
            if value > worst:
                worst = value
        exposed += worst
        so += so_s
        nvl += nvl_s
    return max(k * (perf.compute_s + perf.bubble_s) + exposed, so, nvl)


def step_time_under(perf: Performance, compute_slowdown: float = 0.0, bandwidth_derate: float = 0.0) -> float:
    """The step time with compute (1 + σ) slower and scale-out bandwidth (1 − δ) of itself (`point_terms`)."""
    assert perf.hw is not None, "performance() keeps the hardware"
    return step_time_on(perf, perf.hw, compute_slowdown, bandwidth_derate)


def meets_target(perf: Performance, target_step_time_s: float, compute_slowdown: float = 0.0,
                 bandwidth_derate: float = 0.0, quantile_factor: float = 1.0) -> bool:
    """The step meets the target, and still does with the required margins (each on its own); with
    `robustness.quantile`, the step time times its regime's quantile factor k_q (perf/uncertainty.py) meets it."""
    limit = target_step_time_s * (1 + 1e-9)
    if perf.step_time_s * quantile_factor > limit:
        return False
    if compute_slowdown and step_time_under(perf, compute_slowdown=compute_slowdown) > limit:
        return False
    return not (bandwidth_derate and step_time_under(perf, bandwidth_derate=bandwidth_derate) > limit)


def _largest(ok, low: float, high: float) -> float:
    """The largest x in [low, high] with ok(x) for every x' ≤ x (first failure found on a grid, then bisected)."""
    grid = [low + (high - low) * i / 64 for i in range(65)]
    if not ok(grid[0]):
        return low
    last_ok = grid[0]
    for x in grid[1:]:
        if not ok(x):
            lo, hi = last_ok, x
            while hi - lo > MARGIN_TOLERANCE:
                mid = (lo + hi) / 2
                lo, hi = (mid, hi) if ok(mid) else (lo, mid)
            return lo
        last_ok = x
    return high


def margins(perf: Performance, target_step_time_s: float) -> dict[str, float]:
    """Slack to the target, and the largest uniform compute slowdown and scale-out bandwidth derate the design
    survives (each on its own; 1.0 bandwidth derate: no scale-out traffic). A design that misses the target has a
    negative slack and survives no slowdown (both margins 0)."""
    def meets(sigma: float = 0.0, delta: float = 0.0) -> bool:
        return step_time_under(perf, sigma, delta) <= target_step_time_s * (1 + 1e-9)

    slack = (target_step_time_s - perf.step_time_s) / target_step_time_s
    if not meets():
        return {"slack_fraction": slack, "compute_slowdown": 0.0, "bandwidth_derate": 0.0}
    compute = _largest(lambda x: meets(sigma=x), 0.0, MARGIN_CAP)
    bandwidth = 1.0 if perf.scaleout_bytes == 0 else _largest(lambda x: meets(delta=x), 0.0, 0.999)
    return {"slack_fraction": slack, "compute_slowdown": compute, "bandwidth_derate": bandwidth}


def tokens_per_s_per_gpu(workload: Workload, perf: Performance) -> float:
    """Throughput B·s / (step · N), the unit NeMo and Megatron-Bridge publish."""
    return workload.global_batch_size * workload.model.seq_len / (perf.step_time_s * perf.gpus)


__all__ = ["BY_NAME", "Performance", "PointTerms", "bubble_s", "compute_s", "margins", "meets_target", "performance",
           "point_terms", "step_time_on", "step_time_under", "tokens_per_s_per_gpu"]
