"""What the fabric's structure does to the traffic classes (solver/perf/crossing.py; SPEC §4.4, §5.1):
cross-plane forwarding in multi-plane and rail-only fabrics, and the oversubscribed tier above the
pods. Every expected number is worked by hand, or is a published figure named by its
docs/sources.md entry ([F3] rail-only, [F8] Llama 3).
"""
from __future__ import annotations

import dataclasses

import pytest
from test_step_model import NO_OVERLAP, hgx_h100, layout, workload

import solver
from solver.inputs.schema import Scenario, TransformerShape
from solver.perf.crossing import (
    above_pod_factor,
    cross_plane_share,
    forwarded_nvlink_bytes,
    plane_period_gpus,
    pod_crossing,
)
from solver.perf.hardware import hardware_for, transfer_s
from solver.perf.step import performance
from solver.perf.traffic import retime

SHAPE = TransformerShape(layers=8, hidden_size=8192, ffn_hidden_size=28672, attention_heads=64, kv_heads=8,
                         vocab_size=128256, seq_len=8192)


def planes(n: int, **kw):
    return hgx_h100(rail_planes=n, **kw)


# ------------------------------------------------------------------------------- cross-plane rules


def test_hierarchical_collectives_stay_on_their_plane():
    # tp, cp and dp (and the dp_rs / dp_ag split) run their scale-out phase between GPUs at the same
    # position of their domains: nothing is forwarded, whatever the layout.
    lay = layout(t=2, c=2, d=8, p=2)
    for name in ("tp", "cp", "dp", "dp_rs", "dp_ag"):
        assert cross_plane_share(name, lay, planes(8)) == 0.0


def test_pipeline_neighbours_change_plane_unless_the_stride_is_a_node():
    # 8-GPU nodes, one NIC per GPU (8 planes): stages are S_pp = t·c·d ranks apart.
    # t = 4, d = 1: S = 4 — rank 4 of node 0 talks to rank 0 of node 1, another plane → 1.
    assert cross_plane_share("pp", layout(t=4, p=4), planes(8)) == 1.0
    # t = 8: S = 8, same GPU position of the next node → 0.
    assert cross_plane_share("pp", layout(t=8, p=4), planes(8)) == 0.0
    # t = 2, p = 4: the 8 ranks sit in one domain → NVLink only, nothing to forward.
    assert cross_plane_share("pp", layout(t=2, p=4), planes(8)) == 0.0
    # one plane (the fat tree): never.
    assert cross_plane_share("pp", layout(t=4, p=4), planes(1)) == 0.0


def test_rail_only_planes_are_domain_positions():
    # NVL72 (4 GPUs per tray) using G_u = 64 of 72: t = 16, d = 1, p = 8: S = 16.
    # Multi-plane: a plane is a NIC position of the tray, period 4; 16 % 4 = 0 → same plane.
    # Rail-only: a rail is a GPU position of the rack, period 64; 16 % 64 ≠ 0 → forwarded.
    lay = layout(t=16, p=8, g_u=64)
    multi = hgx_h100(gpus_per_node=4, rail_planes=4)
    rail = hgx_h100(gpus_per_node=4, rail_planes=72, planes_by_domain_position=True)
    assert (plane_period_gpus(lay, multi), plane_period_gpus(lay, rail)) == (4, 64)
    assert (cross_plane_share("pp", lay, multi), cross_plane_share("pp", lay, rail)) == (0.0, 1.0)
    # A domain that is not whole nodes (8-GPU nodes, G_u = 4): the period is G_u.
    assert plane_period_gpus(layout(t=1, g_u=4), planes(8)) == 4


def test_all_to_all_and_unknown_classes():
    # ep: a destination is on the sender's plane with probability 1/R → (R − 1)/R = 7/8 forwarded.
    assert cross_plane_share("ep", layout(), planes(8)) == pytest.approx(7 / 8)
    # a class without an entry: every scale-out byte forwarded once (conservative default)
    assert cross_plane_share("a-new-class", layout(), planes(8)) == 1.0
    assert forwarded_nvlink_bytes("a-new-class", layout(), planes(8), 1e9) == 1e9
    assert forwarded_nvlink_bytes("a-new-class", layout(), planes(1), 1e9) == 0.0


def test_forwarding_costs_what_the_rail_only_paper_measured():
    # [F3]: all-to-all through forwarding costs 8.2–11.2 % more completion time. On the shipped HGX
    # H100 (NVLink 450 GB/s × 0.82 = 369 GB/s; 8 × 400G NICs: 50 GB/s × 0.92 = 46 GB/s per GPU) with
    # 8 planes, 7/8 of the bytes take one more NVLink hop: 0.875 · 46 / 369 = +10.9 %.
    sc = Scenario(name="x", workload=workload(SHAPE, 8), target={"step_time_s": 1.0})  # no efficiency overrides
    hw = hardware_for(sc, solver.load_catalog(), "hgx-h100", "cx7-ndr", 8, 1.0)
    assert (hw.nvlink_effective_gbyte_s, hw.scaleout_effective_gbyte_s) == pytest.approx((369.0, 46.0))
    hw = dataclasses.replace(hw, rail_planes=8)
    scaleout = 1e9
    extra = transfer_s(forwarded_nvlink_bytes("ep", layout(), hw, scaleout), 0.0, hw) / transfer_s(0.0, scaleout, hw)
    assert extra == pytest.approx(0.875 * 46 / 369)
    assert 0.082 <= extra <= 0.112


def test_forwarded_bytes_enter_the_step_time():
    # t = 4, p = 4, d = 1 (2 nodes), B = 16, b = 1: m = 16 microbatches. PP bytes per GPU
    # 2·m·v·b·s·h·β/t = 2·16·8192·8192·2/4 = 1,073,741,824, all on the scale-out fabric (stages span
    # nodes). On 8 planes they also cross NVLink once: +1,073,741,824 NVLink bytes, +1.0737e9/450e9 s.
    wl = workload(SHAPE, 16)
    lay = layout(t=4, p=4)
    plain = performance(wl, lay, planes(1), NO_OVERLAP).traffic
    multi = performance(wl, lay, planes(8), NO_OVERLAP).traffic
    volume = 2 * 16 * 8192 * 8192 * 2 / 4
    assert plain["pp"].scaleout_bytes == multi["pp"].scaleout_bytes == volume
    assert multi["pp"].nvlink_bytes - plain["pp"].nvlink_bytes == volume
    assert multi["pp"].time_s - plain["pp"].time_s == pytest.approx(volume / 450e9)
    assert multi["tp"].time_s == plain["tp"].time_s


# ------------------------------------------------------------------------------- above the pods


def llama3_pods(**kw):
    """Llama 3 [F8]: pods of 3,072 GPUs = 384 eight-GPU domains, 1:7 above them."""
    return hgx_h100(above_pod_oversubscription=7.0, pod_domains=384, **kw)


def test_llama3_keeps_data_parallelism_inside_a_pod():
    # Llama 3 405B on 16,384 GPUs: tp 8 · pp 16 · dp 128. A dp group spans t·c·d = 1,024 consecutive
    # ranks, and 3,072 % 1,024 = 0: every group sits inside one pod → 0. The pipeline spans the whole
    # job (16,384 > 3,072) → crosses → 1. tp stays inside a server.
    lay = layout(t=8, p=16, d=128)
    hw = llama3_pods()
    assert [pod_crossing(n, lay, hw) for n in ("tp", "cp", "dp", "dp_rs", "pp")] == [0.0, 0.0, 0.0, 0.0, 1.0]
    assert pod_crossing("a-new-class", lay, hw) == 1.0  # default: crosses
    assert above_pod_factor(1.0, hw) == 7.0 and above_pod_factor(0.0, hw) == 1.0
    # dp 256: span 2,048 does not divide 3,072 (groups straddle pods) → 1; dp 96: 768 divides → 0.
    assert pod_crossing("dp", layout(t=8, p=16, d=256), hw) == 1.0
    assert pod_crossing("dp", layout(t=8, p=16, d=96), hw) == 0.0
    # pods not made of whole domains (0): every class that leaves its domain crosses.
    assert pod_crossing("dp", lay, hgx_h100(above_pod_oversubscription=7.0)) == 1.0
    # a non-blocking tier above the pods: nothing to pay.
    assert pod_crossing("pp", lay, hgx_h100(pod_domains=384)) == 0.0


def test_pod_crossing_slows_only_the_crossing_class():
    # Same layout: the pipeline's scale-out bandwidth time × 7, data parallelism unchanged.
    # (Physics v2 merge: T_pp also carries NCCL launch latency, which the tier above the pods does not
    # multiply; so the difference is 6 × the bytes over bw_so = 8·400/8/8 = 50 GB/s per GPU.)
    wl = workload(SHAPE, 2048)
    lay = layout(t=8, p=8, d=128)
    plain = performance(wl, lay, hgx_h100(), NO_OVERLAP).traffic
    pods = performance(wl, lay, llama3_pods(), NO_OVERLAP).traffic
    assert plain["pp"].nvlink_bytes == 0 and plain["pp"].scaleout_bytes > 0
    assert pods["pp"].time_s - plain["pp"].time_s == pytest.approx(6 * plain["pp"].scaleout_bytes / 50e9)
    assert pods["dp_rs"].time_s == plain["dp_rs"].time_s and pods["dp_ag"].time_s == plain["dp_ag"].time_s
    # Re-timing the same bytes on another NIC keeps the crossing: equal to evaluating there.
    other = dict(nic_speed_gbps=200.0, nic_efficiency=0.9)
    again = performance(wl, lay, llama3_pods(**other), NO_OVERLAP).traffic["pp"].time_s
    assert retime(pods["pp"], llama3_pods(**other)) == pytest.approx(again)
