"""Performance model (solver/perf, SPEC §4): every expected number is worked by hand here."""
import pytest

from solver.inputs.schema import Scenario, TransformerShape, Workload
from solver.perf.hardware import Hardware
from solver.perf.layout import Layout, placement_problem
from solver.perf.model import flops_per_step, parameter_count
from solver.perf.step import performance
from solver.perf.traffic import DEFAULT_OVERLAP, overlap_for

LLAMA3_70B = dict(layers=80, hidden_size=8192, ffn_hidden_size=28672, ffn_type="swiglu", attention_heads=64,
                  kv_heads=8, vocab_size=128256, seq_len=8192)
GPT3_175B = dict(layers=96, hidden_size=12288, ffn_hidden_size=4 * 12288, ffn_type="gelu", attention_heads=96,
                 vocab_size=50257, seq_len=2048, tied_embeddings=True)
NO_OVERLAP = {"tp": 0.0, "cp": 0.0, "pp": 0.0, "dp": 0.0}


def workload(shape, batch, **kw):
    return Workload(model=shape, global_batch_size=batch, **kw)


def hgx_h100(**kw):
    """DGX H100 from docs/sources.md §gpus: 989 TFLOP/s bf16, 450 GB/s NVLink per direction, 8 × 400G."""
    base = dict(gpu_id="h100", peak_tflops=989.0, compute_efficiency=0.5, hbm_usable_gb=74.0,
                nvlink_gbyte_s=450.0, nvlink_efficiency=1.0, gpus_per_node=8, rails_per_node=8,
                nic_speed_gbps=400.0, nic_efficiency=1.0, oversubscription=1.0)
    return Hardware(**{**base, **kw})


def _term(perf, term):
    """A step quantity by name: compute_s, bubble_s, or a traffic class's transfer time."""
    return getattr(perf, term) if term.endswith("_s") else perf.traffic[term].time_s


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
    # at 450 GB/s (η = 1): 75.16 s·1e9 / 450e9 = 0.16703 s
    assert perf.traffic["tp"].time_s == pytest.approx(75_161_927_680 / 450e9)


def _dp_bytes(g_u, d, gpus_per_node=8):
    shape = dict(LLAMA3_70B, layers=2, vocab_size=1000)  # small, P is all that matters here
    params = parameter_count(TransformerShape(**shape))
    perf = performance(workload(shape, d), layout(d=d, g_u=g_u), hgx_h100(gpus_per_node=gpus_per_node), NO_OVERLAP)
    return perf, 2 * params  # M = P/(t·p)·β_grad with t = p = 1


def test_dp_group_over_four_hgx_nodes_is_hierarchical():
    # d = 32 on 4 domains of 8: n_in = 8, n_out = 4, all-reduce κ = 2
    # NVLink 2·(7/8)·M = 1.75·M; scale-out 2·(3/4)·M/8 = 0.1875·M (a flat ring would send 2·31/32·M)
    perf, message = _dp_bytes(g_u=8, d=32)
    assert perf.traffic["dp"].nvlink_bytes == pytest.approx(1.75 * message)
    assert perf.traffic["dp"].scaleout_bytes == pytest.approx(0.1875 * message)


def test_same_dp_group_inside_nvl72_uses_no_scaleout():
    # 32 GPUs in one NVL72 domain (G_u = 64, N = 32 divides it): n_in = 32, n_out = 1
    # NVLink 2·(31/32)·M = 1.9375·M; scale-out 0
    perf, message = _dp_bytes(g_u=64, d=32, gpus_per_node=4)
    assert perf.traffic["dp"].nvlink_bytes == pytest.approx(1.9375 * message)
    assert perf.traffic["dp"].scaleout_bytes == 0


def test_dp_over_two_nvl72_domains_cuts_scaleout_by_the_domain_size():
    # d = 144: HGX (n_in 8, n_out 18): 2·(17/18)·M/8 = 0.236111·M
    #          NVL72 (n_in 72, n_out 2): 2·(1/2)·M/72 = 0.013889·M, 17× less
    hgx, message = _dp_bytes(g_u=8, d=144)
    nvl, _ = _dp_bytes(g_u=72, d=144, gpus_per_node=4)
    assert hgx.traffic["dp"].scaleout_bytes == pytest.approx(2 * 17 / 18 * message / 8)
    assert nvl.traffic["dp"].scaleout_bytes == pytest.approx(message / 72)


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
    # bw_so = 4 rails·400/8/8 GPUs = 25 GB/s × 0.9 / 2 = 11.25 GB/s per GPU
    hw = hgx_h100(rails_per_node=4, nic_efficiency=0.9, oversubscription=2.0)
    assert hw.scaleout_effective_gbyte_s == pytest.approx(11.25)
    perf = performance(workload(LLAMA3_70B, 8), layout(t=2, p=4, d=2), hw, NO_OVERLAP)
    assert perf.traffic["pp"].time_s == pytest.approx(536_870_912 / 11.25e9)


# ----------------------------------------------------------------------------------- memory


def test_70b_on_one_gpu_does_not_fit():
    # states 70,553,706,496·(2 + 2 + 12) = 1,128.9 GB ≫ 74 GB
    perf = performance(workload(LLAMA3_70B, 1), layout(), hgx_h100(), NO_OVERLAP)
    assert perf.memory_states_gb == pytest.approx(70_553_706_496 * 16 / 1e9)
    assert not perf.fits_memory


def test_70b_tp8_pp4_dp8_fits():
    # states: P/(8·4)·(2 + 2 + 12/8) = 2,204,803,328·5.5 = 12.126 GB
    # activations (selective): 34·s·b·h/t per layer × L = 34·8192·1·8192/8·80 = 22.817 GB
    # total 34.94 GB ≤ 74 GB
    perf = performance(workload(LLAMA3_70B, 64), layout(t=8, p=4, d=8), hgx_h100(), NO_OVERLAP)
    assert perf.memory_states_gb == pytest.approx(70_553_706_496 / 32 * 5.5 / 1e9)
    assert perf.memory_activations_gb == pytest.approx(22.817013760)
    assert perf.fits_memory


def test_activation_memory_by_recompute_mode():
    # s = 8192, b = 1, h = 8192, t = 1, L = 80: full keeps 2·s·b·h per layer = 134,217,728·80 = 10.737 GB
    full = performance(workload(LLAMA3_70B, 1, activation_recompute="full"), layout(), hgx_h100(), NO_OVERLAP)
    assert full.memory_activations_gb == pytest.approx(10.73741824)
    # none without FlashAttention adds 5·a·s/h = 5·64·8192/8192 = 320 to the 34: 354·67,108,864·80 bytes
    raw = performance(workload(LLAMA3_70B, 1, activation_recompute="none", flash_attention=False), layout(),
                      hgx_h100(), NO_OVERLAP)
    assert raw.memory_activations_gb == pytest.approx(354 * 67_108_864 * 80 / 1e9)


# ----------------------------------------------------------------------------------- step time


def test_step_time_and_breakdown_by_hand():
    # 22B-like GPT, 8 GPUs TP=8: F_model = 72·4·2048·48·6144²·(1 + 2048/36864 + 51200/(12·48·6144))
    shape = dict(layers=48, hidden_size=6144, ffn_hidden_size=4 * 6144, ffn_type="gelu", attention_heads=64,
                 vocab_size=51200, seq_len=2048)
    w = workload(shape, 4, activation_recompute="none")
    hw = hgx_h100(compute_efficiency=0.5)
    perf = performance(w, layout(t=8, b=4), hw, {"tp": 0.25, "cp": 0.0, "pp": 0.0, "dp": 0.0})
    f_model = 72 * 4 * 2048 * 48 * 6144**2 * (1 + 2048 / 36864 + 51200 / (12 * 48 * 6144))
    compute = f_model / (8 * 989e12 * 0.5)
    # TP bytes: 48 layers·8·(7/8)·(4·2048·6144·2) = 48·7·100,663,296 = 33,822,867,456 B at 450 GB/s
    tp = 33_822_867_456 / 450e9
    assert perf.compute_s == pytest.approx(compute)
    assert perf.traffic["tp"].time_s == pytest.approx(tp)
    assert perf.traffic["tp"].exposed_s == pytest.approx(max(0.0, tp - 0.25 * compute))
    assert perf.step_time_s == pytest.approx(compute + max(0.0, tp - 0.25 * compute))
    assert perf.mfu == pytest.approx(f_model / (perf.step_time_s * 8 * 989e12))


def test_bubble_is_interleaved_1f1b():
    # p = 4, v = 2, m = 8: bubble = T_comp·3/16
    perf = performance(workload(LLAMA3_70B, 8), layout(t=2, p=4, v=2), hgx_h100(), NO_OVERLAP)
    assert perf.bubble_s == pytest.approx(perf.compute_s * 3 / 16)


def test_breakdown_terms_add_to_step_time():
    perf = performance(workload(LLAMA3_70B, 64), layout(t=8, p=4, v=5, d=8), hgx_h100(rails_per_node=2),
                       DEFAULT_OVERLAP)
    b = perf.to_dict()["breakdown_s"]
    assert b["compute"] + b["bubble"] + b["tp"] + b["cp"] + b["pp"] + b["dp"] == pytest.approx(
        perf.step_time_s, rel=1e-12)
    assert b["exposed_comm"] == pytest.approx(b["tp"] + b["cp"] + b["pp"] + b["dp"], rel=1e-12)
    d = perf.to_dict()
    assert d["bytes_per_gpu"]["scaleout"] == pytest.approx(sum(d["bytes_per_gpu"][k]["scaleout"]
                                                               for k in ("tp", "cp", "pp", "dp")))
    assert set(d["flops_per_step"]) == {"model", "hardware"}
    assert perf.dominant_terms[0] == "compute"


@pytest.mark.parametrize("optimizer", ["distributed", "fsdp"])
def test_d_times_each_term_is_affine_in_d_when_dp_spans_domains(optimizer):
    # t = 8 fills each HGX domain, so the dp group (stride 8) has n_in = 1 for every d; pp n_in = 1 too.
    # The MILP multiplies the step-time inequality by d, so d·T must be affine: f(4) − f(2) = (f(8) − f(4))/2.
    w = workload(LLAMA3_70B, 64, optimizer=optimizer)
    hw = hgx_h100(rails_per_node=4)
    perfs = {d: performance(w, layout(t=8, p=2, d=d), hw, NO_OVERLAP) for d in (2, 4, 8)}
    for term in ("compute_s", "bubble_s", "tp", "cp", "pp", "dp"):
        f = {d: d * _term(p, term) for d, p in perfs.items()}
        assert f[4] - f[2] == pytest.approx((f[8] - f[4]) / 2, rel=1e-9, abs=1e-12), term
    assert perfs[8].traffic["dp"].scaleout_bytes > 0


@pytest.mark.parametrize("optimizer", ["distributed", "fsdp"])
def test_d_times_each_term_is_affine_in_d_with_several_dp_ranks_per_domain(optimizer):
    # t = 2 on an 8-GPU domain: the dp group (stride 2) has n_in = 8/2 = 4 ranks per domain for every
    # d ≥ 4 (a stage fills whole domains), so its NVLink share 2·(4−1)/4 and scale-out share
    # 2·(n_out−1)/n_out/4 keep the same form: d·T stays affine, f(8) − f(4) = (f(16) − f(8))/2.
    w = workload(LLAMA3_70B, 64, optimizer=optimizer)
    hw = hgx_h100(rails_per_node=4)
    perfs = {d: performance(w, layout(t=2, p=8, d=d), hw, NO_OVERLAP) for d in (4, 8, 16)}
    for term in ("compute_s", "bubble_s", "tp", "cp", "pp", "dp"):
        f = {d: d * _term(p, term) for d, p in perfs.items()}
        assert f[8] - f[4] == pytest.approx((f[16] - f[8]) / 2, rel=1e-9, abs=1e-12), term
    assert perfs[16].traffic["dp"].nvlink_bytes > 0 and perfs[16].traffic["dp"].scaleout_bytes > 0


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
    ],
)
def test_placement_problems(lay, g, fragment):
    reason = placement_problem(lay, workload(LLAMA3_70B, 144), g)
    assert reason is not None and fragment in reason


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
    scenario = Scenario.model_validate({"name": "x", "workload": {"model": LLAMA3_70B, "global_batch_size": 8},
                                        "target": {"step_time_s": 1}, "overlap": {"dp": 0.0, "tp": 0.3}})
    assert overlap_for(scenario) == {"tp": 0.3, "cp": DEFAULT_OVERLAP["cp"], "pp": DEFAULT_OVERLAP["pp"], "dp": 0.0,
                                     "ep": DEFAULT_OVERLAP["ep"]}
