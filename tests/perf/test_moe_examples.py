"""The shipped Mixture-of-Experts examples (scenarios/deepseek-v3.yaml, scenarios/qwen3-235b-a22b.yaml): the
arithmetic of their header comments, and the NVL72-against-HGX choice each shows."""
from __future__ import annotations

import math

import pytest
from conftest import REPO

import solver
from solver.perf import moe
from solver.perf.layout import Layout
from solver.perf.totals import flops_per_step

SCENARIOS = REPO / "scenarios"


def _load(name: str):
    return solver.load_scenario(SCENARIOS / f"{name}.yaml")


def test_deepseek_v3_header_arithmetic():
    """260.0 GFLOP per token (the published tables' 260.0, docs/sources.md [M7]) × 16,777,216 tokens = 4.36e18;
    14.8T tokens / 16,777,216 = 882,149 steps = 71.5 days at 7 s; published 2,815 tokens/s/GPU on B200 and
    4,193 on GB200 → ⌈16,777,216/(7·2,815)⌉ = 852 and ⌈16,777,216/(7·4,193)⌉ = 572 GPUs."""
    sc = _load("deepseek-v3").scenario
    model_flops, _ = flops_per_step(sc.workload)
    assert model_flops / 16_777_216 == pytest.approx(260.0e9, rel=5e-4)
    assert model_flops == pytest.approx(4.36e18, rel=1e-3)
    assert 14.8e12 / 16_777_216 * 7.0 / 86_400 == pytest.approx(71.5, abs=0.05)
    assert (math.ceil(16_777_216 / (7 * 2815)), math.ceil(16_777_216 / (7 * 4193))) == (852, 572)
    assert moe.parameter_counts(sc.workload.model).routed == 59 * 256 * 3 * 7168 * 2048  # 665.2 B


def test_qwen3_235b_header_arithmetic():
    """148.0 GFLOP per token × 4,194,304 = 6.21e17; 1T tokens = 238,419 steps = 5.5 days at 2 s; 5,680
    tokens/s/GPU (GB200, 26.04.01) → ⌈369.2⌉ = 370 GPUs (the header's "369" rounds); routed experts
    94·128·3·4096·1536 = 227.1 B, /8 = 28.4 B."""
    sc = _load("qwen3-235b-a22b").scenario
    model_flops, _ = flops_per_step(sc.workload)
    assert model_flops / 4_194_304 == pytest.approx(148.0e9, rel=5e-4)
    assert 1e12 / 4_194_304 * 2.0 / 86_400 == pytest.approx(5.5, abs=0.05)
    assert 4_194_304 / (2 * 5680) == pytest.approx(369, abs=0.5)
    assert moe.parameter_counts(sc.workload.model).routed == 94 * 128 * 3 * 4096 * 1536


def test_qwen3_235b_memory_forces_pipelining_on_hgx():
    """The header's memory argument: EP8 at PP1 does not fit a B200 (187 GB usable since the physics v2 merge:
    180 GiB = 193.3e9 B − 6 GB reserved), PP2 does (bf16 gradients, as the scenario states)."""
    ls = _load("qwen3-235b-a22b")
    from solver.perf.hardware import hardware_for
    from solver.perf.step import performance

    hw = hardware_for(ls.scenario, solver.load_catalog(), "hgx-b200", "cx7-ndr", 8, 1.0)
    lay = Layout(tp=1, cp=1, pp=1, vp=1, dp=512, microbatch_size=1, gpus_per_domain_used=8, ep=8)
    assert not performance(ls.scenario.workload, lay, hw).fits_memory
    assert performance(ls.scenario.workload, Layout(**{**lay.__dict__, "pp": 2, "dp": 256}), hw).fits_memory


@pytest.mark.parametrize(("name", "first", "also"), [
    ("qwen3-235b-a22b", "gb200-nvl72", "hgx-b200"),  # EP32 in the rack beats PP on HGX at 4M-token steps
    # since the physics v2 merge the NVL72 (EP64 in the rack, PP4) ranks first: on HGX the DP windows, the last
    # stage's logits and MTP layer and the fp32 optimizer step leave EP8 PP8 at 8.1 s on 1,024 B200s (scenario header)
    ("deepseek-v3", "gb200-nvl72", "hgx-b200"),
])
def test_example_ranks_both_platforms(name, first, also):
    result = solver.solve(_load(name), top_k=5)
    platforms = [d.architecture.platform for d in result.designs]
    assert result.status == "optimal"
    assert platforms[0] == first and also in platforms
    best = result.designs[0]
    assert best.layout.ep > 1 and best.perf.traffic["ep"].nvlink_bytes > 0
    # the examples keep the published tables' perfectly balanced experts, and the result says so
    assert any("load_imbalance = 1" in w for w in result.warnings)
