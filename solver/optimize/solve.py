"""Solve and evaluate (SPEC §7, §8.2): the pipeline from a loaded scenario and catalog to ranked,
evaluated designs. `solver.api` re-exports these for users; sweeps and plans call them directly."""
from __future__ import annotations

import time
from collections.abc import Callable

from ..design_space import Architecture, build_design_space
from ..errors import CatalogCannotBuild, InputError, SolverFailure
from ..fabrics import DEFAULT_FAMILY, family
from ..fabrics.breakout import serves
from ..inputs import LoadedScenario, check_against_catalog, default_catalog_path, load_catalog, load_scenario
from ..inputs.schema import Catalog
from ..perf.layout import Layout, placement_problem
from ..results import Design, SolveResult, make_design


def catalog_for(scenario: LoadedScenario, base_paths: list | None = None) -> Catalog:
    """The catalog a scenario runs on: the base files (default: shipped) plus its own `catalog:` list."""
    base = list(base_paths) if base_paths else [default_catalog_path()]
    return load_catalog(base + list(scenario.catalog_paths))


def as_loaded(scenario) -> LoadedScenario:
    """A LoadedScenario from a LoadedScenario, a YAML path or a dict."""
    return scenario if isinstance(scenario, LoadedScenario) else load_scenario(scenario)


def solve(scenario, catalog: Catalog | None = None, top_k: int | None = None,
          distinct_by: str = "architecture", time_limit_s: float | None = None,
          progress: Callable[[int, int], None] | None = None, prune: str = "dominated") -> SolveResult:
    """Find the K cheapest distinct designs that meet the target (SPEC §7)."""
    from .diagnose import explain_infeasible  # lazy: Pyomo is only needed to solve
    from .highs import HighsAdapter
    from .ranking import k_best

    t0 = time.perf_counter()
    ls = as_loaded(scenario)
    cat = catalog if catalog is not None else catalog_for(ls)
    check_against_catalog(ls, cat)
    sc = ls.scenario
    k = top_k or sc.top_k
    t1 = time.perf_counter()
    space = build_design_space(sc, cat, prune, one_layout_per_cost=(distinct_by == "architecture"))
    t2 = time.perf_counter()
    stats = {"combinations": space.combinations, "architectures": len(space.architectures),
             "shapes_kept": len(space.shapes), "points_kept": space.points, "pruned": space.pruned}
    timings = {"load_s": t1 - t0, "design_space_s": t2 - t1}
    solver_info = {"name": "HiGHS", "version": HighsAdapter.version(), "interface": "pyomo.contrib.solver highs",
                   "mip_rel_gap": 0.0, "time_limit_s": time_limit_s}
    if not space.shapes:
        explanation = explain_infeasible(space)
        return SolveResult(sc.name, "infeasible", [], 0.0, None, explanation, timings, stats, solver_info)
    designs, outcomes, model_t = k_best(space, k, distinct_by, time_limit_s, progress)
    timings.update(model_t)
    first = outcomes[0]
    for key in ("model_variables", "model_constraints", "architectures_pruned_by_bounds"):
        stats[key] = timings.pop(key, None)
    if not designs:
        if first.status == "infeasible":
            explanation = explain_infeasible(space, time_limit_s)
            return SolveResult(sc.name, "infeasible", [], first.solve_time_s, None, explanation, timings, stats, solver_info)
        raise SolverFailure(f"the solver found no design ({first.status}: {first.termination})"
                            + (f" within the {time_limit_s:g} s time limit" if time_limit_s else ""))
    statuses = [o.status for o in outcomes if o.has_solution]
    status = "optimal" if all(s == "optimal" for s in statuses) else "feasible"
    gaps = [o.gap for o in outcomes if o.has_solution and o.gap is not None]
    warnings = []
    if status == "feasible":
        warnings.append(f"time limit reached: designs are feasible but not proven optimal (gap up to {max(gaps or [0]):.2%})")
    if len(designs) < k:
        warnings.append(f"only {len(designs)} distinct designs exist for top_k = {k}")
    moe = sc.workload.model.moe
    if moe is not None and moe.load_imbalance == 1 and moe.capacity_factor is None:
        warnings.append("Mixture-of-Experts load_imbalance = 1 assumes perfectly balanced experts, as the published "
                        "benchmark tables do; real routing measured 8-20 % slower (docs/model.md §MoE)")
    timings["total_s"] = time.perf_counter() - t0
    return SolveResult(sc.name, status, designs, sum(o.solve_time_s for o in outcomes), max(gaps) if gaps else None,
                       None, timings, stats, solver_info, warnings)


EVALUATE_PINS = ("platform", "nic", "rails_per_node", "tp", "cp", "pp", "vp", "dp", "microbatch_size")


def evaluate(scenario, catalog: Catalog | None = None) -> Design:
    """Evaluate the one design every decision of the scenario's `pin` block fixes."""
    ls = as_loaded(scenario)
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
        if tiers not in (None, 3):
            raise InputError([doc.problem(("pin", "tiers"), "an oversubscribed tier above the pods "
                                          "(pin.above_pod_oversubscription) exists only in 3-tier fabrics; pin tiers: 3 "
                                          "or remove above_pod_oversubscription", tiers)])
        tiers = 3
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
