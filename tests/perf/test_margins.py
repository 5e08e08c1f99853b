"""Margins (SPEC §4.5: slack, the largest compute slowdown and bandwidth derate a design survives) and the
calibration-coverage flags (SPEC §10)."""
import pytest
from test_step_model import LLAMA3_70B, NO_OVERLAP, hgx_h100, layout, workload

from solver.perf.coverage import uncalibrated
from solver.perf.step import margins, meets_target, performance, step_time_under

ALL_IN = {"tp": 0.0, "cp": 1.0, "pp": 1.0, "dp_rs": 1.0, "dp_ag": 1.0}


def test_compute_only_margin_is_the_slack_ratio():
    # one GPU, nothing to communicate: step = T_comp, so the largest slowdown is target/T_comp − 1 and any bandwidth
    # derate is survived (no scale-out traffic: 1.0)
    perf = performance(workload(LLAMA3_70B, 1), layout(), hgx_h100(), NO_OVERLAP)
    target = 1.25 * perf.step_time_s
    m = margins(perf, target)
    assert m["slack_fraction"] == pytest.approx(0.2)
    assert m["compute_slowdown"] == pytest.approx(0.25, abs=2e-4)
    assert m["bandwidth_derate"] == 1.0


def test_step_time_under_stretches_compute_and_windows_and_slows_the_network():
    # σ: compute and every window (compute time) × (1 + σ); δ: scale-out time ÷ (1 − δ), latency unchanged
    w = workload(LLAMA3_70B, 32, activation_recompute="none")
    perf = performance(w, layout(t=8, d=4), hgx_h100(rails_per_node=1), ALL_IN)
    assert step_time_under(perf) == pytest.approx(perf.step_time_s)
    slow = step_time_under(perf, compute_slowdown=0.5)
    tp, rs, ag = perf.traffic["tp"], perf.traffic["dp_rs"], perf.traffic["dp_ag"]
    # TP (t = 8, NVLink, exposed: window 0) is unchanged by either
    exposed = tp.time_s + max(0.0, rs.time_s - 1.5 * rs.window_s) + max(0.0, ag.time_s - 1.5 * ag.window_s)
    assert slow == pytest.approx(1.5 * perf.compute_s + exposed)
    derated = step_time_under(perf, bandwidth_derate=0.5)  # n_in = 1: all DP bytes on the network, no latency here
    rs_net = rs.scaleout_bytes / 6.25e9  # 1 × 400G per 8 GPUs = 6.25 GB/s; the rest of T_rs is launch latency
    ag_net = ag.scaleout_bytes / 6.25e9
    exposed = (tp.time_s + max(0.0, rs.time_s + rs_net - rs.window_s) + max(0.0, ag.time_s + ag_net - ag.window_s))
    assert derated == pytest.approx(max(perf.compute_s + exposed, 2 * perf.scaleout_busy_s))


def test_demanded_margins_make_a_design_fail():
    perf = performance(workload(LLAMA3_70B, 1), layout(), hgx_h100(), NO_OVERLAP)
    target = 1.05 * perf.step_time_s
    assert meets_target(perf, target)
    assert meets_target(perf, target, compute_slowdown=0.04)
    assert not meets_target(perf, target, compute_slowdown=0.06)


def test_a_design_that_misses_survives_no_slowdown():
    perf = performance(workload(LLAMA3_70B, 1), layout(), hgx_h100(), NO_OVERLAP)
    m = margins(perf, 0.5 * perf.step_time_s)
    assert m == {"slack_fraction": pytest.approx(-1.0), "compute_slowdown": 0.0, "bandwidth_derate": 0.0}


def test_coverage_flags_what_no_calibration_row_covers():
    w = workload(LLAMA3_70B, 32, activation_recompute="none")
    perf = performance(w, layout(t=8, d=4), hgx_h100(rails_per_node=1, gpu_id="b200"), ALL_IN)
    flags = uncalibrated(hgx_h100(rails_per_node=1, gpu_id="b200"), layout(t=8, d=4), perf, "bf16")
    text = " ".join(flags)
    # Blackwell BF16: no published row; the flag names the regime and where the interval comes from (v3)
    assert "no 4+ published runs in dense·megatron·b200·bf16·" in text and "interval from dense·megatron·" in text
    # issue 24: fewer NICs than GPUs is no flag (Fire-Flyer 2, BLOOM and fms-fsdp ran that way); the network
    # load caveat (perf/network_load.py, tests/perf/test_network_load.py) replaces it
    assert "fewer scale-out NICs" not in text
    assert "exposed data-parallel traffic" in text
    hw = hgx_h100(gpu_id="h100-sxm")
    calibrated = performance(w, layout(t=8, d=4), hw, ALL_IN)
    assert uncalibrated(hw, layout(t=8, d=4), calibrated, "bf16") == []
    over = hgx_h100(gpu_id="h100-sxm", oversubscription=2.0)
    assert any("oversubscribed" in f for f in uncalibrated(over, layout(t=8, d=4), calibrated, "bf16"))
