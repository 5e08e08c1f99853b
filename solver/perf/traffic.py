"""Traffic classes (SPEC §4.3–4.5): the one registry of what a training step sends, where, and
what of it the schedule can hide.

A class is one entry of `TRAFFIC_CLASSES`: its name (the key in `Performance.traffic`, in the JSON
and in every report column), how many bytes each GPU sends per step over NVLink and over the
scale-out fabric, and its overlap window rule. The rule returns *pieces* (a, W): the exposed time is

    exposed_k = max(0, max_i (a_i · T_k − W_i))

with T_k the class's transfer time on the hardware. Every piece is affine in d once multiplied by d
(for a fixed layout shape), which is what the optimisation model needs; the model reads the pieces
off `Performance.traffic` and never names a class. Adding a class (an expert-parallel all-to-all,
or data parallelism split into reduce-scatter and all-gather) is one entry here plus its physics:
reports, workbook and MILP follow from the registry.

Bytes are per GPU per step. Notation as in SPEC §4: b microbatch, s sequence, h hidden, β = 2 bytes.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..inputs.schema import Scenario, Workload
from .hardware import Hardware, alltoall_s, transfer_s
from .layout import Layout, ranks_in_domain
from .model import kv_hidden_size
from .moe import ep_bytes, ep_window_pieces, parameter_groups, tp_collectives

ACTIVATION_BYTES = 2  # β: activations are communicated and stored in bf16, also for fp8 GEMMs
GRAD_BYTES = 2  # β_grad: bf16 gradients
TP_ALLREDUCES_PER_LAYER = 4  # n_tp with sequence parallelism: 2 forward + 2 backward
TP_ALLREDUCES_FULL_RECOMPUTE = 2  # the recomputed forward repeats its 2


@dataclass(frozen=True)
class StepContext:
    """What a class's bytes and window rule may read: the workload, the layout, the hardware, and
    the step quantities computed before communication."""

    workload: Workload
    layout: Layout
    hw: Hardware
    params: int
    microbatches: int
    compute_s: float  # T_comp
    overlap: dict[str, float]  # φ_k per class (defaults with the scenario's `overlap:` applied)


Pieces = tuple[tuple[float, float], ...]  # (a_i, W_i): exposed = max(0, max_i a_i·T − W_i)


@dataclass(frozen=True)
class TrafficClass:
    """One kind of communication of a training step."""

    name: str
    label: str
    bytes: Callable[[StepContext], tuple[float, float]]  # (NVLink, scale-out) bytes per GPU per step
    window: Callable[[StepContext], Pieces]  # the overlap window rule
    default_overlap: float  # φ_k: share of T_comp the class may hide behind (v1 window rule)
    overlap_source: str
    timing: Callable[[StepContext], str] = lambda ctx: "collective"  # a key of TIMINGS: how bytes become time


@dataclass(frozen=True)
class ClassTraffic:
    """One class of one evaluated step: bytes, transfer time, its window pieces and what is exposed."""

    name: str
    nvlink_bytes: float
    scaleout_bytes: float
    time_s: float
    pieces: Pieces
    exposed_s: float
    timing: str = "collective"  # a key of TIMINGS, so `retime` times the bytes the same way

    @property
    def hidden_s(self) -> float:
        return self.time_s - self.exposed_s

    def to_dict(self) -> dict:
        return {"nvlink_bytes": self.nvlink_bytes, "scaleout_bytes": self.scaleout_bytes, "time_s": self.time_s,
                "exposed_s": self.exposed_s, "hidden_s": self.hidden_s,
                "window_s": max((w for _, w in self.pieces), default=0.0)}


def exposed_s(time_s: float, pieces: Pieces) -> float:
    """exposed = max(0, max_i (a_i·T − W_i)). SPEC 4.5."""
    return max([0.0] + [a * time_s - w for a, w in pieces])


# How a class's (NVLink, scale-out) bytes become seconds on a machine: collectives add the two
# times (SPEC 4.4); the expert-parallel all-to-all moves both at once at its own efficiencies (SPEC 4.7).
TIMINGS: dict[str, Callable[[float, float, Hardware], float]] = {
    "collective": transfer_s,
    "alltoall_flat": lambda nvl, so, hw: alltoall_s(nvl, so, hw, "flat"),
    "alltoall_hierarchical": lambda nvl, so, hw: alltoall_s(nvl, so, hw, "hierarchical"),
}


def evaluate_class(tc: TrafficClass, ctx: StepContext) -> ClassTraffic:
    nvlink, scaleout = tc.bytes(ctx)
    timing = tc.timing(ctx)
    time = TIMINGS[timing](nvlink, scaleout, ctx.hw)
    pieces = tc.window(ctx)
    return ClassTraffic(tc.name, nvlink, scaleout, time, pieces, exposed_s(time, pieces), timing)


def retime(traffic: ClassTraffic, hw: Hardware) -> float:
    """The same bytes timed on other hardware (another NIC, rail count or oversubscription)."""
    return TIMINGS[traffic.timing](traffic.nvlink_bytes, traffic.scaleout_bytes, hw)


# ----------------------------------------------------------------------------------- bytes


def collective_bytes(volume_factor: float, size: int, n_in: float, message_bytes: float) -> tuple[float, float]:
    """(NVLink, scale-out) bytes per GPU of a hierarchical collective. SPEC 4.4.

    nvlink   = κ·(n_in − 1)/n_in · M
    scaleout = κ·(n_out − 1)/n_out · M / n_in,   n_out = n / n_in
    κ = 2 for all-reduce, 1 for all-gather or reduce-scatter.
    """
    if size <= 1:
        return 0.0, 0.0
    n_out = size / n_in
    nvlink = volume_factor * (n_in - 1) / n_in * message_bytes
    scaleout = volume_factor * (n_out - 1) / n_out * message_bytes / n_in
    return nvlink, scaleout


def tp_bytes(ctx: StepContext) -> tuple[float, float]:
    """TP: m·(L/p)·n_tp·2·(t−1)/t·b·(s/c)·h·β per GPU, all over NVLink (t | G_u). SPEC 4.3.

    n_tp = 4 all-reduce equivalents per layer and microbatch (+2 with full recompute).
    """
    wl, lay = ctx.workload, ctx.layout
    m = wl.model
    message = lay.microbatch_size * m.seq_len / lay.cp * m.hidden_size * ACTIVATION_BYTES
    if m.moe is not None:  # MoE layers: attention, shared experts, and the routed experts over etp (SPEC 4.7)
        parts = [collective_bytes(2 * tc.count, tc.size, tc.size, tc.message)
                 for tc in tp_collectives(wl, lay, ctx.microbatches, message)]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    n_tp = TP_ALLREDUCES_PER_LAYER
    if wl.activation_recompute == "full":
        n_tp += TP_ALLREDUCES_FULL_RECOMPUTE
    per_layer = collective_bytes(2 * n_tp, lay.tp, lay.tp, message)
    layers = ctx.microbatches * m.layers / lay.pp
    return per_layer[0] * layers, per_layer[1] * layers


def cp_bytes(ctx: StepContext) -> tuple[float, float]:
    """CP: m·(L/p)·3·(c−1)/c·M, M = 2·b·s·(h_kv/t)·β (K and V gathered fwd and bwd, dK/dV
    reduce-scattered), split hierarchically over the cp group's domains. SPEC 4.3."""
    lay, m = ctx.layout, ctx.workload.model
    message = 2 * lay.microbatch_size * m.seq_len * kv_hidden_size(m) / lay.tp * ACTIVATION_BYTES
    n_in = ranks_in_domain(lay.cp, lay.tp, lay.gpus_per_domain_used)
    per_layer = collective_bytes(3, lay.cp, n_in, message)
    layers = ctx.microbatches * m.layers / lay.pp
    return per_layer[0] * layers, per_layer[1] * layers


def pp_bytes(ctx: StepContext) -> tuple[float, float]:
    """PP: 2·m·v·b·(s/c)·h·β/t per GPU (activations forward, gradients backward). SPEC 4.3.

    Over NVLink only when all p stages share a domain; otherwise over the scale-out fabric, since
    the slowest stage boundary sets the pace of the whole pipeline.
    """
    lay, m = ctx.layout, ctx.workload.model
    if lay.pp == 1:
        return 0.0, 0.0
    volume = (2 * ctx.microbatches * lay.vp * lay.microbatch_size * m.seq_len / lay.cp
              * m.hidden_size * ACTIVATION_BYTES / lay.tp)
    stride = lay.tp * lay.cp * lay.dp
    if ranks_in_domain(lay.pp, stride, lay.gpus_per_domain_used) == lay.pp:
        return volume, 0.0
    return 0.0, volume


def dp_bytes(ctx: StepContext) -> tuple[float, float]:
    """DP: κ·(d−1)/d·M with M = P/(t·p)·β_grad, κ = 2 (all-reduce, or reduce-scatter + all-gather
    of the distributed optimizer), κ = 3 for fsdp (one more parameter all-gather). SPEC 4.3.

    Mixture-of-Experts models sum it over their parameter groups (SPEC 4.7): the routed experts'
    shard over the edp expert-data-parallel ranks, the rest over the d ranks (moe.parameter_groups).
    """
    lay = ctx.layout
    kappa = 3 if ctx.workload.optimizer == "fsdp" else 2
    nvlink = scaleout = 0.0
    for group in parameter_groups(ctx.workload, lay, ctx.params):
        n_in = ranks_in_domain(group.size, group.stride, lay.gpus_per_domain_used)
        part = collective_bytes(kappa, group.size, n_in, group.shard * GRAD_BYTES)
        nvlink, scaleout = nvlink + part[0], scaleout + part[1]
    return nvlink, scaleout


def ep_class_bytes(ctx: StepContext) -> tuple[float, float]:
    """EP: the expert-parallel all-to-all (dispatch + combine, forward + backward, + recompute),
    split by where the ep group's ranks sit and by the dispatcher. SPEC 4.7, `moe.ep_bytes`."""
    if ctx.workload.model.moe is None:
        return 0.0, 0.0
    return ep_bytes(ctx.workload, ctx.layout)


def ep_window(ctx: StepContext) -> Pieces:
    """EP window rule: on the critical path unless the schedule overlaps it (behind the shared experts or
    another microbatch's compute), and an overlapped dispatcher's SMs slow the compute beside it:
    pieces (σ', 0), (1, (1 − σ')·W) (`moe.ep_window_pieces`). SPEC 4.7."""
    if ctx.workload.model.moe is None:
        return ((1.0, 0.0),)
    return ep_window_pieces(ctx.workload, ctx.layout, ctx.hw, ctx.compute_s)


def ep_timing(ctx: StepContext) -> str:
    return "alltoall_" + ctx.workload.expert_dispatch.dispatcher


# ----------------------------------------------------------------------------------- windows


def share_of_compute(name: str) -> Callable[[StepContext], Pieces]:
    """v1 window rule: the class hides behind φ_k · T_comp: one piece (1, φ_k·T_comp)."""

    def window(ctx: StepContext) -> Pieces:
        return ((1.0, ctx.overlap[name] * ctx.compute_s),)

    return window


# ----------------------------------------------------------------------------------- registry

# φ calibrated against the published runs (tests/test_calibration.py; docs/model.md has the fit):
TRAFFIC_CLASSES: tuple[TrafficClass, ...] = (
    TrafficClass("tp", "tensor parallel", tp_bytes, share_of_compute("tp"), 0.0,
                 "fit: Korthikanti Table 5 (A100, TP=8, no DP) and NeMo 24.07 TP=2..8 rows fit best with TP fully "
                 "exposed: the sequence-parallel all-gather/reduce-scatter sit on the critical path of each GEMM"),
    TrafficClass("cp", "context parallel", cp_bytes, share_of_compute("cp"), 0.0,
                 "fit: NeMo 24.07 LLAMA3-8B/70B (CP=2) fit best with the K/V exchange exposed (conservative)"),
    TrafficClass("pp", "pipeline parallel", pp_bytes, share_of_compute("pp"), 0.5,
                 "P2P sends run on their own stream beside the next microbatch; no calibration row is sensitive "
                 "to it (any 0.25..0.75 fits)"),
    TrafficClass("dp", "data parallel", dp_bytes, share_of_compute("dp"), 0.8,
                 "gradient reduce-scatter/all-gather hide behind backward (Megatron --overlap-grad-reduce, FSDP "
                 "prefetch); NeMo GPT3-5B (DP=64 over IB) and MosaicML FSDP rows fit for any 0.5..1.0"),
    TrafficClass("ep", "expert parallel", ep_class_bytes, ep_window, 0.0,
                 "on the critical path unless workload.expert_dispatch.overlap hides it behind the shared experts or "
                 "another microbatch's compute (docs/sources.md [M1] §3.2.1, [M3]); the SMs an overlapped "
                 "dispatcher holds slow the compute beside it", ep_timing),
)
CLASS_NAMES: tuple[str, ...] = tuple(tc.name for tc in TRAFFIC_CLASSES)
BY_NAME: dict[str, TrafficClass] = {tc.name: tc for tc in TRAFFIC_CLASSES}


def overlap_for(scenario: Scenario) -> dict[str, float]:
    """φ_k of every class: the registry default, or the scenario's `overlap:` value (0 is valid)."""
    values = {}
    for tc in TRAFFIC_CLASSES:
        override = getattr(scenario.overlap, tc.name, None)
        values[tc.name] = tc.default_overlap if override is None else override
    return values

DEFAULT_OVERLAP: dict[str, float] = {tc.name: tc.default_overlap for tc in TRAFFIC_CLASSES}
