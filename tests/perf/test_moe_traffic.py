"""The expert-parallel all-to-all (the `ep` traffic class), the expert groups of a layout, and the
properties the optimisation model relies on (SPEC §4.7, perf/moe.py, perf/traffic.py).

Expected bytes are worked out by hand here or reproduce the worked examples of the MoE research notes
(copied in docs/model.md §MoE "Worked examples": computed there by an independent script from the same
published configurations).
"""
from __future__ import annotations

from dataclasses import replace

import pytest
from moe_shapes import QWEN3_30B, QWEN3_235B, deepseek_v3, workload

from solver.perf import moe
from solver.perf.hardware import Hardware, alltoall_s, latency_s
from solver.perf.layout import Layout, group_sizes, group_strides, placement_problem
from solver.perf.step import performance
from solver.perf.traffic import BY_NAME, DEFAULT_OVERLAP, retime

GB = 1e9


def lay(t=1, p=1, d=8, ep=8, b=1, g=8, etp=1, v=1):
    return Layout(tp=t, cp=1, pp=p, vp=v, dp=d, microbatch_size=b, gpus_per_domain_used=g, ep=ep, etp=etp)


def hardware(**changes) -> Hardware:
    """Round numbers: 1000 TFLOP/s at η 0.5, ε 0.5, NVLink 900 GB/s (collectives 0.9, all-to-all 0.8), one
    400G NIC per GPU (50 GB/s, collectives 0.9, flat all-to-all 0.8, hierarchical 0.6), HBM 8 TB/s."""
    base = Hardware(gpu_id="g", peak_tflops=1000.0, compute_efficiency=0.5, hbm_usable_gb=180.0, nvlink_gbyte_s=900.0,
                    nvlink_efficiency=0.9, gpus_per_node=8, rails_per_node=8, nic_speed_gbps=400.0, nic_efficiency=0.9,
                    oversubscription=1.0, expert_efficiency=0.5, hbm_tbyte_s=8.0, alltoall_nvlink_efficiency=0.8,
                    alltoall_flat_efficiency=0.8, alltoall_hierarchical_efficiency=0.6)
    return replace(base, **changes)


# ----------------------------------------------------------------------------------- bytes


def test_deepseek_v3_h800_flat_and_hierarchical_bytes():
    """DeepSeek-V3 on 2048 H800 (worked example; [M1] §3.2): B = 15360, s = 4096, EP64 over 8 nodes, MTP, FP8
    dispatch. Tokens per GPU 15360·4096/2048 = 30,720; copies 30,720·59 MoE layers·8 experts; bytes per copy
    and hidden element 1 + 4/128 + 2 + 2 + 2 = 7.03125: V = 30,720·59·7168·8·7.03125 = 730.79 GB.
    Flat: NVLink 7/64 → 79.9 GB, scale-out 56/64 → 639.4 GB (worked example: 80 / 639).
    Hierarchical without a node limit: NVLink 7/8 → 639.4 GB; scale-out V/8·R, R = 7·[1 − C(224, 8)/C(256, 8)]
    = 4.632 other nodes per token → 423.2 GB (worked example: 423)."""
    model = deepseek_v3(mtp=1)
    flat = workload(model, batch=15360, expert_dispatch={"dispatcher": "flat", "dispatch_dtype": "fp8"})
    layout = lay(p=16, d=128, ep=64)
    nvl, so = moe.ep_bytes(flat, layout)
    total = 30720 * 59 * 7168 * 8 * 7.03125
    assert (nvl, so) == pytest.approx((total * 7 / 64, total * 56 / 64), rel=1e-12)
    assert (round(nvl / GB), round(so / GB)) == (80, 639)
    hier = workload(model, batch=15360, expert_dispatch={"dispatcher": "hierarchical", "dispatch_dtype": "fp8"})
    nvl, so = moe.ep_bytes(hier, layout)
    assert round(nvl / GB) == 639
    assert so / GB == pytest.approx(423.2, abs=0.1)


def test_node_limited_routing_caps_the_scale_out_copies():
    """Group-limited routing, 8 groups of 32 experts, top-4 groups, on 8 nodes of one group each: a token reaches
    M = 4 nodes, its own among them with probability 4/8, so R = 4·7/8 = 3.5 other nodes (uniform routing
    would reach 4.632): scale-out 730.79/8·3.5 = 319.7 GB. node_limit: 2 caps it at 2·7/8 = 1.75."""
    layout = lay(p=16, d=128, ep=64)
    grouped = workload(deepseek_v3(mtp=1, router_groups=8, router_group_top_k=4), batch=15360,
                       expert_dispatch={"dispatcher": "hierarchical", "dispatch_dtype": "fp8"})
    per_copy = 30720 * 59 * 7168 * 7.03125
    assert moe.ep_bytes(grouped, layout)[1] == pytest.approx(per_copy * 3.5, rel=1e-12)
    limited = workload(deepseek_v3(mtp=1, router_groups=8, router_group_top_k=4, node_limit=2), batch=15360,
                       expert_dispatch={"dispatcher": "hierarchical", "dispatch_dtype": "fp8"})
    assert moe.ep_bytes(limited, layout)[1] == pytest.approx(per_copy * 1.75, rel=1e-12)
    flat = workload(deepseek_v3(mtp=1, router_groups=8, router_group_top_k=4), batch=15360,
                    expert_dispatch={"dispatcher": "flat", "dispatch_dtype": "fp8"})
    assert moe.ep_bytes(flat, layout)[1] == pytest.approx(per_copy * 8 * 56 / 64, rel=1e-12)  # every copy travels


def test_nvl72_ep64_stays_on_nvlink():
    """DeepSeek-V3 on 256 GB200, B = 4096, EP64 inside one NVL72 (G_u = 64): 65,536 tokens per GPU,
    bf16 (2 + 2 + 2 + 2 bytes): V = 65,536·59·7168·8·8 = 1773.8 GB; 63/64 of it on NVLink = 1746.1 GB
    (worked example: 1746), nothing on the scale-out fabric."""
    wl = workload(deepseek_v3(mtp=1), batch=4096, expert_dispatch={"dispatcher": "hierarchical"})
    nvl, so = moe.ep_bytes(wl, lay(p=4, d=64, ep=64, g=64))
    assert so == 0.0
    assert nvl == pytest.approx(65536 * 59 * 7168 * 8 * 8 * 63 / 64, rel=1e-12)
    assert round(nvl / GB) == 1746


def test_qwen3_235b_ep32_over_four_nodes():
    """Qwen3-235B-A22B on 256 H100, B = 8192, TP2 PP8 EP32 (worked example): the ep group has stride etp = 1, so
    8 of its ranks share a node and it spans 4 nodes; 131,072 tokens per GPU, 94 MoE layers, h = 4096:
    V = 131,072·94·4096·8·8 = 3229.6 GB; flat: NVLink 7/32 → 706.5 GB, scale-out 24/32 → 2422.2 GB (worked example: 707 / 2422)."""
    wl = workload(QWEN3_235B, batch=8192)
    layout = lay(t=2, p=8, d=16, ep=32)
    assert moe.ep_domains(layout) == (8, 4)
    nvl, so = moe.ep_bytes(wl, layout)
    assert (round(nvl / GB), round(so / GB)) == (707, 2422)


def test_recompute_and_imbalance_scale_the_exchange():
    """Qwen3-30B-A3B, 8 GPUs, EP8 in one node: V = 8·4096/8 tokens·48·2048·8 copies·8 bytes·7/8 per GPU.
    Recomputing the MoE layer adds a forward pair (2 + 2 bytes: ×12/8); load imbalance u = 1.2 ×1.2."""
    base = workload(QWEN3_30B, batch=8)
    expected = 4096 * 48 * 2048 * 8 * 8 * 7 / 8
    assert moe.ep_bytes(base, lay())[0] == pytest.approx(expected, rel=1e-12)
    recomputed = workload(QWEN3_30B, batch=8, recompute_modules=["moe"])
    assert moe.ep_bytes(recomputed, lay())[0] == pytest.approx(expected * 12 / 8, rel=1e-12)
    skewed = workload({**QWEN3_30B, "moe": {**QWEN3_30B["moe"], "load_imbalance": 1.2}}, batch=8)
    assert moe.ep_bytes(skewed, lay())[0] == pytest.approx(expected * 1.2, rel=1e-12)


# ----------------------------------------------------------------------------------- time and windows


def test_alltoall_time_is_the_slower_of_its_two_parts():
    """The test hardware: NVLink 900·0.8 = 720 GB/s, scale-out 50 GB/s·0.8 (flat) = 40, ·0.6 (hierarchical) = 30.
    720 GB on NVLink and 80 GB on the NIC: flat max(1.0, 2.0) = 2.0 s; hierarchical max(1.0, 2.67) s."""
    hw = hardware()
    assert alltoall_s(720e9, 80e9, hw, "flat") == pytest.approx(2.0)
    assert alltoall_s(720e9, 80e9, hw, "hierarchical") == pytest.approx(80 / 30)
    assert alltoall_s(720e9, 0.0, hw, "flat") == pytest.approx(1.0)
    # half the rails: 25 GB/s per GPU; an oversubscribed leaf (2:1) halves it again for the ep class, whose
    # all-to-all crosses the leaf's uplinks (χ = 1, `traffic.BY_NAME["ep"].chi`, since the physics v2 merge)
    chi = BY_NAME["ep"].chi
    assert chi == 1.0
    assert alltoall_s(0.0, 80e9, replace(hw, rails_per_node=4, oversubscription=2.0), "flat", chi=chi) == pytest.approx(8.0)


def test_window_pieces_of_the_overlap_options():
    """overlap none: exposed = T_ep. batch_overlap with s = 0.15 of the SMs: σ' = 0.15/0.85; pieces (σ', 0) and
    (1, (1 − σ')·T_comp): an exchange shorter than the compute costs σ'·T_ep, a longer one T_ep − (1 − σ')·T_comp."""
    layout = lay()
    none = workload(QWEN3_30B, batch=8)
    assert moe.ep_window_pieces(none, layout, 10.0, 0.0) == ((1.0, 0.0),)
    batch = workload(QWEN3_30B, batch=8, expert_dispatch={"overlap": "batch_overlap", "overlap_sm_fraction": 0.15})
    sigma = 0.15 / 0.85
    pieces = moe.ep_window_pieces(batch, layout, 10.0, 0.0)
    assert [x for piece in pieces for x in piece] == pytest.approx([sigma, 0.0, 1.0, (1 - sigma) * 10.0])
    exposed = [max(a * t - w for a, w in pieces) for t in (2.0, 14.0)]
    assert exposed == pytest.approx([2.0 * sigma, 14.0 - (1 - sigma) * 10.0])
    assert moe.ep_window_pieces(batch, lay(ep=1, d=8), 10.0, 0.0) == ((1.0, 0.0),)  # nothing to overlap


def test_shared_expert_overlap_hides_behind_the_shared_experts():
    """DeepSeek-V3 forward FLOPs of the shared experts per token: 2·3·7168·2048·59 (58 MoE layers + MTP);
    × 3 passes, B·s = 4096 tokens, on 8 GPUs at 1000 TFLOP/s × 0.5; with no SMs held (s = 0) the window is
    all of it: pieces (0, 0) and (1, T_shared)."""
    wl = workload(deepseek_v3(mtp=1), batch=1, expert_dispatch={"overlap": "shared_expert", "overlap_sm_fraction": 0.0})
    t_shared = 3 * 2 * 3 * 7168 * 2048 * 59 * 4096 / (8 * 1000e12 * 0.5)
    assert moe.shared_expert_s(wl, lay(), hardware()) == pytest.approx(t_shared, rel=1e-12)
    pieces = moe.ep_window_pieces(wl, lay(), 99.0, moe.shared_expert_s(wl, lay(), hardware()))
    assert [x for piece in pieces for x in piece] == pytest.approx([0.0, 0.0, 1.0, t_shared])


def test_expert_compute_is_a_roofline_of_gemms_and_bytes():
    """Qwen3-30B-A3B, bf16, no recompute, 8 GPUs, the test hardware (P = 1000e12·0.5 FLOP/s, ε = 0.5, 8 TB/s):
    per token routed forward 3,623,878,656 FLOPs ×3; memory-bound bytes 8 copies·48 layers·(60·2048 + 18·768)
    = 52,494,336; the rest 3·(F_tok/3 − routed forward). T_comp = 4096 tokens/8 GPUs·(other/P + routed/(εP) + Q/BW)."""
    wl = workload(QWEN3_30B, batch=8, activation_recompute="none")
    f = moe.token_flops(wl.model)
    routed, other = 3 * f.routed, 3 * (f.total - f.routed)
    bytes_per_token = 8 * 48 * (60 * 2048 + 18 * 768)
    assert moe.routed_bytes_per_token(wl) == bytes_per_token
    per_token = other / 500e12 + routed / 250e12 + bytes_per_token / 8e12
    assert moe.compute_s(wl, lay(), hardware()) == pytest.approx(8 * 4096 / 8 * per_token, rel=1e-12)


# ----------------------------------------------------------------------------------- layout


def test_expert_groups_are_carved_out_of_the_data_parallel_ranks():
    """t = 2, c = 1, d = 16 per stage (32 ranks): etp 2 then ep 8 then edp = 32/16 = 2; strides 1, 2, 16."""
    layout = lay(t=2, p=2, d=16, ep=8, etp=2)
    assert (group_strides(layout)["etp"], group_strides(layout)["ep"], group_strides(layout)["edp"]) == (1, 2, 16)
    assert (group_sizes(layout)["etp"], group_sizes(layout)["ep"], group_sizes(layout)["edp"]) == (2, 8, 2)


@pytest.mark.parametrize(("layout", "model", "problem"), [
    (lay(ep=3, d=9), QWEN3_30B, "ep = 3 must divide the 128 experts"),
    (lay(ep=16, d=8), QWEN3_30B, "ep·etp = 16 must divide the tp·cp·dp = 8 ranks of a pipeline stage"),
    (lay(ep=8, d=8, etp=5), QWEN3_30B, "etp = 5 must divide the expert width 768"),
    (lay(ep=12, d=24, g=8), {**QWEN3_30B, "moe": {**QWEN3_30B["moe"], "experts": 96}}, "straddles NVLink domains"),
    (lay(ep=2, d=8), {k: v for k, v in QWEN3_30B.items() if k not in ("moe", "head_dim")}, "need a Mixture-of-Experts model"),
])
def test_unplaceable_expert_layouts(layout, model, problem):
    assert problem in placement_problem(layout, workload(model, batch=72), 8)


def test_placeable_expert_layouts():
    """EP64 inside one NVL72 at G_u = 64 (the published recipes) and EP32 over 4 HGX nodes."""
    assert placement_problem(lay(p=4, d=64, ep=64, g=64), workload(deepseek_v3(), batch=64), 72) is None
    assert placement_problem(lay(t=2, p=8, d=16, ep=32), workload(QWEN3_235B, batch=64), 8) is None


def _bandwidth_s(traffic, hw) -> float:
    """A class's time without its latency (launches and ring steps)."""
    s = traffic.steps
    return retime(traffic, hw) - latency_s(hw, s.launches, s.nvlink_steps, s.scaleout_steps)


@pytest.mark.parametrize("dispatcher", ["flat", "hierarchical"])
@pytest.mark.parametrize("overlap", ["none", "batch_overlap"])
def test_d_times_every_term_is_affine_in_d(dispatcher, overlap):
    """The MILP multiplies the step-time row by d (SPEC §7): with t, c, p, ep fixed and the stage spanning whole
    domains (t·c·d ≥ G_u), d·T_comp, d·bubble, d·(each window piece's bandwidth part) and d·memory are affine
    in d. Qwen3-235B, EP32 (4 HGX nodes), d = 32, 64, 128: equal second differences vanish. (Since the physics
    v2 merge, collective latency — DP buckets of max(40M, 1M·d) parameters — is not affine in d; the design
    space evaluates every d exactly, so only the bandwidth part is checked here.)"""
    wl = workload(QWEN3_235B, batch=1024, expert_dispatch={"dispatcher": dispatcher, "overlap": overlap})
    hw = hardware()
    perfs = {d: performance(wl, lay(t=2, p=4, d=d, ep=32), hw, DEFAULT_OVERLAP) for d in (32, 64, 128)}
    series = {
        "compute": lambda q: q.compute_s + q.bubble_s,
        "memory": lambda q: q.memory_per_gpu_gb,
        **{f"{k}{i}": (lambda q, k=k, i=i: q.traffic[k].pieces[i][0] * _bandwidth_s(q.traffic[k], hw)
                       - q.traffic[k].pieces[i][1])
           for k in ("tp", "pp", "dp_rs", "dp_ag", "ep") for i in range(len(perfs[32].traffic[k].pieces))},
    }
    for name, f in series.items():
        v = {d: d * f(q) for d, q in perfs.items()}
        slope1, slope2 = (v[64] - v[32]) / 32, (v[128] - v[64]) / 64
        assert slope1 == pytest.approx(slope2, rel=1e-9, abs=1e-9), name


def test_same_layout_gb200_vs_b200_gap_is_the_all_to_all():
    """DeepSeek-V3, 256 GPUs, TP1 PP4 EP64 on both platforms (catalog hardware): on NVL72 the ep group sits in one
    domain, on HGX it spans 8 nodes. Compute per step differs only by the GPUs' peak·η (physics v3: one fitted
    Blackwell GEMM efficiency 0.45 on both, so GB200's 5000 vs B200's 4500 TFLOP/s: ≤ 11 %; v2: 3 %) with one
    expert efficiency for both; the step-time gap is the exposed all-to-all (≥ 90 % of it)."""
    import solver
    from solver.perf.hardware import hardware_for

    cat = solver.load_catalog()
    sc = solver.load_scenario({"name": "x", "workload": {"model": deepseek_v3(mtp=1), "global_batch_size": 4096,
                                                          "precision": "fp8", "recompute_modules": ["mla_up_proj"],
                                                          "expert_dispatch": {"dispatcher": "hierarchical"}},
                               "target": {"step_time_s": 1.0}}).scenario
    gb = performance(sc.workload, lay(p=4, d=64, ep=64, g=64), hardware_for(sc, cat, "gb200-nvl72", "cx7-ndr", 4, 1.0))
    b = performance(sc.workload, lay(p=4, d=64, ep=64, g=8), hardware_for(sc, cat, "dgx-b200", "cx7-ndr", 8, 1.0))
    assert 1.0 <= b.compute_s / gb.compute_s <= 5000 / 4500 * 1.01
    gap = b.step_time_s - gb.step_time_s
    ep_gap = b.traffic["ep"].exposed_s - gb.traffic["ep"].exposed_s
    assert gap > 0.2 * gb.step_time_s  # the HGX run is much slower …
    assert ep_gap >= 0.9 * gap  # … because of the all-to-all
