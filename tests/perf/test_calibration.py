"""Calibration: published runs reproduced by the performance model with the shipped defaults.

Rows come from the published tables quoted in docs/sources.md [C1]–[C4]; each test id names its source and row.
Hardware comes from catalogs/default.yaml (compute_efficiency, nvlink_efficiency, NIC efficiency
as calibrated there) and DEFAULT_OVERLAP. Error = predicted throughput / published − 1.

FIT rows chose the defaults: tolerance 10 %, 15 % for the stated outliers. HELD-OUT rows were not
used to choose anything; their tolerance is looser (25 %) and docs/model.md reports each error.
Model shapes are the published configs; each NeMo/Megatron-Bridge shape was checked by reproducing
the published "Model TFLOP/s/GPU" from tokens/s/GPU with SPEC 4.1 model FLOPs
(test_published_model_tflops_match_spec_flops).
"""

import pytest
import yaml
from conftest import REPO

from solver.inputs.schema import Catalog, Scenario
from solver.perf.hardware import hardware_for
from solver.perf.layout import Layout, placement_problem
from solver.perf.model import flops_per_step
from solver.perf.step import performance, tokens_per_s_per_gpu
from solver.perf.traffic import DEFAULT_OVERLAP

CATALOG = Catalog.model_validate(yaml.safe_load((REPO / "catalogs/default.yaml").read_text()))

# platform, NIC and rails per node of the published systems
SYSTEMS = {
    "a100": ("dgx-a100", "cx6-hdr", 8),  # DGX A100: 8 × HDR 200G
    "h100": ("dgx-h100", "cx7-ndr", 8),  # DGX H100: 8 × NDR 400G
    "b200": ("dgx-b200", "cx7-ndr", 8),
    "gb200": ("gb200-nvl72", "cx7-ndr", 4),
    "gb300": ("gb300-nvl72", "cx8-xdr", 4),
}


def gpt(layers, hidden, heads, vocab=51200, seq=2048):
    return dict(layers=layers, hidden_size=hidden, ffn_hidden_size=4 * hidden, ffn_type="gelu",
                attention_heads=heads, vocab_size=vocab, seq_len=seq, tied_embeddings=True)


def llama(layers, hidden, ffn, heads, kv, vocab, seq):
    return dict(layers=layers, hidden_size=hidden, ffn_hidden_size=ffn, ffn_type="swiglu",
                attention_heads=heads, kv_heads=kv, vocab_size=vocab, seq_len=seq)


def nemotron(layers, hidden, heads, kv, seq=4096):
    # squared-ReLU MLP: two matrices, like gelu
    return dict(layers=layers, hidden_size=hidden, ffn_hidden_size=4 * hidden, ffn_type="gelu",
                attention_heads=heads, kv_heads=kv, vocab_size=256000, seq_len=seq)


def mpt(layers, hidden, heads, seq=2048):
    return gpt(layers, hidden, heads, vocab=50368, seq=seq)


LLAMA3_8B = llama(32, 4096, 14336, 32, 8, 128256, 8192)
LLAMA3_70B = llama(80, 8192, 28672, 64, 8, 128256, 8192)
GPT3_175B = gpt(96, 12288, 96, vocab=50257)
K5 = "Korthikanti Table 5"
NEMO = "NeMo 24.07 DGX-H100 FP8"
MB = "Megatron-Bridge 25.11"
MOS = "MosaicML llm-foundry"

# (id, gpu, precision, shape, B, recompute, optimizer, (t, c, p, v, d, b), G_u, metric, published, tol)
# metric: "iter_s" = iteration time; "tok" = tokens/s/GPU. NeMo/Megatron runs: selective (core
# attention, which FlashAttention recomputes anyway) + distributed optimizer unless FSDP = 1.
FIT = [
    # 22B: smallest per-GPU GEMMs of the table (h/t = 768); the model's single η is 14 % optimistic.
    (f"{K5} 22B present work", "a100", "bf16", gpt(48, 6144, 64), 4, "selective", "distributed", (8, 1, 1, 1, 1, 4), 8, "iter_s", 1.10, 0.15),
    (f"{K5} 175B present work", "a100", "bf16", gpt(96, 12288, 96), 64, "selective", "distributed", (8, 1, 8, 3, 1, 1), 8, "iter_s", 13.75, 0.10),
    (f"{K5} 530B present work", "a100", "bf16", gpt(105, 20480, 128), 280, "selective", "distributed", (8, 1, 35, 3, 1, 1), 8, "iter_s", 37.83, 0.10),
    (f"{K5} 1T present work", "a100", "bf16", gpt(128, 25600, 160), 512, "selective", "distributed", (8, 1, 64, 1, 1, 1), 8, "iter_s", 71.49, 0.10),
    # GPT3-5B: small model (h = 4096), 10.3 % optimistic; allowed 15 %.
    (f"{NEMO} GPT3-5B", "h100", "fp8", gpt(24, 4096, 32, vocab=50257), 2048, "selective", "distributed", (1, 1, 1, 1, 64, 4), 8, "tok", 22521, 0.15),
    (f"{NEMO} GPT3-20B", "h100", "fp8", gpt(44, 6144, 48, vocab=50257), 256, "selective", "distributed", (2, 1, 1, 1, 32, 2), 8, "tok", 5851, 0.10),
    (f"{NEMO} GPT3-175B 128 GPUs", "h100", "fp8", GPT3_175B, 256, "selective", "distributed", (4, 1, 8, 6, 4, 1), 8, "tok", 726, 0.10),
    (f"{NEMO} LLAMA2-7B", "h100", "fp8", llama(32, 4096, 11008, 32, 32, 32000, 4096), 128, "selective", "distributed", (1, 1, 1, 1, 8, 1), 8, "tok", 16847, 0.10),
    (f"{NEMO} LLAMA2-13B", "h100", "fp8", llama(40, 5120, 13824, 40, 40, 32000, 4096), 128, "selective", "distributed", (1, 1, 4, 10, 4, 1), 8, "tok", 8646, 0.10),
    (f"{NEMO} LLAMA2-70B", "h100", "fp8", llama(80, 8192, 28672, 64, 8, 32000, 4096), 128, "selective", "distributed", (4, 1, 4, 20, 4, 1), 8, "tok", 1707, 0.10),
    # Nemotron-8B: 256k vocabulary and h = 4096 (small GEMMs); 12 % optimistic, allowed 15 %.
    (f"{NEMO} Nemotron-8B", "h100", "fp8", nemotron(32, 4096, 32, 32), 256, "selective", "distributed", (2, 1, 1, 1, 32, 4), 8, "tok", 12701, 0.15),
    (f"{NEMO} Nemotron-340B", "h100", "fp8", nemotron(96, 18432, 96, 8), 32, "selective", "distributed", (8, 1, 8, 12, 2, 1), 8, "tok", 322, 0.10),
    (f"{NEMO} LLAMA3-8B", "h100", "fp8", LLAMA3_8B, 128, "selective", "distributed", (1, 2, 1, 1, 4, 1), 8, "tok", 12036, 0.10),
    (f"{NEMO} LLAMA3-70B", "h100", "fp8", LLAMA3_70B, 128, "selective", "distributed", (4, 2, 4, 5, 2, 1), 8, "tok", 1533, 0.10),
    (f"{MB} DGX-GB300 LLAMA3_8B", "gb300", "fp8", LLAMA3_8B, 128, "selective", "distributed", (1, 1, 1, 1, 8, 2), 8, "tok", 37556, 0.10),
    (f"{MB} DGX-GB200 LLAMA3_8B", "gb200", "fp8", LLAMA3_8B, 128, "selective", "distributed", (1, 1, 1, 1, 8, 2), 8, "tok", 31508, 0.10),
    (f"{MB} DGX-B200 LLAMA3_8B", "b200", "fp8", LLAMA3_8B, 128, "selective", "distributed", (1, 1, 1, 1, 8, 2), 8, "tok", 30624, 0.10),
    (f"{MB} DGX-H100 LLAMA3_8B", "h100", "fp8", LLAMA3_8B, 128, "selective", "fsdp", (1, 1, 1, 1, 8, 1), 8, "tok", 14451, 0.10),
    # H100 LLAMA3_70B: PP = 8 with VP = 5 over IB; 11 % pessimistic, allowed 15 %.
    (f"{MB} DGX-H100 LLAMA3_70B", "h100", "fp8", LLAMA3_70B, 128, "selective", "distributed", (4, 1, 8, 5, 2, 1), 8, "tok", 1602, 0.15),
    (f"{MOS} H100 mpt-70b 32 GPUs", "h100", "bf16", mpt(80, 8192, 64), 1024, "full", "fsdp", (1, 1, 1, 1, 32, 2), 8, "tok", 882, 0.10),
    (f"{MOS} H100 mpt-30b 8 GPUs", "h100", "bf16", mpt(48, 7168, 64), 504, "full", "fsdp", (1, 1, 1, 1, 8, 3), 8, "tok", 2002, 0.10),
    (f"{MOS} H100 mpt-7b seq 2048", "h100", "bf16", mpt(32, 4096, 32), 48, "none", "fsdp", (1, 1, 1, 1, 8, 6), 8, "tok", 10643, 0.10),
    (f"{MOS} H100 mpt-7b seq 8192", "h100", "bf16", mpt(32, 4096, 32, seq=8192), 128, "full", "fsdp", (1, 1, 1, 1, 8, 8), 8, "tok", 6935, 0.10),
]

HELD_OUT = [
    (f"{K5} 22B full recompute", "a100", "bf16", gpt(48, 6144, 64), 4, "full", "distributed", (8, 1, 1, 1, 1, 4), 8, "iter_s", 1.42, 0.25),
    (f"{K5} 175B full recompute", "a100", "bf16", gpt(96, 12288, 96), 64, "full", "distributed", (8, 1, 8, 3, 1, 1), 8, "iter_s", 18.13, 0.25),
    (f"{K5} 530B full recompute", "a100", "bf16", gpt(105, 20480, 128), 280, "full", "distributed", (8, 1, 35, 3, 1, 1), 8, "iter_s", 49.05, 0.25),
    (f"{K5} 1T full recompute", "a100", "bf16", gpt(128, 25600, 160), 512, "full", "distributed", (8, 1, 64, 1, 1, 1), 8, "iter_s", 94.42, 0.25),
    (f"{NEMO} GPT3-175B 512 GPUs", "h100", "fp8", GPT3_175B, 2048, "selective", "distributed", (4, 1, 8, 6, 16, 2), 8, "tok", 782, 0.25),
    (f"{MB} DGX-GB300 LLAMA3_70B FSDP", "gb300", "fp8", LLAMA3_70B, 256, "selective", "fsdp", (1, 1, 1, 1, 64, 2), 64, "tok", 4520, 0.25),
    (f"{MB} DGX-GB200 LLAMA3_70B FSDP", "gb200", "fp8", LLAMA3_70B, 256, "selective", "fsdp", (1, 1, 1, 1, 64, 2), 64, "tok", 4312, 0.25),
    (f"{MOS} H100 mpt-70b 64 GPUs", "h100", "bf16", mpt(80, 8192, 64), 2048, "full", "fsdp", (1, 1, 1, 1, 64, 8), 8, "tok", 1039, 0.25),
    (f"{MOS} H100 mpt-30b 32 GPUs", "h100", "bf16", mpt(48, 7168, 64), 1344, "full", "fsdp", (1, 1, 1, 1, 32, 14), 8, "tok", 2308, 0.25),
    (f"{MOS} A100 mpt-70b 64 GPUs", "a100", "bf16", mpt(80, 8192, 64), 2048, "full", "fsdp", (1, 1, 1, 1, 64, 8), 8, "tok", 410, 0.25),
    (f"{MOS} A100 mpt-70b 32 GPUs", "a100", "bf16", mpt(80, 8192, 64), 1024, "full", "fsdp", (1, 1, 1, 1, 32, 2), 8, "tok", 373, 0.25),
    (f"{MOS} A100 mpt-30b 8 GPUs", "a100", "bf16", mpt(48, 7168, 64), 504, "full", "fsdp", (1, 1, 1, 1, 8, 3), 8, "tok", 916, 0.25),
    (f"{MOS} A100 mpt-13b 8 GPUs", "a100", "bf16", mpt(40, 5120, 40), 48, "none", "fsdp", (1, 1, 1, 1, 8, 2), 8, "tok", 2262, 0.25),
    (f"{MOS} A100 mpt-7b 8 GPUs", "a100", "bf16", mpt(32, 4096, 32), 96, "none", "fsdp", (1, 1, 1, 1, 8, 6), 8, "tok", 4641, 0.25),
]

# Held out and outside even 25 %: reported in docs/model.md, asserted only to stay on their side.
# Small models without checkpointing run well below the efficiency the large ones set; NeMo's own
# Nemotron-22B figure is ~27 % below its siblings. The model is optimistic on all of them.
KNOWN_OPTIMISTIC = [
    (f"{NEMO} Nemotron-22B", "h100", "fp8", nemotron(40, 6144, 48, 48), 256, "selective", "distributed", (2, 1, 4, 10, 8, 2), 8, "tok", 4256, 0.45),
    (f"{MOS} H100 mpt-13b 8 GPUs", "h100", "bf16", mpt(40, 5120, 40), 16, "none", "fsdp", (1, 1, 1, 1, 8, 2), 8, "tok", 4792, 0.30),
    (f"{MOS} H100 mpt-13b 64 GPUs", "h100", "bf16", mpt(40, 5120, 40), 128, "none", "fsdp", (1, 1, 1, 1, 64, 2), 8, "tok", 4800, 0.30),
    (f"{MOS} H100 mpt-3b 64 GPUs", "h100", "bf16", mpt(32, 2560, 20), 1152, "none", "fsdp", (1, 1, 1, 1, 64, 6), 8, "tok", 22525, 0.30),
    (f"{MOS} H100 mpt-1b 64 GPUs", "h100", "bf16", mpt(24, 2048, 16), 1280, "none", "fsdp", (1, 1, 1, 1, 64, 20), 8, "tok", 44402, 0.30),
]


def throughput_error(row) -> float:
    """Predicted / published throughput − 1 (for iteration times: published / predicted − 1)."""
    _, gpu, precision, shape, batch, recompute, optimizer, (t, c, p, v, d, b), g_u, metric, published, _ = row
    platform, nic, rails = SYSTEMS[gpu]
    scenario = Scenario.model_validate({
        "name": "calibration",
        "workload": {"model": shape, "global_batch_size": batch, "precision": precision,
                     "activation_recompute": recompute, "optimizer": optimizer},
        "target": {"step_time_s": 1.0},
    })
    hw = hardware_for(scenario, CATALOG, platform, nic, rails, 1.0)
    layout = Layout(tp=t, cp=c, pp=p, vp=v, dp=d, microbatch_size=b, gpus_per_domain_used=g_u)
    gpus_per_domain = CATALOG.by_id("platforms")[platform].gpus_per_domain
    assert placement_problem(layout, scenario.workload, gpus_per_domain) is None
    perf = performance(scenario.workload, layout, hw, DEFAULT_OVERLAP)
    if metric == "iter_s":
        return published / perf.step_time_s - 1
    return tokens_per_s_per_gpu(scenario.workload, perf) / published - 1


@pytest.mark.parametrize("row", FIT, ids=[r[0] for r in FIT])
def test_fit_row_within_tolerance(row):
    assert abs(throughput_error(row)) <= row[-1]


@pytest.mark.parametrize("row", HELD_OUT, ids=[r[0] for r in HELD_OUT])
def test_held_out_row_within_loose_tolerance(row):
    assert abs(throughput_error(row)) <= row[-1]


@pytest.mark.parametrize("row", KNOWN_OPTIMISTIC, ids=[r[0] for r in KNOWN_OPTIMISTIC])
def test_known_outlier_is_optimistic_and_bounded(row):
    error = throughput_error(row)
    assert 0 < error <= row[-1]


def test_fit_rows_rms_error_under_8_percent():
    errors = [throughput_error(r) for r in FIT]
    assert (sum(e * e for e in errors) / len(errors)) ** 0.5 < 0.08


@pytest.mark.parametrize(
    ("shape", "tokens_per_gpu", "model_tflops"),
    [
        # NeMo 24.07 rows: published tokens/s/GPU and model TFLOP/s/GPU
        (LLAMA3_70B, 1533, 738),
        (llama(80, 8192, 28672, 64, 8, 32000, 4096), 1707, 759),
        (GPT3_175B, 726, 782),
        (nemotron(40, 6144, 48, 48), 4256, 554),
        (nemotron(96, 18432, 96, 8), 322, 678),
    ],
)
def test_published_model_tflops_match_spec_flops(shape, tokens_per_gpu, model_tflops):
    """The shapes above are the published ones: SPEC 4.1 F_model per token × tokens/s = TFLOP/s."""
    scenario_workload = Scenario.model_validate(
        {"name": "x", "workload": {"model": shape, "global_batch_size": 1}, "target": {"step_time_s": 1}}
    ).workload
    model_flops, _ = flops_per_step(scenario_workload)
    assert model_flops / shape["seq_len"] * tokens_per_gpu / 1e12 == pytest.approx(model_tflops, rel=0.01)


def test_catalog_overlap_defaults_are_the_calibrated_ones():
    # docs/model.md: φ = (tp 0, cp 0, pp 0.5, dp 0.8)
    assert (DEFAULT_OVERLAP["tp"], DEFAULT_OVERLAP["cp"], DEFAULT_OVERLAP["pp"], DEFAULT_OVERLAP["dp"]) == (0.0, 0.0, 0.5, 0.8)
