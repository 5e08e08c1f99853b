"""Sensitivity sweeps (SPEC §9): plan the points, run them (serially, in a process pool or on
Dask), summarise what changes. Reports (terminal table, Sweep sheet, PNG) live in `solver.reports`."""
from __future__ import annotations

import sys
import types
from collections.abc import Callable


def sweep(scenario, catalog=None, vary: list[str] | None = None, combine: str | None = None, jobs: int = 1,
          executor: str = "local", time_limit_s: float | None = None,
          on_result: Callable[[dict], None] | None = None) -> dict:
    """Solve every point of the scenario's `sweep:` block (or of `vary` flags); the sweep report dict
    (`solver.sweep`, SPEC §8.2)."""
    from ..inputs import as_loaded, catalog_for
    from .plan import plan_sweep
    from .run import run_points
    from .summary import sweep_report

    ls = as_loaded(scenario)
    cat = catalog if catalog is not None else catalog_for(ls)
    plan = plan_sweep(ls, cat, vary, combine, time_limit_s)
    return sweep_report(plan, run_points(plan, jobs, executor, on_result=on_result))


class _SweepPackage(types.ModuleType):
    """`solver.sweep` is both this package and the library function: once the package is imported, Python
    binds it over `solver`'s lazy `sweep` attribute, so calling the package runs the sweep."""

    def __call__(self, *args, **kwargs):
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _SweepPackage
