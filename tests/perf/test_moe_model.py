"""Mixture-of-Experts model size, FLOPs and memory (SPEC §4.7, perf/moe.py).

Expected values come from the publishers (parameter counts of the model cards and papers named in
each test, FLOPs per token implied by the published tokens/s and TFLOP/s of the same run) or are
worked out by hand in the comments. docs/sources.md [M1][M7][M8][M24]–[M27].
"""
from __future__ import annotations

import pytest
from moe_runs import CALIBRATION_CSV, HELDOUT_CSV, load_rows, model_of
from moe_shapes import KIMI_K2, MIXTRAL_8X7B, QWEN3_30B, QWEN3_235B, deepseek_v3, shape, workload

from solver.perf import moe
from solver.perf.layout import Layout
from solver.perf.memory import memory_activations_gb, memory_states_gb
from solver.perf.totals import flops_per_step, parameter_count

# ----------------------------------------------------------------------------------- parameters


def test_deepseek_v3_parameters_by_hand():
    """P_att (MLA) = q_r(h + a(d_n + d_r)) + h(kv_r + d_r) + kv_r·a(d_n + d_v) + a·d_v·h
                   = 1536·31,744 + 7168·576 + 512·128·256 + 128·128·7168 = 187,105,280; + 2h norms = 187,119,616
    61 attention blocks 11,414,296,576; 3 dense MLPs 3·(3·7168·18432) = 1,189,085,184;
    58 MoE layers × (256·3·7168·2048 + 3·7168·2048 + 7168·256) = 58 × 11,320,164,352 = 656,569,532,416;
    final norm 7168; untied embeddings 2·129,280·7168 = 1,853,358,080. Total 671,026,279,424."""
    assert parameter_count(shape(deepseek_v3())) == 671_026_279_424


@pytest.mark.parametrize(("name", "model", "total", "active", "rel"), [
    # DeepSeek-V3 report §4.2 [M1]: "671B total parameters, of which 37B are activated for each token"
    ("DeepSeek-V3", deepseek_v3(), 671e9, 37e9, 0.02),
    # Kimi K2 model card [M25]: "1 trillion total parameters, 32 billion activated"
    ("Kimi-K2", KIMI_K2, 1.0e12, 32e9, 0.03),
    # Qwen3 model cards [M24]: Qwen3-235B-A22B "235B in total and 22B activated"; Qwen3-30B-A3B "30.5B … 3.3B activated"
    ("Qwen3-235B-A22B", QWEN3_235B, 235e9, 22e9, 0.01),
    ("Qwen3-30B-A3B", QWEN3_30B, 30.5e9, 3.3e9, 0.02),
    # Mixtral of Experts (arXiv 2401.04088) [M26]: "access to 47B parameters, but only uses 13B active parameters"
    ("Mixtral-8x7B", MIXTRAL_8X7B, 47e9, 13e9, 0.01),
])
def test_published_parameter_counts(name, model, total, active, rel):
    """Total (memory) and active (FLOPs) parameters against the publishers' rounded figures; `rel`
    is the rounding of the published figure (37B for 37.6B, 1T for 1.03T)."""
    counts = moe.parameter_counts(shape(model))
    assert counts.total == pytest.approx(total, rel=rel)
    assert counts.active == pytest.approx(active, rel=rel)


def test_experts_are_97_percent_of_deepseek_v3():
    """Routed experts 58·256·3·7168·2048 = 653,908,770,816 of 671,026,279,424 = 97.4 %; one MTP layer adds an
    MoE layer (11,320,164,352), an attention block with its norms (187,119,616), the 2h² projection
    (102,760,448) and three more norms (21,504): 11,610,065,920 stored, none of it in the published total."""
    plain, with_mtp = moe.parameter_counts(shape(deepseek_v3())), moe.parameter_counts(shape(deepseek_v3(mtp=1)))
    assert plain.routed == 653_908_770_816
    assert with_mtp.total == plain.total  # published totals leave the MTP module out
    assert with_mtp.stored - plain.stored == 11_320_164_352 + 187_119_616 + 102_760_448 + 21_504
    assert with_mtp.routed - plain.routed == 256 * 3 * 7168 * 2048


# ----------------------------------------------------------------------------------- FLOPs


def _flops_per_token(model: dict) -> float:
    wl = workload(model)
    return flops_per_step(wl)[0] / model["seq_len"]


def test_deepseek_v3_flops_per_token_by_hand():
    """Megatron's count ([M5], docs/model.md §MoE) without MTP, per token:
    6·[h·(3f·L_d + 3f_e·k·L_m + 3f_s·L_m) + P_att·L] + 6·w·s·L + 6·h·V, w = a·(d_n + d_r)/2 + a·d_v/2 = 20,480
    = 6·[7168·(3·18432·3 + 3·2048·8·58 + 3·2048·58) + 187,105,280·61] + 6·20,480·4096·61 + 6·7168·129,280
    = 6·[7168·(165,888 + 2,850,816 + 356,352) + 11,413,422,080] + 30,702,305,280 + 5,560,074,240
    = 6·(24,178,065,408 + 11,413,422,080) + 36,262,379,520 = 249,811,304,448 ≈ DeepSeek's "about 250 GFLOPS per
    token" (ISCA'25 Table 2, [M2])."""
    assert _flops_per_token(deepseek_v3()) == pytest.approx(249_811_304_448, rel=1e-12)


def _implied_runs():
    """Runs publishing both tokens/s/GPU and model TFLOP/s/GPU in Megatron's accounting: the publisher's
    FLOPs per token is their ratio. GPT-OSS-120B rows before 26.06 use another accounting (docs/model.md §MoE)
    and DeepSeek's own Table 4 its non-causal one: both are left out."""
    out = {}
    for path in (CALIBRATION_CSV, HELDOUT_CSV):
        for row in load_rows(path):
            key = (row["name"], row["source"], row["global_batch"], row["seq"], row.get("notes", ""))
            out.setdefault(key, {})[row["metric"]] = (row, float(row["value"]))
    runs = []
    for metrics in out.values():
        if "tokens_per_s_per_gpu" in metrics and "model_tflops_per_gpu" in metrics:
            row = metrics["tokens_per_s_per_gpu"][0]
            if row["model"] == "GPT-OSS-120B" and row["flops_per_token_megatron"] != row["implied_flops_per_token"]:
                continue
            implied = metrics["model_tflops_per_gpu"][1] * 1e12 / metrics["tokens_per_s_per_gpu"][1]
            runs.append((row, implied))
    return runs


IMPLIED = _implied_runs()


def test_enough_published_runs_imply_their_flops():
    assert len(IMPLIED) >= 60
    assert {r["model"] for r, _ in IMPLIED} >= {"DeepSeek-V3", "Kimi-K2", "Qwen3-235B-A22B", "Qwen3-30B-A3B", "GPT-OSS-120B"}


@pytest.mark.parametrize(("row", "implied"), IMPLIED, ids=[r["name"][:90] for r, _ in IMPLIED])
def test_flops_per_token_match_the_published_tables(row, implied):
    """Model TFLOP/s ÷ tokens/s of the same published run = our FLOPs per token within 1 % (the tables
    round TFLOP/s to 3–4 digits; all but two Qwen3-30B-A3B rows, 0.9 % off, agree within 0.5 %)."""
    assert _flops_per_token(model_of(row)) == pytest.approx(implied, rel=0.01)


def test_hardware_flops_add_recompute_and_padding():
    """Qwen3-30B-A3B, per token forward: routed 2·3·2048·768·8·48 = 3,623,878,656. With full recompute the
    hardware count adds one forward of every layer; padding to capacity c_f = 1.25 multiplies the routed
    part (all passes) by 1.25."""
    plain = workload(QWEN3_30B, activation_recompute="none")
    f = moe.token_flops(plain.model)
    assert f.routed == 2 * 3 * 2048 * 768 * 8 * 48
    model_flops, hw = flops_per_step(plain)
    assert hw == pytest.approx(model_flops)
    full = workload(QWEN3_30B, activation_recompute="full")
    assert flops_per_step(full)[1] - model_flops == pytest.approx(4096 * f.layers)
    padded = workload({**QWEN3_30B, "moe": {**QWEN3_30B["moe"], "capacity_factor": 1.25, "pad_to_capacity": True}},
                      activation_recompute="none")
    assert flops_per_step(padded)[1] - model_flops == pytest.approx(4096 * 3 * f.routed * 0.25)
    assert flops_per_step(padded)[0] == pytest.approx(model_flops)  # model FLOPs count k experts only


# ----------------------------------------------------------------------------------- memory


def _layout(t, p, d, ep, b=1, g=64, etp=1):
    return Layout(tp=t, cp=1, pp=p, vp=1, dp=d, microbatch_size=b, gpus_per_domain_used=g, ep=ep, etp=etp)


@pytest.mark.parametrize(("label", "model", "lay", "worked_gb", "shard_params"), [
    # worked values (docs/model.md §MoE "Worked examples") (β_w 2, β_g 4, β_o 12, [M10]'s three buckets), with the per-GPU parameter shards:
    # DeepSeek-V3, 256 GPUs TP1 PP4 EP64 (GB200 recipe): 72.5 GB; experts 653.9e9/(64·4) = 2.554e9, rest
    # (671.0 − 653.9)e9/4 = 4.280e9 per GPU.
    ("DeepSeek-V3 TP1 PP4 EP64", deepseek_v3(), _layout(1, 4, 64, 64), 72.5, 2.554e9 + 4.280e9),
    # DeepSeek-V3, 256 GPUs TP1 PP8 EP8 (B300 recipe): 105.6 GB; experts 653.9e9/64 = 10.217e9, rest 17.1e9/8 = 2.140e9
    ("DeepSeek-V3 TP1 PP8 EP8", deepseek_v3(), _layout(1, 8, 32, 8, g=8), 105.6, 10.217e9 + 2.140e9),
])
def test_states_match_the_worked_recipes(label, model, lay, worked_gb, shard_params):
    """The worked values keep fp32 main grads (β_g = 4), fabricplan's default since the physics v2 merge
    (`grad_reduce_dtype: fp32`); with bf16 grads (β_g = 2) it is 2 bytes less per parameter held:
    expected = worked − 2·(parameters per GPU)."""
    wl = workload(model, batch=4096)
    assert memory_states_gb(wl, lay, parameter_count(wl.model)) == pytest.approx(worked_gb, abs=0.15)
    wl = workload(model, batch=4096, grad_reduce_dtype="bf16")
    expected_gb = worked_gb - 2 * shard_params / 1e9
    assert memory_states_gb(wl, lay, parameter_count(wl.model)) == pytest.approx(expected_gb, abs=0.15)


def test_expert_optimizer_state_shards_over_expert_data_parallel():
    """Same model and stage (t = 1, p = 4, 256 GPUs, d = 64): ep 64 → edp 1, ep 16 → edp 4. The expert
    weights per GPU grow ×4 (653.9e9/(16·4) = 10.217e9), their 12-byte optimizer state is divided by edp = 4:
    experts 10.217e9·(2 + 2 + 12/4) = 71.5 GB against 2.554e9·16 = 40.9 GB with bf16 main grads (β_g = 2, set
    here; fp32, the default since the physics v2 merge, adds 2 B per weight to both); the rest is unchanged."""
    wl = workload(deepseek_v3(), batch=4096, grad_reduce_dtype="bf16")
    params = parameter_count(wl.model)
    wide, narrow = _layout(1, 4, 64, 64), _layout(1, 4, 64, 16)
    assert narrow.edp == 4 and wide.edp == 1
    diff = memory_states_gb(wl, narrow, params) - memory_states_gb(wl, wide, params)
    p_exp = 58 * 256 * 3 * 7168 * 2048
    assert diff == pytest.approx(p_exp / 64 * 7 / 1e9 - p_exp / 256 * 16 / 1e9, rel=1e-9)


def test_moe_activations_by_hand():
    """Qwen3-30B-A3B, s = 4096, b = 1, t = c = 1, bf16, selective, no recompute module, per token:
    attention 4h + 2h + 2(a·d_h + 2·h_kv) + 2·a·d_h = 6·2048 + 2·(4096 + 1024) + 8192 = 30,720
    MoE MLP: 8 copies of (2 + 2)·h + 2·2·f_e + 2·f_e = 8192 + 6·768 = 12,800 → 102,400
    48 layers × 4096 tokens × 133,120 bytes = 26.17 GB; since the physics v2 merge the (only, so also last)
    stage also keeps the logits' fp32 softmax, 4·b·s·V/t = 4·4096·151,936 B = 2.49 GB (perf/memory.py)."""
    wl = workload(QWEN3_30B, batch=8)
    lay = _layout(1, 1, 8, 8, g=8)
    expected = 48 * 4096 * (30_720 + 102_400) + 4 * 4096 * 151_936
    assert memory_activations_gb(wl, lay) == pytest.approx(expected / 1e9, rel=1e-12)
    moe_act = workload(QWEN3_30B, batch=8, recompute_modules=["moe_act"])  # drops the 2·f_e activation per copy
    assert memory_activations_gb(wl, lay) - memory_activations_gb(moe_act, lay) == \
        pytest.approx(48 * 4096 * 8 * 2 * 768 / 1e9, rel=1e-12)
