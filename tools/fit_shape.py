"""Fit the shape-aware GEMM efficiency (issue 41 item 3): κ of `compute.shape_efficiency` with the GEMM efficiencies
and the routed-expert factor ε, on fit rows only.

    PYTHONPATH=. python tools/fit_shape.py                 # κ = the shipped value: refit, print parameters and medians
    PYTHONPATH=. python tools/fit_shape.py 0 0.13 0.2 0.26  # the κ grid of docs/model.md

For each κ (d½ = κ · the peak of the GEMM's precision, TFLOP/s): (1) the dense compute parameters by
tools/calibrate.py's least squares on the `fit` rows of tests/perf/calibration_rows.py; (2) with those, ε per GPU
generation (Hopper, Blackwell) and precision by least squares (soft-L1, scale 0.1, on log(predicted/published)) on the
MoE fit runs: every placeable run of tests/data/moe-calibration.csv and the runs of the held-out file's FIT documents
(`MOE_FIT_DOCUMENTS`); every other held-out MoE run is only evaluated. κ is chosen on the fit runs' medians; the
held-out medians are printed apart.
"""
from __future__ import annotations

import json
import math
import statistics
import sys
import types
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "perf"), str(ROOT / "tests"), str(ROOT / "tools")]

import calibrate as cal  # noqa: E402
import calibration_rows as cr  # noqa: E402
import moe_runs as mr  # noqa: E402

from solver.perf import compute  # noqa: E402

# whole documents of tests/data/moe-heldout.csv fitted on (issue 41p); the rest of that file stays held out
MOE_FIT_DOCUMENTS = ("NVIDIA/Megatron-LM examples/moe_recipes/README.md",
                     "NVIDIA/Megatron-LM docs/discussions/deepseek-v3-gb200-optimization")
GENERATION = {"h100-sxm": "hopper", "h200": "hopper", "b200": "blackwell", "gb200": "blackwell", "b300": "blackwell",
              "gb300": "blackwell"}
KEYS = [("hopper", "bf16"), ("hopper", "fp8"), ("blackwell", "bf16"), ("blackwell", "fp8")]
MEGATRON_ROW = types.SimpleNamespace(stack_id="megatron", tp_overlap=False, layout=(1,))


def moe_runs() -> list[tuple[str, mr.Run]]:
    """(group, run): group 'calibration', 'fit-document' or 'held-out'."""
    out = []
    for path in (mr.CALIBRATION_CSV, mr.HELDOUT_CSV):
        for run in mr.runs(path):
            if not run.placeable():
                continue
            if path == mr.CALIBRATION_CSV:
                out.append(("calibration", run))
            else:
                out.append(("fit-document" if run.row["source"].startswith(MOE_FIT_DOCUMENTS) else "held-out", run))
    return out


def fit(kappa: float) -> dict:
    from scipy.optimize import least_squares

    compute.GEMM_HALF_SIZE_PER_TFLOP = kappa
    catalog = cr.calibration_catalog()
    values, overhead = cal.fit(catalog)
    hook = cal.hook_for(values, overhead)
    dense = [abs(cr.throughput_error(r, catalog, hw_hook=lambda hw, r=r: hook(hw, r)))
             for r in cr.ROWS if r.group in ("fit", "held_out", "external", "v3_held_out")]
    state: dict = {}
    base = mr.hardware_for

    def patched(scenario, *args):
        hw = hook(base(scenario, *args), MEGATRON_ROW)
        eps = state.get((GENERATION.get(hw.gpu_id), scenario.workload.precision))
        return hw if eps is None else replace(hw, expert_efficiency=eps)

    mr.hardware_for = patched
    try:
        runs = moe_runs()
        fitted = [run for group, run in runs if group != "held-out"]

        def residual(x):
            state.update(zip(KEYS, x))
            return [math.log(1 + run.error()) for run in fitted]

        res = least_squares(residual, [0.7, 0.3, 0.5, 0.5], bounds=([0.05] * 4, [5.0] * 4), loss="soft_l1",
                            f_scale=0.1, diff_step=1e-3)
        state.update(zip(KEYS, res.x))
        errors = [(group, abs(run.error())) for group, run in runs]
    finally:
        mr.hardware_for = base

    def med(group):
        return round(statistics.median(e for g, e in errors if g == group), 4)
    return {"kappa": kappa, "dense_in_sample_median": round(statistics.median(dense), 4),
            "moe_calibration_median": med("calibration"), "moe_fit_documents_median": med("fit-document"),
            "moe_held_out_median": med("held-out"), "epsilon": {f"{g} {p}": round(v, 3) for (g, p), v in zip(KEYS, res.x)},
            "dense": {k: round(v, 4) for k, v in values.items()}}


def main() -> None:
    kappas = [float(a) for a in sys.argv[1:]] or [compute.GEMM_HALF_SIZE_PER_TFLOP]
    for kappa in kappas:
        print(json.dumps(fit(kappa), ensure_ascii=False))


if __name__ == "__main__":
    main()
