"""Fit the compute model's parameters to the FIT rows and report every row's residual.

    PYTHONPATH=. python tools/calibrate.py            # fit, print the parameters and the residual tables
    PYTHONPATH=. python tools/calibrate.py --check    # no fit: residuals with the catalog's parameters
    PYTHONPATH=. python tools/calibrate.py --plot docs/calibration.png

Least squares on log(predicted / published) over the `fit` rows of tests/perf/calibration_rows.py;
held-out and external rows are only evaluated. The fitted values are rounded by hand into
catalogs/default.yaml (`gpus[].compute_model`) and docs/model.md.
"""
from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "perf"), str(ROOT / "tests"), str(ROOT / "tools")]

import calibration_rows as cr  # noqa: E402

from solver.inputs.precisions import resolved  # noqa: E402

GENERATIONS = {  # GPU id -> generation (the stacks' per-generation parameters)
    "a100-80gb": "ampere", "a100-40gb": "ampere",
    "h100-sxm": "hopper", "h200": "hopper", "h100-96gb-500w": "hopper",
    "b200": "blackwell", "b300": "blackwell", "gb200": "blackwell", "gb300": "blackwell",
}
FAMILIES = {  # GPU id -> the family whose GPU-level GEMM parameters it shares
    "a100-80gb": "ampere", "a100-40gb": "ampere", "h100-sxm": "hopper", "h200": "hopper", "h100-96gb-500w": "hopper",
    "b200": "b200", "b300": "b200", "gb200": "gb200", "gb300": "gb300",  # B300: no row, B200's values (as v2)
}
# GPU-level (the megatron stack's own kernels; catalog gpus[].compute_model):
# (name, families, ComputeParams fields it sets (gemm_efficiency.<precision>), start, low, high)
PARAMS = [
    ("ampere gemm", ("ampere",), ("gemm_efficiency.bf16", "gemm_efficiency.fp8"), 0.7, 0.3, 1.0),
    ("hopper gemm bf16", ("hopper",), ("gemm_efficiency.bf16",), 0.6, 0.3, 1.0),
    ("hopper gemm fp8", ("hopper",), ("gemm_efficiency.fp8",), 0.5, 0.2, 1.0),
    ("b200 gemm", ("b200",), ("gemm_efficiency.bf16", "gemm_efficiency.fp8"), 0.55, 0.2, 1.0),
    ("gb200 gemm", ("gb200",), ("gemm_efficiency.bf16", "gemm_efficiency.fp8"), 0.5, 0.2, 1.0),
    ("gb300 gemm", ("gb300",), ("gemm_efficiency.bf16", "gemm_efficiency.fp8"), 0.6, 0.2, 1.0),
    ("hopper attention", ("hopper",), ("attention_efficiency",), 0.5, 0.1, 1.0),
    ("blackwell attention", ("b200", "gb200", "gb300"), ("attention_efficiency",), 0.5, 0.1, 1.0),
]
# Stack-level (catalog stacks[]): (name, stack, generation, what, start, low, high); what = "psi" (TP overlap share),
# "gemm" (factor on both GEMM efficiencies) or "attention" (factor on the attention efficiency).
STACK_PARAMS = [
    ("megatron psi hopper", "megatron", "hopper", "psi", 0.15, 0.0, 1.0),
    ("megatron psi blackwell", "megatron", "blackwell", "psi", 0.15, 0.0, 1.0),
    ("fsdp gemm hopper", "fsdp", "hopper", "gemm", 1.0, 0.4, 1.6),
    ("fsdp attention hopper", "fsdp", "hopper", "attention", 1.0, 0.1, 2.0),
    ("fsdp gemm ampere", "fsdp", "ampere", "gemm", 1.0, 0.4, 1.6),
    ("torchtitan gemm hopper", "torchtitan", "hopper", "gemm", 1.0, 0.4, 1.6),
    ("deepspeed gemm ampere", "deepspeed", "ampere", "gemm", 1.0, 0.4, 1.6),
]
# A100's attention efficiency stays at v2's 0.41 (one value then for every GPU; no A100 long-context row in the fit).
PSI_SHARED = {("torchtitan", "hopper"): ("megatron", "hopper")}  # async TP: megatron's Hopper ψ (no row of its own)
OVERHEAD = ("gemm overhead µs (all)", "gemm_overhead_s", 8e-6, 0.0, 300e-6)
FIXED_OVERHEAD_S = 10e-6  # the catalog's gemm_overhead_us (an estimate, not fitted in v3)


def _gpu_values(values: dict[str, float]) -> dict[str, dict[str, float]]:
    by_family: dict[str, dict[str, float]] = {}
    for name, families, fields, *_ in PARAMS:
        for fam in families:
            for fld in fields:
                by_family.setdefault(fam, {})[fld] = values[name]
    return by_family


def _stack_values(values: dict[str, float]) -> dict[tuple[str, str], dict[str, float]]:
    out: dict[tuple[str, str], dict[str, float]] = {}
    for name, stack, gen, what, *_ in STACK_PARAMS:
        out.setdefault((stack, gen), {})[what] = values[name]
    for target, source in PSI_SHARED.items():
        if "psi" in out.get(source, {}):
            out.setdefault(target, {})["psi"] = out[source]["psi"]
    return out


def hook_for(values: dict[str, float], overhead_s: float | None = None):
    """hook(hw, row): the row's hardware with the parameter vector's GPU values × its stack's factors, and ψ for
    rows that overlap TP (the rows' own overlap.tp = 0 stays)."""
    by_family, by_stack = _gpu_values(values), _stack_values(values)

    def hook(hw, row):
        fam, gen = FAMILIES.get(hw.gpu_id), GENERATIONS.get(hw.gpu_id)
        if hw.compute is None or fam is None:
            return hw
        upd = dict(by_family.get(fam, {}))
        tuning = by_stack.get((row.stack_id, gen), {})
        eta = {p: upd.get(f"gemm_efficiency.{p}", hw.compute.gemm_efficiency[p]) for p in ("bf16", "fp8")}
        g, a = tuning.get("gemm", 1.0), tuning.get("attention", 1.0)
        upd = {"gemm_efficiency": resolved({p: min(1.0, v * g) for p, v in eta.items()}),
               "attention_efficiency": min(1.0, upd.get("attention_efficiency", hw.compute.attention_efficiency) * a)}
        if overhead_s is not None:
            upd["gemm_overhead_s"] = overhead_s
        out = replace(hw, compute=replace(hw.compute, **upd))
        if row.tp_overlap and row.layout[0] > 1:
            out = replace(out, tp_overlap=tuning.get("psi", hw.tp_overlap))
        return out
    return hook


def errors(rows, catalog, hook=None) -> dict[str, float]:
    return {r.id: cr.throughput_error(r, catalog, hw_hook=(None if hook is None else (lambda hw, r=r: hook(hw, r))))
            for r in rows}


ALL_PARAMS = [p[0] for p in PARAMS] + [p[0] for p in STACK_PARAMS]
# A weak prior keeps parameters the rows barely separate (ψ against attention against GEMM on the same rows) near
# their starting values: a log-deviation of 0.5 costs as much as one row 5 % off (PRIOR_WEIGHT = 0.1).
PRIOR_WEIGHT = 0.1
STARTS = [p[3] for p in PARAMS] + [p[4] for p in STACK_PARAMS]
LOWS = [p[4] for p in PARAMS] + [p[5] for p in STACK_PARAMS]
HIGHS = [p[5] for p in PARAMS] + [p[6] for p in STACK_PARAMS]
PRIORS = [max(x, 0.05) for x in STARTS]  # ψ.s prior 0.15, stack factors 1, GPU efficiencies as started


def fit(catalog):
    """Least squares on log(1 + error) over the `fit` rows; the GEMM overhead stays at the catalog's 10 µs."""
    from scipy.optimize import least_squares

    rows = [r for r in cr.ROWS if r.group == "fit"]

    def residual(x):
        errs = errors(rows, catalog, hook_for(dict(zip(ALL_PARAMS, x)), FIXED_OVERHEAD_S))
        prior = [PRIOR_WEIGHT * math.log(max(v, 1e-3) / max(x0, 1e-3)) for v, x0 in zip(x, PRIORS)]
        return [math.log(1 + errs[r.id]) for r in rows] + prior

    res = least_squares(residual, STARTS, bounds=(LOWS, HIGHS), diff_step=1e-3)
    return dict(zip(ALL_PARAMS, res.x)), FIXED_OVERHEAD_S


def summary(errs: dict[str, float], rows) -> str:
    out = []
    for group in ("fit", "held_out", "external", "v3_held_out", "ratio", "report"):
        e = [errs[r.id] for r in rows if r.group == group and r.id in errs]
        if e:
            a = [abs(x) for x in e]
            out.append(f"{group:9s} n={len(e):3d} median|e|={statistics.median(a):6.1%} worst={max(a):6.1%} "
                       f"mean={statistics.mean(e):+6.1%} rms={math.sqrt(sum(x * x for x in e) / len(e)):6.1%}")
    return "\n".join(out)


def tokens_per_s(row, value: float, perf) -> float:
    """A row's metric as tokens/s/GPU (the plot's common axis): step times and TFLOP/s are converted with the
    model's own FLOPs per token (the same SPEC §4.1 count the sources use)."""
    tokens = row.batch * row.model["seq_len"]
    if row.metric == "tok":
        return value
    if row.metric == "iter_s":
        return tokens / (value * perf.gpus)
    per_token = (perf.flops_hardware if row.metric == "hw_tflops_full" else perf.flops_model) / tokens
    if row.metric == "mfu":
        return value * cr.PEAK_BF16_H100 * 1e12 / per_token
    return value * 1e12 / per_token


def plot(path: str, catalog, hook=None) -> None:
    """Predicted vs published tokens/s per GPU, log-log, every row, coloured by group, ±10 % and ±20 % bands."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {"fit": ("tab:blue", "o", "fit"), "held_out": ("tab:orange", "s", "held out"),
              "external": ("tab:red", "D", "held out (external judges' rows)"),
              "ratio": ("tab:gray", "x", "ratio only (500 W H100s)"), "report": ("tab:purple", "^", "NVFP4 (outside the model)")}
    fig, ax = plt.subplots(figsize=(8, 8))
    lo, hi = 50, 100_000
    xs = [lo, hi]
    ax.plot(xs, xs, color="black", linewidth=1)
    for f, style in ((1.1, ":"), (1.2, "--")):
        ax.plot(xs, [x * f for x in xs], color="gray", linestyle=style, linewidth=0.8)
        ax.plot(xs, [x / f for x in xs], color="gray", linestyle=style, linewidth=0.8)
    for group, (color, marker, label) in styles.items():
        pts = []
        for r in cr.ROWS:
            if r.group != group:
                continue
            perf, scenario = cr.evaluate(r, catalog, hw_hook=None if hook is None else (lambda hw, r=r: hook(hw, r)))
            pts.append((tokens_per_s(r, r.published, perf), tokens_per_s(r, cr.predicted(r, perf, scenario), perf)))
        if pts:
            ax.scatter([p[0] for p in pts], [p[1] for p in pts], c=color, marker=marker, s=28, label=f"{label} ({len(pts)})")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("published tokens/s per GPU")
    ax.set_ylabel("fabricplan v2 predicted tokens/s per GPU")
    ax.set_title("Physics v2: predicted vs published throughput (dotted ±10 %, dashed ±20 %)")
    ax.legend(loc="upper left", fontsize=9)
    ax.grid(True, which="both", linewidth=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def markdown(errs: dict[str, float]) -> str:
    """The residual table of docs/model.md: every row, its group, source and error."""
    lines = ["| Row | Source | Group | Error |", "|---|---|---|---|"]
    for r in cr.ROWS:
        if r.id in errs:
            lines.append(f"| {r.id} | {r.source} | {r.group.replace('_', '-')} | {errs[r.id]:+.1%} |")
    return "\n".join(lines)


def write_residuals(catalog) -> None:
    """solver/perf/residuals.yaml: the out-of-sample residual table (tools/residuals.py, leave-one-source-out)."""
    import residuals

    residuals.write(residuals.dense_rows(catalog) + residuals.moe_rows())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="no fit: the catalog's parameters")
    ap.add_argument("--rows", default="fit,held_out", help="groups whose rows to list")
    ap.add_argument("--plot", help="write the predicted-vs-published PNG here")
    ap.add_argument("--markdown", action="store_true", help="print the residual table for docs/model.md")
    ap.add_argument("--residuals", action="store_true",
                    help="write solver/perf/residuals.yaml (the uncertainty table) from the catalog's parameters")
    args = ap.parse_args()
    catalog = cr.calibration_catalog()
    if args.residuals:
        write_residuals(catalog)
        return
    hook = None
    if not args.check:
        values, overhead = fit(catalog)
        for k, v in values.items():
            print(f"{k:32s} {v:.4f}")
        print(f"{'gemm overhead µs':32s} {overhead * 1e6:.2f}")
        hook = hook_for(values, overhead)
    errs = {}
    for r in cr.ROWS:
        try:
            errs[r.id] = cr.throughput_error(r, catalog, hw_hook=None if hook is None else (lambda hw, r=r: hook(hw, r)))
        except AssertionError as exc:
            print("skip", exc)
    print(summary(errs, cr.ROWS))
    show = set(args.rows.split(","))
    for r in cr.ROWS:
        if r.group in show and r.id in errs:
            print(f"  {r.group:8s} {errs[r.id]:+7.1%}  {r.id}")
    if args.markdown:
        print(markdown(errs))
    if args.plot:
        plot(args.plot, catalog, hook)


if __name__ == "__main__":
    main()
