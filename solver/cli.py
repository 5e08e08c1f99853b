"""The command line (SPEC §8.1): a thin layer over the library API.

Exit codes: 0 solved; 1 valid input but infeasible (with the explanation); 2 invalid input or
usage; 3 solver failure, or a time limit without a feasible design; 130 interrupted.
"""
from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

from .errors import UsageError

EXIT_OK, EXIT_INFEASIBLE, EXIT_INPUT, EXIT_SOLVER, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def _parser() -> argparse.ArgumentParser:
    flags = argparse.ArgumentParser(add_help=False)  # --debug/--verbose also after the command
    flags.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    flags.add_argument("--verbose", "-v", action="store_true", default=argparse.SUPPRESS, help="say more")
    p = argparse.ArgumentParser(prog="fabricplan", description=(
        "Plan a GPU cluster purchase: the cheapest platform, NVLink domain size, nodes, NICs, rails, "
        "switch tiers and parallel layout that meet a training step-time target."))
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("--verbose", "-v", action="store_true", help="say more (e.g. which catalog entries were overridden)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    v = sub.add_parser("validate", parents=[flags], help="check catalog and scenario files")
    v.add_argument("paths", nargs="+", metavar="PATH")
    v.add_argument("--catalog", action="append", metavar="PATH", help="catalog(s) to check scenarios against")

    c = sub.add_parser("catalog", parents=[flags], help="list the parts of the catalog")
    c.add_argument("--catalog", action="append", metavar="PATH", help="catalog file (repeatable; later files override)")
    c.add_argument("--json", action="store_true", help="print the merged catalog as JSON")

    s = sub.add_parser("solve", parents=[flags], help="find the K cheapest distinct designs meeting the target")
    _common(s)
    s.add_argument("--top", type=int, metavar="K", help="number of distinct designs (default: scenario top_k, else 5)")
    s.add_argument("--distinct-by", choices=["architecture", "layout"], default="architecture")
    s.add_argument("--xlsx", metavar="FILE", help="workbook path (default outputs/<scenario>.xlsx)")
    s.add_argument("--no-xlsx", action="store_true", help="do not write the workbook")
    s.add_argument("--time-limit", type=float, metavar="S", help="solver time limit in seconds")

    e = sub.add_parser("evaluate", parents=[flags], help="evaluate the one design the scenario's pin block fixes")
    _common(e)

    w = sub.add_parser("sweep", parents=[flags], help="solve a list of scenario variants (growth sweeps)")
    _common(w)
    w.add_argument("--xlsx", metavar="FILE", help="workbook path (default outputs/<scenario>-sweep.xlsx)")
    w.add_argument("--plot", metavar="FILE.png", help="plot path (default outputs/<scenario>-sweep.png)")
    w.add_argument("--jobs", type=int, default=1, metavar="N", help="parallel worker processes")
    w.add_argument("--executor", default="local", metavar="local|dask://HOST:PORT")
    w.add_argument("--resume", action="store_true", help="continue an interrupted sweep from its results file")
    w.add_argument("--vary", action="append", metavar="PATH=SPEC",
                   help="sweep a field: PATH=v1,v2,... or PATH=start:stop:step or PATH=xFACTOR^STEPS (repeatable)")
    w.add_argument("--combine", choices=["product", "zip"], help="how several --vary fields combine")
    w.add_argument("--time-limit", type=float, metavar="S", help="solver time limit per point")

    pl = sub.add_parser("plan", parents=[flags], help="a multi-period purchase plan (the scenario's plan: block)")
    _common(pl)
    pl.add_argument("--xlsx", metavar="FILE", help="workbook path (default outputs/<scenario>-plan.xlsx)")
    pl.add_argument("--no-xlsx", action="store_true", help="do not write the workbook")
    pl.add_argument("--plot", metavar="FILE.png", help="plot path (default outputs/<scenario>-plan.png)")
    pl.add_argument("--no-compare", action="store_true",
                    help="skip the comparisons (each period from scratch, everything up front)")
    pl.add_argument("--time-limit", type=float, metavar="S", help="solver time limit per MILP")
    return p


def _common(sp) -> None:
    sp.add_argument("scenario", metavar="SCENARIO")
    sp.add_argument("--catalog", action="append", metavar="PATH", help="catalog file (repeatable; default: shipped)")
    sp.add_argument("--json", metavar="FILE", help="JSON result path (default outputs/<scenario>.json)")


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_INPUT
    from rich.console import Console

    wide = None if sys.stdout.isatty() else 160  # pipes and logs get full-width tables
    out, err = Console(width=wide), Console(stderr=True)
    try:
        return _COMMANDS[args.command](args, out, err)
    except KeyboardInterrupt:
        err.print("interrupted: earlier output files are unchanged")
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - mapped to exit codes below
        return _handle(exc, args, err)


def _handle(exc: Exception, args, err) -> int:
    from .errors import CatalogCannotBuild, InputError, OutputError, SolverFailure

    if args.debug:
        traceback.print_exc()
    if isinstance(exc, InputError):
        for problem in exc.problems:
            print(str(problem), file=sys.stderr)
        print(f"{len(exc.problems)} problem(s) found; nothing was written", file=sys.stderr)
        return EXIT_INPUT
    if isinstance(exc, (OutputError, UsageError, CatalogCannotBuild)):
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    if isinstance(exc, SolverFailure):
        print(f"solver failure: {exc}", file=sys.stderr)
        return EXIT_SOLVER
    print(f"internal error: {type(exc).__name__}: {exc}" + ("" if args.debug else " (rerun with --debug for the traceback)"),
          file=sys.stderr)
    return EXIT_SOLVER


# ------------------------------------------------------------------------------- commands


def _catalog_paths(args) -> list:
    return list(args.catalog) if getattr(args, "catalog", None) else []


def cmd_validate(args, out, err) -> int:
    from . import api
    from .errors import InputError
    from .inputs import check_against_catalog, read_yaml

    problems = []
    for path in args.paths:
        try:
            doc = read_yaml(path)
            if "workload" in doc.data or "target" in doc.data:
                ls = api.load_scenario(path)
                cat = api.catalog_for(ls, _catalog_paths(args))
                check_against_catalog(ls, cat)
                kind = "scenario"
                if ls.scenario.sweep.parameters or ls.scenario.sweep.models:
                    from .sweep.plan import plan_sweep

                    points = len(plan_sweep(ls, cat).tasks)  # every sweep path and value checked
                    kind = f"scenario with a {points}-point sweep"
                if ls.scenario.plan is not None:
                    from .plan.periods import plan_periods

                    kind += f" and a {len(plan_periods(ls, cat).periods)}-period plan"  # every period checked
            else:
                api.load_catalog([path])
                kind = "catalog"
            out.print(f"{path}: valid {kind}")
        except InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise InputError(problems)
    return EXIT_OK


def cmd_catalog(args, out, err) -> int:
    from . import api
    from .inputs import provenance
    from .reports.json import dumps

    cat = api.load_catalog(_catalog_paths(args) or None)
    files = provenance(cat).files
    if args.verbose:
        for line in provenance(cat).overridden:
            err.print(f"override: {line}")
    if args.json:
        data = cat.model_dump(mode="json")
        data["files"] = [{"path": p, "sha256": h} for p, h in files]
        sys.stdout.write(dumps(data))
        return EXIT_OK
    from .reports.terminal import catalog_tables

    for table in catalog_tables(cat):
        out.print(table)
    out.print(f"files: {', '.join(p for p, _ in files)}")
    return EXIT_OK


def _load(args, err):
    from . import api
    from .inputs import provenance

    ls = api.load_scenario(args.scenario)
    cat = api.catalog_for(ls, _catalog_paths(args))
    if args.verbose:
        for line in provenance(cat).overridden:
            err.print(f"override: {line}")
    return ls, cat


def _default_output(name: str, suffix: str) -> Path:
    return Path("outputs") / f"{name}{suffix}"


def cmd_solve(args, out, err) -> int:
    from . import api
    from .reports.io import check_writable
    from .reports.json import write_json
    from .reports.terminal import print_solve

    if args.top is not None and not 1 <= args.top <= 100:
        raise UsageError("--top must be between 1 and 100")
    if args.time_limit is not None and args.time_limit <= 0:
        raise UsageError("--time-limit must be positive")
    ls, cat = _load(args, err)
    json_path = check_writable(args.json or _default_output(ls.scenario.name, ".json"))
    xlsx_path = None if args.no_xlsx else check_writable(args.xlsx or _default_output(ls.scenario.name, ".xlsx"))
    with err.status("solving…") as status:
        result = api.solve(ls, cat, top_k=args.top, distinct_by=args.distinct_by, time_limit_s=args.time_limit,
                           progress=lambda i, k: status.update(f"solving: {i} of {k} designs found…"))
    print_solve(result, out)
    write_json(result.to_dict(), json_path)
    written = [str(json_path)]
    if xlsx_path is not None and result.designs:
        from .reports.excel import write_workbook

        write_workbook(result, ls, cat, xlsx_path)
        written.append(str(xlsx_path))
    out.print(f"wrote {', '.join(written)}")
    if result.status == "infeasible":
        return EXIT_INFEASIBLE
    if result.status == "feasible":
        err.print("warning: the time limit stopped the search; the designs are feasible, not proven optimal")
    return EXIT_OK


def cmd_evaluate(args, out, err) -> int:
    from . import api
    from .reports.io import check_writable
    from .reports.json import write_json
    from .reports.terminal import print_design

    ls, cat = _load(args, err)
    json_path = check_writable(args.json or _default_output(ls.scenario.name, "-evaluate.json"))
    design = api.evaluate(ls, cat)
    print_design(design, out)
    from .results import SCHEMA

    status = "feasible" if design.meets_target and design.perf.fits_memory else "infeasible"
    write_json({"schema": SCHEMA, "scenario": ls.scenario.name, "status": status, "solve_time_s": 0.0,
                "designs": [design.to_dict()]}, json_path)
    out.print(f"wrote {json_path}")
    return EXIT_OK if status == "feasible" else EXIT_INFEASIBLE


def cmd_sweep(args, out, err) -> int:
    """`fabricplan sweep`: plan, run with a progress bar, print the table, write JSON, workbook and plot.

    Exit codes: 0 every point solved; 1 some points infeasible; 3 some points failed; 2 bad input.
    """
    from . import api
    from .reports.excel import write_sweep_workbook
    from .reports.io import check_writable
    from .reports.json import write_json
    from .reports.plot import write_plot
    from .reports.terminal import print_report
    from .sweep.plan import plan_sweep
    from .sweep.run import results_path_for
    from .sweep.summary import sweep_report

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if args.time_limit is not None and args.time_limit <= 0:
        raise UsageError("--time-limit must be positive")
    ls = api.load_scenario(args.scenario)
    cat = api.catalog_for(ls, list(args.catalog) if args.catalog else None)
    plan = plan_sweep(ls, cat, args.vary, args.combine, args.time_limit)
    name = ls.scenario.name
    json_path = check_writable(args.json or Path("outputs") / f"{name}-sweep.json")
    xlsx_path = check_writable(args.xlsx or Path("outputs") / f"{name}-sweep.xlsx")
    plot_path = check_writable(args.plot or Path("outputs") / f"{name}-sweep.png")
    for note in plan.notes:
        err.print(f"note: {note}")
    rows = _run_with_progress(plan, args, results_path_for(json_path), err)
    report = sweep_report(plan, rows)
    print_report(report, out)
    write_json(report, json_path)
    write_sweep_workbook(report, xlsx_path)
    write_plot(report, plot_path)
    out.print(f"wrote {json_path}, {xlsx_path}, {plot_path} (finished points in {results_path_for(json_path)})")
    counts = report["status_counts"]
    if counts["error"]:
        return EXIT_SOLVER
    return EXIT_INFEASIBLE if counts["infeasible"] else EXIT_OK


def _run_with_progress(plan, args, results_path: Path, err) -> list[dict]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from .sweep.run import read_results, run_points

    columns = (SpinnerColumn(), TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("ETA"), TimeRemainingColumn())
    where = args.executor if args.executor != "local" else f"{args.jobs} local worker(s)"
    err.print(f"{len(plan.tasks)} point(s) on {where}; results file {results_path}")
    if args.resume and results_path.exists():
        kept = len(read_results(results_path, plan.sweep_hash))
        err.print(f"resuming: {kept} of {len(plan.tasks)} point(s) already done, {len(plan.tasks) - kept} to solve")
    with Progress(*columns, console=err, transient=False) as progress:
        bar = progress.add_task("sweep", total=len(plan.tasks))
        rows = run_points(plan, args.jobs or 1, args.executor, results_path, args.resume,
                          on_result=lambda row: progress.advance(bar))
    return rows


def cmd_plan(args, out, err) -> int:
    """`fabricplan plan`: check the plan and the output paths, solve, print, write JSON, workbook and plot.

    Exit codes: 0 planned; 1 valid input but no plan exists (with the reason); 2 bad input; 3 solver failure.
    """
    from . import api
    from .plan.periods import plan_periods
    from .reports.io import check_writable
    from .reports.json import write_json
    from .reports.plan_terminal import print_plan

    if args.time_limit is not None and args.time_limit <= 0:
        raise UsageError("--time-limit must be positive")
    ls, cat = _load(args, err)
    plan_periods(ls, cat)  # every period checked before any output path is touched
    name = ls.scenario.name
    json_path = check_writable(args.json or _default_output(name, "-plan.json"))
    xlsx_path = None if args.no_xlsx else check_writable(args.xlsx or _default_output(name, "-plan.xlsx"))
    plot_path = check_writable(args.plot or _default_output(name, "-plan.png"))
    with err.status("planning…") as status:
        result = api.plan(ls, cat, time_limit_s=args.time_limit, compare=not args.no_compare, progress=status.update)
    report = result.to_dict()
    print_plan(report, out)
    write_json(report, json_path)
    written = [str(json_path)]
    if report["status"] != "infeasible":
        from .reports.plan_excel import write_plan_workbook
        from .reports.plan_plot import write_plan_plot

        if xlsx_path is not None:
            written.append(str(write_plan_workbook(report, xlsx_path)))
        written.append(str(write_plan_plot(report, plot_path)))
    out.print(f"wrote {', '.join(written)}")
    if report["status"] == "infeasible":
        return EXIT_INFEASIBLE
    if report["status"] == "feasible":
        err.print("warning: the time limit stopped the search; the plan is feasible, not proven optimal")
    return EXIT_OK


_COMMANDS = {"validate": cmd_validate, "catalog": cmd_catalog, "solve": cmd_solve, "evaluate": cmd_evaluate,
             "sweep": cmd_sweep, "plan": cmd_plan}


if __name__ == "__main__":
    sys.exit(main())
