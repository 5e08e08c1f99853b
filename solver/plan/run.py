"""Running a plan: each period's design space, the plan MILP, every chosen design re-evaluated and the
model's objective checked against the ledger, then the two comparisons a budget planner asks for:
buying each period from scratch (the sweep's independent answers, at each period's prices) and buying
everything in the first period."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..design_space import build_design_space
from ..errors import ConsistencyError, SolverFailure
from ..inputs.scenario import LoadedScenario
from ..inputs.schema import Catalog
from ..optimize.data import model_data, unbuildable_error
from ..optimize.highs import HighsAdapter
from ..optimize.ranking import requirement_problems
from ..results import Design, make_design
from .ledger import Ledger, ledger
from .model import PeriodChoice, PeriodModel, build_plan_model, decode
from .periods import PlanSpec, named, plan_periods


@dataclass
class PlanOutcome:
    """One plan solve: the design and cluster of each period and the ledger that prices them."""

    status: str  # optimal | feasible | infeasible
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


def period_models(spec: PlanSpec, catalog: Catalog) -> list[PeriodModel] | str:
    """Each period's design space and model constants, or why a period has no design at all."""
    from ..optimize.diagnose import explain_infeasible

    out = []
    for period in spec.periods:
        space = build_design_space(period.scenario, catalog, one_layout_per_cost=True)
        if not space.shapes:
            return f"{named(period.label)}: {explain_infeasible(space)}"
        data = model_data(space)
        if not data.archs:
            raise unbuildable_error(space, data)
        out.append(PeriodModel(space, data))
    return out


def solve_plan(spec: PlanSpec, catalog: Catalog, first_period_only: bool = False,
               time_limit_s: float | None = None) -> PlanOutcome:
    """Build and solve the plan MILP; evaluate and price what it chose."""
    models = period_models(spec, catalog)
    if isinstance(models, str):
        return PlanOutcome("infeasible", explanation=models)
    model = build_plan_model(spec, models, first_period_only)
    outcome = HighsAdapter(time_limit_s=time_limit_s).solve(model)
    stats = {"model_variables": model.nvariables(), "model_constraints": model.nconstraints(),
             "architectures": len(model.G)}
    if not outcome.has_solution:
        if outcome.status == "infeasible":
            return PlanOutcome("infeasible", explanation=_why_infeasible(spec, models, first_period_only),
                               solve_time_s=outcome.solve_time_s, stats=stats)
        raise SolverFailure(f"the solver found no plan ({outcome.status}: {outcome.termination})"
                            + (f" within the {time_limit_s:g} s time limit" if time_limit_s else ""))
    choices, objective_usd = decode(model)
    designs = [_period_design(spec, catalog, p, models[p], c) for p, c in enumerate(choices)]
    clusters = [c.cluster for c in choices]
    book = ledger(spec, catalog, designs, clusters, _model_purchases(spec, choices, designs), first_period_only)
    _check_objective(book, objective_usd, proven=outcome.status == "optimal")
    return PlanOutcome(outcome.status, designs, clusters, book, solve_time_s=outcome.solve_time_s, gap=outcome.gap,
                       stats=stats)


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
    return (f"every period has designs, but the caps exclude {what}: check each period's budget_usd (a cap on that "
            "period's purchases), facility_power_kw, max_gpus and max_racks")


def run_plan(ls: LoadedScenario, catalog: Catalog, time_limit_s: float | None = None, compare: bool = True,
             progress=None) -> PlanResult:
    """The plan, then (with `compare`) each period from scratch and everything bought up front."""
    from ..optimize.highs import HighsAdapter as Adapter

    t0 = time.perf_counter()
    spec = plan_periods(ls, catalog)
    t1 = time.perf_counter()
    _say(progress, f"solving the {len(spec.periods)}-period plan…")
    plan = solve_plan(spec, catalog, time_limit_s=time_limit_s)
    t2 = time.perf_counter()
    scratch, upfront, manual = [], None, None
    if compare and plan.status != "infeasible":
        for period in spec.periods:
            _say(progress, f"comparison: {named(period.label)} bought from scratch…")
            scratch.append(solve_plan(spec.only([period], "keep_one"), catalog, time_limit_s=time_limit_s))
        _say(progress, "comparison: everything bought in the first period…")
        upfront = solve_plan(spec.only(spec.periods, "keep_one"), catalog, first_period_only=True,
                             time_limit_s=time_limit_s)
        manual = _manual(spec, catalog, scratch, progress, time_limit_s)
    t3 = time.perf_counter()
    timings = {"periods_s": t1 - t0, "plan_s": t2 - t1, "comparisons_s": t3 - t2, "total_s": t3 - t0}
    solver = {"name": "HiGHS", "version": Adapter.version(), "mip_rel_gap": 0.0, "time_limit_s": time_limit_s}
    return PlanResult(spec, catalog, plan, scratch, upfront, timings, solver,
                      manual if compare and plan.status != "infeasible" else None)


def _manual(spec: PlanSpec, catalog: Catalog, scratch: list[PlanOutcome], progress, time_limit_s) -> PlanOutcome | None:
    """The best manual schedule: the last period's from-scratch architecture, bought when needed."""
    from .manual import manual_schedule

    last = scratch[-1] if scratch else None
    if last is None or not last.designs:
        return None
    _say(progress, "comparison: the final cluster's architecture bought when needed…")
    return manual_schedule(spec, catalog, last.designs[-1], time_limit_s)


def _say(progress, text: str) -> None:
    if progress is not None:
        progress(text)
