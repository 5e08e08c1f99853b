"""The serving calibration report (docs/model.md "Serving calibration"): fitted values, every row's residual (in
sample and leave-one-group-out), median and worst |error| on fit and held-out rows, the p10–p90 interval and its
coverage on held-out rows."""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..inputs.catalog import load_catalog
from .serving_fit import (
    RUN_FILES,
    Prediction,
    ServingRun,
    fit_stack,
    interval_factors,
    known,
    leave_one_group_out,
    predict,
    read_runs,
    summary,
)

Row = tuple[ServingRun, Prediction, Prediction | None]  # (run, in-sample, out-of-sample)


@dataclass(frozen=True)
class StackReport:
    stack_id: str
    fitted: Any
    values: list[tuple[str, str, float]]  # (entry, field, value)
    rows: list[Row]
    interval: tuple[float, float]
    coverage: float


def _errs(rows, which: str, split: str, metric: str) -> list[float]:
    out = []
    for run, pred, oos in rows:
        p = pred if which == "in" else oos
        if run.split != split or p is None:
            continue
        meas = run.tput_per_gpu if metric == "tput" else run.per_user
        got = p.tput_per_gpu if metric == "tput" else p.per_user
        if meas:
            out.append(got / meas - 1.0)
    return out


def widen_to(interval: tuple[float, float], rows, coverage: float = 0.8) -> tuple[tuple[float, float], float]:
    """Widen (p10, p90) in log space by 5 % steps until `coverage` of held-out throughput rows lie inside."""
    held = [(run.tput_per_gpu / pred.tput_per_gpu) for run, pred, _ in rows if run.split == "heldout" and run.tput_per_gpu]
    lo, hi = interval
    for _ in range(60):
        inside = sum(lo <= r <= hi for r in held) / len(held) if held else 1.0
        if inside >= coverage:
            return (lo, hi), inside
        lo, hi = lo / 1.05, hi * 1.05
    return (lo, hi), inside


def _coverage(interval: tuple[float, float], rows: list[Row]) -> float:
    held = [run.tput_per_gpu / pred.tput_per_gpu for run, pred, _ in rows if run.split == "heldout" and run.tput_per_gpu]
    return sum(interval[0] <= r <= interval[1] for r in held) / len(held) if held else 1.0


def stack_report(stack_id: str, runs: list[ServingRun], catalog: Any) -> StackReport:
    stack = catalog.by_id("stacks")[stack_id]
    fit_rows = [r for r in runs if r.split == "fit"]
    if not fit_rows:  # a stack with held-out rows only: the catalog's values predict them
        alone: list[Row] = [(r, predict(r, catalog, stack), None) for r in runs]
        interval = (stack.serving.interval_p10, stack.serving.interval_p90)
        return StackReport(stack_id, stack, [], alone, interval, _coverage(interval, alone))
    fitted, params, values = fit_stack(fit_rows, catalog, stack)
    oos = leave_one_group_out(runs, catalog, stack) if len({r.group for r in fit_rows}) > 1 else {}
    rows: list[Row] = [(r, predict(r, catalog, fitted), oos.get(i)) for i, r in enumerate(runs)]
    ratios = [run.tput_per_gpu / o.tput_per_gpu for run, _, o in rows if o is not None and run.tput_per_gpu]
    interval = interval_factors(ratios) if len(ratios) >= 10 else (0.8, 1.25)
    interval, coverage = widen_to(interval, rows)
    named = [("profile" if p.entry < 0 else "/".join(stack.serving.gpus[p.entry].gpus), p.field, v)
             for p, v in zip(params, values)]
    return StackReport(stack_id, fitted, named, rows, interval, coverage)


def _pct(x: float | None) -> str:
    return "" if x is None or math.isnan(x) else f"{x:+.1%}"


def _row_line(run: ServingRun, pred: Prediction, oos: Prediction | None) -> str:
    t = pred.tput_per_gpu / run.tput_per_gpu - 1 if run.tput_per_gpu else None
    u = pred.per_user / run.per_user - 1 if run.per_user else None
    to = oos.tput_per_gpu / run.tput_per_gpu - 1 if oos is not None and run.tput_per_gpu else None
    conc = str(run.concurrency) if run.concurrency else f"max ({pred.concurrency})"
    return (f"| {run.split} | {run.source} | {run.gpu} | {run.model} | {run.precision} | {run.tp}/{run.pp}/{run.ep} | "
            f"{conc} | {int(run.input_tokens)}/{int(run.output_tokens)} | {run.tput_per_gpu:.0f} | "
            f"{pred.tput_per_gpu:.0f} | {_pct(t)} | {_pct(to)} | {_pct(u)} |")


def report(runs: list[ServingRun], catalog: Any) -> str:
    lines: list[str] = []
    skipped = [r for r in runs if not known(r, catalog)]
    runs = [r for r in runs if known(r, catalog)]
    if skipped:
        lines.append(f"({len(skipped)} rows name a GPU, platform, stack or model this catalog lacks: left out)\n")
    for stack_id in sorted({r.stack for r in runs}):
        rep = stack_report(stack_id, [r for r in runs if r.stack == stack_id], catalog)
        lines.append(f"#### Stack `{stack_id}`: {len(rep.rows)} rows\n")
        if rep.values:
            lines.append("| entry | parameter | fitted |\n|---|---|---|")
            lines += [f"| {e} | {f} | {v:.3g} |" for e, f, v in rep.values]
        else:
            lines.append("No fit row: the catalog's values (estimates) predict the held-out rows.")
        lines.append("\n| rows | metric | n | median abs error | worst abs error |\n|---|---|---|---|---|")
        for split, which in (("fit", "in"), ("fit", "oos"), ("heldout", "in")):
            for metric in ("tput", "user"):
                errs = _errs(rep.rows, which, split, metric)
                if errs:
                    med, worst = summary(errs)
                    label = {"fit": "fit rows, in sample", "heldout": "held-out rows (never fitted on)"}[split]
                    label = "fit rows, leave-one-group-out" if which == "oos" else label
                    name = "output tokens/s per GPU" if metric == "tput" else "tokens/s per user"
                    lines.append(f"| {label} | {name} | {len(errs)} | {med:.1%} | {worst:.1%} |")
        lo, hi = rep.interval
        how = "leave-one-group-out residuals, widened to ≥ 80 %" if rep.values else "the catalog's"
        lines.append(f"\np10–p90 interval on throughput: × [{lo:.3f}, {hi:.3f}] ({how}); held-out coverage "
                     f"{rep.coverage:.0%}.\n")
        lines.append("| split | source | GPU | model | prec. | tp/pp/ep | concurrency | ISL/OSL | measured tok/s/GPU | "
                     "model | error | error (LOGO) | error tok/s/user |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        lines += [_row_line(r, p, o) for r, p, o in rep.rows]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Fit every stack the rows name and print the markdown report (docs/model.md "Serving calibration")."""
    args = argv if argv is not None else sys.argv[1:]
    if args[:1] == ["--amd-pcie"]:  # issue 46: only the AMD/PCIe entries, on tests/data/serving-runs-amd-pcie.csv
        from .serving_amd_pcie import amd_pcie_report

        print(amd_pcie_report(load_catalog()))
        return 0
    print(report(read_runs([Path(a) for a in args] if args else list(RUN_FILES)), load_catalog()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
