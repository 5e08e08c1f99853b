"""Optimisation: the model's data (data.py), the MILP (model.py), the HiGHS adapter (highs.py), the
K-best loop (ranking.py), infeasibility explanations (diagnose.py), the exhaustive enumeration the
optimiser is checked against (oracle.py) and the solve/evaluate pipeline (solve.py)."""
