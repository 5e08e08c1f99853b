"""The fit of `fabricplan calibrate` (SPEC §4.8; docs/model.md "Calibrating on your own runs").

A parameter is one numeric catalog field (kind, id, field path), e.g. `gpus[h100-sxm].compute_model.
gemm_efficiency.fp8`. For a set of values the catalog is re-layered in memory (`with_values`) and every
run's step time is the evaluator's own (`results.make_design`: `hardware_of` + `performance` on the
run's pinned design, prepared once by `optimize.solve.evaluate`). The error of a run is

    e_i = ln(predicted_i / measured_i)          (in the unit of the measured column)

and the fit minimises Σ e_i² within each parameter's bounds: parameters that share no run are fitted
apart (bounded Brent in 1-D); coupled ones together (bounded Powell). A parameter that moves no
run's prediction between its bounds is dropped. Leave-one-out: each run is predicted by the values
fitted without it (only the parameters it depends on are refitted): exactly, by a refit, in a group of at
most EXACT_LOO_RUNS runs; in a larger group by one Gauss-Newton step from the full fit (`_linear_loo`: the
Jacobian of the errors once, then per run θ₋ᵢ = clip(θ̂ − (A − JᵢᵀJᵢ)⁻¹(g − Jᵢᵀrᵢ)) with A = JᵀJ, g = Jᵀr,
and the run predicted exactly at θ₋ᵢ), so the time grows linearly with the runs, not with their square.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..design_space import PerfClass, hardware_of
from ..errors import InputError
from ..inputs.schema import Catalog
from ..optimize.solve import evaluate
from ..perf.layout import Layout
from ..perf.step import performance
from ..perf.traffic import overlap_for
from .runs import Run, RunsFile

SENSITIVITY = 1e-6  # relative change of a run's prediction that makes it depend on a parameter
EXACT_LOO_RUNS = 40  # groups up to this many runs are left out exactly (one refit per run); larger ones linearised
JACOBIAN_STEP = 1e-4  # relative step of the finite-difference Jacobian of the linearised leave-one-out


class Work:
    """What a long fit reports as it goes (`command.Progress`) and where it stops (a deadline): `tick` at each
    evaluation of the runs, `advance` when a fit or a left-out run is done. The default does nothing."""

    def tick(self) -> None:
        pass

    def start(self, total: int) -> None:
        pass

    def advance(self, what: str) -> None:
        pass


@dataclass(frozen=True)
class Parameter:
    """One fitted catalog field."""

    label: str  # shown in the table and the overlay header
    kind: str  # catalog list: gpus, stacks, ...
    ident: str
    field: tuple[str | int, ...]  # path inside the entry, e.g. ("compute_model", "gemm_efficiency", "fp8")
    default: float
    low: float
    high: float


@dataclass
class Prepared:
    """A run with the design its pins fix (evaluated once)."""

    run: Run
    perf_class: PerfClass
    layout: Layout
    tokens_per_step: int

    def measured_step_s(self, column: str) -> float:
        if column == "measured_step_time_s":
            return self.run.measured
        return self.tokens_per_step / (self.run.measured * self.layout.gpus)


def prepare(runs: RunsFile, catalog: Catalog) -> list[Prepared]:
    """Evaluate every run's pinned design once (located errors for pins the catalog cannot build)."""
    out, problems = [], []
    for run in runs.runs:
        try:
            design = evaluate(run.ls, catalog)
        except InputError as exc:
            problems += exc.problems
            continue
        w = run.scenario.workload
        out.append(Prepared(run, design.architecture.perf, design.layout, w.global_batch_size * w.model.seq_len))
    if problems:
        raise InputError(problems)
    return out


def _set(data: dict, path: tuple[str | int, ...], value: float) -> None:
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def with_values(catalog: Catalog, params: list[Parameter], values: list[float]) -> Catalog:
    """The catalog with each parameter's field set to its value (entries re-validated)."""
    if not params:
        return catalog
    by_entry: dict[tuple[str, str], list[tuple[Parameter, float]]] = {}
    for p, v in zip(params, values, strict=True):
        by_entry.setdefault((p.kind, p.ident), []).append((p, v))
    lists = {kind: list(getattr(catalog, kind)) for kind, _ in by_entry}
    for (kind, ident), pairs in by_entry.items():
        items = lists[kind]
        index = next(i for i, item in enumerate(items) if item.id == ident)
        data = items[index].model_dump()
        for p, v in pairs:
            _set(data, p.field, float(v))
        items[index] = type(items[index]).model_validate(data)
    fields = {name: getattr(catalog, name) for name in type(catalog).model_fields}
    fields.update(lists)
    new = type(catalog).model_construct(**fields)
    new._provenance = catalog._provenance
    return new


def step_time_s(prep: Prepared, catalog: Catalog) -> float:
    sc = prep.run.scenario
    hw = hardware_of(sc, catalog, prep.perf_class)
    return performance(sc.workload, prep.layout, hw, overlap_for(sc)).step_time_s


def log_error(prep: Prepared, predicted_step_s: float, column: str) -> float:
    """ln(predicted / measured) in the measured column's unit."""
    ratio = predicted_step_s / prep.measured_step_s(column)
    return math.log(ratio) if column == "measured_step_time_s" else -math.log(ratio)


class Model:
    """Predictions of the prepared runs for parameter values (cached per value vector)."""

    def __init__(self, preps: list[Prepared], catalog: Catalog, params: list[Parameter], column: str,
                 work: Work | None = None):
        self.preps, self.catalog, self.params, self.column = preps, catalog, params, column
        self.work = work or Work()

    def steps(self, values: list[float], rows: list[int] | None = None) -> dict[int, float]:
        self.work.tick()
        cat = with_values(self.catalog, self.params, values)
        idx = range(len(self.preps)) if rows is None else rows
        return {i: step_time_s(self.preps[i], cat) for i in idx}

    def errors(self, values: list[float], rows: list[int]) -> dict[int, float]:
        steps = self.steps(values, rows)
        return {i: log_error(self.preps[i], s, self.column) for i, s in steps.items()}


def dependent_rows(model: Model) -> dict[int, list[int]]:
    """Parameter index → the runs whose prediction moves between the parameter's bounds."""
    defaults = [p.default for p in model.params]
    base = model.steps(defaults)
    out: dict[int, list[int]] = {}
    for k, p in enumerate(model.params):
        moved: set[int] = set()
        for bound in (p.low, p.high):
            values = list(defaults)
            values[k] = bound
            steps = model.steps(values)
            moved |= {i for i, s in steps.items() if abs(s / base[i] - 1) > SENSITIVITY}
        out[k] = sorted(moved)
    return out


def components(deps: dict[int, list[int]]) -> list[tuple[list[int], list[int]]]:
    """Groups of parameters that share runs: [(parameter indices, run indices)]."""
    groups: list[tuple[set[int], set[int]]] = []
    for k, rows in deps.items():
        if not rows:
            continue
        mine = ({k}, set(rows))
        for g in [g for g in groups if g[1] & mine[1]]:
            groups.remove(g)
            mine = (mine[0] | g[0], mine[1] | g[1])
        groups.append(mine)
    return [(sorted(p), sorted(r)) for p, r in sorted(groups, key=lambda g: min(g[0]))]


def _minimise(residuals: Callable[[list[float]], list[float]], params: list[Parameter],
              start: list[float]) -> list[float]:
    """Bounded least squares of the residuals: Brent in 1-D, trust-region reflective (scipy) above."""
    from scipy.optimize import least_squares, minimize_scalar

    if len(params) == 1:
        p = params[0]
        res = minimize_scalar(lambda x: sum(r * r for r in residuals([x])), bounds=(p.low, p.high), method="bounded",
                              options={"xatol": 1e-5})
        return [float(res.x)]
    lo, hi = [p.low for p in params], [p.high for p in params]
    x0 = [min(max(x, a + 1e-9), b - 1e-9) for x, a, b in zip(start, lo, hi, strict=True)]
    res = least_squares(residuals, x0, bounds=(lo, hi), diff_step=1e-3, xtol=1e-6, ftol=1e-8)
    return [float(x) for x in res.x]


def fit_component(model: Model, values: list[float], pidx: list[int], rows: list[int]) -> list[float]:
    """`values` with the parameters `pidx` fitted on `rows` (least squares of the log errors)."""
    out = list(values)

    def residuals(x: list[float]) -> list[float]:
        trial = list(out)
        for k, v in zip(pidx, x, strict=True):
            trial[k] = float(v)
        errs = model.errors(trial, rows)
        return [errs[i] for i in rows]

    best = _minimise(residuals, [model.params[k] for k in pidx], [out[k] for k in pidx])
    for k, v in zip(pidx, best, strict=True):
        out[k] = v
    return out


@dataclass
class FitOutcome:
    values: list[float]
    default_errors: list[float]  # ln errors per run
    fitted_errors: list[float]
    loo_errors: list[float]
    groups: list[tuple[list[int], list[int]]]
    linearised: list[int] = field(default_factory=list)  # runs whose leave-one-out is the one-step estimate


def fit(model: Model, groups: list[tuple[list[int], list[int]]]) -> FitOutcome:
    n = len(model.preps)
    work = model.work
    work.start(len(groups) + sum(len(rows) for _, rows in groups))
    defaults = [p.default for p in model.params]
    default_errors = model.errors(defaults, list(range(n)))
    values = list(defaults)
    for pidx, rows in groups:
        values = fit_component(model, values, pidx, rows)
        work.advance(f"fitted {len(pidx)} parameter(s) on {len(rows)} runs")
    fitted_errors = model.errors(values, list(range(n)))
    loo = dict(fitted_errors)  # runs no parameter depends on keep their (default) prediction
    linearised: list[int] = []
    for pidx, rows in groups:
        if len(rows) <= EXACT_LOO_RUNS:
            loo.update(exact_loo(model, values, pidx, rows))
        else:
            loo.update(linear_loo(model, values, pidx, rows, fitted_errors))
            linearised += rows
    return FitOutcome(values, [default_errors[i] for i in range(n)], [fitted_errors[i] for i in range(n)],
                      [loo[i] for i in range(n)], groups, sorted(linearised))


def exact_loo(model: Model, values: list[float], pidx: list[int], rows: list[int]) -> dict[int, float]:
    """Each run's error at the values refitted without it."""
    out = {}
    for i in rows:
        held = fit_component(model, values, pidx, [j for j in rows if j != i])
        out[i] = model.errors(held, [i])[i]
        model.work.advance("left out")
    return out


def linear_loo(model: Model, values: list[float], pidx: list[int], rows: list[int],
               fitted: dict[int, float]) -> dict[int, float]:
    """Each run's error at the values one Gauss-Newton step from the full fit takes without it (module docstring):
    k + n evaluations of the runs instead of n refits."""
    import numpy as np

    params = [model.params[k] for k in pidx]
    r = np.array([fitted[i] for i in rows])
    jac = np.zeros((len(rows), len(pidx)))
    for c, (k, p) in enumerate(zip(pidx, params, strict=True)):
        h = JACOBIAN_STEP * max(abs(values[k]), 1e-3)
        if values[k] + h > p.high:
            h = -h
        moved = list(values)
        moved[k] += h
        errs = model.errors(moved, rows)
        jac[:, c] = [(errs[i] - fitted[i]) / h for i in rows]
    a, g = jac.T @ jac, jac.T @ r
    low, high = np.array([p.low for p in params]), np.array([p.high for p in params])
    theta = np.array([values[k] for k in pidx])
    out = {}
    for n, i in enumerate(rows):
        ji = jac[n:n + 1, :]
        step = np.linalg.lstsq(a - ji.T @ ji, -(g - ji[0] * r[n]), rcond=None)[0]
        held = list(values)
        for k, v in zip(pidx, np.clip(theta + step, low, high), strict=True):
            held[k] = float(v)
        out[i] = model.errors(held, [i])[i]
        model.work.advance("left out")
    return out
