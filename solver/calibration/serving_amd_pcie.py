"""Fit of the serving profiles' AMD and PCIe entries (issue 46; docs/model.md "Serving calibration: AMD and PCIe
GPUs") on tests/data/serving-runs-amd-pcie.csv's `fit` rows.

Only the profile entries these rows are tuned by move (vllm's [mi300x, mi325x], trtllm's [rtx-pro-6000-se]); the
profile-wide values (u_ep, η_ar, the interval) and every NVIDIA NVLink entry keep the values the main serving fit gave
them, so adding this file never moves an NVLink answer. Per entry the free parameters are η_hbm (memory-bound
decode), η_dc (compute-bound decode), η_pf (prefill) and, only when the entry has a concurrency sweep, the
per-sequence and per-layer overheads (small-batch step time); an entry with expert-parallel MoE rows gets its own
u_ep (the profile's 3.70 was fitted on NVLink attention-DP runs; over PCIe the stack runs other all-to-all kernels).
TP and EP traffic inside these servers is timed on the
platform's own path (solver/perf/serving_step.py `scaleup_path`), never NVLink.

    python -m solver.calibration.serving_report --amd-pcie   # fitted values, fit and held-out errors, every row
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .serving_fit import (
    FIELDS,
    ROOT,
    FreeParameter,
    ServingRun,
    bounded_fit,
    known,
    predict,
    read_runs,
)
from .serving_models import serving_shape

OVERHEADS = ("seq_overhead_us", "layer_overhead_us")
"""Free only for an entry with a row at a stated concurrency: saturated runs alone cannot tell a per-step overhead
from a lower efficiency (the entry keeps its catalog values, TensorRT-LLM's Hopper ones). Unlike the main fit (where
TensorRT-LLM's one-user row leaves no per-layer time: CUDA graphs), an entry with a one-user sweep fits its per-layer
time: vLLM on MI300X [P13][P14] measures ≈ 50 µs per layer at one user (fixed at 0 it came out 90–110 % fast)."""
ENTRY_FIELDS = FIELDS + tuple(f for f in OVERHEADS if f not in FIELDS)
AMD_PCIE_FILE = ROOT / "tests" / "data" / "serving-runs-amd-pcie.csv"


def amd_pcie_runs(catalog: Any, path: Path = AMD_PCIE_FILE) -> list[ServingRun]:
    """The file's rows whose GPU, platform, stack and model the catalog knows."""
    return [r for r in read_runs([path]) if known(r, catalog)]


def entry_parameters(stack: Any, runs: list[ServingRun]) -> list[FreeParameter]:
    """FIELDS of every profile entry some fit row is tuned by (nothing profile-wide)."""
    profile = stack.serving
    entries = sorted({profile.gpus.index(profile.tuning(r.gpu, r.precision)) for r in runs})
    params: list[FreeParameter] = []
    for i in entries:
        mine = [r for r in runs if profile.tuning(r.gpu, r.precision) is profile.gpus[i]]
        swept = any(r.concurrency is not None for r in mine)
        params += [FreeParameter(i, f) for f in ENTRY_FIELDS if swept or f not in OVERHEADS]
        if any(r.ep > 1 and serving_shape(r.model).moe is not None for r in mine):
            params.append(FreeParameter(i, "ep_imbalance"))
    return params


def _residuals(runs: list[ServingRun], catalog: Any, stack: Any) -> list[float]:
    """ln(predicted/measured) of throughput per GPU and tokens/s per user, each (source × model × GPU) group weighted
    1/√n so a long sweep does not drown a short table."""
    sizes: dict[str, int] = {}
    for r in runs:
        sizes[r.group + r.gpu] = sizes.get(r.group + r.gpu, 0) + 1
    out: list[float] = []
    for r in runs:
        pred = predict(r, catalog, stack)
        w = 1.0 / math.sqrt(sizes[r.group + r.gpu])
        if r.tput_per_gpu:
            out.append(w * math.log(pred.tput_per_gpu / r.tput_per_gpu))
        if r.per_user:
            out.append(w * math.log(pred.per_user / r.per_user))
    return out


def fit_entries(runs: list[ServingRun], catalog: Any, stack: Any) -> tuple[Any, list[FreeParameter], list[float]]:
    """Bounded least squares on the log errors of `runs` over `entry_parameters` (serving_fit.bounded_fit)."""
    return bounded_fit(stack, entry_parameters(stack, runs), lambda st: _residuals(runs, catalog, st), max_nfev=300)


def _err(pred: float, meas: float | None) -> float | None:
    return pred / meas - 1.0 if meas else None


def _pct(x: float | None) -> str:
    return "" if x is None else f"{x:+.1%}"


def amd_pcie_report(catalog: Any, path: Path = AMD_PCIE_FILE) -> str:
    """Markdown: per stack the fitted entry values, median/worst |error| of fit and held-out rows (throughput per
    GPU and tokens/s per user), the profile interval's coverage of held-out rows, and every row's residual."""
    from statistics import median

    runs = amd_pcie_runs(catalog, path)
    lines = [f"Rows: {len(runs)} with stated lengths (rows without input/output lengths are not scored)."]
    for sid in sorted({r.stack for r in runs}):
        stack = catalog.by_id("stacks")[sid]
        rows = [r for r in runs if r.stack == sid]
        fitted, params, values = fit_entries([r for r in rows if r.split == "fit"], catalog, stack)
        lines += [f"\n#### Stack `{sid}`\n", "| entry | parameter | fitted |", "|---|---|---|"]
        lines += [f"| {'/'.join(stack.serving.gpus[p.entry].gpus)} | {p.field} | {v:.3g} |" for p, v in zip(params, values)]
        preds = [(r, predict(r, catalog, fitted)) for r in rows]
        lines += ["", "| rows | metric | n | median abs error | worst abs error |", "|---|---|---|---|---|"]
        for split in ("fit", "heldout"):
            for name, get in (("output tokens/s per GPU", lambda r, p: _err(p.tput_per_gpu, r.tput_per_gpu)),
                              ("tokens/s per user", lambda r, p: _err(p.per_user, r.per_user))):
                errs = [abs(e) for r, p in preds if r.split == split for e in [get(r, p)] if e is not None]
                if errs:
                    lines.append(f"| {split} | {name} | {len(errs)} | {median(errs):.1%} | {max(errs):.1%} |")
        lo, hi = stack.serving.interval_p10, stack.serving.interval_p90
        held = [r.tput_per_gpu / p.tput_per_gpu for r, p in preds if r.split == "heldout" and r.tput_per_gpu]
        inside = sum(lo <= x <= hi for x in held)
        lines.append(f"\nInterval × [{lo:.3f}, {hi:.3f}] (the profile's): holds {inside} of {len(held)} held-out rows.\n")
        lines += ["| split | source | GPU | model | prec. | tp/pp/ep | concurrency | ISL/OSL | measured tok/s/GPU | model "
                  "| error | error tok/s/user |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r, p in preds:
            conc = str(r.concurrency) if r.concurrency else f"max ({p.concurrency})"
            lines.append(f"| {r.split} | {r.source} | {r.gpu} | {r.model} | {r.precision} | {r.tp}/{r.pp}/{r.ep} | {conc} "
                         f"| {int(r.input_tokens)}/{int(r.output_tokens)} | {r.tput_per_gpu or 0:.4g} | "
                         f"{p.tput_per_gpu:.4g} | {_pct(_err(p.tput_per_gpu, r.tput_per_gpu))} | "
                         f"{_pct(_err(p.per_user, r.per_user))} |")
    return "\n".join(lines)
