"""The HiGHS adapter: the only module that talks to the solver.

Uses Pyomo's `pyomo.contrib.solver` HiGHS interface (persistent: re-solving after adding a
no-good cut only sends the change). It never raises on a non-optimal outcome: the status is mapped
to the tool's own vocabulary, with the proven gap and wall-clock times measured here (HiGHS's own
run time accumulates over the life of one solver object, docs/sources.md [S1]).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

_THREADS_IN_PROCESS: int | None = None  # HiGHS fixes its thread pool at the first solve

# HiGHS's presolve rules are the bits of its `presolve_rule_off` option; bit 12 is the aggregator (HiGHS logs
# "Rule 12 (set bit 12 = 4096): Aggregator"). With it on, HiGHS 1.15.1 returned wrong answers on this tool's
# models: on scenarios/expand-owned-h100.yaml (owned-inventory netting, site lines per scalable unit, spares)
# presolve declared the dominated-level model infeasible, and proved a 3-tier design costing $240.2M "optimal"
# on the points-level one, while presolve off, or presolve without the aggregator, found the $224.7M 2-tier
# multi-plane design, a feasible point of the same model (max primal infeasibility 7e-11). Switching off any
# other single rule did not help. Leaving the aggregator out keeps the rest of presolve and makes its answers
# exact again (tests/optimize/test_presolve_exact.py).
PRESOLVE_RULES_OFF = 1 << 12

# HiGHS's feasibility-jump heuristic runs before the root LP of every solve; on this tool's models the root LP's own
# rounding finds the optimum (one node), so the jump only costs time: over the 56 first-and-K-best models of 9 bench
# and shipped scenarios HiGHS took 565 ms with it and 358 ms without, no model more than 30 % slower (issue 26's fifth
# pass, docs/performance.md). A heuristic: the proven optimum does not depend on it.
FEASIBILITY_JUMP = False


@dataclass(frozen=True)
class SolveOutcome:
    status: str  # optimal | feasible | infeasible | time_limit | error
    objective: float | None
    bound: float | None
    gap: float | None  # relative, proven (0 when optimal)
    solve_time_s: float
    termination: str

    @property
    def has_solution(self) -> bool:
        return self.objective is not None and self.status in ("optimal", "feasible")


class HighsAdapter:
    """Persistent HiGHS solver for one Pyomo model."""

    def __init__(self, time_limit_s: float | None = None, mip_rel_gap: float = 0.0, threads: int | None = None):
        from pyomo.contrib.solver.solvers.highs import Highs  # direct: `pyomo.environ`'s plugin registry costs 0.35 s

        global _THREADS_IN_PROCESS
        if threads is None:
            threads = _THREADS_IN_PROCESS or 1
        if _THREADS_IN_PROCESS is not None and threads != _THREADS_IN_PROCESS:
            threads = _THREADS_IN_PROCESS  # changing it later fails inside HiGHS; keep the first value
        _THREADS_IN_PROCESS = threads
        self.threads = threads
        self.time_limit_s = time_limit_s
        self.mip_rel_gap = mip_rel_gap
        self._opt = Highs()
        self.total_time_s = 0.0

    @staticmethod
    def version() -> str:
        import highspy

        return str(highspy.Highs().version())

    def solve(self, model, time_limit_s: float | None = None) -> SolveOutcome:
        """Solve `model`; load the solution into it when there is one. An infeasible verdict is confirmed
        without presolve: HiGHS 1.15.1's presolve proved infeasible a feasible model (expand-owned-h100 with
        hot spares and owned nodes: each of its points solves alone, and the model solves without presolve),
        and an infeasible verdict ends the search, so it must be right."""
        limit = time_limit_s if time_limit_s is not None else self.time_limit_s
        outcome = self._solve_once(model, limit, presolve="choose")
        if outcome.status != "infeasible":
            return outcome
        left = None if limit is None else limit - outcome.solve_time_s
        if left is not None and left <= 0:
            return SolveOutcome("time_limit", None, None, None, outcome.solve_time_s, "maxTimeLimit")
        confirmed = self._solve_once(model, left, presolve="off")
        return SolveOutcome(confirmed.status, confirmed.objective, confirmed.bound, confirmed.gap,
                            outcome.solve_time_s + confirmed.solve_time_s, confirmed.termination)

    def _solve_once(self, model, limit: float | None, presolve: str) -> SolveOutcome:
        from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition

        options = dict(
            rel_gap=self.mip_rel_gap,
            abs_gap=1e-6,
            threads=self.threads,
            raise_exception_on_nonoptimal_result=False,
            load_solutions=False,
            solver_options={"mip_feasibility_tolerance": 1e-7, "primal_feasibility_tolerance": 1e-8, "random_seed": 0,
                            "presolve": presolve, "presolve_rule_off": PRESOLVE_RULES_OFF,
                            "mip_heuristic_run_feasibility_jump": FEASIBILITY_JUMP},
        )
        if limit is not None:
            options["time_limit"] = max(0.01, float(limit))
        start = time.perf_counter()
        try:
            result = self._opt.solve(model, **options)
        except Exception as exc:  # a solver crash is reported, never raised past the adapter
            elapsed = time.perf_counter() - start
            self.total_time_s += elapsed
            return SolveOutcome("error", None, None, None, elapsed, f"{type(exc).__name__}: {exc}")
        elapsed = time.perf_counter() - start
        self.total_time_s += elapsed
        tc, ss = result.termination_condition, result.solution_status
        objective = result.incumbent_objective
        bound = result.objective_bound
        has = ss in (SolutionStatus.optimal, SolutionStatus.feasible) and objective is not None
        if has:
            result.solution_loader.load_vars()
        if tc == TerminationCondition.convergenceCriteriaSatisfied and has:
            status = "optimal"
        elif tc in (TerminationCondition.provenInfeasible, TerminationCondition.locallyInfeasible, TerminationCondition.infeasibleOrUnbounded):
            status = "infeasible"
        elif has:
            status = "feasible"
        elif tc in (TerminationCondition.maxTimeLimit, TerminationCondition.iterationLimit, TerminationCondition.interrupted):
            status = "time_limit"
        else:
            status = "error"
        gap = None
        if has:
            if status == "optimal":
                gap = 0.0 if bound is None else _rel_gap(objective, bound)
            elif bound is not None and not math.isinf(bound):
                gap = _rel_gap(objective, bound)
        return SolveOutcome(status, objective if has else None, bound, gap, elapsed, tc.name)


def _rel_gap(objective: float, bound: float) -> float:
    return abs(objective - bound) / max(abs(objective), 1e-9)
