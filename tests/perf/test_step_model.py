"""Performance model (solver/perf, SPEC §4): every expected number is worked by hand here."""
import pytest
from conftest import GPT3_175B

from solver.inputs.schema import Scenario, TransformerShape, Workload
from solver.perf.hardware import Hardware
from solver.perf.layout import Layout, placement_problem
from solver.perf.step import performance
from solver.perf.totals import flops_per_step, parameter_count
from solver.perf.traffic import DEFAULT_OVERLAP, overlap_for

LLAMA3_70B = dict(layers=80, hidden_size=8192, ffn_hidden_size=28672, ffn_type="swiglu", attention_heads=64,
                  kv_heads=8, vocab_size=128256, seq_len=8192)
NO_OVERLAP = {"tp": 0.0, "cp": 0.0, "pp": 0.0, "dp_rs": 0.0, "dp_ag": 0.0}
LAUNCH_S, NVLINK_STEP_S = 8.4e-6, 3.4e-6  # NCCL ring/simple latencies (docs/sources.md [N1])


def workload(shape, batch, **kw):
    return Workload(model=shape, global_batch_size=batch, **kw)


def hgx_h100(**kw):
    """DGX H100 from docs/sources.md §gpus: 989 TFLOP/s bf16, 450 GB/s NVLink per direction, 8 × 400G; the flat
    compute model (one efficiency) and no network latency, so the numbers below stay hand-checkable."""
    base = dict(gpu_id="h100", peak_tflops=989.0, compute_efficiency=0.5, hbm_usable_gb=74.0,
                nvlink_gbyte_s=450.0, nvlink_efficiency=1.0, gpus_per_node=8, rails_per_node=8,
                nic_speed_gbps=400.0, nic_efficiency=1.0, oversubscription=1.0, nic_step_latency_s=0.0)
    return Hardware(**{**base, **kw})


def _term(perf, term):
    """A step quantity by name: compute_s, bubble_s, or a traffic class's transfer time."""
    return getattr(perf, term) if term.endswith("_s") else perf.traffic[term].time_s


CLASSES = ("tp", "cp", "pp", "dp_rs", "dp_ag")


def layout(t=1, c=1, p=1, v=1, d=1, b=1, g_u=8):
    return Layout(tp=t, cp=c, pp=p, vp=v, dp=d, microbatch_size=b, gpus_per_domain_used=g_u)


# ----------------------------------------------------------------------------------- parameters


def test_llama3_70b_parameter_count():
    # h_kv = 8192·8/64 = 1024
    # P_mm = 8192·(8192 + 2·1024) + 8192² + 3·8192·28672 = 83,886,080 + 67,108,864 + 704,643,072 = 855,638,016
    # layers: 80·(855,638,016 + 2·8192 norms) = 68,452,352,000; final norm 8,192
    # untied embeddings: 2·128,256·8,192 = 2,101,346,304 → 70,553,706,496 (Meta's model card: 70.6B)
    assert parameter_count(TransformerShape(**LLAMA3_70B)) == 70_553_706_496


def test_gpt3_175b_parameter_count():
    # P_mm = 12·h² = 12·150,994,944 = 1,811,939,328; +2h = 1,811,963,904; ×96 = 173,948,534,784
    # + final norm 12,288 + tied embedding 50,257·12,288 = 617,558,016 → 174,566,105,088
    # Brown et al. (2020) report 175.0B including biases and position embeddings (0.25 % more).
    count = parameter_count(TransformerShape(**GPT3_175B))
    assert count == 174_566_105_088
    assert count == pytest.approx(175.0e9, rel=0.005)


# ----------------------------------------------------------------------------------- FLOPs


@pytest.mark.parametrize(("layers", "hidden", "heads", "batch"), [(48, 6144, 64, 4), (96, 12288, 96, 64)])
def test_flops_match_published_megatron_formulas(layers, hidden, heads, batch):
    """Korthikanti Table 3 22B and 175B shapes (s = 2048, V = 51200)."""
    shape = dict(layers=layers, hidden_size=hidden, ffn_hidden_size=4 * hidden, ffn_type="gelu",
                 attention_heads=heads, vocab_size=51200, seq_len=2048)
    B, s, L, h, V = batch, 2048, layers, hidden, 51200
    model, hw_none = flops_per_step(workload(shape, batch, activation_recompute="none"))
    # Narayanan et al. / Korthikanti: 72·B·s·L·h²·(1 + s/(6h) + V/(12·L·h))
    assert model == pytest.approx(72 * B * s * L * h**2 * (1 + s / (6 * h) + V / (12 * L * h)), rel=1e-12)
    assert hw_none == model
    # full recompute: Narayanan et al. eq. 3, 96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h))
    _, hw_full = flops_per_step(workload(shape, batch, activation_recompute="full"))
    assert hw_full == pytest.approx(96 * B * s * L * h**2 * (1 + s / (6 * h) + V / (16 * L * h)), rel=1e-12)
    # selective: the attention core again, B·s·L·4·s·h
    _, hw_sel = flops_per_step(workload(shape, batch, activation_recompute="selective"))
    assert hw_sel - model == pytest.approx(B * s * L * 4 * s * h, rel=1e-9)


def test_22b_model_flops_reproduce_published_mfu():
    # docs/sources.md [C1]: Korthikanti 22B, 8 GPUs, 1.10 s per iteration, derived MFU 41.7 %
    shape = dict(layers=48, hidden_size=6144, ffn_hidden_size=4 * 6144, ffn_type="gelu", attention_heads=64,
                 vocab_size=51200, seq_len=2048)
    model, _ = flops_per_step(workload(shape, 4))
    assert model / (1.10 * 8 * 312e12) == pytest.approx(0.417, abs=0.001)


# ----------------------------------------------------------------------------------- bytes


def test_tp8_in_one_hgx_domain_is_all_nvlink():
    # one microbatch (B = b = 1, d = 1), L = 80, s = h = 8192, t = 8, n_tp = 4 (selective):
    # M = b·s·h·β = 8192·8192·2 = 134,217,728 B; per layer 2·4·(7/8)·M = 939,524,096 B
    # × 80 layers = 75,161,927,680 B over NVLink, nothing over the scale-out fabric
    perf = performance(workload(LLAMA3_70B, 1), layout(t=8), hgx_h100(), NO_OVERLAP)
    assert perf.traffic["tp"].nvlink_bytes == pytest.approx(75_161_927_680)
    assert perf.traffic["tp"].scaleout_bytes == 0
    # at 450 GB/s (η = 1): 75.16e9 / 450e9 = 0.16703 s, plus latency: 2·n_tp = 8 launches per layer (each all-reduce
    # equivalent is an all-gather and a reduce-scatter) × 80 layers = 640 launches of 8.4 µs + 7 NVLink steps × 3.4 µs
    latency = 640 * (LAUNCH_S + 7 * NVLINK_STEP_S)
    assert perf.traffic["tp"].time_s == pytest.approx(75_161_927_680 / 450e9 + latency)


def _dp(g_u, d, gpus_per_node=8, **kw):
    shape = dict(LLAMA3_70B, layers=2, vocab_size=1000)  # small, P is all that matters here
    params = parameter_count(TransformerShape(**shape))
    perf = performance(workload(shape, d, **kw), layout(d=d, g_u=g_u), hgx_h100(gpus_per_node=gpus_per_node),
                       NO_OVERLAP)
    return perf, params


def test_dp_group_over_four_hgx_nodes_is_hierarchical():
    # d = 32 on 4 domains of 8: n_in = 8, n_out = 4. dp_rs: reduce-scatter (κ = 1) of M = P·4 B (fp32 gradients,
    # the default): NVLink (7/8)·4P = 3.5P, scale-out (3/4)·4P/8 = 0.375P; dp_ag: all-gather of P·2 B: NVLink
    # 1.75P, scale-out 0.1875P (a flat ring would send (31/32)·M across nodes instead of M·3/32)
    perf, p = _dp(g_u=8, d=32)
    assert perf.traffic["dp_rs"].nvlink_bytes == pytest.approx(3.5 * p)
    assert perf.traffic["dp_rs"].scaleout_bytes == pytest.approx(0.375 * p)
    assert perf.traffic["dp_ag"].nvlink_bytes == pytest.approx(1.75 * p)
    assert perf.traffic["dp_ag"].scaleout_bytes == pytest.approx(0.1875 * p)


def test_grad_reduce_dtype_and_fp8_parameter_gather_set_the_wire_bytes():
    # bf16 gradients halve dp_rs (2P instead of 4P per step before the (n−1)/n factors); an fp8 gather halves dp_ag
    fp32, p = _dp(g_u=8, d=32)
    bf16, _ = _dp(g_u=8, d=32, grad_reduce_dtype="bf16", precision="fp8", fp8_param_gather=True)
    assert bf16.traffic["dp_rs"].scaleout_bytes == pytest.approx(fp32.traffic["dp_rs"].scaleout_bytes / 2)
    assert bf16.traffic["dp_ag"].scaleout_bytes == pytest.approx(fp32.traffic["dp_ag"].scaleout_bytes / 2)
    assert bf16.traffic["dp_ag"].nvlink_bytes == pytest.approx((7 / 8) * p)


def test_same_dp_group_inside_nvl72_uses_no_scaleout():
    # 32 GPUs in one NVL72 domain (G_u = 64, N = 32 divides it): n_in = 32, n_out = 1: dp_rs (31/32)·4P, scale-out 0
    perf, p = _dp(g_u=64, d=32, gpus_per_node=4)
    assert perf.traffic["dp_rs"].nvlink_bytes == pytest.approx(31 / 32 * 4 * p)
    assert perf.traffic["dp_rs"].scaleout_bytes == 0


def test_dp_over_two_nvl72_domains_cuts_scaleout_by_the_domain_size():
    # d = 144, dp_rs of M = 4P: HGX (n_in 8, n_out 18): (17/18)·4P/8 = 0.4722·P
    #                          NVL72 (n_in 72, n_out 2): (1/2)·4P/72 = P/36, 17× less
    hgx, p = _dp(g_u=8, d=144)
    nvl, _ = _dp(g_u=72, d=144, gpus_per_node=4)
    assert hgx.traffic["dp_rs"].scaleout_bytes == pytest.approx(17 / 18 * 4 * p / 8)
    assert nvl.traffic["dp_rs"].scaleout_bytes == pytest.approx(4 * p / 72 / 2)


def test_pp_boundary_inside_and_across_domains():
    # t = 2, p = 4, B = 8, b = 1, d = 1 → m = 8, v = 1; bytes = 2·m·v·b·s·h·β/t
    # = 2·8·1·1·8192·8192·2/2 = 1,073,741,824 B
    w = workload(LLAMA3_70B, 8)
    inside = performance(w, layout(t=2, p=4), hgx_h100(), NO_OVERLAP)  # 2·4 = 8 GPUs: one domain
    assert (inside.traffic["pp"].nvlink_bytes, inside.traffic["pp"].scaleout_bytes) == (pytest.approx(1_073_741_824), 0)
    # d = 2 → m = 4: 536,870,912 B; pp stride t·d = 4, only 2 stages per domain → scale-out
    across = performance(w, layout(t=2, p=4, d=2), hgx_h100(), NO_OVERLAP)
    assert (across.traffic["pp"].nvlink_bytes, across.traffic["pp"].scaleout_bytes) == (0, pytest.approx(536_870_912))


def test_scaleout_time_uses_rails_nic_efficiency_and_oversubscription():
    # bw_so = 4 rails·400/8/8 GPUs = 25 GB/s × 0.9 = 22.5 GB/s per GPU; oversubscription 2:1 slows only the
    # classes whose traffic crosses the leaf uplinks: pipeline sends (χ = 1) take 1 + 1·(2 − 1) = 2× as long
    hw = hgx_h100(rails_per_node=4, nic_efficiency=0.9, oversubscription=2.0)
    assert hw.scaleout_effective_gbyte_s == pytest.approx(22.5)
    perf = performance(workload(LLAMA3_70B, 8), layout(t=2, p=4, d=2), hw, NO_OVERLAP)
    # 536,870,912 B (d = 2, m = 4) at 22.5 GB/s × 2, plus 2·m·v = 8 point-to-point launches of 8.4 µs (one network
    # step each, 0 µs on this test NIC)
    assert perf.traffic["pp"].time_s == pytest.approx(536_870_912 / 22.5e9 * 2 + 8 * LAUNCH_S)


# ----------------------------------------------------------------------------------- memory


def test_70b_on_one_gpu_does_not_fit():
    # states 70,553,706,496·(2 + 4 + 12) = 1,270.0 GB ≫ 74 GB (fp32 main grads; the optimizer ÷ d = 1)
    perf = performance(workload(LLAMA3_70B, 1), layout(), hgx_h100(), NO_OVERLAP)
    assert perf.memory_states_gb == pytest.approx(70_553_706_496 * 18 / 1e9)
    assert not perf.fits_memory


SBH_70B = 8192 * 8192  # s·b·h with b = 1
COEF_70B = 12 + 4 * 1024 / 8192 + 6 * 28672 / 8192  # = 33.5: norms and Q/O 12, K and V 0.5, SwiGLU 21 (memory.py)


def test_70b_tp8_pp4_dp8_fits():
    # states: P/(8·4)·(2 + 4 + 12/8) = 2,204,803,328·7.5 = 16.536 GB
    # activations (selective, SP): 33.5·s·b·h/t per layer = 33.5·8,388,608 = 281,018,368 B; the first stage holds
    # L/p = 20 layers of min(m = 8, p = 4) = 4 microbatches: 80·281,018,368 = 22.481 GB (the last stage's 20 layers
    # of one microbatch plus the fp32 softmax of its logits, 4·b·s·V/t = 525,336,576 B, 6.146 GB, need less);
    # total 39.0 GB ≤ 74 GB
    perf = performance(workload(LLAMA3_70B, 64), layout(t=8, p=4, d=8), hgx_h100(), NO_OVERLAP)
    assert perf.memory_states_gb == pytest.approx(70_553_706_496 / 32 * 7.5 / 1e9)
    assert perf.memory_activations_gb == pytest.approx(80 * COEF_70B * SBH_70B / 8 / 1e9)
    assert perf.fits_memory


def test_activation_memory_by_recompute_mode():
    logits = 4 * 8192 * 128256  # the fp32 softmax of one microbatch's logits (p = 1: on the same GPU)
    # full recompute, t = 1, L = 80: each layer keeps its input 2·s·b·h; one layer's full activations (33.5·s·b·h)
    # while it is recomputed: 80·2·67,108,864 + 33.5·67,108,864 + logits = 17.187 GB
    full = performance(workload(LLAMA3_70B, 1, activation_recompute="full"), layout(), hgx_h100(), NO_OVERLAP)
    assert full.memory_activations_gb == pytest.approx((80 * 2 * SBH_70B + COEF_70B * SBH_70B + logits) / 1e9)
    # none without FlashAttention adds 5·a·s/h = 5·64·8192/8192 = 320 to the 33.5 (Korthikanti's s² term)
    raw = performance(workload(LLAMA3_70B, 1, activation_recompute="none", flash_attention=False), layout(),
                      hgx_h100(), NO_OVERLAP)
    assert raw.memory_activations_gb == pytest.approx((353.5 * SBH_70B * 80 + logits) / 1e9)


def test_full_recompute_activations_are_divided_by_tp():
    # torchtitan Llama 3 70B, FSDP 32 × TP 8, full recompute, local batch 16 (docs/sources.md [D5]): 71.9 GiB
    # measured on 96 GB parts. The kept layer inputs are sequence-parallel: 2·s·b·h/t per layer, not 2·s·b·h
    # (v1 predicted 176 GB). sbh/t = 8192·16·8192/8 = 134,217,728: kept 80·2·134,217,728 = 21.475 GB, one layer
    # recomputed 33.5·134,217,728 = 4.496 GB, logits' fp32 softmax 4·16·8192·128256/8 = 8.405 GB; states (fsdp,
    # issue 41: the fp32 shard, grads and moments ÷ t·d = 256, bf16 weights for 2 of the 80 layers ÷ t = 8)
    # 70,553,706,496·(16/256 + 2·2/80/8) = 4.851 GB. Total 39.23 GB: fits the 96 GB part (the measured 77.2 GB
    # is the allocator's peak reservation, which the model does not count).
    perf = performance(workload(LLAMA3_70B, 512, activation_recompute="full", optimizer="fsdp"),
                       layout(t=8, d=32, b=16), hgx_h100(hbm_usable_gb=96 * 2**30 / 1e9 - 6), NO_OVERLAP)
    sbh = 8192 * 16 * 8192 / 8
    assert perf.memory_activations_gb == pytest.approx((80 * 2 * sbh + COEF_70B * sbh + 4 * 16 * 8192 * 128256 / 8) / 1e9)
    assert perf.memory_states_gb == pytest.approx(70_553_706_496 * (16 / 256 + 2 * 2 / 80 / 8) / 1e9)
    assert perf.fits_memory


def test_fp8_keeps_the_gemm_only_activations_in_one_byte():
    # FP8: the two norm outputs (2·2 B → 2·1 B) and the down-projection's input (2f/h → f/h) are FP8 copies:
    # 33.5 − 2 − 28672/8192 = 28 per s·b·h/t
    perf = performance(workload(LLAMA3_70B, 64, precision="fp8"), layout(t=8, p=4, d=8), hgx_h100(), NO_OVERLAP)
    assert perf.memory_activations_gb == pytest.approx(80 * 28 * SBH_70B / 8 / 1e9)


def test_llama3_405b_tp8_pp16_fits_an_80gb_h100():
    # Llama 3 paper (docs/sources.md [D7]): TP 8 × PP 16 on 80 GB H100s, no recompute at 8K, parameters and
    # gradients moving once per step (the distributed optimizer's footprint: bf16 weights, fp32 main grads, the
    # 12 optimizer bytes ÷ d = 64), first and last stages one layer fewer (balanced split: (126 + 2)/16 − 1 = 7
    # layers). Per layer 31.75·s·b·h/8 (12 + 4·1024/16384 + 6·53248/16384 = 31.75) = 532,676,608 B; 7 layers × 16
    # in flight (1F1B) = 59.660 GB; states 405,849,... /128·(6 + 12/64) = 19.6 GB; usable 80 GiB − 6 GB = 79.9 GB.
    model = dict(layers=126, hidden_size=16384, ffn_hidden_size=53248, ffn_type="swiglu", attention_heads=128,
                 kv_heads=8, vocab_size=128256, seq_len=8192)
    wl = workload(model, 2048, activation_recompute="none", pipeline_split="balanced")
    perf = performance(wl, layout(t=8, p=16, d=64), hgx_h100(hbm_usable_gb=80 * 2**30 / 1e9 - 6), NO_OVERLAP)
    params = parameter_count(TransformerShape(**model))
    assert perf.memory_activations_gb == pytest.approx(7 * 16 * 31.75 * 8192 * 16384 / 8 / 1e9)
    assert perf.memory_states_gb == pytest.approx(params / 128 * (6 + 12 / 64) / 1e9)
    assert perf.fits_memory


# ----------------------------------------------------------------------------------- step time


def test_step_time_and_breakdown_by_hand():
    # 22B-like GPT, 8 GPUs TP=8 (flat compute model): F_model = 72·4·2048·48·6144²·(1 + 2048/36864 + 51200/(12·48·6144))
    shape = dict(layers=48, hidden_size=6144, ffn_hidden_size=4 * 6144, ffn_type="gelu", attention_heads=64,
                 vocab_size=51200, seq_len=2048)
    w = workload(shape, 4, activation_recompute="none")
    perf = performance(w, layout(t=8, b=4), hgx_h100(), {**NO_OVERLAP, "tp": 0.25})
    f_model = 72 * 4 * 2048 * 48 * 6144**2 * (1 + 2048 / 36864 + 51200 / (12 * 48 * 6144))
    compute = f_model / (8 * 989e12 * 0.5)
    # TP: 48 layers·8·(7/8)·(4·2048·6144·2) = 33,822,867,456 B at 450 GB/s, plus 2·4·48 = 384 launches of
    # 8.4 µs + 7 × 3.4 µs; TP comm overlap hides it behind φ_tp = 0.25 of the step's linear GEMMs, whose share of
    # F_hw (no recompute) is lin/(lin + att): lin = 48·2·12·6144² + 2·6144·51200 = 44,115,689,472 FLOPs per token,
    # att = 48·4·2048·6144 = 2,415,919,104
    tp = 33_822_867_456 / 450e9 + 384 * (LAUNCH_S + 7 * NVLINK_STEP_S)
    window = 0.25 * compute * 44_115_689_472 / (44_115_689_472 + 2_415_919_104)
    assert perf.compute_s == pytest.approx(compute)
    assert perf.traffic["tp"].time_s == pytest.approx(tp)
    assert perf.traffic["tp"].window_s == pytest.approx(window)
    assert perf.traffic["tp"].exposed_s == pytest.approx(max(0.0, tp - window))
    assert perf.step_time_s == pytest.approx(compute + max(0.0, tp - window))
    assert perf.mfu == pytest.approx(f_model / (perf.step_time_s * 8 * 989e12))


def test_bubble_is_interleaved_1f1b():
    # p = 4, v = 2, m = 8: bubble = (p − 1)/v microbatch computes = T_comp·3/16 (flat model: no optimizer term)
    perf = performance(workload(LLAMA3_70B, 8), layout(t=2, p=4, v=2), hgx_h100(), NO_OVERLAP)
    assert perf.bubble_s == pytest.approx(perf.compute_s * 3 / 16)


def test_breakdown_terms_add_to_step_time():
    perf = performance(workload(LLAMA3_70B, 64), layout(t=8, p=4, v=5, d=8), hgx_h100(rails_per_node=2),
                       DEFAULT_OVERLAP)
    b = perf.to_dict()["breakdown_s"]
    assert b["compute"] + b["bubble"] + sum(b[k] for k in CLASSES) + b["capacity"] == pytest.approx(
        perf.step_time_s, rel=1e-12)
    assert b["exposed_comm"] == pytest.approx(sum(b[k] for k in CLASSES), rel=1e-12)
    d = perf.to_dict()
    assert d["bytes_per_gpu"]["scaleout"] == pytest.approx(sum(d["bytes_per_gpu"][k]["scaleout"] for k in CLASSES))
    assert set(d["flops_per_step"]) == {"model", "hardware"}
    assert perf.dominant_terms[0] == "compute"


@pytest.mark.parametrize("optimizer", ["distributed", "replicated"])
def test_d_times_each_bandwidth_term_is_affine_in_d_when_dp_spans_domains(optimizer):
    # t = 8 fills each HGX domain, so the dp group (stride 8) has n_in = 1 for every d; pp n_in = 1 too. Without
    # network latency the DP collectives are ⌈P/(t·p)/40M⌉ = 111 buckets for every d ≤ 40 (launch latency fixed per
    # step), so d·T is affine in d: f(4) − f(2) = (f(8) − f(4))/2 for compute, bubble and every class.
    w = workload(LLAMA3_70B, 64, optimizer=optimizer)
    hw = hgx_h100(rails_per_node=4)
    perfs = {d: performance(w, layout(t=8, p=2, d=d), hw, NO_OVERLAP) for d in (2, 4, 8)}
    for term in ("compute_s", "bubble_s", *CLASSES):
        f = {d: d * _term(p, term) for d, p in perfs.items()}
        assert f[4] - f[2] == pytest.approx((f[8] - f[4]) / 2, rel=1e-9, abs=1e-12), term
    assert perfs[8].traffic["dp_rs"].scaleout_bytes > 0


def test_network_latency_and_fsdp_make_d_times_dp_time_not_affine():
    # Why the MILP takes per-point coefficients (SPEC §4.5 "Exactness"): a ring's network steps grow with d
    # (n_out − 1 = d − 1 per launch at n_in = 1), so d·T_dp grows like d²; fsdp moves its bytes every microbatch,
    # m·(d−1)/d·M, so d·T_dp ∝ (1 − 1/d). Second differences are not zero.
    w = workload(LLAMA3_70B, 64)
    hw = hgx_h100(rails_per_node=4, nic_step_latency_s=14e-6)
    f = {d: d * performance(w, layout(t=8, p=2, d=d), hw, NO_OVERLAP).traffic["dp_rs"].time_s for d in (2, 4, 8)}
    assert f[4] - f[2] != pytest.approx((f[8] - f[4]) / 2, rel=1e-6)
    w = workload(LLAMA3_70B, 64, optimizer="fsdp")
    f = {d: d * performance(w, layout(t=8, p=2, d=d), hgx_h100(), NO_OVERLAP).traffic["dp_ag"].time_s
         for d in (2, 4, 8)}
    assert f[4] - f[2] != pytest.approx((f[8] - f[4]) / 2, rel=1e-6)


# ----------------------------------------------------------------------------------- placement


@pytest.mark.parametrize(
    ("lay", "g", "fragment"),
    [
        (layout(d=3, b=1), 8, "divide"),  # 3 GPUs in a domain of 8
        (layout(d=12), 8, "whole number of domains"),
        (layout(t=8, g_u=4), 4, "tp = 8 must divide the 4 GPUs"),  # TP must fit in the domain
        (layout(d=5, b=1), 8, "global batch"),  # B = 144 is not a multiple of 5
        (layout(t=8, p=3, d=6, g_u=72), 72, "does not divide"),  # dp spans 48 of 72 GPUs
        (layout(p=2, v=80, d=1), 8, "exceeds"),  # p·v = 160 > 80 layers
        (layout(p=2, v=41, d=1), 8, "exceeds"),  # 82 > 80 layers with a uniform split
    ],
)
def test_placement_problems(lay, g, fragment):
    reason = placement_problem(lay, workload(LLAMA3_70B, 144), g)
    assert reason is not None and fragment in reason


def test_balanced_split_counts_the_embedding_and_the_loss_as_layers():
    # 80 layers + 2 = 82 slots: p·v = 2·41 fits a balanced split, 2·42 = 84 does not
    balanced = workload(LLAMA3_70B, 144, pipeline_split="balanced")
    assert placement_problem(layout(p=2, v=41, d=1), balanced, 8) is None
    assert "82" in placement_problem(layout(p=2, v=42, d=1), balanced, 8)


@pytest.mark.parametrize(
    ("lay", "g"),
    [
        (layout(t=8, p=4, d=8), 8),
        (layout(t=4, p=2, d=36, g_u=72), 72),  # dp stride 4: 18 ranks per domain, 36 % 18 = 0
        (layout(t=8, d=9, g_u=72), 72),
        (layout(t=2, d=2, b=1), 8),  # 4-GPU job inside one domain (G_u = 8, 8 % 4 = 0)
    ],
)
def test_placeable_layouts(lay, g):
    batch = 72 if lay.dp in (9, 36) else 64
    assert placement_problem(lay, workload(LLAMA3_70B, batch), g) is None


def test_overlap_overrides():
    # overlap.dp sets both DP classes unless one is given on its own
    scenario = Scenario.model_validate({"name": "x", "workload": {"model": LLAMA3_70B, "global_batch_size": 8},
                                        "target": {"step_time_s": 1}, "overlap": {"dp": 0.0, "dp_ag": 0.5, "tp": 0.3}})
    assert overlap_for(scenario) == {"tp": 0.3, "cp": DEFAULT_OVERLAP["cp"], "pp": DEFAULT_OVERLAP["pp"], "dp_rs": 0.0,
                                     "dp_ag": 0.5, "ep": DEFAULT_OVERLAP["ep"]}
    assert DEFAULT_OVERLAP == {"tp": 0.0, "cp": 1.0, "pp": 1.0, "dp_rs": 1.0, "dp_ag": 1.0, "ep": 0.0}
