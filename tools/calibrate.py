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
sys.path[:0] = [str(ROOT / "tests" / "perf"), str(ROOT / "tests")]

import calibration_rows as cr  # noqa: E402

GENERATIONS = {  # GPU id -> generation whose parameters it shares
    "a100-80gb": "ampere", "a100-40gb": "ampere",
    "h100-sxm": "hopper", "h200": "hopper", "h100-96gb-500w": "hopper",
    "b200": "b200", "b300": "b200", "gb200": "gb200", "gb300": "gb300",
}
# (name, generations it applies to, ComputeParams field, start, low, high)
PARAMS = [
    ("ampere gemm bf16", ("ampere",), "gemm_efficiency_bf16", 0.8, 0.3, 1.0),
    ("hopper gemm bf16", ("hopper",), "gemm_efficiency_bf16", 0.7, 0.3, 1.0),
    ("hopper gemm fp8", ("hopper",), "gemm_efficiency_fp8", 0.6, 0.2, 1.0),
    ("attention (all)", ("ampere", "hopper", "b200", "gb200", "gb300"), "attention_efficiency", 0.45, 0.1, 1.0),
    ("b200 gemm fp8", ("b200",), "gemm_efficiency_fp8", 0.6, 0.2, 1.0),
    ("gb200 gemm fp8", ("gb200",), "gemm_efficiency_fp8", 0.6, 0.2, 1.0),
    ("gb300 gemm fp8", ("gb300",), "gemm_efficiency_fp8", 0.6, 0.2, 1.0),
]
OVERHEAD = ("gemm overhead µs (all)", "gemm_overhead_s", 8e-6, 0.0, 300e-6)


def hook_for(values: dict[str, float], overhead_s: float | None):
    by_gen: dict[str, dict] = {}
    for (_name, gens, fld, *_), v in zip(PARAMS, values.values()):
        for g in gens:
            by_gen.setdefault(g, {})[fld] = v

    def hook(hw):
        gen = GENERATIONS.get(hw.gpu_id)
        if hw.compute is None or gen is None:
            return hw
        upd = dict(by_gen.get(gen, {}))
        if overhead_s is not None:
            upd["gemm_overhead_s"] = overhead_s
        return replace(hw, compute=replace(hw.compute, **upd))
    return hook


def errors(rows, catalog, hook=None) -> dict[str, float]:
    return {r.id: cr.throughput_error(r, catalog, hw_hook=hook) for r in rows}


def fit(catalog, fix_overhead: float | None = None):
    from scipy.optimize import least_squares

    rows = [r for r in cr.ROWS if r.group == "fit"]
    names = [p[0] for p in PARAMS]
    x0 = [p[3] for p in PARAMS] + ([] if fix_overhead is not None else [OVERHEAD[2] * 1e6])
    lo = [p[4] for p in PARAMS] + ([] if fix_overhead is not None else [OVERHEAD[3] * 1e6])
    hi = [p[5] for p in PARAMS] + ([] if fix_overhead is not None else [OVERHEAD[4] * 1e6])

    def residual(x):
        values = dict(zip(names, x[:len(PARAMS)]))
        overhead = fix_overhead if fix_overhead is not None else x[len(PARAMS)] * 1e-6
        errs = errors(rows, catalog, hook_for(values, overhead))
        return [math.log(1 + errs[r.id]) for r in rows]

    res = least_squares(residual, x0, bounds=(lo, hi), diff_step=1e-3)
    values = dict(zip(names, res.x[:len(PARAMS)]))
    overhead = fix_overhead if fix_overhead is not None else res.x[len(PARAMS)] * 1e-6
    return values, overhead


def summary(errs: dict[str, float], rows) -> str:
    out = []
    for group in ("fit", "held_out", "external", "ratio", "report"):
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
            perf, scenario = cr.evaluate(r, catalog, hw_hook=hook)
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="no fit: the catalog's parameters")
    ap.add_argument("--overhead-us", type=float, help="fix the GEMM overhead instead of fitting it")
    ap.add_argument("--rows", default="fit,held_out", help="groups whose rows to list")
    ap.add_argument("--plot", help="write the predicted-vs-published PNG here")
    ap.add_argument("--markdown", action="store_true", help="print the residual table for docs/model.md")
    args = ap.parse_args()
    catalog = cr.calibration_catalog()
    hook = None
    if not args.check:
        values, overhead = fit(catalog, None if args.overhead_us is None else args.overhead_us * 1e-6)
        for k, v in values.items():
            print(f"{k:32s} {v:.4f}")
        print(f"{'gemm overhead µs':32s} {overhead * 1e6:.2f}")
        hook = hook_for(values, overhead)
    errs = {}
    for r in cr.ROWS:
        try:
            errs[r.id] = cr.throughput_error(r, catalog, hw_hook=hook)
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
