"""Solve and evaluate a serving fleet (SPEC §4.9, §7): the fleet space, the MILP's K best distinct fleets (capex,
tco, or `fastest` = most tokens/s per user within the caps, then cheapest), the cost–interactivity frontier,
evaluate with pins (the fabric decisions left open are optimised), and infeasibility explained.

`solve` and `evaluate` in optimize/solve.py hand a `workload.kind: inference` scenario here (the registry line
`WORKLOAD_SOLVERS`); nothing of the training path changes.
"""
from __future__ import annotations

import time

import pyomo.core as pyo

from ..design_space.serving import FleetSpace, PoolOption, build_fleet_space
from ..errors import InputError, UsageError
from ..inputs import LoadedScenario, as_loaded, catalog_for, check_against_catalog
from ..inputs.schema import Catalog, Scenario
from .serving_model import Caps, build_fleet_model, chosen, exclude, solve_model
from .serving_results import FleetDesign, FleetResult, Pool
from .user_rows import refuse_user_rows

TPOT_STEP = 1e-6  # the frontier's next point decodes at least this much faster (s per token)


def caps_of(sc: Scenario) -> Caps:
    c = sc.constraints
    return Caps(c.max_gpus, c.budget_usd, c.facility_power_kw, c.max_racks)


def same_architecture(a: PoolOption, b: PoolOption) -> bool:
    return a.role == b.role and a.machine.key == b.machine.key


def same_platform(a: PoolOption, b: PoolOption) -> bool:
    return a.role == b.role and a.machine.platform == b.machine.platform


DISTINCT = {"architecture": same_architecture, "platform": same_platform}
"""distinct_by → when two pools count as the same for the K best: the whole machine (platform, NIC, rails, switch)
or the platform alone (`--distinct-by platform`: the best fleet per platform combination)."""


def fleet_of(sc: Scenario, space: FleetSpace, picks: list[tuple[int, int]]) -> FleetDesign:
    """The FleetDesign of chosen (option, replica index) pairs."""
    assert sc.serving is not None
    pools = []
    for o, j in sorted(picks, key=lambda p: ("aggregated", "prefill", "decode").index(space.options[p[0]].role)):
        opt = space.options[o]
        pools.append(Pool(opt.role, opt, opt.replicas[j], opt.ttft_s[j], opt.costs[j]))
    mode = "aggregated" if pools[0].role == "aggregated" else "disaggregated"
    t = sc.serving.traffic
    design = FleetDesign(mode, tuple(pools), space.peak_rps, t.mean_requests_per_s(), t.input_tokens, t.output_tokens,
                         sc.tco.years, "tco" if sc.objective == "tco" else "capex")
    if t.diurnal is not None:
        from .serving_schedule import hourly_schedule

        design.schedule = hourly_schedule(design, list(t.diurnal), space.ttft_max_s, space.utilisation_max)
    return design


def _fastest_then_cheapest(m: pyo.ConcreteModel) -> bool:
    """`fastest`: minimise the decode TPOT (the most tokens/s per user), then, at that TPOT, the cost."""
    cost = m.obj
    cost.deactivate()
    m.fast = pyo.Objective(expr=m.tpot, sense=pyo.minimize)
    ok = solve_model(m)
    m.del_component(m.fast)
    cost.activate()
    if not ok:
        return False
    m.tpot_cap.set_value(pyo.value(m.tpot) * (1 + 1e-9) + 1e-12)
    ok = solve_model(m)
    m.tpot_cap.set_value(1e9)  # the next design may be slower
    return ok


def k_best(sc: Scenario, space: FleetSpace, k: int, distinct_by: str = "architecture") -> list[FleetDesign]:
    """The K best distinct fleets by no-good cuts on each found fleet's pool architectures, at gap 0."""
    return k_best_with(sc, space, caps_of(sc), k, distinct_by)


def k_best_with(sc: Scenario, space: FleetSpace, caps: Caps, k: int,
                distinct_by: str = "architecture") -> list[FleetDesign]:
    """k_best under the given caps (the explanation solves without them)."""
    if not space.options:
        return []
    m = build_fleet_model(space, caps, sc.objective)
    out: list[FleetDesign] = []
    while len(out) < k:
        ok = _fastest_then_cheapest(m) if sc.objective == "fastest" else solve_model(m)
        if not ok:
            break
        picks = chosen(m)
        out.append(fleet_of(sc, space, picks))
        exclude(m, picks, DISTINCT[distinct_by])
    for i, d in enumerate(out, 1):
        d.rank = i
    return out


def frontier(sc: Scenario, space: FleetSpace, points: int) -> list[FleetDesign]:
    """Cost against tokens/s per user: the cheapest fleet, then repeatedly the cheapest fleet decoding faster than
    the last point (tpot ≤ last − TPOT_STEP), until none or `points` (each point is exact: the MILP at gap 0)."""
    if not space.options:
        return []
    m = build_fleet_model(space, caps_of(sc), "tco" if sc.objective == "tco" else "capex")
    out: list[FleetDesign] = []
    while len(out) < points and solve_model(m):
        d = fleet_of(sc, space, chosen(m))
        out.append(d)
        m.tpot_cap.set_value(d.tpot_s - TPOT_STEP)
    return out


def loaded(scenario, catalog: Catalog | None) -> tuple[LoadedScenario, Catalog]:
    ls = as_loaded(scenario)
    cat = catalog if catalog is not None else catalog_for(ls)
    check_against_catalog(ls, cat)
    check_pool_pins(ls, cat)
    return ls, cat


def check_pool_pins(ls: LoadedScenario, cat: Catalog) -> None:
    """`pin: {prefill: {…}, decode: {…}}` names catalog entries: an unknown id is a located error."""
    doc, pin = ls.doc, ls.scenario.pin
    for role in ("prefill", "decode"):
        pool = getattr(pin, role)
        for key, kind in (("platform", "platforms"), ("nic", "nics"), ("switch", "switches")):
            ident = getattr(pool, key) if pool is not None else None
            if ident is not None and ident not in cat.by_id(kind):
                doc.problems.append(doc.problem(("pin", role, key), f"no {kind.rstrip('es') if kind == 'switches' else kind[:-1]} "
                                                f"with this id in the catalog (known: {', '.join(sorted(cat.by_id(kind)))})",
                                                ident))
    if doc.problems:
        raise InputError(list(doc.problems))


def solve_fleet(scenario, catalog: Catalog | None = None, top_k: int | None = None,
                frontier_points: int | None = None, distinct_by: str = "architecture") -> FleetResult:
    """The K best distinct serving fleets (or the frontier with `frontier_points`); distinct by architecture or by
    platform."""
    if distinct_by not in DISTINCT:
        raise UsageError(f"a serving fleet is distinct by {' or '.join(DISTINCT)}, not {distinct_by!r}")
    t0 = time.perf_counter()
    ls, cat = loaded(scenario, catalog)
    refuse_user_rows(ls, (), "a serving scenario's fleet MILP")  # every route here (CLI solve, evaluate, compare, sweep)
    if ls.scenario.site is not None:  # a power-first site: one fleet MILP per cooling × power profile (issue 43s)
        from .serving_site import solve_fleet_on_site

        return solve_fleet_on_site(ls, cat, top_k, frontier_points, distinct_by, solve_fn=solve_fleet)
    sc = ls.scenario
    space = build_fleet_space(sc, cat, keep_speed=bool(frontier_points))
    t1 = time.perf_counter()
    if frontier_points:
        designs = frontier(sc, space, frontier_points)
    else:
        designs = k_best(sc, space, top_k or sc.top_k, distinct_by)
    if designs and sc.serving is not None and sc.serving.night_training is not None:
        from .serving_night import night_training

        designs[0].night_training = night_training(ls, cat, designs[0])
    t2 = time.perf_counter()
    stats = {"candidates_evaluated": space.evaluated, "pool_options": len(space.options),
             "rejected": dict(space.rejected.counts)}
    timings = {"design_space_s": t1 - t0, "milp_s": t2 - t1}
    status = "optimal" if designs else "infeasible"
    explanation = None if designs else explain(sc, space)
    result = FleetResult(sc.name, status, designs, sc.objective, explanation, t2 - t1, stats, timings)
    if designs and not frontier_points:
        from .serving_scaleup_value import serving_scaleup_note

        note = serving_scaleup_note(sc, cat, space, designs, lambda sub: k_best_with(sc, sub, caps_of(sc), 1))
        result.notes = [note] if note else []
    if frontier_points:
        result.frontier = [{"capex_usd": d.capex_usd, "tco_usd": d.tco_usd,
                            "tokens_per_s_per_user": 1.0 / d.tpot_s, "tpot_p90_ms": d.tpot_s * 1000,
                            "mode": d.mode, "platform": "+".join(p.option.machine.platform for p in d.pools),
                            "gpus": d.gpus} for d in designs]
    return result


def evaluate_fleet(scenario, catalog: Catalog | None = None) -> FleetResult:
    """A pinned fleet (`pin: {platform, tp, pp, ep, concurrency, replicas}` or `pin: {prefill, decode}`): the
    cheapest fleet within the pins; the fabric decisions left open (NIC, rails, switch) are optimised."""
    return solve_fleet(scenario, catalog, top_k=1)


def explain(sc: Scenario, space: FleetSpace) -> str:
    """Which requirement no fleet meets, and by how much."""
    from .serving_explain import explain_fleet

    return explain_fleet(sc, space)
