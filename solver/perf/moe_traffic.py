"""The expert-parallel all-to-all of a Mixture-of-Experts model (SPEC §4.7) and the groups its gradients and
tensor-parallel traffic run over (notation of perf/moe.py, which re-exports them)."""
from __future__ import annotations

from dataclasses import dataclass
from math import comb

from ..inputs.schema import MoeShape, Workload
from .layout import Layout, ranks_in_domain
from .moe_counts import (
    layer_counts,
    load_factor,
    moe_recomputed,
    moe_shape,
    parameter_counts,
)

DISPATCH_BYTES = {"bf16": 2.0, "fp8": 1.0 + 4.0 / 128}  # FP8 with one fp32 scale per 128 values ([M2] §2.3.2)
COMBINE_BYTES = 2.0  # combine (and both backward exchanges) in bf16


# ----------------------------------------------------------------------------------- all-to-all


def exchange_bytes_per_copy(workload: Workload) -> float:
    """Σβ: bytes per hidden element and token copy over one step's exchanges: dispatch β_d + combine 2
    forward, 2 + 2 backward, and β_d + 2 again when the MoE layer is recomputed ([M6], [M2] §2.3.2)."""
    beta_d = DISPATCH_BYTES[workload.expert_dispatch.dispatch_dtype]
    total = beta_d + COMBINE_BYTES + 2 * COMBINE_BYTES
    return total + (beta_d + COMBINE_BYTES if moe_recomputed(workload) else 0.0)


def node_limit(moe: MoeShape, domains: int) -> float:
    """M_eff, the most domains a token can reach: `node_limit`, and with group-limited routing (G
    groups, top g) g·⌈D/G⌉ (a group spans D/G domains when G < D, else lies inside one); ≤ D."""
    limit = float(domains)
    if moe.node_limit is not None:
        limit = min(limit, moe.node_limit)
    if moe.router_groups is not None and moe.router_group_top_k is not None:
        limit = min(limit, moe.router_group_top_k * -(-domains // moe.router_groups))
    return limit


def remote_domains(moe: MoeShape, domains: int) -> float:
    """R, the other domains one token's k experts land in, expected under uniform routing:
    R = (D − 1)·[1 − C(E − E/D, k)/C(E, k)], capped by M_eff·(D − 1)/D when routing is node-limited
    (M_eff domains chosen, the token's own among them with probability M_eff/D)."""
    if domains <= 1:
        return 0.0
    e, k = moe.experts, moe.top_k
    per_domain = e // domains
    uniform = (domains - 1) * (1 - comb(e - per_domain, k) / comb(e, k))
    limit = node_limit(moe, domains)
    return min(uniform, limit * (domains - 1) / domains)


def ep_domains(layout: Layout) -> tuple[int, int]:
    """(n_in, D): ranks of one ep group (stride etp) per NVLink domain, and the domains it spans."""
    n_in = int(round(ranks_in_domain(layout.ep, layout.etp, layout.gpus_per_domain_used)))
    return n_in, layout.ep // n_in


def ep_bytes(workload: Workload, layout: Layout) -> tuple[float, float]:
    """(NVLink, scale-out) all-to-all bytes per GPU per step (SPEC 4.7, docs/model.md §MoE):
    V = (B·s/N)·L'_m·h·Σβ per token copy; k_eff = k·u_eff copies per token.
    flat:          NVLink V·k_eff·(n_in − 1)/ep,  scale-out V·k_eff·(ep − n_in)/ep
    hierarchical:  NVLink V·k_eff·(n_in − 1)/n_in, scale-out V·R·u_eff (one copy per other domain)."""
    if layout.ep == 1:
        return 0.0, 0.0
    moe, m = moe_shape(workload.model), workload.model
    tokens = workload.global_batch_size * m.seq_len / layout.gpus
    per_copy = tokens * layer_counts(m).moe_with_mtp * m.hidden_size * exchange_bytes_per_copy(workload)
    load = load_factor(moe)
    copies = moe.top_k * load
    n_in, domains = ep_domains(layout)
    if workload.expert_dispatch.dispatcher == "flat":
        return per_copy * copies * (n_in - 1) / layout.ep, per_copy * copies * (layout.ep - n_in) / layout.ep
    return per_copy * copies * (n_in - 1) / n_in, per_copy * remote_domains(moe, domains) * load


def sm_penalty(workload: Workload) -> float:
    """σ' = s/(1 − s): compute slows by this share of the time an overlapped dispatcher runs beside it,
    holding s of the SMs (`overlap_sm_fraction`); 0 without overlap (nothing runs beside it)."""
    dispatch = workload.expert_dispatch
    if dispatch.overlap == "none":
        return 0.0
    return dispatch.overlap_sm_fraction / (1.0 - dispatch.overlap_sm_fraction)


def ep_window_pieces(workload: Workload, layout: Layout, compute: float, shared_expert: float,
                     ) -> tuple[tuple[float, float], ...]:
    """The all-to-all's window pieces (a_i, W_i), exposed = max_i (a_i·T_ep − W_i) (SPEC 4.5, 4.7):
    (σ', 0) and (1, (1 − σ')·W). With W the time it can hide behind (0 for overlap none: on the
    critical path; the shared experts' compute of the step for shared_expert; T_comp for batch_overlap,
    [M1] §3.2.1, [M3]): T_ep ≤ W costs σ'·T_ep (compute slowed while the dispatcher holds SMs), a longer
    exchange T_ep − W + σ'·W. Windows are compute time: never NIC-dependent."""
    overlap = workload.expert_dispatch.overlap
    if overlap == "none" or layout.ep == 1:
        return ((1.0, 0.0),)
    window = compute if overlap == "batch_overlap" else shared_expert
    penalty = sm_penalty(workload)
    return ((penalty, 0.0), (1.0, (1.0 - penalty) * window))


# ----------------------------------------------------------------------------------- groups


@dataclass(frozen=True)
class ParamGroup:
    """Parameters one GPU holds and the group that holds the same shard (for gradients and the
    optimizer): `shard` weights per GPU, a group of `size` ranks at rank stride `stride`."""

    shard: float
    size: int
    stride: int


_GROUPS: dict[int, tuple[Layout, Workload, float, tuple[ParamGroup, ...]]] = {}  # id(layout) → `parameter_groups`
MAX_GROUPS = 50_000  # layouts remembered (a design space's evaluated ones); then it starts again


def parameter_groups(workload: Workload, layout: Layout, params: float) -> tuple[ParamGroup, ...]:
    """Dense models: P/(t·p) over the d data-parallel ranks (stride t·c). MoE ([M10], docs/model.md §MoE):
    routed experts P_exp/(etp·ep·p) over the edp expert-data-parallel ranks (stride etp·ep), the rest
    (P_stored − P_exp)/(t·p) over the d ranks. Kept per layout object (the memory, the compute and every
    data-parallel class of one evaluation ask for it; each entry holds its layout and workload, so an id is
    never reused while it lives)."""
    hit = _GROUPS.get(id(layout))
    if hit is not None and hit[0] is layout and hit[1] is workload and hit[2] == params:
        return hit[3]
    if len(_GROUPS) >= MAX_GROUPS:
        _GROUPS.clear()
    groups = _GROUPS[id(layout)] = (layout, workload, params, _parameter_groups(workload, layout, params))
    return groups[3]


def _parameter_groups(workload: Workload, layout: Layout, params: float) -> tuple[ParamGroup, ...]:
    t, p = layout.tp, layout.pp
    dense = ParamGroup(params / (t * p), layout.dp, t * layout.cp)
    if workload.model.moe is None:
        return (dense,)
    counts = parameter_counts(workload.model)
    rest = ParamGroup((counts.stored - counts.routed) / (t * p), layout.dp, t * layout.cp)
    experts = ParamGroup(counts.routed / (layout.etp * layout.ep * p), layout.edp, layout.etp * layout.ep)
    return (rest, experts)


@dataclass(frozen=True)
class TpCollective:
    """`count` all-reduce equivalents per step of `message` bytes over a group of `size` ranks inside one domain."""

    count: float
    size: int
    message: float


def tp_collectives(workload: Workload, layout: Layout, microbatches: int, message: float) -> list[TpCollective]:
    """Tensor-parallel traffic of an MoE model, per GPU per step (m·/p of the per-layer counts):
    attention 2 all-reduce equivalents per layer (+1 with full recompute), dense MLP and shared experts
    2 (+1); routed experts exchange over the etp group 2 (+1 if recomputed) of etp·k_eff·M/t (the
    tokens of the ep rank's etp peers are gathered); M = b·(s/c)·h·β as for dense layers."""
    m, moe = workload.model, moe_shape(workload.model)
    counts = layer_counts(m)
    per_pass = 3 if workload.activation_recompute == "full" else 2
    mlp_layers = counts.dense_with_mtp + (counts.moe_with_mtp if moe.shared_experts else 0)
    per_stage = microbatches / layout.pp
    out = [TpCollective(per_stage * per_pass * (m.layers + moe.mtp_layers + mlp_layers), layout.tp, message)]
    if layout.etp > 1:
        routed_pass = 3 if moe_recomputed(workload) else 2
        routed_message = message * layout.etp * moe.top_k * load_factor(moe) / layout.tp
        out.append(TpCollective(per_stage * routed_pass * counts.moe_with_mtp, layout.etp, routed_message))
    return out
