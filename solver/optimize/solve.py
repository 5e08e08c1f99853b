"""Solve and evaluate (SPEC §7, §8.2): the pipeline from a loaded scenario and catalog to ranked,
evaluated designs. `solver.api` re-exports these for users; sweeps and plans call them directly."""
from __future__ import annotations

import contextlib
import gc
import math
import time
from collections.abc import Callable, Iterator, Sequence

from ..deadline import Deadline
from ..design_space import Architecture, build_design_space
from ..errors import CatalogCannotBuild, InputError, SolverFailure, UsageError
from ..fabrics import DEFAULT_FAMILY, POD_TIERS, family
from ..fabrics.breakout import serves
from ..inputs import as_loaded, catalog_for, check_against_catalog
from ..inputs.schema import Catalog
from ..perf.layout import Layout, placement_problem
from ..results import Design, SolveResult, binding_constraints, cap_problems, make_design
from .data import with_pod_tiers
from .user_rows import UserConstraint, check_user_rows, exact_prune, refuse_user_rows, user_constraints

DISTINCT_BY = ("architecture", "platform", "layout")
# workload.kind → (module, its solve, its evaluate): the registry line a workload kind other than training adds
WORKLOAD_SOLVERS = {"inference": ("solver.optimize.serving_solve", "solve_fleet", "evaluate_fleet")}


def _other_kind(scenario, verb: str):
    """The solve or evaluate of a scenario's workload kind when it is not training (WORKLOAD_SOLVERS), else None."""
    import importlib

    ls = as_loaded(scenario)
    entry = WORKLOAD_SOLVERS.get(ls.scenario.workload.kind)
    if entry is None:
        return None, ls
    module = importlib.import_module(entry[0])
    return getattr(module, entry[1] if verb == "solve" else entry[2]), ls


def solve(scenario, catalog: Catalog | None = None, top_k: int | None = None,
          distinct_by: str = "architecture", time_limit_s: float | None = None,
          progress: Callable[[int, int], None] | None = None, prune: str = "dominated",
          constraints: Sequence[UserConstraint] = ()) -> SolveResult:
    """Find the K best distinct designs (SPEC §7): the cheapest meeting the target (`capex`, `tco`), or
    the fastest within the caps (`fastest`); distinct by architecture, platform or layout.

    `time_limit_s` bounds the whole solve (design space, bounds, model build and the K-best loop,
    solver/deadline.py; the clock starts once the solver libraries are imported); a search it cuts
    short reports status `time_limit` with the designs found and how many of them are proven, or
    raises SolverFailure when it found none.

    `constraints`: the user's own rows, functions of the model (optimize/user_rows.py: every model the search
    builds carries them, and the pruning that does not read the model is off while they are in force).
    """
    other, scenario = _other_kind(scenario, "solve")
    if other is not None:
        refuse_user_rows(scenario, constraints, "a serving scenario's fleet MILP")
        return other(scenario, catalog, top_k)
    from . import ranking  # noqa: F401 - import Pyomo before the clock starts: the limit bounds the work

    deadline = Deadline(check_time_limit(time_limit_s))
    from .answer import with_answer

    ls = as_loaded(scenario)
    with _inputs_frozen(), user_constraints(*constraints):
        result = _solve(ls, catalog, top_k, distinct_by, deadline, progress, prune)
    return with_answer(ls.scenario, result)


@contextlib.contextmanager
def _inputs_frozen() -> Iterator[None]:
    """Keep the garbage collector off the objects that exist when a solve starts (the catalog, its
    YAML node trees, the scenario, imported modules): they outlive the solve, and re-walking them
    in every full collection cost seconds on a catalog of a thousand platforms (issue 18)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _solve(scenario, catalog: Catalog | None, top_k: int | None, distinct_by: str, deadline: Deadline,
           progress: Callable[[int, int], None] | None, prune: str) -> SolveResult:
    from .highs import HighsAdapter
    from .ranking import k_best

    time_limit_s = deadline.seconds
    ls = as_loaded(scenario)
    cat = catalog if catalog is not None else catalog_for(ls)
    check_against_catalog(ls, cat)
    check_user_rows(ls, cat)
    if ls.scenario.site is not None:  # a power-first site: one solve per cooling × power profile (site.py)
        from .site import site_result

        return site_result(ls, cat, top_k, solve_fn=solve)[1]
    sc = ls.scenario
    sc = with_pod_tiers(sc)
    prune = exact_prune(prune, sc)  # user rows: every point, the model's rows decide (optimize/user_rows.py)
    k = top_k or sc.top_k
    t1 = time.perf_counter()
    if distinct_by not in DISTINCT_BY:
        raise ValueError(f"distinct_by must be one of {DISTINCT_BY}")
    # equal-cost twins of one performance class share their architecture and platform, not their layout
    space = build_design_space(sc, cat, prune, one_layout_per_cost=(distinct_by != "layout"), deadline=deadline,
                               top_k=k, distinct_by=distinct_by)
    t2 = time.perf_counter()
    stats = {"combinations": space.combinations, "architectures": len(space.architectures),
             "shapes_kept": len(space.shapes), "points_kept": space.points, "pruned": space.pruned}
    timings = {"load_s": t1 - deadline.start, "design_space_s": t2 - t1}
    solver_info = {"name": "HiGHS", "version": HighsAdapter.version(), "interface": "pyomo.contrib.solver highs",
                   "mip_rel_gap": 0.0, "time_limit_s": time_limit_s}
    if not space.shapes:
        if not space.complete:
            raise _out_of_time(time_limit_s, "design space")
        return SolveResult(sc.name, "infeasible", [], 0.0, None, _explain(space, deadline, prune, distinct_by), timings,
                           stats, solver_info, stack=sc.workload.stack)
    search = k_best(space, k, distinct_by, deadline, progress)
    timings.update(search.timings)
    for key in ("model_variables", "model_constraints", "architectures_pruned_by_bounds"):
        stats[key] = timings.pop(key, None)
    solve_time_s = sum(o.solve_time_s for o in search.outcomes)
    if not search.designs:
        first = search.outcomes[0] if search.outcomes else None
        if search.complete and first is not None and first.status == "infeasible":
            return SolveResult(sc.name, "infeasible", [], solve_time_s, None, _explain(space, deadline, prune, distinct_by),
                               timings, stats, solver_info, stack=sc.workload.stack)
        if search.stopped_in is not None:
            raise _out_of_time(time_limit_s, search.stopped_in)
        assert first is not None  # a complete search ran at least one solve
        raise SolverFailure(f"the solver found no design ({first.status}: {first.termination})"
                            + (f" within the {time_limit_s:g} s time limit" if time_limit_s else ""))
    status, warnings = _status_and_warnings(search, k, time_limit_s)
    moe = sc.workload.model.moe
    if moe is not None and moe.load_imbalance == 1 and moe.capacity_factor is None:
        warnings.append("Mixture-of-Experts load_imbalance = 1 assumes perfectly balanced experts, as the published "
                        "benchmark tables do; real routing measured 8-20 % slower (docs/model.md §MoE)")
    gaps = [o.gap for o in search.outcomes if o.has_solution and o.gap is not None]
    timings["total_s"] = deadline.elapsed_s()
    stats["search"] = {"complete": search.complete, "designs_found": len(search.designs),
                       "designs_proven": search.proven, "stopped_in": search.stopped_in}
    return SolveResult(sc.name, status, search.designs, solve_time_s, max(gaps) if gaps else None,
                       None, timings, stats, solver_info, warnings, stack=sc.workload.stack, space_memo=space.memo)


def check_time_limit(time_limit_s: float | None) -> float | None:
    """A time limit is a positive, finite number of seconds (or None)."""
    if time_limit_s is not None and not (math.isfinite(time_limit_s) and time_limit_s > 0):
        raise UsageError(f"--time-limit must be a positive number of seconds (got {time_limit_s!r})")
    return time_limit_s


def _out_of_time(time_limit_s: float | None, stage: str) -> SolverFailure:
    return SolverFailure(f"the solver found no design within the {time_limit_s:g} s time limit (it ran out in the "
                         f"{stage}); allow more time")


BOUNDED_REBUILDS = (2.0, 4.0, 8.0)  # the budget cut of the explanation's rebuilds, × budget_usd (`_explain`)


def _explain(space, deadline: Deadline, prune: str, distinct_by: str) -> str:
    """Why no design exists, read off the design space built without the ranking's cuts: the budget cut drops the
    points over the budget unevaluated, which the explanation names (what the target needs, what the caps buy), so a
    space it cut is built again without it. (The cost bound cuts nothing where no design exists: it cuts only once K
    designs that meet every requirement are known.)

    The rebuild is bounded (issue 45s): first with the budget cut at 2, 4, then 8 × budget_usd (each reusing the
    scans of the builds before it, `memo.ScanMemo`), taken when the soft-caps optimum is proven the uncut space's
    (`diagnose.explain_within`) or when the cut left nothing out; else built without any cut, as before."""
    from .diagnose import explain_infeasible, explain_within  # lazy: Pyomo is only needed to solve

    if space.budget_cut and space.complete and not deadline.expired():
        budget = space.scenario.constraints.budget_usd
        for factor in BOUNDED_REBUILDS if budget is not None else ():
            cut = build_design_space(space.scenario, space.catalog, prune, one_layout_per_cost=(distinct_by != "layout"),
                                     deadline=deadline, memo=space.memo, budget_cut_usd=budget * factor)
            if not cut.complete or deadline.expired():
                break
            if cut.budget_cut == 0:  # nothing left out: the uncut space itself
                return explain_infeasible(cut, deadline)
            found = explain_within(cut, budget * factor, deadline)
            if found is not None:
                return found.text
        space = build_design_space(space.scenario, space.catalog, prune, one_layout_per_cost=(distinct_by != "layout"),
                                   deadline=deadline, memo=space.memo)
    return explain_infeasible(space, deadline)


def _status_and_warnings(search, k: int, time_limit_s: float | None) -> tuple[str, list[str]]:
    """optimal: the whole search finished and every design is proven; feasible: it finished but a
    design is not proven optimal (the time limit stopped a solve with an incumbent); time_limit: the
    time limit cut the search short, so more or better designs may exist."""
    found = len(search.designs)
    last = search.outcomes[-1] if search.outcomes else None
    warnings = []
    if not search.complete:
        status = "time_limit"
        proven = ("all proven the best in order; more designs may exist" if search.proven == found else
                  f"{search.proven} proven the best in order; more or cheaper designs may exist")
        warnings.append(f"the {time_limit_s:g} s time limit cut the search short in the {search.stopped_in}: "
                        f"{found} of {k} designs found, {proven}: allow more time")
    elif last is not None and last.status == "error" and found < k:
        status = "feasible"
        warnings.append(f"the solver failed after {found} of {k} designs ({last.termination}): more designs may exist")
    elif search.proven < found:
        status = "feasible"
        gaps = [o.gap for o in search.outcomes if o.has_solution and o.gap is not None]
        warnings.append(f"time limit reached: designs are feasible but not proven optimal (gap up to {max(gaps or [0]):.2%})")
    else:
        status = "optimal"
    if search.complete and found < k and last is not None and last.status == "infeasible":
        warnings.append(f"only {found} distinct designs exist for top_k = {k}")
    return status, warnings


EVALUATE_PINS = ("platform", "nic", "rails_per_node", "tp", "cp", "pp", "vp", "dp", "microbatch_size")


def evaluate(scenario, catalog: Catalog | None = None) -> Design:
    """Evaluate the one design every decision of the scenario's `pin` block fixes."""
    other, ls = _other_kind(scenario, "evaluate")
    refuse_user_rows(ls, (), "a serving fleet's evaluate" if other is not None else
                     "`evaluate` of a fully pinned design (no MILP is solved; pin fewer decisions to optimise the rest)")
    if other is not None:
        return other(ls, catalog)
    cat = catalog if catalog is not None else catalog_for(ls)
    check_against_catalog(ls, cat)
    sc, doc = ls.scenario, ls.doc
    pin = sc.pin
    missing = [name for name in EVALUATE_PINS if getattr(pin, name) is None]
    if sc.workload.model.moe is not None and pin.ep is None:
        missing.append("ep")  # a Mixture-of-Experts layout needs its expert parallelism (etp defaults to 1)
    if missing:
        raise InputError([doc.problem(("pin",), f"evaluate needs every decision pinned; missing: {', '.join(missing)} "
                                      "(use `fabricplan solve` to let the optimiser choose)")])
    plat = cat.by_id("platforms")[pin.platform]
    nic = cat.by_id("nics")[pin.nic]
    switch = pin.switch or _default_switch(cat, nic)
    if switch is None:
        raise InputError([doc.problem(("pin", "nic"), f"no switch in the catalog serves the {nic.fabric} NIC {nic.id} at {nic.speed_gbps:g} Gb/s")])
    g_used = pin.gpus_per_domain_used or _default_domain_use(plat, pin, sc.workload)
    lay = _pinned_layout(pin, g_used)
    problem = placement_problem(lay, sc.workload, g_used)
    if problem:
        raise InputError([doc.problem(("pin",), f"the pinned layout cannot be placed: {problem}")])
    assert pin.rails_per_node is not None  # EVALUATE_PINS
    arch = Architecture(plat.id, nic.id, pin.rails_per_node, switch, float(pin.oversubscription or 1.0),
                        pin.fabric or DEFAULT_FAMILY, float(pin.above_pod_oversubscription or 1.0))
    tiers = pin.tiers
    if arch.above_pod_oversubscription != 1:  # only a 3-tier fabric has a tier above the pods
        if tiers not in (None, POD_TIERS):
            raise InputError([doc.problem(("pin", "tiers"), "an oversubscribed tier above the pods "
                                          "(pin.above_pod_oversubscription) exists only in 3-tier fabrics; pin tiers: 3 "
                                          "or remove above_pod_oversubscription", tiers)])
        tiers = POD_TIERS
    try:
        design = make_design(sc, cat, arch, lay, sc.target_step_time_s(), tiers)
    except CatalogCannotBuild as exc:  # no link reaches, unit too big for the rack
        raise InputError([doc.problem(("pin",), f"the catalog cannot build this design: {exc}")]) from None
    if design is None:
        most = family(arch.fabric).max_tiers
        raise InputError([doc.problem(("pin",), f"the {arch.fabric} fabric for this design does not fit in "
                                      + (f"{pin.tiers} tier(s)" if pin.tiers else f"{most} tiers") + f" of {switch}")])
    if pin.nodes is not None and design.cost.job_nodes != pin.nodes:
        raise InputError([doc.problem(("pin", "nodes"), f"the pinned layout runs on {design.cost.job_nodes:,} nodes "
                                      f"(tp·cp·pp·dp = {lay.gpus:,} GPUs on {plat.gpus_per_node} per node); "
                                      "pin a matching dp or remove pin.nodes", pin.nodes)])
    design.rank = 1
    return design


def evaluate_pins(scenario, catalog: Catalog | None = None, time_limit_s: float | None = None) -> SolveResult:
    """`fabricplan evaluate` (SPEC §8.1): with every decision pinned, the one design (`evaluate`);
    with some pinned, the pins fix those and the optimiser chooses the rest — the best design meeting
    the target, or, when none does, the fastest design the pins allow (with the explanation). The
    result's stats name the pinned and the optimised decisions."""
    from .diagnose import fastest_design

    other, ls = _other_kind(scenario, "evaluate")
    if other is not None:
        refuse_user_rows(ls, (), "a serving fleet's evaluate")
        return other(ls, catalog)
    cat = catalog if catalog is not None else catalog_for(ls)
    sc = ls.scenario
    pinned = [name for name in EVALUATE_PINS if getattr(sc.pin, name) is not None]
    stats = {"pinned": pinned, "optimised": [name for name in EVALUATE_PINS if name not in pinned]}
    if len(pinned) == len(EVALUATE_PINS):
        design = evaluate(ls, cat)
        over = cap_problems(design, sc.constraints)
        status = "feasible" if design.meets_target and design.perf.fits_memory and not over else "infeasible"
        explanation = ("the pinned design exceeds the scenario's caps: " + "; ".join(over)) if over else None
        return SolveResult(sc.name, status, [design], 0.0, explanation=explanation, stats=stats,
                           stack=sc.workload.stack)
    result = solve(ls, cat, top_k=1, time_limit_s=time_limit_s)
    result.stats.update(stats)
    if result.designs or sc.objective == "fastest":
        return result
    check_against_catalog(ls, cat)
    sc = ls.scenario  # with its stack's defaults (inputs/stacks.resolve_stack)
    reach = fastest_design(sc, cat, Deadline(check_time_limit(time_limit_s)))
    if reach is not None:  # what the pins can do: judged against the scenario's own target
        reach.target_step_time_s = sc.target_step_time_s()
        reach.objective = sc.objective
        reach.binding = binding_constraints(reach, sc)
        reach.rank = 1
        result.designs = [reach]
    return result


def _default_switch(cat: Catalog, nic) -> str | None:
    modes = {s.id: serves(s, nic) for s in cat.switches}
    options = sorted((s.unit_price_usd / mode.radix, s.id) for s in cat.switches if (mode := modes[s.id]) is not None)
    return options[0][1] if options else None


def _pinned_layout(pin, g_used: int) -> Layout:
    return Layout(tp=pin.tp, cp=pin.cp, pp=pin.pp, vp=pin.vp, dp=pin.dp, microbatch_size=pin.microbatch_size,
                  gpus_per_domain_used=g_used, ep=pin.ep or 1, etp=pin.etp or 1)


def _default_domain_use(plat, pin, wl) -> int:
    """The first G_u (whole domain, then the largest power of two in it) the layout can be placed on."""
    for g_used in plat.domain_sizes():
        if placement_problem(_pinned_layout(pin, g_used), wl, g_used) is None:
            return g_used
    return plat.gpus_per_domain
