"""Fit the AMD Instinct compute models to the `fit` ratio rows and report every row's residual (issue 46).

    PYTHONPATH=. python tools/fit_amd.py            # fit, print the parameters and the residual table
    PYTHONPATH=. python tools/fit_amd.py --check    # no fit: residuals with the catalog's parameters

Parameters (few, one per published regime): CDNA 4 (MI355X) η_gemm,bf16 from its BF16 row and η_gemm,fp8 from its
FP8 row; CDNA 3 (MI300X, MI325X: the same compute die) η_gemm,fp8 from the MLPerf v5.0 row, η_gemm,bf16 = η_fp8 ×
the CDNA 4 bf16/fp8 ratio (no CDNA 3 BF16 row: estimate). Attention efficiency is tied to η_gemm,bf16 by the ratio
of the NVIDIA generation the AMD part is matched against (Blackwell 0.74/0.60 for CDNA 4, Hopper 0.50/0.56 for
CDNA 3): no AMD attention row exists. Each fit is a 1-D root of predicted ratio = published ratio (scipy brentq).
The rounded values go by hand into catalogs/default.yaml (`gpus[].compute_model`) and docs/model.md.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "perf"), str(ROOT / "tests"), str(ROOT)]

import amd_rows as ar  # noqa: E402

ATTENTION_OVER_GEMM = {"cdna4": 0.74 / 0.60, "cdna3": 0.50 / 0.56}  # the matched NVIDIA generation's fitted ratio


def _root(row, field_fn, lo=0.1, hi=1.0) -> float:
    from scipy.optimize import brentq

    cat = ar.calibration_catalog()
    return brentq(lambda x: ar.ratio_error(row, cat, ar.with_compute(**field_fn(x))), lo, hi, xtol=1e-4)


def fit() -> dict[str, float]:
    """The fitted parameters (unrounded)."""
    cdna4_bf16 = _root(ar.BY_ID["MI355X/B200 Llama 3 8B BF16, 8 GPUs (Primus v25.9)"],
                       lambda x: {"gemm_efficiency": {"bf16": x}, "attention_efficiency": x * ATTENTION_OVER_GEMM["cdna4"]})
    att4 = cdna4_bf16 * ATTENTION_OVER_GEMM["cdna4"]
    cdna4_fp8 = _root(ar.BY_ID["MI355X/B200 Llama 3 8B FP8, 8 GPUs (Primus v25.9)"],
                      lambda x: {"gemm_efficiency": {"fp8": x, "bf16": cdna4_bf16},
                                 "attention_efficiency": att4})
    ratio = cdna4_bf16 / cdna4_fp8

    def cdna3(x):
        return {"gemm_efficiency": {"fp8": x, "bf16": x * ratio},
                "attention_efficiency": x * ratio * ATTENTION_OVER_GEMM["cdna3"]}

    cdna3_fp8 = _root(ar.BY_ID["MI325X/H200 Llama 2 70B LoRA FP8, 8 GPUs (MLPerf Training v5.0)"], cdna3)
    return {"cdna4 gemm bf16": cdna4_bf16, "cdna4 gemm fp8": cdna4_fp8, "cdna4 attention": att4,
            "cdna3 gemm fp8": cdna3_fp8, "cdna3 gemm bf16": cdna3_fp8 * ratio,
            "cdna3 attention": cdna3_fp8 * ratio * ATTENTION_OVER_GEMM["cdna3"]}


def residual_table() -> list[tuple[str, str, float, float, float]]:
    """(id, group, published ratio, predicted ratio, error) of every row, with the catalog's parameters."""
    cat = ar.calibration_catalog()
    out = []
    for r in ar.ROWS:
        pred = ar.predicted_ratio(r, cat)
        out.append((r.id, r.group, r.ratio, pred, pred / r.ratio - 1))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="no fit: residuals with the catalog's parameters")
    args = parser.parse_args()
    if not args.check:
        for name, value in fit().items():
            print(f"{name:18s} {value:.4f}")
    print(f"{'row':80s} {'group':9s} {'published':>9s} {'model':>7s} {'error':>7s}")
    for rid, group, pub, pred, err in residual_table():
        print(f"{rid:80s} {group:9s} {pub:9.2f} {pred:7.3f} {err:+7.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
