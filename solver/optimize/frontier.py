"""The cost–speed frontier (SPEC §7, v3): the Pareto set of cost (capex, or TCO when the scenario
minimises TCO) against step time, each point found exactly by the MILP; and the next faster design
of a solve's #1.

Epsilon-constraint from the cheap end (docs/model.md §Frontier). The model is the ranking's model
(solver/optimize/model.py) over the design space pruned only point by point (`prune="points"`: every
data-parallel degree that meets the target, memory and margins stays, since a larger one may be
faster), with the `fastest` step-time expression Σ T_sj·w. Point 1 is the cheapest design meeting the
scenario's target; point k+1 is the cheapest design strictly faster than point k:

    frontier_step_k:  Σ_{s,j,a} T_sj·w[s,j,a] ≤ T_k·(1 − ε)        (ε = FRONTIER_REL)

and, of the designs that cheap (within a cent), the fastest (a second solve with the cost row
frontier_cost_k: cost ≤ C_k + one cent, minimising Σ T_sj·w), so that no point is dominated by an
equally priced faster design. The loop ends when the step row makes the model infeasible (no faster
design within the caps: the front is complete) or after N points. Every point is evaluated by the
one evaluator and checked against the model (`ranking.design_of`). For `objective: fastest` the
search runs from the fast end instead (`fastest_cheaper`: the fastest design, then the fastest one
costing at most C_k·(1 − ε), each by bisection over step times with cost minimisations); the points
are reported cheapest first.

The next faster design of a solve's #1 (`next_faster`) is the cheapest design meeting the lowered
target T_1·(1 − ε): the ranking's smaller model at that target answers it (with demanded margins, the
point-pruned model with one frontier_step_k row, since a lowered target would demand them there too).

ε = 1e-6: a step time has to be one part per million below the last point's to count as faster.
HiGHS accepts a binary within its integrality tolerance (1e-7 here, `mip_feasibility_tolerance`),
so a step row tighter than about 1e-7 relative could be "met" by the same point with w = 1 − 1e-7;
1e-6 keeps a tenfold margin over it, and is far below anything the performance model can tell apart
(one microsecond on a one-second step). Two designs closer than ε in step time are one point of the
front (the cheaper); the enumeration check (tests/optimize/test_frontier.py) uses the same rule.
"""
from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..deadline import Deadline
from ..design_space import DesignSpace, build_design_space
from ..errors import SolverFailure
from ..inputs import LoadedScenario
from ..inputs.schema import Catalog, Scenario
from ..results import Design, SolveResult
from . import model as milp
from .data import MUSD, ModelData, model_data, unbuildable_error, with_pod_tiers
from .highs import HighsAdapter, SolveOutcome
from .ranking import SAME_SPEED_REL, design_of, prune_by_bounds, prune_points_over_caps, same_speed
from .ties import faster_at_equal_cost
from .user_rows import exact_prune

FRONTIER_REL = 1e-6  # a point must be this much faster (relative) than the last one (module docstring)
CENT_MUSD = 0.01 * MUSD  # cost ties: designs within a cent of the cheapest are equally cheap
DEFAULT_POINTS = 10
MAX_POINTS = 100


def faster_than(step_s: float, last_s: float) -> bool:
    """Whether a design of step time `step_s` is strictly faster than one of `last_s` on the frontier
    (the rule the step row frontier_step_k states; the enumeration check uses this function too)."""
    return step_s <= last_s * (1 - FRONTIER_REL)


@dataclass
class Frontier:
    """The points found, cheapest (slowest) first, and how the search ended.

    status: optimal (every point proven: the cheapest strictly faster design, and the fastest of
    that cost), feasible (a solve stopped at the time limit with an unproven incumbent), time_limit
    (the time limit cut the front short). ended: why the loop stopped."""

    points: list[Design]
    status: str
    ended: str
    cost: str  # capex | tco: the cost the front is of
    outcomes: list[SolveOutcome] = field(default_factory=list)
    timings: dict = field(default_factory=dict)
    start: str = "cheapest"  # the end the search started from: cheapest | fastest (`objective: fastest`)

    @property
    def complete(self) -> bool:
        """The last solve proved that no faster (from the fast end: cheaper) design exists within the caps."""
        return self.ended in (NO_FASTER, NO_CHEAPER)

    def to_list(self) -> list[dict]:
        """The JSON list (`frontier` in the result): one entry per point."""
        return [point_dict(d, i + 1, self.cost) for i, d in enumerate(self.points)]

    def to_dict(self) -> dict:
        return {"status": self.status, "ended": self.ended, "complete": self.complete, "cost": self.cost,
                "started_from": self.start, "epsilon_rel": FRONTIER_REL, "time_s": self.timings.get("total_s"), "points": self.to_list()}


NO_FASTER = "no faster design within the caps"
NO_CHEAPER = "no cheaper design within the caps"


def point_dict(d: Design, index: int, cost: str) -> dict:
    a = d.architecture
    lay = d.layout
    return {"point": index, "cost_usd": d.cost.tco_usd if cost == "tco" else d.cost.capex_usd,
            "capex_usd": d.cost.capex_usd, "tco_usd": d.cost.tco_usd, "step_time_s": d.perf.step_time_s,
            "cost_per_million_tokens_usd": d.cost_per_million_tokens_usd, "tokens_per_step": d.tokens_per_step,
            "goodput": d.goodput, "amortisation_years": d.cost.tco_years, "gpus": d.cost.gpus,
            "architecture": d.label, "platform": a.platform, "nic": a.nic, "rails_per_node": a.rails_per_node,
            "switch": a.switch, "tiers": d.tiers, "fabric": a.fabric,
            "layout": {"tp": lay.tp, "cp": lay.cp, "pp": lay.pp, "vp": lay.vp, "dp": lay.dp,
                       "microbatch_size": lay.microbatch_size, "ep": lay.ep, "etp": lay.etp},
            "design_id": design_id(d)}


def design_id(d: Design) -> str:
    """A stable, readable identity of one design: architecture, tiers and layout."""
    lay = d.layout
    experts = f"·e{lay.ep}x{lay.etp}" if (lay.ep, lay.etp) != (1, 1) else ""
    return (f"{d.label} | t{lay.tp}·c{lay.cp}·p{lay.pp}·v{lay.vp}·d{lay.dp}·b{lay.microbatch_size}{experts}"
            f" G{lay.gpus_per_domain_used}")


class FrontierModel:
    """One MILP over the point-pruned design space, re-solved with a tighter step row per point."""

    def __init__(self, scenario: LoadedScenario | Scenario, catalog: Catalog, deadline: Deadline, prune: str = "points",
                 memo: Any = None, seed: tuple = ()):
        """`prune="dominated"` (the next faster design at a lowered target, `next_faster`) also prunes
        architectures by the ranking's exact bounds for one design. `memo`: an earlier build's
        `DesignSpace.memo` (the solve's), which the design space reuses where it serves."""
        start = time.perf_counter()
        self.deadline = deadline
        sc = with_pod_tiers(scenario.scenario if isinstance(scenario, LoadedScenario) else scenario)
        prune = exact_prune(prune, sc)  # user rows: every point, the model's rows decide (optimize/user_rows.py)
        self.prune = prune
        # the next faster design (prune "dominated") is the cheapest meeting a lowered target and, of that cost, the
        # fastest: of the points of one class on as many domains (one cost) only the fastest can be it
        self.space: DesignSpace = build_design_space(sc, catalog, prune, one_layout_per_cost=(prune == "dominated"),
                                                     deadline=deadline, memo=memo,
                                                     top_k=1 if prune == "dominated" else None, seed=seed)
        self.timings: dict = {"design_space_s": time.perf_counter() - start}
        self.cost = "tco" if sc.objective in ("tco", "rent_or_buy") else "capex"  # rent_or_buy ranks the TCO designs
        self.stopped_in: str | None = None if self.space.complete else "design space"
        self.model: Any = None
        self.adapter = HighsAdapter(time_limit_s=deadline.seconds)
        self.rows = 0
        self.probes = 0
        if self.stopped_in is None and self.space.shapes:
            self._build()
        self.timings["build_s"] = time.perf_counter() - start

    def _build(self) -> None:
        data = model_data(self.space)
        if not data.archs:
            raise unbuildable_error(self.space, data)
        data = dataclasses.replace(data, objective=self.cost)  # `fastest` scenarios: the front is of capex
        data = prune_points_over_caps(data)
        if self.prune == "dominated":
            data, _, _ = prune_by_bounds(self.space, data, 1, "architecture", self.deadline)
        self.data: ModelData = data
        if self.deadline.expired("model"):
            self.stopped_in = "model build"
            return
        self.model = milp.build_model(self.data)
        milp.add_step_objective(self.model)
        self.timings.update(model_variables=self.model.nvariables(), model_constraints=self.model.nconstraints())

    def _remaining(self) -> float | None:
        left = self.deadline.remaining_s()
        return None if left is None else max(0.05, left)

    def cheapest_faster(self, last_s: float | None) -> tuple[Design | None, str, list[SolveOutcome]]:
        """The cheapest design strictly faster than `last_s` (None: the cheapest meeting the target),
        and of that cost the fastest; with "optimal" | "feasible" | "infeasible" | "time_limit" | "error"."""
        import pyomo.core as pyo

        if self.model is None:
            return None, ("time_limit" if self.stopped_in else "infeasible"), []
        if self.deadline.expired():
            return None, "time_limit", []
        m, index = self.model, self.rows
        self.rows += 1
        if last_s is not None:  # the tighter row makes every earlier one redundant
            for old in m.cuts.component_objects(pyo.Constraint):
                if old.local_name.startswith("frontier_step_"):
                    old.deactivate()
            milp.add_cut(m, f"frontier_step_{index}", m.step_objective_ms <= 1e3 * last_s * (1 - FRONTIER_REL))
        first = self.adapter.solve(m, time_limit_s=self._remaining())
        if not first.has_solution:
            return None, first.status, [first]
        choice = milp.decode(m)
        second, choice = self._fastest_of_cost(m, index, choice)
        proven = first.status == "optimal" and second.status == "optimal"
        design = design_of(self.space, self.data, choice, proven=proven)
        return design, ("optimal" if proven else "feasible"), [first, second]

    def _fastest_of_cost(self, m: Any, index: int, choice: milp.Choice) -> tuple[SolveOutcome, milp.Choice]:
        """Second stage: frontier_cost_k: cost ≤ C_k + one cent; minimise Σ T_sj·w; then restore the cost objective."""
        import pyomo.core as pyo

        found = choice.objective_usd * MUSD
        row = milp.add_cut(m, f"frontier_cost_{index}", self._cost_expr(m) <= found + max(CENT_MUSD, 1e-9 * found))
        m.objective.deactivate()
        m.frontier_speed = pyo.Objective(expr=m.step_objective_ms, sense=pyo.minimize)
        try:
            outcome = self.adapter.solve(m, time_limit_s=self._remaining())
            faster = milp.decode(m) if outcome.has_solution else choice
        finally:
            m.del_component(m.frontier_speed)
            m.objective.activate()
            row.deactivate()
        return outcome, faster

    def _cost_expr(self, m: Any) -> Any:
        return m.total_tco_musd if self.cost == "tco" else m.total_capex_musd

    def _fix_out(self, m: Any, last_usd: float, last_step_s: float | None) -> None:
        """Exact pruning as the fast-end search moves down in cost: w = 0 for every point (a) faster than the last
        point (none of them costs less: the last point was the fastest of all cheaper designs, so a cheaper and
        faster one would have been found instead), or (b) whose compute alone already costs more than the last
        point (`ranking.prune_points_over_caps` with the last cost as budget; TCO ≥ capex, so it holds for TCO)."""
        capped = dataclasses.replace(self.data, caps={**self.data.caps, "budget_usd": last_usd},
                                     over_caps=frozenset())
        out = set(prune_points_over_caps(capped).over_caps)
        if last_step_s is not None:
            shapes = self.space.shapes
            out |= {(i, j, a) for (i, j, a) in m.SJA if not same_speed(last_step_s, shapes[i].step_time_s[j])}
        for key in out:
            if key in m.w:
                m.w[key].fix(0)

    def fastest_cheaper(self, last_usd: float | None,
                        last_step_s: float | None = None) -> tuple[Design | None, str, list[SolveOutcome]]:
        """From the fast end (`objective: fastest`): the fastest design strictly cheaper than `last_usd`
        (cost ≤ C_k·(1 − ε); None: the fastest within the caps), and of that speed the cheapest.

        By bisection over the step times T of the points left, each probe one cost minimisation with
        `same_speed_k`: Σ T_sj·w ≤ T·(1 + 10⁻⁹): f(T) = the least cost at step time ≤ T falls as T grows, and
        the answer is the least T with f(T) ≤ C_k·(1 − ε), its probe's design (the cheapest of that speed).
        About log2(points) cost solves, each as quick as the ranking's, instead of one min-step-time MILP
        per point, whose weak relaxation took 15–30 s on budget-60m-fastest."""
        if self.model is None:
            return None, ("time_limit" if self.stopped_in else "infeasible"), []
        if self.deadline.expired():
            return None, "time_limit", []
        m = self.model
        self.rows += 1
        if last_usd is not None:
            self._fix_out(m, last_usd, last_step_s)
        limit = None if last_usd is None else last_usd * (1 - FRONTIER_REL)
        shapes = self.space.shapes
        steps = sorted({shapes[i].step_time_s[j] for (i, j, a) in m.SJA if not m.w[i, j, a].fixed})
        lo, hi, best, outcomes = 0, len(steps) - 1, None, []
        while lo <= hi:
            mid = (lo + hi) // 2
            choice, outcome = self._cheapest_within(m, steps[mid], limit)
            outcomes.append(outcome)
            if choice is None and not outcome.has_solution and outcome.status != "infeasible":
                return None, outcome.status, outcomes  # time limit or solver failure
            if choice is not None:
                best, hi = choice, mid - 1
            else:
                lo = mid + 1
        if best is None:
            return None, "infeasible", outcomes
        proven = all(o.status in ("optimal", "infeasible") for o in outcomes)
        design = design_of(self.space, self.data, best, proven=proven)
        return design, ("optimal" if proven else "feasible"), outcomes

    def _cheapest_within(self, m: Any, step_s: float, limit_usd: float | None) -> tuple[milp.Choice | None, SolveOutcome]:
        """One probe: the cheapest design with step time ≤ step_s (same_speed), if it costs at most `limit_usd`."""
        self.probes += 1
        row = milp.bound_step_time(m, step_s * (1 + SAME_SPEED_REL) + 1e-12, self.probes)
        try:
            outcome = self.adapter.solve(m, time_limit_s=self._remaining())
            choice = milp.decode(m) if outcome.has_solution else None
        finally:
            milp.drop_cut(m, row)
        if choice is not None and limit_usd is not None and choice.objective_usd > limit_usd:
            choice = None
        return choice, outcome


def frontier(scenario: LoadedScenario, catalog: Catalog, n: int = DEFAULT_POINTS,
             time_limit_s: float | None = None, progress: Callable[[int, int], None] | None = None,
             memo: Any = None) -> Frontier:
    """Up to `n` points of the cost–speed front, reported cheapest first (module docstring): found from
    the cheap end (the cheapest design meeting the target first), or, for `objective: fastest`, from
    the fast end (the fastest design within the caps first; its cheap end may be a single node)."""
    from .solve import check_time_limit

    if not 1 <= n <= MAX_POINTS:
        from ..errors import UsageError

        raise UsageError(f"--frontier takes between 1 and {MAX_POINTS} points (got {n})")
    deadline = Deadline(check_time_limit(time_limit_s))
    fm = FrontierModel(scenario, catalog, deadline, memo=memo)
    from_fast_end = scenario.scenario.objective == "fastest"
    points: list[Design] = []
    outcomes: list[SolveOutcome] = []
    more = "cheaper" if from_fast_end else "faster"
    status, ended = "optimal", f"{n} point(s) asked; {more} designs may exist"
    while len(points) < n:
        if from_fast_end:
            design, how, outs = fm.fastest_cheaper(*((points[-1].objective_usd, points[-1].perf.step_time_s)
                                                     if points else (None, None)))
        else:
            design, how, outs = fm.cheapest_faster(points[-1].perf.step_time_s if points else None)
        outcomes += outs
        if design is None:
            status, ended = _end(how, fm, status, more)
            break
        if how == "feasible":
            status = "feasible"
        points.append(design)
        if progress:
            progress(len(points), n)
    fm.timings.update(total_s=deadline.elapsed_s(), solve_s=fm.adapter.total_time_s, solves=len(outcomes))
    if not points and status != "optimal":
        raise SolverFailure(f"the frontier found no design ({ended})" + (
            f" within the {time_limit_s:g} s time limit; allow more time" if status == "time_limit" else ""))
    if from_fast_end:
        points.reverse()
    return Frontier(points, status, ended, fm.cost, outcomes, fm.timings, "fastest" if from_fast_end else "cheapest")


def _end(how: str, fm: FrontierModel, status: str, more: str = "faster") -> tuple[str, str]:
    """Status and reason when a stage found no design: infeasible ends the front; otherwise it was cut short."""
    if how == "infeasible":
        return status, NO_FASTER if more == "faster" else NO_CHEAPER
    if how == "time_limit":
        where = f" in the {fm.stopped_in}" if fm.stopped_in else ""
        return "time_limit", f"the time limit cut the search short{where}; {more} designs may exist"
    return "feasible", f"the solver failed ({how}); {more} designs may exist"


# ------------------------------------------------------------------------ the next faster design


def add_to_result(result: SolveResult, scenario: LoadedScenario, catalog: Catalog, points: int | None = None,
                  time_limit_s: float | None = None,
                  progress: Callable[[int, int], None] | None = None) -> Frontier | None:
    """What `solve` adds to its ranked result: with `points`, the frontier (`result.frontier`) and the
    next faster design read off it; without, the next faster design by one more solve. Nothing when
    the result has no design (infeasible)."""
    if not result.designs:
        return None
    if points is None:
        result.next_faster = next_faster(result, scenario, catalog, time_limit_s)
        return None
    front = frontier(scenario, catalog, points, time_limit_s, progress, memo=result.space_memo)
    result.frontier = front.to_dict()
    result.next_faster = next_faster_from(front, result.designs[0])
    return front


def next_faster(result: SolveResult, scenario: LoadedScenario, catalog: Catalog,
                time_limit_s: float | None = None) -> dict | None:
    """The cheapest design strictly faster than the result's #1 (one more exact solve), as the
    `next_faster` dict of the result; None when there is no #1."""
    if not result.designs:
        return None
    first = result.designs[0]
    start = time.perf_counter()
    if result.status == "time_limit":
        # the solve ran out of its --time-limit: its #1 is unproven, so "faster than #1" has no firm meaning, and
        # one more search of the same size would spend the limit a second time
        return next_faster_dict(first, None, "not searched: the solve hit its time limit", "time_limit",
                                time.perf_counter() - start)
    if first.objective == "fastest" and result.status == "optimal":
        return next_faster_dict(first, None, NO_FASTER + ": #1 is the fastest", "optimal",
                                time.perf_counter() - start)
    sc = scenario.scenario
    if sc.robustness.compute_slowdown == 0 and sc.robustness.bandwidth_derate == 0:
        # the cheapest design strictly faster than T1 is the cheapest meeting the target T1·(1 − ε): the ranking's
        # smaller model (dominated points, bound pruning) answers it exactly; margins would then be demanded at
        # the lowered target too, so with margins the point-pruned model with frontier_step_k answers instead
        lowered_s = first.perf.step_time_s * (1 - FRONTIER_REL)
        fm = FrontierModel(lowered_target(sc, lowered_s), catalog, Deadline(time_limit_s), prune="dominated",
                           memo=result.space_memo, seed=_faster_ranked(result, lowered_s))
        design, how, _ = fm.cheapest_faster(None)
        if design is not None:  # the lowered space keeps one layout per cost: of that cost, the fastest layout
            design = faster_at_equal_cost(fm.space, design)
    else:
        fm = FrontierModel(scenario, catalog, Deadline(time_limit_s), memo=result.space_memo)
        design, how, _ = fm.cheapest_faster(first.perf.step_time_s)
    if design is not None:
        return next_faster_dict(first, design, "", how, time.perf_counter() - start)
    status, ended = _end(how, fm, "optimal")
    return next_faster_dict(first, None, ended, status, time.perf_counter() - start)


def _faster_ranked(result: SolveResult, lowered_s: float) -> tuple:
    """The solve's ranked designs whose step time meets the lowered target (with the margins), as (architecture,
    layout): the next faster design's build offers them to its cost bound before its scan, which costs them and
    judges the caps, tiers and dominance in the lowered scenario itself (`CostBound.offer_design`)."""
    return tuple((d.architecture, d.layout) for d in result.designs[1:]
                 if dataclasses.replace(d, target_step_time_s=lowered_s).meets_target)


def lowered_target(sc: Scenario, step_time_s: float) -> Scenario:
    """The scenario with its target replaced by `step_time_s` (and `fastest` by `capex`: the cheapest at that speed)."""
    target = sc.target.model_copy(update={"step_time_s": step_time_s, "train_days": None})
    objective = "capex" if sc.objective == "fastest" else sc.objective
    return sc.model_copy(update={"target": target, "objective": objective})


def next_faster_from(front: Frontier, first: Design) -> dict:
    """The next faster design read off a frontier whose first point is as cheap as `first` (no extra solve)."""
    later = [d for d in front.points if faster_than(d.perf.step_time_s, first.perf.step_time_s)]
    if later:
        return next_faster_dict(first, later[0], "", front.status, 0.0)
    if front.complete or front.start == "fastest":  # from the fast end the front's fastest point is the fastest
        return next_faster_dict(first, None, NO_FASTER, front.status, 0.0)
    return next_faster_dict(first, None, front.ended, front.status, 0.0)


def next_faster_dict(first: Design, design: Design | None, why: str, status: str, seconds: float) -> dict:
    cost = "tco" if first.objective in ("tco", "rent_or_buy") else "capex"  # as Design.objective_usd
    out: dict = {"status": status, "time_s": seconds, "cost": cost, "found": design is not None}
    if design is None:
        out["text"] = f"the next faster design: none ({why})"
        return out
    c0, c1 = first.objective_usd, design.objective_usd
    t0, t1 = first.perf.step_time_s, design.perf.step_time_s
    out.update(cost_usd=c1, capex_usd=design.cost.capex_usd, step_time_s=t1, cost_change=c1 / c0 - 1,
               step_time_change=t1 / t0 - 1, cost_per_million_tokens_usd=design.cost_per_million_tokens_usd,
               gpus=design.cost.gpus, architecture=design.label, design_id=design_id(design))
    label = "TCO" if cost == "tco" else "capex"
    out["text"] = (f"the next faster design: {signed_percent(c1 / c0 - 1)} {label}, "
                   f"{signed_percent(t1 / t0 - 1)} step time ({design.label}, {design.cost.gpus:,} GPUs)")
    return out


def signed_percent(x: float) -> str:
    """+16.4 % or −3.4 % (a true minus sign)."""
    return f"{'−' if x < 0 else '+'}{abs(x) * 100:.1f} %"
