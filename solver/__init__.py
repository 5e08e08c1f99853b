"""fabricplan: a declarative optimisation and procurement solver for AI GPU clusters.

    import solver
    catalog  = solver.load_catalog()                 # the shipped default catalog
    scenario = solver.load_scenario("scenarios/llama3-70b.yaml")
    result   = solver.solve(scenario, catalog, top_k=5)
    design   = solver.evaluate(pinned_scenario, catalog)
"""
from .version import __version__

_API = ("load_catalog", "load_scenario", "solve", "evaluate", "sweep", "InputError", "SolverFailure")
__all__ = [*_API, "__version__"]


def __getattr__(name):
    # Lazy: `fabricplan --help` must not pay for importing Pyomo and pandas.
    if name in _API or name == "api":  # `solver.api.frontier(…)`, `solver.api.user_constraints(…)` right after import
        import importlib

        api = importlib.import_module(".api", __name__)  # not `from . import api`: that asks this hook for `api`
        return api if name == "api" else getattr(api, name)
    raise AttributeError(f"module 'solver' has no attribute {name!r}")
