"""Monotone in d (docs/model.md): within one layout shape and G_u, a point's memory per GPU and its T_comp + bubble
never grow with the data-parallel degree d. The design space relies on it twice: `ScanContext.open_from` finds the
first point passing both checks by bisection, and `_fits_memory_somewhere` / `_record_fastest` read the largest d
as the leanest. Checked on every layout, G_u and platform of shipped scenarios covering the GEMM-shape compute
model (dense and MoE, deep pipelines, interleaving, distributed and replicated optimizers, full recompute) and on
the toy catalog's flat compute model."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

import solver
from solver.design_space import architectures, hardware_of
from solver.perf.layout import dp_candidates, layout_shapes, placement_problem
from solver.perf.memory import memory_per_gpu_gb
from solver.perf.step import compute_and_bubble_s
from solver.perf.totals import parameter_count

ROOT = Path(__file__).resolve().parents[2]
TOL = 1e-12


def _violations(sc, catalog) -> tuple[int, list[str]]:
    """(layouts checked, every place where memory or T_comp + bubble grows from one placeable d to the next)."""
    wl, params = sc.workload, parameter_count(sc.workload.model)
    out, checked = [], 0
    perfs = {a.perf.platform: a.perf for a in sorted(architectures(sc, catalog))}  # compute is NIC-independent
    platforms = catalog.by_id("platforms")
    for plat_id, perf in sorted(perfs.items()):
        hw = hardware_of(sc, catalog, perf)
        for g_used in platforms[plat_id].domain_sizes():
            for lay in layout_shapes(sc):
                layouts = [x for d in dp_candidates(sc, lay)
                           if placement_problem(x := lay.layout(dp=d, gpus_per_domain_used=g_used), wl, g_used) is None]
                checked += 1
                mem = [memory_per_gpu_gb(wl, x, params) for x in layouts]
                comp = [compute_and_bubble_s(wl, x, hw, params) for x in layouts]
                for name, values in (("memory", mem), ("T_comp + bubble", comp)):
                    for i in range(1, len(values)):
                        if values[i] > values[i - 1] * (1 + TOL):
                            out.append(f"{plat_id} G_u={g_used} {lay.describe()}: {name} grows from d="
                                       f"{layouts[i - 1].dp} to d={layouts[i].dp} ({values[i - 1]} → {values[i]})")
    return checked, out


@pytest.mark.parametrize("name, edit", [
    ("llama3-70b", {}),
    ("llama3-70b", {"workload": {"optimizer": "replicated", "activation_recompute": "full"}}),
    ("gpt3-175b", {}),
    ("deepseek-v3", {}),
    ("qwen3-235b-a22b", {"workload": {"optimizer": "replicated"}}),
    # the 10M-combination bench case's widened layouts (tp 1-8, cp 1-2, pp 1-16, vp 1-4, b 1-4, ep 4-256) on one rack
    ("../bench/scenarios/moe-10m", {"constraints": {"platforms": ["gb200-nvl72"], "fabrics": ["fat-tree"]}}),
])
def test_memory_and_compute_never_grow_with_d(name, edit, default_catalog):
    doc = yaml.safe_load((ROOT / "scenarios" / f"{name}.yaml").resolve().read_text(encoding="utf-8"))
    for key, value in edit.items():
        doc[key] = {**doc[key], **value}
    sc = solver.load_scenario(doc).scenario
    checked, bad = _violations(sc, default_catalog)
    assert checked > 10 and bad == []


def test_the_flat_compute_model_never_grows_with_d(toy_catalog):
    doc = dict(name="toy", workload=dict(model=dict(layers=4, hidden_size=256, ffn_hidden_size=256, ffn_type="gelu",
                                                    attention_heads=4, vocab_size=2048, seq_len=256),
                                         global_batch_size=64, grad_reduce_dtype="bf16"),
               target=dict(step_time_s=0.004), parallelism=dict(tp=[1, 2], cp=1, pp=[1, 2, 4], vp=[1, 2],
                                                                microbatch_size=[1, 2]))
    checked, bad = _violations(solver.load_scenario(doc).scenario, toy_catalog)
    assert checked > 10 and bad == []


@pytest.mark.parametrize("step_time_s", [2.0, 8.0, 30.0])
def test_the_bisection_finds_the_first_open_point(step_time_s, default_catalog):
    """`ScanContext.open_from` (bisection) equals the first d, scanned one by one, at which memory fits and T_comp + bubble
    meets the target, on every placeable layout of llama3-70b on hgx-h100 (at 2 s few layouts have an open point, at
    30 s most do from their smallest d)."""
    from solver.design_space.scan import ScanContext

    doc = yaml.safe_load((ROOT / "scenarios" / "llama3-70b.yaml").read_text(encoding="utf-8"))
    doc["target"] = {"step_time_s": step_time_s}
    sc = solver.load_scenario(doc).scenario
    wl, params = sc.workload, parameter_count(sc.workload.model)
    perf = next(a.perf for a in sorted(architectures(sc, default_catalog)) if a.perf.platform == "hgx-h100")
    hw = hardware_of(sc, default_catalog, perf)
    ctx = ScanContext(sc, default_catalog, "dominated")
    seen = set()
    for lay in layout_shapes(sc):
        ds = [d for d in dp_candidates(sc, lay)
              if placement_problem(lay.layout(dp=d, gpus_per_domain_used=8), wl, 8) is None]
        if not ds:
            continue
        layouts = [lay.layout(dp=d, gpus_per_domain_used=8) for d in ds]
        first = next((j for j, x in enumerate(layouts) if memory_per_gpu_gb(wl, x, params) <= hw.hbm_usable_gb
                      and compute_and_bubble_s(wl, x, hw, params) <= step_time_s), len(ds))
        assert ctx.open_from(lay, 8, ds, hw) == first, lay.describe()
        seen.add(first == len(ds))
    assert seen == {True, False} or step_time_s == 30.0
