"""Sensitivity sweeps (SPEC §9): plan the points, run them (serially, in a process pool or on
Dask), summarise what changes. Reports (terminal table, Sweep sheet, PNG) live in `solver.reports`."""
import sys
import types


class _SweepPackage(types.ModuleType):
    """`solver.sweep` is both this package and the library function (SPEC §8.2): once the package is imported,
    Python binds the package over `solver`'s lazy `sweep` attribute, so the package forwards a call to
    `solver.api.sweep`."""

    def __call__(self, *args, **kwargs):
        from ..api import sweep

        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _SweepPackage
