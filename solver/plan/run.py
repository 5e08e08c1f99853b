"""Running a plan: each period's design space, the plan MILP, every chosen design re-evaluated and the
model's objective checked against the ledger, then the two comparisons a budget planner asks for:
buying each period from scratch (the sweep's independent answers, at each period's prices) and buying
everything in the first period."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..deadline import NO_LIMIT, SHARES, Deadline
from ..design_space import build_design_space
from ..errors import ConsistencyError, SolverFailure
from ..inputs.scenario import LoadedScenario
from ..inputs.schema import Catalog
from ..optimize.data import model_data, unbuildable_error
from ..optimize.highs import HighsAdapter
from ..optimize.ranking import requirement_problems
from ..optimize.solve import check_time_limit
from ..results import Design, make_design
from .forked import forked
from .ledger import Ledger, ledger
from .manual import pinned_spec
from .model import PeriodChoice, PeriodModel, build_plan_model, decode
from .periods import PlanSpec, named, plan_periods


@dataclass
class PlanOutcome:
    """One plan solve: the design and cluster of each period and the ledger that prices them."""

    status: str  # optimal | feasible | time_limit (a design space was cut) | infeasible | not computed
    designs: list[Design] = field(default_factory=list)
    clusters: list[int] = field(default_factory=list)
    ledger: Ledger | None = None
    explanation: str | None = None
    solve_time_s: float = 0.0
    gap: float | None = None
    stats: dict = field(default_factory=dict)


@dataclass
class PlanResult:
    """The plan and its comparisons (`solver.plan.summary.plan_report` turns it into the JSON)."""

    spec: PlanSpec
    catalog: Catalog
    plan: PlanOutcome
    from_scratch: list[PlanOutcome]
    up_front: PlanOutcome | None
    timings_s: dict
    solver: dict
    manual: PlanOutcome | None = None  # the final architecture bought when needed (plan/manual.py)

    @property
    def status(self) -> str:
        return self.plan.status

    def to_dict(self) -> dict:
        from .summary import plan_report

        return plan_report(self)


MAX_PLAN_POINTS = 2_000_000  # design-space points over all periods: the plan MILP's memory grows with them


def period_models(spec: PlanSpec, catalog: Catalog, deadline: Deadline = NO_LIMIT) -> list[PeriodModel] | str:
    """Each period's design space and model constants, or why a period has no design at all.

    With a time limit each period's design space gets an equal part of what is left of the
    budget's design-space share (a cut space is marked incomplete); the points of all periods
    together are capped at MAX_PLAN_POINTS (a memory bound, SolverFailure beyond it)."""
    from ..optimize.diagnose import explain_infeasible

    out: list[PeriodModel] = []
    total = 0
    for i, period in enumerate(spec.periods):
        left = deadline.remaining_s(SHARES["design_space"])
        part = NO_LIMIT if left is None else Deadline(2 * max(left, 0.0) / (len(spec.periods) - i))
        space = build_design_space(period.scenario, catalog, one_layout_per_cost=True, deadline=part)
        if not space.shapes:
            if not space.complete:
                raise SolverFailure(f"the plan found no design within the {deadline.seconds:g} s time limit (it ran "
                                    f"out in the design space of {named(period.label)}); allow more time")
            return f"{named(period.label)}: {explain_infeasible(space)}"
        total += space.points
        if total > MAX_PLAN_POINTS:
            raise SolverFailure(f"the plan's design spaces hold more than {MAX_PLAN_POINTS:,} points by "
                                f"{named(period.label)} ({total:,}): too many to plan in bounded memory; narrow the "
                                "allow-lists (constraints.platforms, nics, switches) or the parallelism ranges, or "
                                "plan fewer periods")
        data = model_data(space)
        if not data.archs:
            raise unbuildable_error(space, data)
        out.append(PeriodModel(space, data))
    return out


def solve_plan(spec: PlanSpec, catalog: Catalog, first_period_only: bool = False,
               time_limit_s: float | None = None, models: list[PeriodModel] | str | None = None,
               deadline: Deadline = NO_LIMIT, solves: int | None = None) -> PlanOutcome:
    """Build and solve the plan MILP; evaluate and price what it chose. `models` reuses period models
    already built (the comparisons solve on the plan's own design spaces); `time_limit_s` bounds
    HiGHS; a design space the `deadline` cut makes the status `time_limit`.

    `solves`: a comparison, the first of `solves` HiGHS solves that share what is left of `deadline`. Its limit is
    worked out once its model is built, and it is not computed when less is left than the build took: loading the
    model into HiGHS walks the same rows again, outside HiGHS's own limit (a comparison begun 0.1 s before the limit
    used to end 0.6–1.9 s after it on a 99-platform catalog)."""
    if models is None:
        models = period_models(spec, catalog, deadline)
    if isinstance(models, str):
        return PlanOutcome("infeasible", explanation=models)
    if solves is not None and unorderable_period(spec, models) is not None:  # a comparison nothing can be bought for
        return PlanOutcome("infeasible", explanation=_why_infeasible(spec, models, first_period_only))
    started = time.perf_counter()
    model = build_plan_model(spec, models, first_period_only)
    if solves is not None:
        left = deadline.remaining_s()
        if left is not None and left < time.perf_counter() - started:
            return _not_computed(deadline)
        time_limit_s = _left(deadline, 1.0, solves)
    outcome = HighsAdapter(time_limit_s=time_limit_s).solve(model)
    stats = {"model_variables": model.nvariables(), "model_constraints": model.nconstraints(),
             "architectures": len(model.G)}
    if not outcome.has_solution:
        if outcome.status == "infeasible":
            return PlanOutcome("infeasible", explanation=_why_infeasible(spec, models, first_period_only),
                               solve_time_s=outcome.solve_time_s, stats=stats)
        raise SolverFailure(f"the solver found no plan ({outcome.status}: {outcome.termination})"
                            + (f" within the {time_limit_s:g} s time limit; allow more time"
                               if time_limit_s is not None else ""))
    choices, objective_usd = decode(model)
    designs = [_period_design(spec, catalog, p, models[p], c) for p, c in enumerate(choices)]
    clusters = [c.cluster for c in choices]
    book = ledger(spec, catalog, designs, clusters, _model_purchases(spec, choices, designs), first_period_only)
    _check_objective(book, objective_usd, proven=outcome.status == "optimal")
    cut = not all(pm.space.complete for pm in models)  # a design space cut by the time limit: more plans may exist
    return PlanOutcome("time_limit" if cut else outcome.status, designs, clusters, book,
                       solve_time_s=outcome.solve_time_s, gap=outcome.gap, stats=stats)


def unorderable_period(spec: PlanSpec, models: list[PeriodModel]) -> int | None:
    """The first period whose every architecture's platform can be ordered in no period up to it (its lifecycle
    window, `spec.orderable`), when nothing is owned; else None. Every design of such a period holds at least one
    compute unit of its platform (a design occupies ≥ 1 NVLink domain), and with nothing owned cover[p,g,key] needs it
    bought by period p, which orderable_window[q,g,key] forbids in every q ≤ p: the plan MILP is infeasible, a verdict
    known without building it (the from-scratch comparisons of the periods after every window closed: three HiGHS
    solves and their Pyomo models each on plan-5-years). tests/plan/test_unorderable.py checks it against the MILP."""
    if spec.lifecycle is None or spec.owned or any(period.scenario.owned_counts() for period in spec.periods):
        return None
    for p, pm in enumerate(models):
        if all(not any(spec.orderable(q, ad.arch.platform) for q in range(p + 1)) for ad in pm.data.archs):
            return p
    return None


def _model_purchases(spec: PlanSpec, choices: list[PeriodChoice], designs: list[Design]) -> dict | None:
    """With a budget cap the model's own purchases (it may have had to buy early); else None, so the
    ledger takes the cheapest purchases (equal in cost, and the latest of equal ones)."""
    if all(p.scenario.constraints.budget_usd is None for p in spec.periods):
        return None
    cluster_of: dict = {}
    for c, d in zip(choices, designs):
        cluster_of.setdefault(d.architecture, c.cluster)
    out: dict = {}
    for p, c in enumerate(choices):
        for (arch, key), units in c.bought.items():
            if arch in cluster_of and round(units) > 0:
                out[p, cluster_of[arch], key] = round(units)
    return out


def _check_objective(book: Ledger, model_usd: float, proven: bool) -> None:
    """The model's discounted objective equals the ledger's (an unproven incumbent may only cost more)."""
    tolerance = 1e-6 * max(1.0, abs(book.objective_usd)) + 0.01 * len(book.periods)
    off = book.objective_usd - model_usd
    if off > tolerance or (proven and off < -tolerance):
        raise ConsistencyError(f"plan objective: model ${model_usd:,.2f}, ledger ${book.objective_usd:,.2f}")


def _period_design(spec: PlanSpec, catalog: Catalog, p: int, pm: PeriodModel, choice: PeriodChoice) -> Design:
    """The evaluator's design for one period's choice, checked against the model (tiers, step time, memory)."""
    sc = spec.periods[p].scenario
    shape = pm.space.shapes[choice.shape_index]
    design = make_design(sc, catalog, choice.architecture, shape.layout(choice.d), pm.space.target_step_time_s,
                         sc.pin.tiers)
    problems = []
    if design is None:
        raise ConsistencyError(f"period {p}: the evaluator cannot build {choice.architecture.label()} at d={choice.d}")
    if design.tiers != choice.tiers:
        problems.append(f"tiers: model {choice.tiers}, evaluator {design.tiers}")
    problems += requirement_problems(design, pm.space.target_step_time_s)
    if problems:
        raise ConsistencyError(f"period {p}, {choice.architecture.label()} {shape.key} d={choice.d}: " + "; ".join(problems))
    design.rank = 1
    return design


def _why_infeasible(spec: PlanSpec, models: list[PeriodModel], first_period_only: bool) -> str:
    """Every period has designs, yet no plan links them: name the linking rule that bites."""
    archs = [{ad.arch for ad in pm.data.archs} for pm in models]
    common = set.intersection(*archs)
    if spec.architectures == "keep_one" and not common:
        per = "; ".join(f"{period.label}: {len(a)} architecture(s)" for period, a in zip(spec.periods, archs))
        return ("no single architecture has a design in every period (" + per + "): set plan.architectures: "
                "allow_second, or widen the allow-lists")
    what = "buying everything in the first period" if first_period_only else "the plan"
    window = (" or the catalog's lifecycle windows (a part a later period needs is no longer orderable)"
              if spec.lifecycle is not None else "")
    return (f"every period has designs, but the caps exclude {what}: check each period's budget_usd (a cap on that "
            f"period's purchases), facility_power_kw, max_gpus and max_racks{window}")


def run_plan(ls: LoadedScenario, catalog: Catalog, time_limit_s: float | None = None, compare: bool = True,
             progress=None) -> PlanResult:
    """The plan, then (with `compare`) each period from scratch and everything bought up front."""
    from ..optimize.highs import HighsAdapter as Adapter

    t0 = time.perf_counter()
    check_time_limit(time_limit_s)
    spec = plan_periods(ls, catalog)  # checking the inputs is outside the limit, as for solve
    t1 = time.perf_counter()
    deadline = Deadline(time_limit_s)  # one budget for the design spaces, the plan and every comparison
    _say(progress, f"solving the {len(spec.periods)}-period plan…")
    models = period_models(spec, catalog, deadline)
    share = PLAN_SHARE if compare else 1.0

    def up_front() -> PlanOutcome:
        assert not isinstance(models, str)  # an infeasible plan has no comparisons
        return _compare(spec.only(spec.periods, "keep_one"), catalog, models, deadline, 1, first_period_only=True)

    # without a time limit the up-front comparison needs only the period models: a forked copy solves it while this
    # process solves the plan and the from-scratch comparisons (plan/forked.py; with a limit, the solves share the
    # time left one after another, as before)
    # (not near the memory cap: the copy builds the up-front model while this process builds the plan's)
    early = (compare and time_limit_s is None and not isinstance(models, str)
             and sum(m.space.points for m in models) <= MAX_PLAN_POINTS // 2)
    with forked(up_front, early) as upfront_job:
        plan = solve_plan(spec, catalog, time_limit_s=_left(deadline, share, 1), models=models)
        t2 = time.perf_counter()
        scratch: list[PlanOutcome] = []
        upfront = None
        manual = None
        if compare and plan.status != "infeasible":
            assert not isinstance(models, str)  # an infeasible plan has no comparisons
            solves = len(spec.periods) + 1
            for p, period in enumerate(spec.periods):
                _say(progress, f"comparison: {named(period.label)} bought from scratch…")
                scratch.append(_compare(spec.only([period], "keep_one"), catalog, [models[p]], deadline, solves - p))
            _say(progress, "comparison: everything bought in the first period…")
            upfront = upfront_job.result() if upfront_job is not None else up_front()
            manual = _manual(spec, catalog, scratch, progress, deadline)
    t3 = time.perf_counter()
    timings = {"periods_s": t1 - t0, "plan_s": t2 - t1, "comparisons_s": t3 - t2, "total_s": t3 - t0}
    solver = {"name": "HiGHS", "version": Adapter.version(), "mip_rel_gap": 0.0, "time_limit_s": time_limit_s}
    return PlanResult(spec, catalog, plan, scratch, upfront, timings, solver,
                      manual if compare and plan.status != "infeasible" else None)


def _manual(spec: PlanSpec, catalog: Catalog, scratch: list[PlanOutcome], progress,
            deadline: Deadline) -> PlanOutcome | None:
    """The best manual schedule: the last period's from-scratch architecture, bought when needed (not computed once
    the time limit is used up, as the other comparisons)."""
    last = scratch[-1] if scratch else None
    if last is None or not last.designs:
        return None
    if deadline.expired():
        return _not_computed(deadline)
    _say(progress, "comparison: the final cluster's architecture bought when needed…")
    try:
        return solve_plan(pinned_spec(spec, last.designs[-1]), catalog, deadline=deadline, solves=1)
    except SolverFailure as exc:  # HiGHS found nothing in what was left of the time
        return PlanOutcome("time_limit", explanation=str(exc))


def _not_computed(deadline: Deadline) -> PlanOutcome:
    return PlanOutcome("not computed", explanation=f"not computed: the {deadline.seconds:g} s time limit ran out")


PLAN_SHARE = 0.7  # with comparisons, the plan's own MILP may use the time limit up to here; they share the rest


def _left(deadline: Deadline, share: float, solves: int) -> float | None:
    """Seconds for the next of `solves` HiGHS solves sharing what is left until `share` of the budget."""
    left = deadline.remaining_s(share)
    return None if left is None else max(left, 0.0) / solves


def _compare(spec: PlanSpec, catalog: Catalog, models: list[PeriodModel], deadline: Deadline, solves: int,
             first_period_only: bool = False) -> PlanOutcome:
    """One comparison solve on the plan's own period models, within its part of what is left of the
    time limit; once the limit is used up, the comparison is not computed (and says why)."""
    if deadline.expired():
        return _not_computed(deadline)
    try:
        return solve_plan(spec, catalog, first_period_only, models=models, deadline=deadline, solves=solves)
    except SolverFailure as exc:  # HiGHS found nothing in its part of the time
        return PlanOutcome("time_limit", explanation=str(exc))


def _say(progress, text: str) -> None:
    if progress is not None:
        progress(text)
