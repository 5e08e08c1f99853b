"""Traffic classes (SPEC §4.3–4.5): the one registry of what a training step sends, where, and
what of it the schedule can hide.

A class is one entry of `TRAFFIC_CLASSES`: its name (the key in `Performance.traffic`, in the JSON
and in every report column), how many bytes each GPU sends per step over NVLink and over the
scale-out fabric, how many collective launches and ring steps it makes (latency), the share χ of
its scale-out traffic that crosses an oversubscribed leaf layer, and its overlap window rule. The
rule returns *pieces* (a, W): the exposed time is

    exposed_k = max(0, max_i (a_i · T_k − W_i))

with T_k the class's transfer time on the hardware (bytes over bandwidth plus latency). Windows are
schedule quantities (compute time of given microbatches and passes, φ_k shares of them); they never
depend on the NIC, rails or oversubscription, so the design space re-times the bytes per NIC with
`retime` and keeps the pieces. The optimisation model reads d·(a_i·T_k − W_i) at every allowed d
and never names a class. Adding a class (an expert-parallel all-to-all) is one entry here plus its
physics: reports, workbook and MILP follow from the registry.

Bytes are per GPU per step. Notation as in SPEC §4: b microbatch, s sequence, h hidden, β = 2 bytes,
m = B/(d·b) microbatches, τ_f and τ_b one microbatch's forward and backward compute on one GPU.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

from ..inputs.schema import Scenario, Workload
from .crossing import forwarded_nvlink_bytes, pod_crossing
from .hardware import Hardware, alltoall_link_s, collective_link_s, latency_s
from .layout import Layout, ranks_in_domain
from .model import kv_hidden_size
from .moe import ParamGroup, ep_bytes, ep_window_pieces, parameter_groups, tp_collectives

ACTIVATION_BYTES = 2  # β: activations are communicated and stored in bf16, also for fp8 GEMMs
GRAD_BYTES = {"fp32": 4, "bf16": 2}  # β_grad: the gradient reduce's wire type (workload.grad_reduce_dtype)
PARAM_GATHER_BYTES = 2  # bf16 parameters all-gathered; 1 with workload.fp8_param_gather
TP_ALLREDUCES_PER_LAYER = 4  # n_tp with sequence parallelism: 2 forward + 2 backward (each = all-gather + reduce-scatter)
TP_ALLREDUCES_FULL_RECOMPUTE = 2  # the recomputed forward repeats its 2
CP_COLLECTIVES_PER_LAYER = 3  # K,V all-gathered forward and backward, dK,dV reduce-scattered
DP_BUCKET_PARAMS_MIN = 40e6  # Megatron-LM DDP bucket: max(40M, 1M·d) parameters
DP_BUCKET_PARAMS_PER_RANK = 1e6


@dataclass(frozen=True)
class StepContext:
    """What a class's bytes, latency and window rule may read: the workload, the layout, the hardware,
    and the step's compute quantities (NIC-independent)."""

    workload: Workload
    layout: Layout
    hw: Hardware
    params: int
    microbatches: int
    compute_s: float  # T_comp
    overlap: dict[str, float]  # φ_k per class (defaults with the scenario's `overlap:` applied)
    forward_s: float = 0.0  # τ_f: one microbatch's forward on one GPU
    backward_s: float = 0.0  # τ_b: one microbatch's backward (with recompute) on one GPU
    gemm_s: float = 0.0  # linear GEMMs of the whole step on one GPU (what TP comm overlap could use)
    attention_s: float = 0.0  # attention core of the whole step on one GPU (what CP overlaps with)
    shared_expert_s: float = 0.0  # MoE: the shared experts' compute of the whole step (what the all-to-all may hide behind)

    @cached_property
    def dp_groups(self) -> list[tuple[ParamGroup, float]]:
        """The data-parallel parameter groups and their ranks per domain (`moe.parameter_groups`): dense models one
        group, P/(t·p) over the d ranks at stride t·c; Mixture-of-Experts models also the routed experts,
        P_exp/(etp·ep·p) over the edp expert-data-parallel ranks at stride etp·ep (their gradients reduce and their
        parameters gather over that group; SPEC 4.7). Made once per step: every DP class reads them."""
        lay = self.layout
        return [(g, ranks_in_domain(g.size, g.stride, lay.gpus_per_domain_used))
                for g in parameter_groups(self.workload, lay, self.params)]


Pieces = tuple[tuple[float, float], ...]  # (a_i, W_i): exposed = max(0, max_i a_i·T − W_i)


class Steps(NamedTuple):
    """Latency counts of one class per step: collective launches, ring steps over NVLink and over the network.
    (A named tuple, as `ClassTraffic`: immutable, and made about 3× faster than a frozen dataclass; the design
    space makes several per evaluated point.)"""

    launches: float = 0.0
    nvlink_steps: float = 0.0
    scaleout_steps: float = 0.0


NO_STEPS = Steps()


def _no_latency(ctx: StepContext) -> Steps:
    return NO_STEPS


@dataclass(frozen=True)
class TrafficClass:
    """One kind of communication of a training step."""

    name: str
    label: str
    bytes: Callable[[StepContext], tuple[float, float]]  # (NVLink, scale-out) bytes per GPU per step
    window: Callable[[StepContext], Pieces]  # the overlap window rule
    default_overlap: float  # φ_k: share of the class's schedule window it can hide behind
    overlap_source: str
    latency: Callable[[StepContext], Steps] = _no_latency  # launches and ring steps per step
    chi: float = 0.0  # share of its scale-out traffic crossing an oversubscribed leaf layer (SPEC §4.4)
    timing: Callable[[StepContext], str] = lambda ctx: "collective"  # a key of TIMINGS: how bytes become time


class ClassTraffic(NamedTuple):
    """One class of one evaluated step: bytes, latency counts, transfer time, window pieces, exposure."""

    name: str
    nvlink_bytes: float
    scaleout_bytes: float
    time_s: float
    pieces: Pieces
    exposed_s: float
    chi: float = 0.0
    steps: Steps = NO_STEPS
    pod_crossing: float = 0.0  # χ_pod: 1 when the class crosses the tier above the pods (perf/crossing.py)
    timing: str = "collective"  # a key of TIMINGS, so `retime` times the bytes the same way

    @property
    def hidden_s(self) -> float:
        return self.time_s - self.exposed_s

    @property
    def window_s(self) -> float:
        """The time the class can hide behind: W_i/a_i of the piece that sets its exposure (the largest when
        it is fully hidden)."""
        spans = [(a * self.time_s - w, w / a) for a, w in self.pieces if a > 0]
        if not spans:
            return 0.0
        return max(spans)[1] if self.exposed_s > 0 else max(w for _, w in spans)

    def to_dict(self) -> dict:
        return {"nvlink_bytes": self.nvlink_bytes, "scaleout_bytes": self.scaleout_bytes, "time_s": self.time_s,
                "exposed_s": self.exposed_s, "hidden_s": self.hidden_s, "window_s": self.window_s,
                "pieces": [{"a": a, "window_s": w} for a, w in self.pieces],
                "collective_launches": self.steps.launches, "oversubscription_share": self.chi,
                "above_pod_crossing": self.pod_crossing}


def exposed_s(time_s: float, pieces: Pieces) -> float:
    """exposed = max(0, max_i (a_i·T − W_i)). SPEC 4.5."""
    return max([0.0] + [a * time_s - w for a, w in pieces])


@dataclass(frozen=True)
class Timing:
    """How a class's (NVLink, scale-out) bytes become seconds on a machine: `link_s` gives each link's time
    (the scale-out part with the class's leaf χ and pod χ_pod); `concurrent` says whether the two run at
    the same time (max) or one after the other (sum). Latency (`Steps`) adds to either."""

    link_s: Callable[[float, float, Hardware, float, float], tuple[float, float]]
    concurrent: bool


# Collectives run their NVLink and scale-out phases one after the other (SPEC 4.4); the expert-parallel
# all-to-all moves both at once, at its own efficiencies (SPEC 4.7).
TIMINGS: dict[str, Timing] = {
    "collective": Timing(lambda nvl, so, hw, chi, pod: collective_link_s(nvl, so, hw, chi=chi, chi_pod=pod), False),
    "alltoall_flat": Timing(lambda nvl, so, hw, chi, pod: alltoall_link_s(nvl, so, hw, "flat", chi=chi, chi_pod=pod),
                            True),
    "alltoall_hierarchical": Timing(
        lambda nvl, so, hw, chi, pod: alltoall_link_s(nvl, so, hw, "hierarchical", chi=chi, chi_pod=pod), True),
}


def link_times(timing: str, nvlink_bytes: float, scaleout_bytes: float, hw: Hardware, chi: float = 0.0,
               chi_pod: float = 0.0) -> tuple[float, float]:
    """(NVLink s, scale-out s) the class's bytes keep each link busy (the capacity rows' terms)."""
    return TIMINGS[timing].link_s(nvlink_bytes, scaleout_bytes, hw, chi, chi_pod)


def class_time_s(timing: str, nvlink_bytes: float, scaleout_bytes: float, hw: Hardware, chi: float, chi_pod: float,
                 steps: Steps) -> float:
    """T_k: the two links' times summed (collective) or the slower one (all-to-all), plus latency."""
    rule = TIMINGS[timing]
    nvl, so = rule.link_s(nvlink_bytes, scaleout_bytes, hw, chi, chi_pod)
    links = max(nvl, so) if rule.concurrent else nvl + so
    return links + latency_s(hw, steps.launches, steps.nvlink_steps, steps.scaleout_steps)


def retime(traffic: ClassTraffic, hw: Hardware) -> float:
    """The same bytes and collective steps timed on other hardware (another NIC, rail count or oversubscription)
    of the same fabric structure (planes and pods decide the forwarded bytes and the pod crossing)."""
    return class_time_s(traffic.timing, traffic.nvlink_bytes, traffic.scaleout_bytes, hw, traffic.chi,
                        traffic.pod_crossing, traffic.steps)


def evaluate_class(tc: TrafficClass, ctx: StepContext) -> ClassTraffic:
    nvlink, scaleout = tc.bytes(ctx)
    # multi-plane / rail-only: scale-out bytes to another plane cross NVLink first (perf/crossing.py)
    nvlink += forwarded_nvlink_bytes(tc.name, ctx.layout, ctx.hw, scaleout)
    chi_pod = pod_crossing(tc.name, ctx.layout, ctx.hw)
    steps = tc.latency(ctx) if nvlink + scaleout > 0 else NO_STEPS
    pieces = tc.window(ctx)
    timing = tc.timing(ctx)
    time = class_time_s(timing, nvlink, scaleout, ctx.hw, tc.chi, chi_pod, steps)
    return ClassTraffic(tc.name, nvlink, scaleout, time, pieces, exposed_s(time, pieces), tc.chi, steps, chi_pod,
                        timing)


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


def ring_steps(launches: float, size: int, n_in: float, rounds: int = 1) -> Steps:
    """NCCL's ring latency (docs/sources.md [N1]): per launch n − 1 steps (2(n − 1) for all-reduce: rounds = 2),
    of which n_out − 1 cross the network (n_out = n/n_in domains) and the rest stay on NVLink."""
    if size <= 1 or launches <= 0:
        return NO_STEPS
    n_out = size / n_in
    return Steps(launches, launches * rounds * (size - n_out), launches * rounds * (n_out - 1))


def _layers_per_step(ctx: StepContext) -> float:
    """m·L/p: layer-microbatches one GPU runs per step."""
    return ctx.microbatches * ctx.workload.model.layers / ctx.layout.pp


def _tp_collectives_per_layer(workload: Workload) -> int:
    n_tp = TP_ALLREDUCES_PER_LAYER + (TP_ALLREDUCES_FULL_RECOMPUTE if workload.activation_recompute == "full" else 0)
    return n_tp


def tp_bytes(ctx: StepContext) -> tuple[float, float]:
    """TP: m·(L/p)·n_tp·2·(t−1)/t·b·(s/c)·h·β per GPU, all over NVLink (t | G_u). SPEC 4.3.

    n_tp = 4 all-reduce equivalents per layer and microbatch (+2 with full recompute).
    """
    wl, lay = ctx.workload, ctx.layout
    m = wl.model
    message = lay.microbatch_size * m.seq_len / lay.cp * m.hidden_size * ACTIVATION_BYTES
    if m.moe is not None:  # MoE layers: attention, shared experts, and the routed experts over etp (SPEC 4.7)
        parts = [collective_bytes(2 * c.count, c.size, c.size, c.message)
                 for c in tp_collectives(wl, lay, ctx.microbatches, message)]
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    per_layer = collective_bytes(2 * _tp_collectives_per_layer(wl), lay.tp, lay.tp, message)
    layers = _layers_per_step(ctx)
    return per_layer[0] * layers, per_layer[1] * layers


def tp_latency(ctx: StepContext) -> Steps:
    """Each all-reduce equivalent is an all-gather and a reduce-scatter: 2·n_tp launches per layer and
    microbatch, each with t − 1 NVLink steps."""
    if ctx.workload.model.moe is not None:  # the MoE collectives of `tp_bytes`, each its own ring
        lay = ctx.layout
        message = lay.microbatch_size * ctx.workload.model.seq_len / lay.cp * ctx.workload.model.hidden_size
        return _sum_steps([ring_steps(2 * c.count, c.size, c.size)
                           for c in tp_collectives(ctx.workload, lay, ctx.microbatches, message * ACTIVATION_BYTES)])
    launches = 2 * _tp_collectives_per_layer(ctx.workload) * _layers_per_step(ctx)
    return ring_steps(launches, ctx.layout.tp, ctx.layout.tp)


def _cp_in_domain(lay: Layout) -> float:
    return ranks_in_domain(lay.cp, lay.tp, lay.gpus_per_domain_used)


def cp_bytes(ctx: StepContext) -> tuple[float, float]:
    """CP: m·(L/p)·3·(c−1)/c·M, M = 2·b·s·(h_kv/t)·β (K and V gathered fwd and bwd, dK/dV
    reduce-scattered), split hierarchically over the cp group's domains. SPEC 4.3."""
    lay, m = ctx.layout, ctx.workload.model
    message = 2 * lay.microbatch_size * m.seq_len * kv_hidden_size(m) / lay.tp * ACTIVATION_BYTES
    per_layer = collective_bytes(CP_COLLECTIVES_PER_LAYER, lay.cp, _cp_in_domain(lay), message)
    layers = _layers_per_step(ctx)
    return per_layer[0] * layers, per_layer[1] * layers


def cp_latency(ctx: StepContext) -> Steps:
    """3 collectives per layer and microbatch, each a ring over the c ranks."""
    lay = ctx.layout
    return ring_steps(CP_COLLECTIVES_PER_LAYER * _layers_per_step(ctx), lay.cp, _cp_in_domain(lay))


def _pp_on_nvlink(lay: Layout) -> bool:
    """All p stages share one domain (the slowest boundary paces the pipeline otherwise)."""
    return ranks_in_domain(lay.pp, lay.tp * lay.cp * lay.dp, lay.gpus_per_domain_used) == lay.pp


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
    if _pp_on_nvlink(lay):
        return volume, 0.0
    return 0.0, volume


def pp_latency(ctx: StepContext) -> Steps:
    """2·m·v point-to-point messages, each a launch and one step (NVLink or network)."""
    lay = ctx.layout
    messages = 2 * ctx.microbatches * lay.vp
    if _pp_on_nvlink(lay):
        return Steps(messages, messages, 0.0)
    return Steps(messages, 0.0, messages)


def _param_gather_bytes(wl: Workload) -> int:
    return 1 if wl.fp8_param_gather else PARAM_GATHER_BYTES


def _fsdp_gathers(wl: Workload) -> int:
    """Parameter all-gathers per microbatch under fsdp: forward and backward (resharded), or forward only."""
    return 2 if wl.fsdp_reshard_after_forward else 1


def dp_rs_bytes(ctx: StepContext) -> tuple[float, float]:
    """dp_rs: the gradient reduction at β_grad (workload.grad_reduce_dtype), summed over the parameter groups.
    SPEC 4.3, 4.7.

    distributed: one reduce-scatter of the group's shard per step (κ = 1); replicated: one all-reduce (κ = 2);
    fsdp: a reduce-scatter per microbatch (m of them, per layer).
    """
    wl = ctx.workload
    kappa = 2 if wl.optimizer == "replicated" else 1
    count = ctx.microbatches if wl.optimizer == "fsdp" else 1
    nvl = so = 0.0
    for group, n_in in ctx.dp_groups:
        part = collective_bytes(kappa, group.size, n_in, group.shard * GRAD_BYTES[wl.grad_reduce_dtype])
        nvl, so = nvl + part[0] * count, so + part[1] * count
    return nvl, so


def dp_ag_bytes(ctx: StepContext) -> tuple[float, float]:
    """dp_ag: the parameter all-gather at 2 bytes (1 with fp8_param_gather), summed over the parameter groups.
    SPEC 4.3, 4.7.

    distributed: one all-gather of the group's shard per step; replicated: none (its all-reduce is dp_rs);
    fsdp: per microbatch, forward and backward gathers (one without resharding after the forward).
    """
    wl = ctx.workload
    if wl.optimizer == "replicated":
        return 0.0, 0.0
    count = ctx.microbatches * _fsdp_gathers(wl) if wl.optimizer == "fsdp" else 1
    nvl = so = 0.0
    for group, n_in in ctx.dp_groups:
        part = collective_bytes(1, group.size, n_in, group.shard * _param_gather_bytes(wl))
        nvl, so = nvl + part[0] * count, so + part[1] * count
    return nvl, so


def dp_launches(ctx: StepContext, group: ParamGroup | None = None) -> float:
    """Collective launches of one DP reduction or gather pass of a parameter group (default: the data-parallel
    group, P/(t·p) over d for a dense model): fsdp one per layer of the stage; otherwise Megatron's buckets,
    ⌈shard / max(40M, 1M·size)⌉."""
    if group is None:
        group = ctx.dp_groups[0][0]
    if ctx.workload.optimizer == "fsdp":
        return ctx.workload.model.layers / ctx.layout.pp
    bucket = max(DP_BUCKET_PARAMS_MIN, DP_BUCKET_PARAMS_PER_RANK * group.size)
    return math.ceil(group.shard / bucket)


def _sum_steps(parts: list[Steps]) -> Steps:
    return Steps(sum(p.launches for p in parts), sum(p.nvlink_steps for p in parts), sum(p.scaleout_steps for p in parts))


def dp_rs_latency(ctx: StepContext) -> Steps:
    wl = ctx.workload
    passes = ctx.microbatches if wl.optimizer == "fsdp" else 1
    rounds = 2 if wl.optimizer == "replicated" else 1
    return _sum_steps([ring_steps(dp_launches(ctx, g) * passes, g.size, n_in, rounds) for g, n_in in ctx.dp_groups])


def dp_ag_latency(ctx: StepContext) -> Steps:
    wl = ctx.workload
    if wl.optimizer == "replicated":
        return NO_STEPS
    passes = ctx.microbatches * _fsdp_gathers(wl) if wl.optimizer == "fsdp" else 1
    return _sum_steps([ring_steps(dp_launches(ctx, g) * passes, g.size, n_in) for g, n_in in ctx.dp_groups])


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
    return ep_window_pieces(ctx.workload, ctx.layout, ctx.compute_s, ctx.shared_expert_s)


def ep_timing(ctx: StepContext) -> str:
    return "alltoall_" + ctx.workload.expert_dispatch.dispatcher


# ----------------------------------------------------------------------------------- windows


def tp_window(ctx: StepContext) -> Pieces:
    """TP with sequence parallelism sits on the GEMM critical path: it hides only behind ψ of the step's
    linear GEMMs (TP comm overlap: userbuffers, async TP), exposed_tp = max(0, T_tp − ψ·T_gemm). ψ is the
    stack's for the GPU generation, or the scenario's overlap.tp (`stacks.tp_overlap_share`, carried by the
    Hardware); an overlap map given directly (tests) counts too: ψ = max(φ_tp, hw.tp_overlap)."""
    return ((1.0, max(ctx.overlap["tp"], ctx.hw.tp_overlap) * ctx.gemm_s),)


def cp_window(ctx: StepContext) -> Pieces:
    """The CP ring overlaps the attention core of its own layer: φ_cp of the step's attention time."""
    return ((1.0, ctx.overlap["cp"] * ctx.attention_s),)


def pp_window(ctx: StepContext) -> Pieces:
    """1F1B (v = 1): the sends block: exposed = 2·(m + p − 1)·t_msg = (1 + (p − 1)/m)·T_pp.
    Interleaved (v > 1): p2p overlaps compute, 2·m·v·max(0, t_msg − φ·τ/(2v)) + 2·(p − 1)·t_msg, with
    T_pp = 2·m·v·t_msg: pieces ((p − 1)/(m·v), 0) and (1 + (p − 1)/(m·v), φ·m·τ). SPEC 4.5."""
    lay, m = ctx.layout, ctx.microbatches
    if lay.vp == 1:
        return ((1.0 + (lay.pp - 1) / m, 0.0),)
    fill = (lay.pp - 1) / (m * lay.vp)
    tau = ctx.forward_s + ctx.backward_s
    return ((fill, 0.0), (1.0 + fill, ctx.overlap["pp"] * m * tau))


def _chunk_pieces(ctx: StepContext, phi: float, tau_pass: float) -> Pieces:
    """Megatron's overlapped DP collective over v model chunks: the k-th chunk from the end can start when its
    last microbatch's pass starts, ((k − 1)·p + 1) chunk-passes before the end: pieces
    (k/v, φ·((k − 1)·p + 1)·τ_pass/v), k = 1..v (v = 1: (1, φ·τ_pass)). SPEC 4.5."""
    v, p = ctx.layout.vp, ctx.layout.pp
    return tuple((k / v, phi * ((k - 1) * p + 1) * tau_pass / v) for k in range(1, v + 1))


def _fsdp_backward_share(wl: Workload) -> float:
    """x: the backward gathers' share of the backward's fsdp bytes (gathers and reduce-scatters cross the same
    group, so their times have the same ratio on any NIC)."""
    if not wl.fsdp_reshard_after_forward:
        return 0.0
    gather, grad = _param_gather_bytes(wl), GRAD_BYTES[wl.grad_reduce_dtype]
    return gather / (gather + grad)


def dp_rs_window(ctx: StepContext) -> Pieces:
    """distributed / replicated: the reduce-scatter overlaps only the backward of the last microbatch of each
    chunk (`_chunk_pieces` with τ_b). fsdp: per-layer reduce-scatters overlap the backward of every
    microbatch, which they share with the backward gathers: (1, φ·(1 − x)·m·τ_b)."""
    phi = ctx.overlap["dp_rs"]
    if ctx.workload.optimizer == "fsdp":
        return ((1.0, phi * (1 - _fsdp_backward_share(ctx.workload)) * ctx.microbatches * ctx.backward_s),)
    return _chunk_pieces(ctx, phi, ctx.backward_s)


def dp_ag_window(ctx: StepContext) -> Pieces:
    """distributed: the parameter all-gather overlaps only the forward of the first microbatch of each chunk
    (`_chunk_pieces` with τ_f). fsdp: per-layer prefetch behind the previous layer's compute: the
    forward half behind the forward, the backward half behind x of the backward, max(0, T/2 − φ·m·τ_f) +
    max(0, T/2 − φ·x·m·τ_b) as three pieces (one piece, behind the forward, without resharding)."""
    phi, wl = ctx.overlap["dp_ag"], ctx.workload
    if wl.optimizer != "fsdp":
        return _chunk_pieces(ctx, phi, ctx.forward_s)
    fwd = phi * ctx.microbatches * ctx.forward_s
    if not wl.fsdp_reshard_after_forward:
        return ((1.0, fwd),)
    bwd = phi * _fsdp_backward_share(wl) * ctx.microbatches * ctx.backward_s
    return ((0.5, fwd), (0.5, bwd), (1.0, fwd + bwd))


# ----------------------------------------------------------------------------------- registry

TRAFFIC_CLASSES: tuple[TrafficClass, ...] = (
    TrafficClass("tp", "tensor parallel", tp_bytes, tp_window, 0.0,
                 "sequence-parallel all-gather/reduce-scatter sit on the critical path of each GEMM (v1 fit: Korthikanti "
                 "Table 5); set overlap.tp for TP comm overlap", tp_latency),
    TrafficClass("cp", "context parallel", cp_bytes, cp_window, 1.0,
                 "the K/V ring overlaps the attention core of its layer (TransformerEngine CP)", cp_latency),
    TrafficClass("pp", "pipeline parallel", pp_bytes, pp_window, 1.0,
                 "1F1B sends block; interleaved sends overlap the next chunk's compute (Megatron overlap_p2p_comm)",
                 pp_latency, chi=1.0),
    TrafficClass("dp_rs", "data parallel: gradient reduce-scatter", dp_rs_bytes, dp_rs_window, 1.0,
                 "Megatron --overlap-grad-reduce: the last microbatch's backward of each chunk; fsdp: every backward",
                 dp_rs_latency),
    TrafficClass("dp_ag", "data parallel: parameter all-gather", dp_ag_bytes, dp_ag_window, 1.0,
                 "Megatron --overlap-param-gather: the first microbatch's forward of each chunk; fsdp: per-layer prefetch",
                 dp_ag_latency),
    TrafficClass("ep", "expert parallel", ep_class_bytes, ep_window, 0.0,
                 "on the critical path unless workload.expert_dispatch.overlap hides it behind the shared experts or "
                 "another microbatch's compute (docs/sources.md [M1] §3.2.1, [M3]); the SMs an overlapped "
                 "dispatcher holds slow the compute beside it", chi=1.0, timing=ep_timing),
)
CLASS_NAMES: tuple[str, ...] = tuple(tc.name for tc in TRAFFIC_CLASSES)
BY_NAME: dict[str, TrafficClass] = {tc.name: tc for tc in TRAFFIC_CLASSES}


def overlap_for(scenario: Scenario) -> dict[str, float]:
    """φ_k of every class: the registry default, or the scenario's `overlap:` value (0 is valid); `overlap.dp`
    sets dp_rs and dp_ag unless they are given on their own."""
    values = {}
    for tc in TRAFFIC_CLASSES:
        override = getattr(scenario.overlap, tc.name, None)
        if override is None and tc.name.startswith("dp_"):
            override = getattr(scenario.overlap, "dp", None)
        values[tc.name] = tc.default_overlap if override is None else override
    return values


DEFAULT_OVERLAP: dict[str, float] = {tc.name: tc.default_overlap for tc in TRAFFIC_CLASSES}
