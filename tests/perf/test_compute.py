"""The GEMM-shape compute model (SPEC §4.2, solver/perf/compute.py): hand-worked GEMMs and the properties the
calibration relies on (wider models and bigger microbatches run closer to the peak; FP8 speeds up only the
linear layers; the slowest pipeline stage sets the pace)."""
import pytest
from test_step_model import LLAMA3_70B, workload

from solver.inputs.precisions import ByPrecision
from solver.perf.compute import ComputeParams, gemm_s, microbatch_compute, optimizer_step_s, pacing_stage
from solver.perf.layout import Layout
from solver.perf.totals import flops_per_step

PARAMS = ComputeParams(tflops=ByPrecision(bf16=1000.0, fp8=2000.0), hbm_tbyte_s=1.0,
                       gemm_efficiency=ByPrecision(bf16=0.5, fp8=0.4), attention_efficiency=0.25, gemm_overhead_s=10e-6)


def lay(t=1, c=1, p=1, b=1):
    return Layout(tp=t, cp=c, pp=p, vp=1, dp=1, microbatch_size=b, gpus_per_domain_used=8)


def test_one_gemm_by_hand():
    # 4096³: 2·4096³ = 137,438,953,472 FLOPs at 1000 TFLOP/s × 0.5 = 274.9 µs, ÷ the shape factor S = (4096/4296)³
    # = 0.8667 (d½ = 0.2 · 1000 = 200) = 317.1 µs; bytes 2·(2·4096²) operands + 2·4096² output = 100.7 MB at 1 TB/s
    # = 100.7 µs: compute-bound, plus the 10 µs overhead
    t = gemm_s(4096, 4096, 4096, tflops=1000, efficiency=0.5, hbm_tbyte_s=1, overhead_s=10e-6, operand_bytes=2)
    assert t == pytest.approx(2 * 4096**3 / 500e12 / (4096 / 4296) ** 3 + 10e-6)
    assert t == pytest.approx(327.1e-6, rel=1e-3)


def test_a_thin_gemm_is_memory_bound():
    # M = 65,536, N = 4096, K = 64: 2·M·N·K = 34.4 GFLOP = 68.7 µs at 500 TFLOP/s, but it moves
    # 2·(M·K + K·N) + 2·M·N = 545.8 MB = 545.8 µs at 1 TB/s: the roofline picks the bytes
    m, n, k = 65536, 4096, 64
    t = gemm_s(m, n, k, tflops=1000, efficiency=0.5, hbm_tbyte_s=1, overhead_s=0.0, operand_bytes=2)
    assert t == pytest.approx((2 * (m * k + k * n) + 2 * m * n) / 1e12)


def test_small_gemms_run_further_from_the_peak():
    # the fixed 10 µs per GEMM and the shape factor weigh on small GEMMs: a 1024³ GEMM (2.15 GFLOP: 4.3 µs of math
    # ÷ S = (1024/1224)³ = 0.5855 → 7.33 µs, above its 6·1024² B = 6.3 µs of HBM traffic, + 10 µs) runs at 27 % of a
    # 8192³ GEMM's rate (1.1 TFLOP, 2.2 ms ÷ (8192/8392)³ = 0.9302 → 2.364 ms, + 10 µs)
    def rate(n):
        return 2 * n**3 / gemm_s(n, n, n, tflops=1000, efficiency=0.5, hbm_tbyte_s=1, overhead_s=10e-6, operand_bytes=2)
    # 1024³: 2,147,483,648 / (7.335 µs + 10 µs) = 123.9 TFLOP/s; 8192³: 1.0995e12 / (2.364 ms + 10 µs) = 463.1 TFLOP/s
    assert rate(1024) == pytest.approx(2 * 1024**3 / (2 * 1024**3 / 500e12 / (1024 / 1224) ** 3 + 10e-6))
    assert rate(1024) == pytest.approx(123.9e12, rel=2e-3)
    assert rate(1024) / rate(8192) == pytest.approx(0.2675, abs=0.001)


def test_wider_models_and_bigger_microbatches_run_closer_to_the_peak():
    def efficiency(model, b=1, t=1):
        """Model FLOPs of one microbatch on one GPU over (its compute time × the BF16 peak)."""
        mb = microbatch_compute(workload(model, 8, activation_recompute="none"), lay(t=t, b=b), PARAMS)
        per_sequence, _ = flops_per_step(workload(model, 1, activation_recompute="none"))
        return per_sequence * b / t / (mb.total_s * PARAMS.tflops["bf16"] * 1e12)
    narrow = dict(LLAMA3_70B, hidden_size=2048, ffn_hidden_size=7168, attention_heads=16, kv_heads=2)
    assert efficiency(narrow) < efficiency(LLAMA3_70B)
    assert efficiency(LLAMA3_70B, t=8) < efficiency(LLAMA3_70B, t=1)  # h/t-wide GEMMs are smaller
    short = dict(LLAMA3_70B, seq_len=512)
    assert efficiency(short, b=1) < efficiency(short, b=8)


def test_fp8_speeds_up_only_the_linear_layers():
    bf16 = microbatch_compute(workload(LLAMA3_70B, 8, activation_recompute="none"), lay(t=8), PARAMS)
    fp8 = microbatch_compute(workload(LLAMA3_70B, 8, activation_recompute="none", precision="fp8"), lay(t=8), PARAMS)
    assert fp8.by_family_s["attention"] == bf16.by_family_s["attention"]
    assert fp8.by_family_s["logits"] == bf16.by_family_s["logits"]  # logits stay in BF16 (SPEC §4.2)
    assert fp8.by_family_s["ffn_up"] < bf16.by_family_s["ffn_up"]
    assert fp8.by_family_s["elementwise"] > bf16.by_family_s["elementwise"]  # the casts
    assert 1.0 < bf16.total_s / fp8.total_s < 2.0  # not the 2× of the peaks


def test_attention_time_by_hand():
    # FlashAttention forward of one layer: 4·s·h/t FLOPs per token counted, half executed (causal), at the BF16
    # peak × 0.25; backward 2.5× forward. s = 8192, h = 8192, t = 8, b = 1: 4·8192·1024·8192·0.5 = 137.4 GFLOP
    # → 549.8 µs forward, 1374.4 µs backward, per layer; 80 layers
    mb = microbatch_compute(workload(LLAMA3_70B, 8, activation_recompute="none"), lay(t=8), PARAMS)
    fwd = 4 * 8192 * 1024 * 8192 * 0.5 / (1000e12 * 0.25)
    assert mb.by_family_s["attention"] == pytest.approx(80 * 3.5 * fwd)


def test_the_slowest_pipeline_stage_sets_the_pace():
    # uniform split: the last stage holds L/p layers and the logits
    w = workload(LLAMA3_70B, 8)
    assert pacing_stage(w, lay(p=4), 1.0, 0.5) == (20.0, True)
    # balanced: (L + 2)/p = 20.5 slots; the last stage holds 19.5 layers and the logits: 19.5 + 0.5 < 20.5 → a
    # middle stage (20.5 layers) paces; with logits worth 2 layers the last stage (21.5) does
    wb = workload(LLAMA3_70B, 8, pipeline_split="balanced")
    assert pacing_stage(wb, lay(p=4), 1.0, 0.5) == (20.5, False)
    assert pacing_stage(wb, lay(p=4), 1.0, 2.0) == (19.5, True)


def test_optimizer_step_streams_its_shard():
    # 1e9 parameters × 34 B at 1 TB/s × 0.8 = 42.5 ms
    assert optimizer_step_s(1e9, PARAMS) == pytest.approx(1e9 * 34 / 0.8e12)
