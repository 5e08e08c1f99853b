"""One measurement in a fresh process (the runner starts one per run, so imports are counted).

    python bench/worker.py solve SCENARIO [--catalog PATH]... [--top K]
    python bench/worker.py enumerate SCENARIO [--catalog PATH]... [--top K]

Prints one JSON object on stdout: phase seconds, model size, the K best (objective, identity) and
the process's peak resident memory.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

T_START = time.perf_counter()
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run from a clean clone without installing


def _peak_rss_mb() -> float:
    """Peak resident set of this process (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _best(designs) -> list:
    """(objective to the cent, identity) of each design: what 'agree' compares."""
    # serving fleets: equal-cost fleets (e.g. prefill on H200 + decode on H100, or the reverse) may tie, and the MILP
    # and the enumeration may rank a different one of a tie first; their costs agree (tests/serving)
    return [[round(d.objective_usd, 2), list(d.identity) if not hasattr(d, "pools") else d.mode] for d in designs]


def _import() -> float:
    """Seconds to import the API and what it pulls in (pandas, Pyomo, highspy where imported eagerly)."""
    t0 = time.perf_counter()
    from solver import api  # noqa: F401
    from solver.optimize import oracle, ranking  # noqa: F401
    from solver.reports import json as report_json  # noqa: F401

    return time.perf_counter() - t0


def _load(args):
    """Scenario and catalog, timed as the load phase (YAML parse + validation + catalog merge)."""
    from solver import api

    t0 = time.perf_counter()
    ls = api.load_scenario(args.scenario)
    cat = api.catalog_for(ls, base_paths=args.catalog or None)
    return ls, cat, time.perf_counter() - t0


def run_solve(args) -> dict:
    """Load, solve (design space, Pyomo build, HiGHS) and write the JSON report, each phase timed."""
    import_s = _import()
    from solver import api
    from solver.reports import json as report_json

    ls, cat, load_s = _load(args)
    result = api.solve(ls, cat, top_k=args.top)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        report_json.write_json(result.to_dict(), Path(tmp) / "result.json")
    report_s = time.perf_counter() - t0
    t = getattr(result, "timings_s", None) or result.timings  # a serving fleet's FleetResult names it `timings`
    if "total_s" not in t:
        t = {**t, "total_s": sum(v for v in t.values() if isinstance(v, float))}
    best = result.designs[0] if result.designs else None
    return {
        "status": result.status,
        "gpus": (best.cost.gpus if hasattr(best, "cost") else best.gpus) if best else None,
        "architecture": best.label if best else None,
        "objective_usd": best.objective_usd if best else None,
        "stats": {k: v for k, v in result.stats.items() if k != "pruned"},
        "pruned": result.stats.get("pruned"),
        "import_s": import_s,
        "load_s": load_s,
        "design_space_s": t.get("design_space_s"),
        "build_s": t.get("build_s"),
        "solve_s": t.get("solve_s"),
        "report_s": report_s,
        "total_s": load_s + t.get("total_s", 0.0) + report_s,
        "process_s": time.perf_counter() - T_START,
        "best": _best(result.designs),
        "peak_rss_mb": _peak_rss_mb(),
    }


def run_enumerate(args) -> dict:
    """Every feasible design of the unpruned space through the same evaluator, then the K best."""
    import_s = _import()
    from solver.optimize import oracle

    ls, cat, load_s = _load(args)
    t0 = time.perf_counter()
    if ls.scenario.workload.kind == "inference" and ls.scenario.site is not None:  # a serving fleet on a site
        best, designs = _enumerate_site_fleets(ls, cat, args.top)
    elif ls.scenario.workload.kind == "inference":  # a serving fleet: its own enumeration (optimize/serving_oracle.py)
        best, designs = _enumerate_fleets(ls, cat, args.top)
    elif ls.scenario.site is not None:  # a power-first site: every variant enumerated, the winner's K best
        best, designs = _enumerate_site(ls, cat, args.top)
    else:
        designs = oracle.enumerate_designs(ls.scenario, cat)
        best = oracle.best_distinct(designs, args.top)
    enum_s = time.perf_counter() - t0
    return {"import_s": import_s, "load_s": load_s, "enumerate_s": enum_s, "feasible_designs": len(designs), "best": _best(best),
            "process_s": time.perf_counter() - T_START, "peak_rss_mb": _peak_rss_mb()}


def _enumerate_site(ls, cat, top: int) -> tuple[list, list]:
    """A site's answer by enumeration, as `optimize.site.site_result` defines it: every (cooling, GPU, power profile,
    sustained fraction) variant's designs enumerated; the variant whose best design is best (`site.better`) wins;
    its K best distinct designs are the answer."""
    from solver.optimize import oracle
    from solver.optimize.site import better, variants

    sc = ls.scenario
    winner: list = []
    key = None
    every: list = []
    for v in variants(sc, cat):
        designs = oracle.enumerate_designs(v.scenario, v.catalog)
        every += designs
        ranked = oracle.best_distinct(designs, top)
        if not ranked:
            continue
        d = ranked[0]
        cost = d.cost.tco_usd if sc.objective in ("tco", "rent_or_buy") else d.cost.capex_usd
        if better((d.perf.step_time_s, cost), key, sc.objective):
            winner, key = ranked, (d.perf.step_time_s, cost)
    return winner, every


def _enumerate_site_fleets(ls, cat, top: int) -> tuple[list, list]:
    """A serving fleet on a site by enumeration: every site variant (cooling, GPU, power profile, sustained fraction;
    `optimize.site.variants`, each a plain serving scenario carrying the site's caps) has its fleets enumerated; the
    variant whose best fleet is best (`site.better` on (TPOT, cost)) wins and its K best are the answer."""
    from solver.optimize.site import better, variants

    sc = ls.scenario
    winner: list = []
    key = None
    every: list = []
    for v in variants(sc, cat):
        ranked, designs = _enumerate_fleets(ls, v.catalog, top, scenario=v.scenario)
        every += designs
        if not ranked:
            continue
        d = ranked[0]
        if better((d.tpot_s, d.objective_usd), key, sc.objective):
            winner, key = ranked, (d.tpot_s, d.objective_usd)
    return winner, every


def _enumerate_fleets(ls, cat, top: int, scenario=None) -> tuple[list, list]:
    """The serving fleet's K best by exhaustive enumeration of the unpruned fleet space, as FleetDesigns."""
    from solver.design_space.serving import build_fleet_space
    from solver.optimize.serving_oracle import enumerate_best, fleets
    from solver.optimize.serving_solve import caps_of, fleet_of

    sc = scenario if scenario is not None else ls.scenario
    space = build_fleet_space(sc, cat, prune=False)
    rows = enumerate_best(space, caps_of(sc), sc.objective, top)
    by_index = {id(o): i for i, o in enumerate(space.options)}
    best = [fleet_of(sc, space, [(by_index[id(o)], j) for o, j in pick]) for _, _, pick in rows]
    return best, list(fleets(space))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["solve", "enumerate"])
    ap.add_argument("scenario")
    ap.add_argument("--catalog", action="append", help="catalog file (repeatable; default: shipped + the scenario's)")
    ap.add_argument("--top", type=int, default=1)
    args = ap.parse_args(argv)
    out = run_solve(args) if args.mode == "solve" else run_enumerate(args)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
