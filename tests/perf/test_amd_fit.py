"""AMD Instinct compute models (issue 46): fitted on AMD's published throughput ratios against calibrated NVIDIA GPUs
(tests/perf/amd_rows.py, docs/sources.md [P11][P12]), the fit reproducible (tools/fit_amd.py), held-out rows reported.

- `fit` rows chose the parameters: each reproduced within 2 % (a 1-D root per parameter; the rest is rounding);
- `held_out` rows chose nothing: the 32-GPU Primus-Megatron 70B row within 10 %; the two single-node 70B rows are
  named beyond 20 % (within 35 %): at the assumed layout (tp 8 on one node, the only dense 70B layout a B200 node
  fits) TP is exposed over Infinity Fabric (0.67 × 448 GB/s, no measured TP overlap) against NVLink 5 on B200; AMD's
  single-node rows probably ran FSDP without TP (Primus-torchtitan), which the rows do not state (docs/model.md).
Reserved for judging and not used: MLPerf Training v5.1+ AMD results.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from amd_rows import BY_ID, ROWS, calibration_catalog, ratio_error

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))

CATALOG = calibration_catalog()
ERRORS = {r.id: ratio_error(r, CATALOG) for r in ROWS}
SINGLE_NODE_70B = {"MI355X/B200 Llama 3 70B FP8, 8 GPUs (Primus v25.9)",
                   "MI355X/B200 Llama 3 70B BF16, 8 GPUs (Primus v25.9)"}


@pytest.mark.parametrize("rid", [r.id for r in ROWS if r.group == "fit"])
def test_fit_row_within_2_percent(rid):
    assert abs(ERRORS[rid]) < 0.02, f"{rid}: {ERRORS[rid]:+.1%}"


@pytest.mark.parametrize("rid", [r.id for r in ROWS if r.group == "held_out"])
def test_held_out_row(rid):
    bound = 0.35 if rid in SINGLE_NODE_70B else 0.10
    assert abs(ERRORS[rid]) < bound, f"{rid}: {ERRORS[rid]:+.1%}"


def test_single_node_70b_misfit_is_the_exposed_tp():
    """Both single-node 70B rows under-predict (the sign of an exposed scale-up term, not of the GEMM fit): given the
    reference's scale-up path (B200 NVLink 5: 900 GB/s · 0.90, ring step 3.4 µs, ψ = 0.15) the same rows come within
    20 % (FP8 +15 %, BF16 −2 %). Issue 41p (shape-aware GEMMs): the rows are −19.8 % (FP8) and −29.2 % (BF16), were
    −31 % and −42 %; the under-prediction bound −20 % → −15 % (explicit tolerance change)."""
    import dataclasses

    from amd_rows import predicted_ratio

    for rid in SINGLE_NODE_70B:
        assert ERRORS[rid] < -0.15
        fast = predicted_ratio(BY_ID[rid], CATALOG, lambda hw: dataclasses.replace(
            hw, nvlink_gbyte_s=900, nvlink_efficiency=0.90, tp_overlap=0.15, scaleup_step_latency_s=3.4e-6))
        assert abs(fast / BY_ID[rid].ratio - 1) < 0.20, rid


def test_catalog_holds_the_fitted_values_rounded():
    """tools/fit_amd.py's fit, rounded to 2 decimals, is what catalogs/default.yaml ships."""
    import fit_amd

    fitted = fit_amd.fit()
    gpus = CATALOG.by_id("gpus")
    cm4, cm3 = gpus["mi355x"].compute_model, gpus["mi325x"].compute_model
    assert (cm4.gemm_efficiency["bf16"], cm4.gemm_efficiency["fp8"], cm4.attention_efficiency) == (
        round(fitted["cdna4 gemm bf16"], 2), round(fitted["cdna4 gemm fp8"], 2), round(fitted["cdna4 attention"], 2))
    assert (cm3.gemm_efficiency["bf16"], cm3.gemm_efficiency["fp8"], cm3.attention_efficiency) == (
        round(fitted["cdna3 gemm bf16"], 2), round(fitted["cdna3 gemm fp8"], 2), round(fitted["cdna3 attention"], 2))
    assert gpus["mi300x"].compute_model == cm3  # the same CDNA 3 compute die
