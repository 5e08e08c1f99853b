"""The serving replica model (SPEC §4.9, docs/model.md "Serving"): hand-worked numbers.

Every expected number below is worked out by hand in the comment next to it from the model cards' config.json
(docs/sources.md [S14]) and the catalog's datasheet figures, not copied from the code's output."""
from __future__ import annotations

import math

import pytest
from serving_shapes import catalog, context, shape

from solver.inputs.stacks import Stack
from solver.perf.serving import (
    ReplicaLayout,
    ServingModelContext,
    TrafficShape,
    kv_bytes_per_sequence,
    kv_bytes_per_token,
    kv_transfer_time_s,
    max_throughput_concurrency,
    replica_performance,
    serving_weights,
)
from solver.perf.serving_step import ALPHA_SCALEOUT_S, scaleout_share

H100_PEAK_BF16 = 989e12
H100_HBM = 3.35e12


def bare_stack(**profile) -> Stack:
    """A serving stack with round efficiencies and no overheads, so the hand numbers below stay short."""
    serving = {"step_overhead_ms": 0.0, "seq_overhead_us": 0.0, "layer_overhead_us": 0.0, "chunk_tokens": 8192,
               "gpus": [{"gpus": ["any"], "prefill_efficiency": 0.5, "decode_efficiency": 0.5, "hbm_efficiency": 0.8}],
               **profile}
    return Stack.model_validate({"id": "hand", "name": "hand-worked", "kind": "inference", "serving": serving,
                                 "source": "test"})


def hand_context(model: str, platform: str = "hgx-h100", precision: str = "bf16", kv: str = "bf16", **profile):
    ctx = context(model, platform, precision=precision, kv=kv)
    return ServingModelContext(model=ctx.model, gpu=ctx.gpu, platform=ctx.platform, scaleout_gbyte_s_per_gpu=50.0,
                               stack=bare_stack(**profile), precision=precision, kv_cache_dtype=kv)


# ------------------------------------------------------------------------------------------------ KV cache


def test_kv_bytes_per_token_of_llama31_70b_in_bf16():
    # L × 2 × kv_heads × head_dim × bytes = 80 × 2 × 8 × 128 × 2 = 327,680 B
    assert kv_bytes_per_token(shape("llama3.1-70b"), "bf16") == 327_680


def test_kv_bytes_per_token_of_deepseek_mla_in_fp8():
    # MLA: L × (kv_lora_rank + qk_rope_head_dim) × bytes = 61 × (512 + 64) × 1 = 35,136 B
    assert kv_bytes_per_token(shape("deepseek-r1"), "fp8") == 35_136


def test_sliding_window_layers_keep_only_their_window():
    # gpt-oss-120b: 2 × 8 kv heads × 64 × 2 B = 2,048 B per token and layer; at context 1,000 the 18 full layers hold
    # 1,000 tokens and the 18 windowed layers 128: 2,048 × (18 × 1,000 + 18 × 128) = 41,582,592 B
    assert kv_bytes_per_sequence(shape("gpt-oss-120b"), "bf16", 1000) == 41_582_592


def test_the_kv_room_sets_the_largest_concurrency():
    # Llama 3.1 70B, FP8 weights and KV, one H100 (TP1): weights = P × 1 B per GPU. P by hand (perf/model.py):
    # per layer 8192·(8192 + 2·1024) + 8192² + 3·8192·28672 + 2·8192 = 855,654,400; × 80 + 8192 + 2·128256·8192
    # = 68,452,352,000 + 8,192 + 2,101,346,304 = 70,553,706,496 B.
    # usable HBM = 80 · 2^30/10^9 − 4 (the platform's reserve, issue 41) = 81.89934592 GB; activations = 8192
    # tokens · 8192 · 16 B = 1.073741824 GB; room = 81.89934592 − 70.553706496 − 1.073741824 = 10.2718976 GB; KV per
    # sequence at 2,000 tokens = 163,840 × 2,000 = 0.32768 GB → ⌊31.35⌋ = 31 sequences.
    ctx = hand_context("llama3.1-70b", precision="fp8", kv="fp8")
    perf = replica_performance(ctx, ReplicaLayout(tp=1, pp=1, ep=1, concurrency=31, role="decode"), TrafficShape(1000, 1000))
    assert serving_weights(ctx.model).stored == 70_553_706_496
    assert perf.max_concurrency == 31 and perf.fits
    assert not replica_performance(ctx, ReplicaLayout(1, 1, 1, 32, "decode"), TrafficShape(1000, 1000)).fits


def test_gqa_kv_splits_over_tp_up_to_the_kv_heads_and_mla_does_not_split():
    traffic = TrafficShape(4000, 1000)
    llama = hand_context("llama3.1-70b", precision="fp8", kv="fp8")
    kv8 = replica_performance(llama, ReplicaLayout(8, 1, 1, 64, "decode"), traffic).kv_cache_gb_per_gpu
    kv16 = replica_performance(llama, ReplicaLayout(16, 1, 1, 64, "decode"), traffic).kv_cache_gb_per_gpu
    # 8 KV heads: TP8 holds one head per GPU, TP16 duplicates them: the same KV per GPU
    # 64 sequences × 5,000 tokens × 163,840 B / 8 = 6.5536 GB
    assert kv8 == pytest.approx(6.5536) and kv16 == pytest.approx(kv8)
    ds = hand_context("deepseek-r1", "hgx-h200", precision="fp8", kv="fp8")
    kv_ds = replica_performance(ds, ReplicaLayout(8, 1, 8, 64, "decode"), traffic).kv_cache_gb_per_gpu
    # MLA latent on every TP rank: 64 × 5,000 × 35,136 B = 11.24352 GB per GPU
    assert kv_ds == pytest.approx(11.24352)


# ------------------------------------------------------------------------------------------------ decode


def test_memory_bound_decode_step_of_llama31_8b_by_hand():
    # Llama 3.1 8B, BF16, one H100, batch 1, context 1,000 + 2/2 = 1,001 tokens.
    # P = 32·(4096·(4096 + 2·1024) + 4096² + 3·4096·14336 + 2·4096) + 4096 + 2·128256·4096 = 8,030,261,248;
    # streamed per step: P − V·h (the input embedding is gathered) = 7,504,924,672 weights × 2 B = 15,009,849,344 B
    # + KV 32·2·8·128·2 B × 1,001 = 131,203,072 B → 15,141,052,416 B at 3.35 TB/s × 0.8 = 5.6497 ms.
    # FLOPs ≈ 2 × 7.5e9 = 15 GFLOP at 989 TFLOPS × 0.5: 0.03 ms, far below: memory-bound.
    ctx = hand_context("llama3.1-8b")
    perf = replica_performance(ctx, ReplicaLayout(1, 1, 1, 1, "decode"), TrafficShape(1000, 2))
    assert perf.bound == "memory"
    assert perf.tpot_s == pytest.approx(15_141_052_416 / (H100_HBM * 0.8), rel=1e-9)
    assert perf.tokens_per_s_per_user == pytest.approx(1 / perf.tpot_s)
    assert perf.output_tokens_per_s_per_gpu == pytest.approx(1 / perf.tpot_s)


def test_per_step_sequence_and_layer_overheads_add_to_the_step():
    # + 2 ms per step + 5 µs × 4 sequences + 10 µs × 32 layers = 2.34 ms on top of the batch-4 step without them
    traffic, layout = TrafficShape(1000, 2), ReplicaLayout(1, 1, 1, 4, "decode")
    bare = replica_performance(hand_context("llama3.1-8b"), layout, traffic).tpot_s
    loaded = replica_performance(hand_context("llama3.1-8b", step_overhead_ms=2.0, seq_overhead_us=5.0,
                                              layer_overhead_us=10.0), layout, traffic).tpot_s
    assert loaded - bare == pytest.approx(2.34e-3, rel=1e-9)


def test_large_batches_turn_decode_compute_bound():
    ctx = hand_context("llama3.1-8b")
    perf = replica_performance(ctx, ReplicaLayout(1, 1, 1, 512, "decode"), TrafficShape(100, 2))
    # FLOPs per step ≈ 512 × (2 × 7.5049e9 + 32·2·32·256·101) ≈ 7.70e12 at 494.5 TFLOPS = 15.6 ms; bytes ≈ 15.0 GB +
    # 512 × 101 × 131,072 B = 21.8 GB at 2.68 TB/s = 8.1 ms: compute-bound
    assert perf.bound == "compute"
    # The GEMMs and the attention kernel run one after the other, each at its own roofline: GEMMs 512 × 2 × 7.5049e9
    # = 7.685e12 FLOPs at 494.5 TFLOPS = 15.541 ms (their 15.1 GB of weights take 5.65 ms: compute-bound); attention
    # reads 512 × 101 × 131,072 B = 6.778 GB of KV at 2.68 TB/s = 2.529 ms (its 2.7e10 FLOPs take 0.055 ms:
    # memory-bound): 18.070 ms
    gemm = 512 * 2 * 7_504_924_672 / (H100_PEAK_BF16 * 0.5)
    attention = 512 * 101 * 131_072 / (H100_HBM * 0.8)
    assert perf.tpot_s == pytest.approx(gemm + attention, rel=1e-6)


def test_tp_all_reduce_adds_per_layer_and_rides_the_scale_up_domain():
    # TP2, batch 1: 2 all-reduces per layer × 80 layers of 2(2−1)/2 × 8192 × 2 B = 16,384 B at the H100's 450 GB/s per
    # direction × η_ar 0.5, plus α = 8 µs each: 160 × (8e-6 + 16,384/225e9) = 1.2917 ms on top of the streamed bytes
    ctx = hand_context("llama3.1-70b", precision="fp8", kv="fp8", allreduce_efficiency=0.5)
    perf = replica_performance(ctx, ReplicaLayout(2, 1, 1, 1, "decode"), TrafficShape(1000, 2))
    w = serving_weights(ctx.model)
    streamed = (w.stored - w.gathered) / 2 + 163_840 * 1001 / 2
    assert perf.tpot_s == pytest.approx(streamed / (H100_HBM * 0.8) + 160 * (8e-6 + 16_384 / 225e9), rel=1e-9)
    assert perf.scaleout_gbyte_s_per_gpu > 0  # decode role: its KV arrives over the NICs
    agg = replica_performance(ctx, ReplicaLayout(2, 1, 1, 1, "aggregated"), TrafficShape(1000, 2))
    assert agg.scaleout_gbyte_s_per_gpu == 0  # TP inside one HGX: nothing on the scale-out fabric


def test_wide_ep_decode_stays_on_nvlink_in_an_nvl72_and_crosses_the_nics_on_hgx():
    # DeepSeek-R1 decode over 32 GPUs (attention DP 32, EP 32): χ_so = (32 − min(32, D))/(32 − 1):
    # 0 in a 72-GPU NVL72 domain, 24/31 across 8-GPU HGX nodes.
    assert scaleout_share(32, 72) == 0 and scaleout_share(32, 8) == pytest.approx(24 / 31)
    layout, traffic = ReplicaLayout(1, 1, 32, 2048, "decode", dp_attention=32), TrafficShape(2000, 1000)
    nvl = replica_performance(context("deepseek-r1", "gb200-nvl72", precision="fp8"), layout, traffic)
    hgx = replica_performance(context("deepseek-r1", "hgx-b200", precision="fp8"), layout, traffic)
    assert nvl.decode_step_s < hgx.decode_step_s
    assert any("spans scale-up domains" in f for f in hgx.flags) and not any("spans" in f for f in nvl.flags)


# ------------------------------------------------------------------------------------------------ prefill


def test_compute_bound_prefill_of_llama31_8b_by_hand():
    # 4,096-token prompt, BF16, one H100 at η_pf 0.5: 2 × 7,504,924,672 × 4,096 = 6.14803e13 FLOPs of GEMMs +
    # causal attention 32 layers × ½ × 2·32·(128 + 128) × 4,096² = 4.39805e12 → 6.58784e13 / 494.5e12 = 0.133222 s
    ctx = hand_context("llama3.1-8b")
    perf = replica_performance(ctx, ReplicaLayout(1, 1, 1, 1, "prefill"), TrafficShape(4096, 100))
    gemm = 2 * 7_504_924_672 * 4096
    attention = 32 * 0.5 * 2 * 32 * 256 * 4096**2
    assert perf.prefill_s == pytest.approx((gemm + attention) / (H100_PEAK_BF16 * 0.5), rel=1e-9)
    assert perf.requests_per_s == pytest.approx(1 / perf.prefill_s, rel=1e-9)


def test_prefix_cache_hits_cut_prefill_tokens():
    # half the prompt cached: GEMMs on 2,048 tokens, attention of positions 2,048..4,096 = ½·(4,096² − 2,048²)·…
    ctx = hand_context("llama3.1-8b")
    perf = replica_performance(ctx, ReplicaLayout(1, 1, 1, 1, "prefill"), TrafficShape(4096, 100, prefix_cache_hit=0.5))
    gemm = 2 * 7_504_924_672 * 2048
    attention = 32 * 0.5 * 2 * 32 * 256 * (4096**2 - 2048**2)
    assert perf.prefill_s == pytest.approx((gemm + attention) / (H100_PEAK_BF16 * 0.5), rel=1e-9)


def test_aggregated_tpot_grows_with_the_prefill_share():
    # TPOT_agg = T_dec + (b/O)·C_pf: longer prompts per output token → slower tokens for every user
    ctx = hand_context("llama3.1-8b")
    layout = ReplicaLayout(1, 1, 1, 64, "aggregated")
    short = replica_performance(ctx, layout, TrafficShape(200, 500))
    long = replica_performance(ctx, layout, TrafficShape(4000, 500))
    dec = replica_performance(ctx, ReplicaLayout(1, 1, 1, 64, "decode"), TrafficShape(4000, 500))
    assert short.tpot_s < long.tpot_s and dec.tpot_s < long.tpot_s
    chunk = long.tpot_s - dec.tpot_s
    gemm = 2 * 7_504_924_672 * 4000
    attention = 32 * 0.5 * 2 * 32 * 256 * 4000**2
    assert chunk == pytest.approx(64 / 500 * (gemm + attention) / (H100_PEAK_BF16 * 0.5), rel=1e-9)
    assert long.requests_per_s == pytest.approx(64 / (500 * long.tpot_s))


def test_kv_transfer_of_a_disaggregated_prompt():
    # Llama 3.1 70B, FP8 KV, 8,000-token prompt: 8,000 × 163,840 B = 1.31072 GB; over 2 GPUs' NICs at 50 GB/s each:
    # 25 µs + 1.31072/100 s = 13.1322 ms
    ctx = hand_context("llama3.1-70b", precision="fp8", kv="fp8")
    perf = replica_performance(ctx, ReplicaLayout(2, 1, 1, 1, "prefill"), TrafficShape(8000, 500))
    assert perf.kv_transfer_gbyte_per_request == pytest.approx(1.31072)
    assert perf.kv_transfer_s == pytest.approx(ALPHA_SCALEOUT_S + 1.31072 / 100)
    assert kv_transfer_time_s(1.0, 1000.0) == pytest.approx(25e-6 + 1e-3)


def test_saturated_concurrency_is_the_kv_room_or_the_batch_cap():
    ctx = hand_context("llama3.1-70b", precision="fp8", kv="fp8")  # 31 sequences fit at 2,000 tokens (above)
    assert max_throughput_concurrency(ctx, ReplicaLayout(1, 1, 1, 1), TrafficShape(1000, 1000)) == 31
    capped = hand_context("llama3.1-8b", max_batch_size=16)
    assert max_throughput_concurrency(capped, ReplicaLayout(1, 1, 1, 1), TrafficShape(100, 100)) == 16


# ------------------------------------------------------------------------------------------------ flags


def test_unmeasured_regimes_are_flagged_and_measured_ones_are_not():
    traffic, layout = TrafficShape(1000, 1000), ReplicaLayout(2, 1, 1, 32)
    measured = replica_performance(context("llama3.1-70b", "hgx-h100", "trtllm", "fp8"), layout, traffic)
    assert not measured.flags
    bf16 = replica_performance(context("llama3.1-70b", "hgx-h100", "trtllm", "bf16"), layout, traffic)
    assert any("no published serving measurement for h100-sxm trtllm bf16 dense" in f for f in bf16.flags)
    vllm = replica_performance(context("llama3.1-70b", "hgx-h100", "vllm", "fp8"), layout, traffic)
    assert any("vllm" in f for f in vllm.flags)
    assert vllm.interval[0] < measured.interval[0] <= 1 <= measured.interval[1] < vllm.interval[1]
    fp4_h100 = replica_performance(context("llama3.1-70b", "hgx-h100", "trtllm", "fp4"), layout, traffic)
    assert any("no FP4 tensor cores" in f for f in fp4_h100.flags)


def test_every_shipped_serving_stack_has_a_profile_for_amd_families():
    for stack_id in ("trtllm", "vllm", "sglang"):
        profile = catalog().by_id("stacks")[stack_id].serving
        for gpu in ("mi300x", "mi325x", "mi355x"):
            assert gpu in profile.tuning(gpu, "fp8").gpus


def test_bad_layouts_are_clear_errors():
    ctx = hand_context("llama3.1-8b")
    with pytest.raises(ValueError, match="role"):
        replica_performance(ctx, ReplicaLayout(1, 1, 1, 1, "both"), TrafficShape(10, 10))
    with pytest.raises(ValueError, match="exceeds"):
        replica_performance(ctx, ReplicaLayout(1, 1, 4, 1), TrafficShape(10, 10))
    assert math.isfinite(replica_performance(ctx, ReplicaLayout(1, 1, 1, 1), TrafficShape(10, 10)).tpot_s)


def test_an_attention_dp_prefill_runs_one_prompt_on_one_rank():
    # DeepSeek-R1 prefill on 8 H200 with attention DP 8 / EP 8: eight prompts are in flight (one per rank), so one
    # prompt's latency carries its dense work (attention, shared expert, dense layers, head) on a single GPU while the
    # replica's throughput spreads all FLOPs over 8. Dense ≈ 2 × 16.6e9, routed ≈ 2 × 20.4e9 FLOPs per token:
    # latency / (1 / rate) ≈ 8 × (16.6 + 20.4/8) / (16.6 + 20.4) ≈ 4.1 (> 3), against 1 without attention DP.
    ctx = hand_context("deepseek-r1", "hgx-h200", precision="fp8", kv="fp8")
    traffic = TrafficShape(4000, 100)
    dp = replica_performance(ctx, ReplicaLayout(1, 1, 8, 1, "prefill", dp_attention=8), traffic)
    tp = replica_performance(ctx, ReplicaLayout(8, 1, 8, 1, "prefill"), traffic)
    assert dp.prefill_s * dp.requests_per_s > 3.0
    assert tp.prefill_s * tp.requests_per_s == pytest.approx(1.0, rel=0.05)
