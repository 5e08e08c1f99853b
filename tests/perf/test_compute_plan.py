"""The one compute path (solver/perf/compute.py: `ComputePlan`, `gemm_part`, `time_plan`, issue 39): a GEMM group's
overhead rule and a plan's sums, pacing and families worked by hand. Dense and MoE models are both plans; the
shipped examples' answers did not move when they became plans (the issue-39 notes)."""
import pytest
from test_compute import LLAMA3_70B, PARAMS, lay, workload

from solver.perf.compute import ComputePlan, Gemm, Part, gemm_part, time_plan

# 4096³ in BF16 at 1000 TFLOP/s × η 0.5 × the shape factor (4096/4296)³ (test_compute.test_one_gemm_by_hand),
# compute-bound; each pass (forward, dgrad, wgrad) of a square GEMM has the same shape.
X = 2 * 4096**3 / 500e12 / (4096 / 4296) ** 3
T0 = 10e-6


def test_one_gemm_counts_the_overhead_in_each_gemm():
    p = gemm_part(Gemm("g", 4096, 4096, 4096, False), PARAMS, False)
    assert p.forward_s == pytest.approx(X + T0)
    assert p.backward_s == pytest.approx(2 * (X + T0))


def test_a_grouped_gemm_counts_the_overhead_once_per_pass():
    # four equal GEMMs launched as one grouped GEMM: 4x + t0 forward, 8x + 2 t0 backward (dgrad and wgrad)
    p = gemm_part(Gemm("g", 4096, 4096, 4096, False), PARAMS, False, group=4, grouped=True)
    assert p.forward_s == pytest.approx(4 * X + T0)
    assert p.backward_s == pytest.approx(8 * X + 2 * T0)


def test_recompute_and_efficiency_factor():
    # again: the forward once more in the backward; factor 0.5 halves the efficiency (x doubles, t0 stays)
    p = gemm_part(Gemm("g", 4096, 4096, 4096, False), PARAMS, False, factor=0.5, again=True, again_share=0.25)
    assert p.backward_s == pytest.approx(2 * (2 * X + T0) + 1.25 * (2 * X + T0))


def _plan(**kw):
    # an average layer: a part of 1 s + 2 s, and a group worth a quarter of the layers holding 0.5 s + 1 s;
    # the tail 0.3 s + 0.6 s on the last stage
    layer = (Part(1.0, 2.0, "attention"), Part(family="b", share=0.25, parts=(Part(0.5, 1.0, "c"),)))
    return ComputePlan(layer, (Part(0.3, 0.6),), ("attention", "b", "c", "logits"), **kw)


def test_a_plan_on_the_last_of_four_uniform_stages():
    # 80 layers over p = 4: the last stage paces with 20 layers and the tail
    mb = time_plan(_plan(gemm_families=("b",)), workload(LLAMA3_70B, 8), lay(p=4))
    assert mb.forward_s == pytest.approx(20 * (1.0 + 0.25 * 0.5) + 0.3)  # 22.8
    assert mb.backward_s == pytest.approx(20 * (2.0 + 0.25 * 1.0) + 0.6)  # 45.6
    assert mb.by_family_s == pytest.approx({"attention": 60.0, "b": 7.5, "c": 7.5, "logits": 0.9})
    assert list(mb.by_family_s) == ["attention", "b", "c", "logits"]
    assert mb.gemm_s == pytest.approx(7.5)
    assert mb.attention_s == pytest.approx(60.0)


def test_gemm_parts_and_a_repeated_forward():
    # the GEMM window as layers × parts + the tail: 20 · 0.25 · 1.5 + 0.9; repeating the first part's forward
    # adds 1 s per layer to the backward and counts its forward twice in its family
    mb = time_plan(_plan(gemm_parts=(Part(parts=(Part(0.5, 1.0),), share=0.25),), repeat=(Part(1.0, 2.0, "attention"),)),
                   workload(LLAMA3_70B, 8), lay(p=4))
    assert mb.gemm_s == pytest.approx(8.4)
    assert mb.backward_s == pytest.approx(20 * (2.25 + 1.0) + 0.6)  # 65.6
    assert mb.by_family_s["attention"] == pytest.approx(20 * (2 * 1.0 + 2.0))  # 80
