"""What the fabric's structure does to each traffic class (SPEC §4.4, §5.1): forwarding between
planes that no switch joins (multi-plane, rail-only) and the oversubscribed tier above the pods.

Both are per-class rules keyed by the class name (the names of `traffic.TRAFFIC_CLASSES`) with a
conservative default, so a new class gets its rule by one entry in each table.

**Cross-plane forwarding.** In a multi-plane or rail-only fabric a GPU's NIC reaches only the NICs
of its own plane. A scale-out byte between GPUs on different planes first crosses NVLink to a GPU
of the destination's plane (NCCL's PXN for point-to-point, DeepEP's NVLink forwarding for
all-to-all; docs/sources.md [F1][F6]) and leaves on that GPU's NIC: the NIC bytes are unchanged and
the NVLink bytes grow by f_k · scale-out bytes, f_k the share of the class's scale-out bytes that
changes plane (`CROSS_PLANE`):

| class | f_k | why |
|---|---|---|
| tp, cp, dp (dp_rs, dp_ag) | 0 | hierarchical collectives: the scale-out phase runs between GPUs at the same position of their domains, which share a plane |
| pp | 0 if S_pp = t·c·d is a multiple of the plane period, else 1 | neighbouring stages are S_pp ranks apart |
| ep (all-to-all) | (R − 1)/R | a destination is on the sender's plane with probability 1/R, R planes |
| any other class | 1 | every scale-out byte forwarded once (conservative) |

The plane period is the number of ranks between two GPUs at the same plane position: G_u for
rail-only (a plane is a GPU position of the domain) and for a domain that is not whole nodes, else
the GPUs per node (a plane is a NIC position of the node).

**Above-pod oversubscription.** With a down:up ratio o_pod at the spine of a 3-tier fabric, a class
whose groups do not sit inside one pod has its scale-out time multiplied by 1 + χ_pod·(o_pod − 1)
(`POD_CROSSING`). χ_pod = 0 when the group's ranks (stride × size consecutive ranks: t for tp, t·c
for cp, t·c·d for dp, the whole job for pp) fit evenly in a pod of `pod_domains` whole domains,
else 1; any other class crosses (conservative). The leaf's own oversubscription is applied by the
step-time model (`Hardware.oversubscription`), separately.
"""
from __future__ import annotations

from collections.abc import Callable

from ..integers import is_close_to_one
from .hardware import Hardware, above_pod_slowdown
from .layout import Layout, group_sizes, group_strides

Rule = Callable[[Layout, Hardware], float]


# ----------------------------------------------------------------------------------- cross-plane


def plane_period_gpus(layout: Layout, hw: Hardware) -> int:
    """Ranks between two GPUs at the same plane position: G_u when planes are domain positions
    (rail-only) or G_u is not whole nodes, else the GPUs per node."""
    g_u = layout.gpus_per_domain_used
    if hw.planes_by_domain_position or g_u % hw.gpus_per_node:
        return g_u
    return hw.gpus_per_node


def same_position(layout: Layout, hw: Hardware) -> float:
    """Hierarchical collectives: the scale-out phase stays on one plane."""
    return 0.0


def _in_one_domain(layout: Layout, group: str) -> bool:
    """The group has no scale-out traffic: one rank, or all its ranks in one NVLink domain."""
    size = group_sizes(layout)[group]
    return size == 1 or group_strides(layout)[group] * size <= layout.gpus_per_domain_used


def stride_rule(group: str) -> Rule:
    """Point-to-point between ranks one group stride apart: 0 if the stride is a multiple of the
    plane period (or the group never leaves its domain), else 1."""

    def rule(layout: Layout, hw: Hardware) -> float:
        if _in_one_domain(layout, group):
            return 0.0
        return 0.0 if group_strides(layout)[group] % plane_period_gpus(layout, hw) == 0 else 1.0

    return rule


def all_to_all(layout: Layout, hw: Hardware) -> float:
    """(R − 1)/R of an all-to-all's destinations are on another of the R planes."""
    return (hw.rail_planes - 1) / hw.rail_planes


def every_byte(layout: Layout, hw: Hardware) -> float:
    """Conservative default: every scale-out byte is forwarded once."""
    return 1.0


CROSS_PLANE: dict[str, Rule] = {
    "tp": same_position, "cp": same_position, "dp": same_position, "dp_rs": same_position, "dp_ag": same_position,
    "pp": stride_rule("pp"), "ep": all_to_all,
}
DEFAULT_CROSS_PLANE: Rule = every_byte


def cross_plane_share(name: str, layout: Layout, hw: Hardware) -> float:
    """f_k: the share of class `name`'s scale-out bytes that changes plane (0 with one plane)."""
    if hw.rail_planes <= 1:
        return 0.0
    return CROSS_PLANE.get(name, DEFAULT_CROSS_PLANE)(layout, hw)


def forwarded_nvlink_bytes(name: str, layout: Layout, hw: Hardware, scaleout_bytes: float) -> float:
    """Extra NVLink bytes per GPU = f_k · scale-out bytes (forwarded to the destination's plane)."""
    return cross_plane_share(name, layout, hw) * scaleout_bytes


# ----------------------------------------------------------------------------------- above the pods


def group_span_rule(group: str) -> Rule:
    """0 when the group's stride·size consecutive ranks fit evenly in one pod (or in one domain:
    no scale-out traffic), else 1."""

    def rule(layout: Layout, hw: Hardware) -> float:
        if _in_one_domain(layout, group):
            return 0.0
        pod_ranks = hw.pod_domains * layout.gpus_per_domain_used
        span = group_strides(layout)[group] * group_sizes(layout)[group]
        return 0.0 if pod_ranks > 0 and span <= pod_ranks and pod_ranks % span == 0 else 1.0

    return rule


def crosses(layout: Layout, hw: Hardware) -> float:
    """Conservative default: the class's traffic crosses the tier above the pods."""
    return 1.0


POD_CROSSING: dict[str, Rule] = {
    "tp": group_span_rule("tp"), "cp": group_span_rule("cp"), "dp": group_span_rule("dp"),
    "dp_rs": group_span_rule("dp"), "dp_ag": group_span_rule("dp"), "pp": group_span_rule("pp"),
}
DEFAULT_POD_CROSSING: Rule = crosses


def pod_crossing(name: str, layout: Layout, hw: Hardware) -> float:
    """χ_pod of class `name`: 1 when its traffic crosses the tier above the pods, else 0 (always 0
    when that tier is non-blocking)."""
    if is_close_to_one(hw.above_pod_oversubscription):
        return 0.0
    return POD_CROSSING.get(name, DEFAULT_POD_CROSSING)(layout, hw)


def above_pod_factor(chi_pod: float, hw: Hardware) -> float:
    """Scale-out time multiplier 1 + χ_pod·(o_pod − 1) (`hardware.above_pod_slowdown`, which
    `hardware.transfer_s` applies)."""
    return above_pod_slowdown(chi_pod, hw.above_pod_oversubscription)
