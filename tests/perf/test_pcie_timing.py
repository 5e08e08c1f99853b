"""Traffic that crosses PCIe instead of NVLink (issue 46): the per-class model times the scale-up bytes at the
platform's own path (bandwidth × measured fraction, ring-step latency), and TP over PCIe is fully exposed.

Hand-worked (no solver output copied): a 2-layer model, h = 4096, s = 8192, microbatch 1, one microbatch (B = 1),
tp = 8 on one 8-GPU server, selective recompute (n_tp = 4 all-reduce equivalents per layer and microbatch):

    M = b·s·h·β = 1 · 8192 · 4096 · 2 = 67,108,864 B
    one all-reduce equivalent: 2·(t − 1)/t·M = 2 · 7/8 · 67,108,864 = 117,440,512 B
    per step: 4 · 2 layers · 1 microbatch = 8 of them = 939,524,096 B over the scale-up path
    launches 2·n_tp·(L/p)·m = 16 (an all-gather and a reduce-scatter each), each t − 1 = 7 ring steps: 112 steps

PCIe server (RTX PRO 6000, docs/sources.md [P1][P3]): 64 GB/s · 0.61 = 39.04 GB/s, step 5.7 µs:
    T_tp = 939,524,096 / 39.04e9 + 16 · 8.4 µs + 112 · 5.7 µs = 0.0240657 + 0.0001344 + 0.0006384 = 0.0248385 s
HGX H200 (NVLink 4, docs/sources.md [51][N1]): 450 GB/s · 0.82 = 369 GB/s, step 3.4 µs:
    T_tp = 939,524,096 / 369e9 + 0.0001344 + 112 · 3.4 µs = 0.0025461 + 0.0001344 + 0.0003808 = 0.0030613 s
"""
from __future__ import annotations

import pytest

from solver.inputs.schema import Scenario
from solver.inputs.stacks import resolve_stack
from solver.perf.hardware import hardware_for
from solver.perf.layout import Layout, placement_problem
from solver.perf.step import performance
from solver.perf.traffic import overlap_for

MODEL = dict(layers=2, hidden_size=4096, ffn_hidden_size=14336, ffn_type="swiglu", attention_heads=32, kv_heads=8,
             vocab_size=32000, seq_len=8192)
LAYOUT = Layout(tp=8, cp=1, pp=1, vp=1, dp=1, microbatch_size=1, gpus_per_domain_used=8)


def _perf(catalog, platform: str, nic: str, rails: int):
    scenario = resolve_stack(Scenario.model_validate({
        "name": "pcie-tp", "target": {"step_time_s": 1.0},
        "workload": {"model": MODEL, "global_batch_size": 1, "activation_recompute": "selective"}}), catalog)
    assert placement_problem(LAYOUT, scenario.workload, 8) is None
    hw = hardware_for(scenario, catalog, platform, nic, rails, 1.0)
    return performance(scenario.workload, LAYOUT, hw, overlap_for(scenario)), hw


def test_tp_all_reduce_over_pcie_is_the_hand_number(default_catalog):
    perf, hw = _perf(default_catalog, "pcie-rtx-pro-6000-8", "cx7-ndr", 4)
    tp = perf.traffic["tp"]
    assert (hw.scaleup_fabric, hw.scaleup_step_latency_s) == ("pcie", pytest.approx(5.7e-6))
    assert tp.nvlink_bytes == pytest.approx(939_524_096) and tp.scaleout_bytes == 0
    assert tp.time_s == pytest.approx(0.0248385, rel=1e-5)
    # no TP overlap is measured on PCIe (megatron stack, issue 46 entry): every second of it is on the critical path
    assert tp.exposed_s == pytest.approx(tp.time_s)


def test_the_same_all_reduce_over_nvlink_is_eight_times_faster(default_catalog):
    pcie, _ = _perf(default_catalog, "pcie-rtx-pro-6000-8", "cx7-ndr", 4)
    nvl, hw = _perf(default_catalog, "hgx-h200", "cx7-ndr", 8)
    assert hw.scaleup_step_latency_s == pytest.approx(3.4e-6)
    assert nvl.traffic["tp"].time_s == pytest.approx(0.0030613, rel=1e-4)
    assert pcie.traffic["tp"].time_s / nvl.traffic["tp"].time_s == pytest.approx(0.0248385 / 0.0030613, rel=1e-4)


def test_pcie_scale_up_is_flagged_as_uncalibrated(default_catalog):
    from solver.perf.coverage import uncalibrated

    perf, hw = _perf(default_catalog, "pcie-rtx-pro-6000-8", "cx7-ndr", 4)
    flags = uncalibrated(hw, LAYOUT, perf, "bf16")
    assert any(f.startswith("scale-up over PCIe") for f in flags)
    assert any(f.startswith("compute:") for f in flags)  # no calibration row on RTX PRO 6000 either
    perf, hw = _perf(default_catalog, "amd-mi355x-8", "pollara-400", 8)
    assert any(f.startswith("scale-up over Infinity Fabric") for f in uncalibrated(hw, LAYOUT, perf, "bf16"))
