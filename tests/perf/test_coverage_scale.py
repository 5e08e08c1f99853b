"""The scale check of `perf/coverage.uncalibrated` is per scale-up fabric (architecture review, 2026-12-06).

From docs/model.md "AMD compute models" (tests/perf/amd_rows.py): the largest published AMD Instinct training run the
model is checked against is "MI355X/B200 Llama 3 70B FP8, 32 GPUs (Primus-Megatron, 4 nodes) [P12]"; every other AMD
row is one 8-GPU node. So an AMD job of 64 GPUs (8 nodes, data-parallel over the NICs) has no published measurement of
its scale-out and must say so, a 32-GPU one sits at the published size, and the same 64 GPUs on an NVLink platform
sit far inside the NVIDIA rows (up to 16,384 GPUs, Llama 3 405B [D7]) and get no scale flag.
"""
from __future__ import annotations

from solver.inputs.schema import Scenario
from solver.inputs.stacks import resolve_stack
from solver.perf.coverage import uncalibrated
from solver.perf.hardware import hardware_for
from solver.perf.layout import Layout, placement_problem
from solver.perf.step import performance
from solver.perf.traffic import overlap_for

MODEL = dict(layers=2, hidden_size=4096, ffn_hidden_size=14336, ffn_type="swiglu", attention_heads=32, kv_heads=8,
             vocab_size=32000, seq_len=8192)


def _scale_flags(catalog, platform: str, nic: str, dp: int) -> list[str]:
    layout = Layout(tp=1, cp=1, pp=1, vp=1, dp=dp, microbatch_size=1, gpus_per_domain_used=8)
    scenario = resolve_stack(Scenario.model_validate({
        "name": "scale", "target": {"step_time_s": 1.0},
        "workload": {"model": MODEL, "global_batch_size": dp, "activation_recompute": "selective"}}), catalog)
    assert placement_problem(layout, scenario.workload, 8) is None
    hw = hardware_for(scenario, catalog, platform, nic, 8, 1.0)
    perf = performance(scenario.workload, layout, hw, overlap_for(scenario))
    return [f for f in uncalibrated(hw, layout, perf, "bf16") if f.startswith("scale:")]


def test_an_amd_job_beyond_the_largest_published_amd_run_is_flagged(default_catalog):
    flags = _scale_flags(default_catalog, "amd-mi355x-8", "pollara-400", 64)
    assert len(flags) == 1
    assert "64 GPUs" in flags[0] and "(32:" in flags[0] and "[P12]" in flags[0]


def test_an_amd_job_at_the_published_size_is_not(default_catalog):
    assert _scale_flags(default_catalog, "amd-mi355x-8", "pollara-400", 32) == []


def test_the_same_job_on_nvlink_is_inside_the_nvidia_rows(default_catalog):
    assert _scale_flags(default_catalog, "hgx-h200", "cx7-ndr", 64) == []
