"""What a software stack does to the physics (SPEC §4.8, docs/model.md "Stacks"): factors on the GPU's compute
model, and exposed TP = max(0, T_tp − ψ·T_gemm) with ψ the stack's for the GPU generation."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from calibration_rows import LLAMA3_70B

import solver
from solver.perf.hardware import hardware_for
from solver.perf.layout import Layout
from solver.perf.step import performance
from solver.perf.traffic import overlap_for

REPO = Path(__file__).resolve().parent.parent.parent


def _scenario(stack: str, catalog, **overlap):
    ls = solver.load_scenario({"name": "s", "workload": {"model": LLAMA3_70B, "global_batch_size": 64,
                                                         "precision": "fp8", "stack": stack},
                               "target": {"step_time_s": 10.0}, "overlap": overlap})
    solver.inputs.check_against_catalog(ls, catalog)
    return ls.scenario


LAYOUT = Layout(tp=8, cp=1, pp=1, vp=1, dp=8, microbatch_size=1, gpus_per_domain_used=8)


@pytest.mark.parametrize(("platform", "psi"), [("dgx-h100", 0.22), ("dgx-b200", 0.14)])
def test_exposed_tp_is_tp_time_minus_psi_times_the_gemm_time(platform, psi, default_catalog):
    """megatron's ψ (catalog stacks: Hopper 0.22, Blackwell 0.14): exposed_tp = max(0, T_tp − ψ·T_gemm), T_gemm the
    step's linear-GEMM time; overlap.tp = 0 in the scenario exposes all of T_tp."""
    sc = _scenario("megatron", default_catalog)
    hw = hardware_for(sc, default_catalog, platform, "cx7-ndr", 8, 1.0)
    assert hw.tp_overlap == psi
    perf = performance(sc.workload, LAYOUT, hw, overlap_for(sc))
    tp = perf.traffic["tp"]
    assert tp.exposed_s == pytest.approx(max(0.0, tp.time_s - psi * perf.compute.gemm_s))
    assert 0 < tp.exposed_s < tp.time_s  # partly hidden at TP 8 on Llama 3 70B
    exposed = _scenario("megatron", default_catalog, tp=0.0)
    hw0 = hardware_for(exposed, default_catalog, platform, "cx7-ndr", 8, 1.0)
    perf0 = performance(exposed.workload, LAYOUT, hw0, overlap_for(exposed))
    assert perf0.traffic["tp"].exposed_s == pytest.approx(perf0.traffic["tp"].time_s)


def test_a_stacks_gemm_factor_slows_exactly_the_gemms(default_catalog):
    """torchtitan on Hopper: GEMM efficiency × 0.66 (catalog), attention untouched; the GEMM time of a large GEMM
    grows by ~1/0.66 (its roofline is compute-bound; the fixed 10 µs per GEMM does not scale)."""
    mt, tt = _scenario("megatron", default_catalog), _scenario("torchtitan", default_catalog)
    hm = hardware_for(mt, default_catalog, "dgx-h100", "cx7-ndr", 8, 1.0)
    ht = hardware_for(tt, default_catalog, "dgx-h100", "cx7-ndr", 8, 1.0)
    assert ht.compute.gemm_efficiency["fp8"] == pytest.approx(0.66 * hm.compute.gemm_efficiency["fp8"])
    assert ht.compute.attention_efficiency == hm.compute.attention_efficiency
    pm = performance(mt.workload, LAYOUT, hm, overlap_for(mt))
    pt = performance(tt.workload, LAYOUT, ht, overlap_for(tt))
    ratio = pt.compute.by_family_s["ffn_up"] / pm.compute.by_family_s["ffn_up"]
    assert ratio == pytest.approx(1 / 0.66, rel=0.03)
    assert pt.compute.by_family_s["attention"] == pytest.approx(pm.compute.by_family_s["attention"])


def test_the_calibration_systems_overlay_keeps_the_shipped_stack_values():
    """tests/data/calibration-systems.yaml repeats the fsdp and torchtitan entries of catalogs/default.yaml with the
    two non-shipped GPUs added: every value must stay equal."""
    shipped = {s["id"]: s for s in yaml.safe_load((REPO / "catalogs" / "default.yaml").read_text())["stacks"]}
    overlay = {s["id"]: s for s in yaml.safe_load((REPO / "tests" / "data" / "calibration-systems.yaml").read_text())["stacks"]}
    extra = {"a100-40gb", "h100-96gb-500w"}
    for sid, stack in overlay.items():
        ours = [{**e, "gpus": [g for g in e["gpus"] if g not in extra]} for e in stack["gpus"]]
        assert ours == shipped[sid]["gpus"], sid
