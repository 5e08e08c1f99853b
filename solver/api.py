"""The library API (SPEC §8.2): load, solve, evaluate, sweep. The CLI is a thin layer over these.

    import solver
    catalog  = solver.load_catalog()                 # the shipped default catalog
    scenario = solver.load_scenario("scenarios/llama3-70b.yaml")
    result   = solver.solve(scenario, catalog, top_k=5)
    design   = solver.evaluate(pinned_scenario, catalog)
    report   = solver.sweep("scenarios/growth-sweep.yaml", jobs=2)
    plan     = solver.api.plan("scenarios/plan-5-years.yaml")   # a multi-period purchase plan
    fitted   = solver.api.calibrate("examples/calibration-runs.csv", stack="deepspeed")  # your own runs
    front    = solver.api.frontier(scenario, catalog, points=10)  # the cost–speed frontier
    result   = solver.api.solve(scenario, catalog, constraints=[fn])   # your own rows (optimize/user_rows.py)

A serving scenario (`workload.kind: inference`, SPEC §4.9) goes through the same `solve` and `evaluate`, which
return a `solver.optimize.serving_results.FleetResult` (`.designs`: ranked fleets, `.to_dict()`: the JSON with each
design's `serving` block); `evaluate` takes `pin: {platform, tp, pp, ep, concurrency, replicas}` or
`pin: {prefill: {…}, decode: {…}}` and optimises what is left open.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from . import inputs
from .errors import InputError, Problem, SolverFailure
from .inputs import LoadedScenario, as_loaded, catalog_for
from .inputs.schema import Catalog

if TYPE_CHECKING:  # for readers and mypy; at run time __getattr__ imports them on first use
    from .optimize.solve import evaluate, evaluate_pins, solve
    from .optimize.user_rows import architectures, user_constraints

_SOLVE = ("evaluate", "evaluate_pins", "solve")


def __getattr__(name: str):
    # Lazy: `catalog` and `validate` load inputs through this module and must not pay for importing the model's
    # modules (numpy, via the design space); `solver.api.solve` and `from solver.api import solve` still work.
    if name in _SOLVE:
        from .optimize.solve import evaluate, evaluate_pins, solve

        return {"evaluate": evaluate, "evaluate_pins": evaluate_pins, "solve": solve}[name]
    if name in ("architectures", "user_constraints"):  # a user's own rows (optimize/user_rows.py)
        from .optimize import user_rows

        return getattr(user_rows, name)
    raise AttributeError(f"module 'solver.api' has no attribute {name!r}")


def load_catalog(paths: Iterable[str | Path] | None = None) -> Catalog:
    """Load and merge catalog files (None = the shipped default catalog)."""
    return inputs.load_catalog(paths)


def load_scenario(source) -> LoadedScenario:
    """Load a scenario from a YAML path or a dict."""
    return inputs.load_scenario(source)


def sweep(scenario, catalog: Catalog | None = None, vary: list[str] | None = None,
          combine: str | None = None, jobs: int = 1, executor: str = "local",
          time_limit_s: float | None = None, on_result: Callable[[dict], None] | None = None) -> dict:
    """Solve every point of the scenario's `sweep:` block (or of `vary` flags); the sweep report dict."""
    from .sweep import sweep as run

    return run(scenario, catalog, vary, combine, jobs, executor, time_limit_s, on_result)


def frontier(scenario, catalog: Catalog | None = None, points: int = 10, time_limit_s: float | None = None):
    """The cost–speed frontier (SPEC §7 v3): up to `points` designs, cheapest first, each the cheapest
    design at least as fast as it. Returns a `solver.optimize.frontier.Frontier` (`.points`, `.status`,
    `.to_dict()`)."""
    from .optimize.frontier import frontier as find

    ls = as_loaded(scenario)
    return find(ls, catalog if catalog is not None else catalog_for(ls), points, time_limit_s)


def plan(scenario, catalog: Catalog | None = None, time_limit_s: float | None = None, compare: bool = True,
         progress: Callable[[str], None] | None = None):
    """Solve the scenario's `plan:` block (SPEC §6.1): one MILP over all periods, purchases carried
    forward; with `compare`, also each period from scratch and everything bought up front. Returns a
    `solver.plan.run.PlanResult`; `.to_dict()` is the JSON (schema fabricplan.plan/1)."""
    from .plan.run import run_plan

    ls = as_loaded(scenario)
    cat = catalog if catalog is not None else catalog_for(ls)
    return run_plan(ls, cat, time_limit_s=time_limit_s, compare=compare, progress=progress)


def calibrate(runs: str | Path, catalog: Catalog | None = None, stack: str | None = None,
              fits: tuple[str, ...] = ("gemm", "tp_overlap")):
    """Fit the model to measured runs (SPEC §4.8): a CSV or YAML list of runs whose columns are scenario field
    paths plus `measured_step_time_s` or `measured_tokens_per_s_per_gpu`. Returns a
    `solver.calibration.Calibration` (per-run errors before, fitted and left out; `.overlay_yaml()` is the catalog
    overlay; `.check()` raises InputError when the fit is no better than the defaults). Bad runs raise InputError."""
    from .calibration import calibrate as _calibrate

    return _calibrate(runs, catalog if catalog is not None else load_catalog(), stack, fits=fits)


__all__ = ["InputError", "Problem", "SolverFailure", "architectures", "calibrate", "catalog_for", "evaluate",
           "evaluate_pins", "frontier", "load_catalog", "load_scenario", "plan", "solve", "sweep", "user_constraints"]
