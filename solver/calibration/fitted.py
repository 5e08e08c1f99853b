"""What `calibrate` fitted (`Fitted`): every run's errors before, fitted and left out, the checks that refuse a fit,
and the residual-trend warnings. overlay.py and table.py read it; the package's `Calibration` adds the overlay
writer on top (issue 39: overlay.py imports this module, not the package, so the two form no cycle).
"""
from __future__ import annotations

import datetime as _dt
import math
import statistics
from dataclasses import dataclass, field

from ..errors import InputError, Problem
from .fit import EXACT_LOO_RUNS, FitOutcome, Model, Parameter
from .numbers import percent
from .runs import Run

AT_BOUND_REL = 1e-3  # a fitted value this close (relative to its range) to a bound sits on it
ABSURD_LOG_ERROR = math.log(2.0)  # a run predicted more than 2× off (or under ½) after the fit is not explained
TREND_MIN_RUNS, TREND_MIN_R, TREND_MIN_SLOPE = 6, 0.5, 0.05  # residual trend: runs, |Pearson r|, |Δ ln error| per 10×




@dataclass
class Fitted:
    """What `calibrate` fitted, with every run's errors (fractions, in the measured column's unit)."""

    path: str
    column: str
    stack: str
    runs: list[Run]
    params: list[Parameter]
    outcome: FitOutcome
    skipped: int = 0  # runs of other stacks
    date: str = field(default_factory=lambda: _dt.datetime.now(_dt.UTC).date().isoformat())
    scope: str = "gpus"  # what the overlay sets: gpus (compute models) or stacks (the stack profile)
    catalog_entries: dict = field(default_factory=dict)  # {kind: {id: entry}} of the fitted entries' kinds
    catalog_files: list[str] = field(default_factory=list)  # the catalogs fitted over (the overlay goes after them)
    duplicates: list[tuple[int, int]] = field(default_factory=list)  # (line, line kept) of repeated runs
    model: Model | None = field(default=None, repr=False)  # what was fitted (its runs, catalog and parameters)

    @property
    def loo_label(self) -> str:
        """How the leave-one-out errors were found (exact refits, or linearised in groups over EXACT_LOO_RUNS)."""
        return "leave-one-out" if not self.outcome.linearised else "leave-one-out (linearised)"

    def warnings(self) -> list[str]:
        """Repeated runs counted once; residuals that trend with model size or scale (`trends`)."""
        out = [f"{self.path}:{line}: the same run as line {kept} (same fields and measured value): counted once"
               for line, kept in self.duplicates]
        if self.outcome.linearised:
            out.append(f"{len(self.outcome.linearised)} run(s) in groups of more than {EXACT_LOO_RUNS}: their "
                       "leave-one-out error is one Gauss-Newton step from the full fit, not a refit (docs/model.md)")
        return out + trends(self)

    @staticmethod
    def frac(e: float) -> float:
        return math.exp(e) - 1

    def errors(self, which: str) -> list[float]:
        return [self.frac(e) for e in getattr(self.outcome, f"{which}_errors")]

    def median(self, which: str) -> float:
        return statistics.median(abs(e) for e in self.errors(which))

    def worst(self, which: str) -> float:
        return max(abs(e) for e in self.errors(which))

    def predicted(self, which: str) -> list[float]:
        """Each run's prediction in the measured column's unit."""
        return [r.measured * (1 + e) for r, e in zip(self.runs, self.errors(which), strict=True)]

    @property
    def improves(self) -> bool:
        """The leave-one-out median |error| beats the defaults' (the fit generalises)."""
        return self.median("loo") < self.median("default")

    def check(self) -> None:
        """Refuse a fit no better than the defaults, or one that leaves a parameter on its bound with runs still
        more than 2× off (exit 2, nothing written)."""
        if not self.improves:
            raise InputError([Problem(self.path, 1, 1, "", (
                f"the fit is no better than the defaults: {self.loo_label} median |error| "
                f"{percent(self.median('loo'), sign=False)} against {percent(self.median('default'), sign=False)} with "
                "the catalog's values; no overlay written (check the runs' layouts and stack, or add runs that differ "
                "in size and layout)"))])
        problems = []
        for pidx, rows in self.outcome.groups:
            worst = max(rows, key=lambda i: abs(self.outcome.fitted_errors[i]))
            if abs(self.outcome.fitted_errors[worst]) <= ABSURD_LOG_ERROR:
                continue
            for k in pidx:
                p, v = self.params[k], self.outcome.values[k]
                edge = p.low if abs(v - p.low) <= AT_BOUND_REL * (p.high - p.low) else (
                    p.high if abs(v - p.high) <= AT_BOUND_REL * (p.high - p.low) else None)
                if edge is not None:
                    problems.append(Problem(self.path, self.runs[worst].line, 1, self.column, (
                        f"the fit put {p.label} on its bound ({edge:g}) and this run is still "
                        f"{percent(self.frac(self.outcome.fitted_errors[worst]))} off: the model does not explain "
                        "these runs (check the measured column's unit and the runs' layouts); no overlay written")))
        if problems:
            raise InputError(problems)


def _slope(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least-squares slope of ys on xs and Pearson's r (0, 0 when xs do not vary)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx <= 1e-12 or syy <= 0:
        return 0.0, 0.0
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True))
    return sxy / sxx, sxy / math.sqrt(sxx * syy)


def trends(cal: Fitted) -> list[str]:
    """A warning when the fitted errors (ln predicted / measured) trend with the model's parameter count or the
    job's GPUs: at least TREND_MIN_RUNS runs, |r| ≥ TREND_MIN_R and a slope of at least TREND_MIN_SLOPE per 10×
    (the fit then trades small runs against large ones: a size or scale effect the model misses)."""
    from ..perf.totals import parameter_count

    if len(cal.runs) < TREND_MIN_RUNS:
        return []
    errors = cal.outcome.fitted_errors
    out = []
    axes = [("model size (parameters)", [parameter_count(r.scenario.workload.model) for r in cal.runs])]
    if cal.model is not None:  # each run's pinned layout (`fit.prepare`), in the runs' order
        axes.append(("scale (GPUs)", [p.layout.gpus for p in cal.model.preps]))
    for name, values in axes:
        slope, r = _slope([math.log10(v) for v in values], errors)
        if abs(r) >= TREND_MIN_R and abs(slope) >= TREND_MIN_SLOPE:
            out.append(f"the fitted errors trend with {name}: {percent(math.exp(slope) - 1)} per 10× (r = {r:.2f}, "
                       f"{len(cal.runs)} runs); the fit trades one end against the other, so predictions beyond the "
                       "runs' range are doubtful (fit runs of the sizes you will plan, or see docs/model.md)")
    return out
