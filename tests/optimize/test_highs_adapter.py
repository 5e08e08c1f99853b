"""The HiGHS adapter (solver/highs.py): status mapping, gap, time limit, has_solution.

Real HiGHS solves of small Pyomo models whose answers are known by hand; no mocks.
"""
from __future__ import annotations

import random

import pyomo.environ as pyo
import pytest

from solver.optimize.highs import HighsAdapter, SolveOutcome


def _rounding_model() -> pyo.ConcreteModel:
    """min x + 2y s.t. x + y ≥ 2.5, x ≤ 1, x, y ∈ Z≥0.
    By hand: y ≥ 2.5 − x, x ∈ {0, 1}: x = 0 → y = 3, cost 6; x = 1 → y = 2, cost 5. Optimum 5."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 1))
    m.y = pyo.Var(domain=pyo.NonNegativeIntegers, bounds=(0, 10))
    m.cover = pyo.Constraint(expr=m.x + m.y >= 2.5)
    m.obj = pyo.Objective(expr=m.x + 2 * m.y, sense=pyo.minimize)
    return m


def _infeasible_model() -> pyo.ConcreteModel:
    """x integer with x ≥ 3 and x ≤ 2: no solution."""
    m = pyo.ConcreteModel()
    m.x = pyo.Var(domain=pyo.Integers, bounds=(0, 10))
    m.low = pyo.Constraint(expr=m.x >= 3)
    m.high = pyo.Constraint(expr=m.x <= 2)
    m.obj = pyo.Objective(expr=m.x)
    return m


def _market_split_model(rows: int = 4, cols: int = 40, seed: int = 7) -> pyo.ConcreteModel:
    """A market-split instance (Cornuéjols & Dawande 1998), known to defeat branch and bound:
    Σ_j a_ij·x_j + s⁺_i − s⁻_i = ⌊Σ_j a_ij / 2⌋, min Σ_i (s⁺_i + s⁻_i), x binary, a_ij ∈ [0, 99].
    Slacks make it always feasible (x = 0 is a solution), so an incumbent exists at once while the
    proof of optimality takes far longer than the tiny time limits used here."""
    rng = random.Random(seed)
    a = [[rng.randint(0, 99) for _ in range(cols)] for _ in range(rows)]
    m = pyo.ConcreteModel()
    m.I, m.J = range(rows), range(cols)
    m.x = pyo.Var(m.J, domain=pyo.Binary)
    m.sp = pyo.Var(m.I, domain=pyo.NonNegativeReals)
    m.sm = pyo.Var(m.I, domain=pyo.NonNegativeReals)
    m.split = pyo.Constraint(m.I, rule=lambda _, i: sum(a[i][j] * m.x[j] for j in m.J) + m.sp[i] - m.sm[i] == sum(a[i]) // 2)
    m.obj = pyo.Objective(expr=sum(m.sp[i] + m.sm[i] for i in m.I))
    return m


def test_optimal_status_objective_gap_and_solution_loaded():
    outcome = HighsAdapter().solve(m := _rounding_model())
    assert outcome.status == "optimal"
    assert outcome.has_solution
    assert outcome.objective == pytest.approx(5.0)
    assert outcome.gap == 0.0
    assert (round(pyo.value(m.x)), round(pyo.value(m.y))) == (1, 2)  # loaded into the model
    assert outcome.solve_time_s >= 0


def test_infeasible_model_is_a_status_not_an_exception():
    outcome = HighsAdapter().solve(_infeasible_model())
    assert outcome.status == "infeasible"
    assert not outcome.has_solution
    assert outcome.objective is None and outcome.gap is None


def test_time_limit_on_a_hard_model_reports_feasible_or_time_limit():
    adapter = HighsAdapter(time_limit_s=0.05)
    outcome = adapter.solve(_market_split_model())
    assert outcome.status in ("feasible", "time_limit")
    if outcome.status == "feasible":
        assert outcome.has_solution
        assert outcome.gap is not None and outcome.gap > 0  # not proven: the bound lags the incumbent
    else:
        assert not outcome.has_solution
    assert outcome.solve_time_s < 30  # the limit was honoured (generous for a loaded machine)
    assert adapter.total_time_s >= outcome.solve_time_s


def test_per_call_time_limit_overrides_and_times_accumulate():
    adapter = HighsAdapter()
    first = adapter.solve(_rounding_model())
    second = adapter.solve(_market_split_model(), time_limit_s=0.05)
    assert first.status == "optimal"
    assert second.status in ("feasible", "time_limit")
    assert adapter.total_time_s == pytest.approx(first.solve_time_s + second.solve_time_s)


@pytest.mark.parametrize("status, objective, expected", [
    ("optimal", 5.0, True),
    ("feasible", 5.0, True),
    ("feasible", None, False),   # no incumbent objective: nothing to read
    ("time_limit", 5.0, False),  # only optimal/feasible carry a solution
    ("infeasible", None, False),
    ("error", None, False),
])
def test_has_solution(status, objective, expected):
    assert SolveOutcome(status, objective, None, None, 0.0, "x").has_solution is expected


def test_version_is_reported():
    assert HighsAdapter.version().count(".") >= 1  # e.g. "1.7.2"
