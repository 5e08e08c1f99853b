"""fabricplan: a declarative optimisation and procurement solver for AI GPU clusters.

    import solver
    catalog  = solver.load_catalog()                 # the shipped default catalog
    scenario = solver.load_scenario("scenarios/llama3-70b.yaml")
    result   = solver.solve(scenario, catalog, top_k=5)
    design   = solver.evaluate(pinned_scenario, catalog)
"""
__version__ = "0.1.0"

from .api import InputError, SolverFailure, evaluate, load_catalog, load_scenario, solve  # noqa: E402

__all__ = ["load_catalog", "load_scenario", "solve", "evaluate", "InputError", "SolverFailure", "__version__"]
