"""The command line (SPEC §8.1): a thin layer over the library API.

Exit codes: 0 solved; 1 valid input but infeasible (with the explanation); 2 invalid input or
usage; 3 solver failure, or a time limit without a feasible design; 130 interrupted.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..errors import UsageError
from ..reports.text import plain, safe
from .common import (
    EXIT_INFEASIBLE,
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SOLVER,
    catalog_of_args,
    catalog_paths_of_args,
    check_time_limit_arg,
    default_output,
    hold_collector,
    input_warnings,
    json_output_path,
    load_scenario_of_args,
    print_catalog_warnings,
    print_warnings,
    release_collector,
    say_written,
    write_json_output,
    xlsx_output_path,
)
from .guards import Stdout, check_outputs_of, closed_streams, warn_status
from .plan import cmd_plan
from .sweep import cmd_sweep

WIDE_COLUMNS = 250  # --wide: every table column, whatever the terminal's width


def _version() -> str:
    """The package's version (tests/test_cli.py checks it equals pyproject.toml's)."""
    from ..version import __version__

    return __version__


def _parser() -> argparse.ArgumentParser:
    flags = argparse.ArgumentParser(add_help=False)  # --debug/--verbose/--wide also after the command
    flags.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help="show tracebacks")
    flags.add_argument("--verbose", "-v", action="store_true", default=argparse.SUPPRESS, help="say more")
    flags.add_argument("--wide", action="store_true", default=argparse.SUPPRESS,
                       help="print every table column whatever the terminal width")
    p = argparse.ArgumentParser(prog="fabricplan", description=(
        "Plan a GPU cluster purchase: the cheapest platform, NVLink domain size, nodes, NICs, rails, "
        "switch tiers and parallel layout that meet a training step-time target."))
    p.add_argument("--version", action="version", version=f"fabricplan {_version()}")
    p.add_argument("--debug", action="store_true", help="show tracebacks")
    p.add_argument("--verbose", "-v", action="store_true", help="say more (e.g. which catalog entries were overridden)")
    p.add_argument("--wide", action="store_true", help="print every table column whatever the terminal width")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    v = sub.add_parser("validate", parents=[flags], help="check catalog and scenario files")
    v.add_argument("paths", nargs="+", metavar="PATH")
    _catalog_flags(v)

    c = sub.add_parser("catalog", parents=[flags], help="list the parts of the catalog")
    _catalog_flags(c)
    c.add_argument("--json", action="store_true", help="print the merged catalog as JSON")

    s = sub.add_parser("solve", parents=[flags], help="find the K best distinct designs (cheapest, or fastest)")
    _common(s, "outputs/<scenario name>.json")
    s.add_argument("--top", type=int, metavar="K", help="number of distinct designs (default: scenario top_k, else 5)")
    s.add_argument("--distinct-by", choices=["architecture", "platform", "layout"], default="architecture",
                   help="what makes two designs distinct: architecture (default), platform (best design per "
                        "platform) or layout")
    _xlsx_flags(s, "outputs/<scenario name>.xlsx")
    s.add_argument("--time-limit", type=float, metavar="S", help="solver time limit in seconds")
    s.add_argument("--frontier", type=int, nargs="?", const=10, metavar="N",
                   help="also find the cost–speed frontier: up to N designs (default 10), each the cheapest at "
                        "least as fast (Frontier sheet, frontier in the JSON, a PNG)")
    s.add_argument("--plot", metavar="FILE.png", help="frontier plot path (default <scenario name>-frontier.png beside --json or --xlsx, else in outputs/)")
    s.add_argument("--bom-csv", metavar="FILE", help="also write each ranked design's bill of materials as CSV: #1 in FILE, #2 in FILE-2.csv, …")

    e = sub.add_parser("evaluate", parents=[flags],
                       help="evaluate the design the scenario's pin block fixes (unpinned decisions are optimised)")
    _common(e, "outputs/<scenario name>-evaluate.json")
    _xlsx_flags(e, "outputs/<scenario name>-evaluate.xlsx")

    m = sub.add_parser("compare", parents=[flags], help="solve several scenarios and show their best designs side by side")
    m.add_argument("scenarios", nargs="+", metavar="SCENARIO")
    _catalog_flags(m)
    m.add_argument("--json", metavar="FILE", help="JSON path, '-' for standard output (default outputs/compare.json)")
    m.add_argument("--xlsx", metavar="FILE", help="also write the comparison as a workbook (sheet Compare)")
    m.add_argument("--time-limit", type=float, metavar="S", help="solver time limit per scenario")

    w = sub.add_parser("sweep", parents=[flags], help="solve a list of scenario variants (growth sweeps)")
    _common(w, "outputs/<scenario name>-sweep.json")
    _xlsx_flags(w, "outputs/<scenario name>-sweep.xlsx")
    _plot_flags(w, "sweep")
    w.add_argument("--jobs", type=int, default=1, metavar="N", help="parallel worker processes (default 1)")
    w.add_argument("--executor", default="local", metavar="local|dask://HOST:PORT|tcp://HOST:PORT",
                   help="where the points run (default local)")
    w.add_argument("--resume", action="store_true", help="continue an interrupted sweep from its results file")
    w.add_argument("--vary", action="append", metavar="PATH=SPEC",
                   help="sweep a field: PATH=v1,v2,... (numbers or words, e.g. workload.precision=bf16,fp8) or "
                        "PATH=start:stop:step or PATH=xFACTOR^STEPS (repeatable)")
    w.add_argument("--combine", choices=["product", "zip"], help="how several --vary fields combine (default product)")
    w.add_argument("--time-limit", type=float, metavar="S", help="solver time limit per point")

    pl = sub.add_parser("plan", parents=[flags], help="a multi-period purchase plan (the scenario's plan: block)")
    _common(pl, "outputs/<scenario name>-plan.json")
    _xlsx_flags(pl, "outputs/<scenario name>-plan.xlsx")
    _plot_flags(pl, "plan")
    pl.add_argument("--no-compare", action="store_true",
                    help="skip the comparisons (each period from scratch, everything up front)")
    pl.add_argument("--time-limit", type=float, metavar="S", help="solver time limit per MILP")
    k = sub.add_parser("calibrate", parents=[flags], help="fit the model to your measured runs: a catalog overlay")
    k.add_argument("runs", metavar="RUNS", help="CSV (or YAML list) of runs: scenario field paths and one measured "
                   "column, measured_step_time_s or measured_tokens_per_s_per_gpu")
    k.add_argument("-o", "--output", required=True, metavar="OVERLAY.yaml", help="the catalog overlay to write")
    k.add_argument("--stack", metavar="NAME", help="the software stack whose runs to fit (default: the runs' only one)")
    k.add_argument("--fit", default="gemm,tp_overlap", metavar="WHAT",
                   help="what to fit, comma-separated: gemm, tp_overlap, attention (default gemm,tp_overlap)")
    k.add_argument("--time-limit", type=float, metavar="S", help="stop a fit that runs longer (default 600 s)")
    _catalog_flags(k)
    return p


def _catalog_flags(sp) -> None:
    sp.add_argument("--catalog", action="append", metavar="PATH",
                    help="catalog file layered over the shipped default by id (repeatable; later files override)")
    sp.add_argument("--no-default-catalog", action="store_true",
                    help="start from nothing instead of the shipped default catalog")


def _common(sp, json_default: str) -> None:
    sp.add_argument("scenario", metavar="SCENARIO")
    _catalog_flags(sp)
    sp.add_argument("--json", metavar="FILE", help=f"JSON result path, '-' for standard output (default {json_default}, or beside --xlsx)")


def _xlsx_flags(sp, default: str) -> None:
    sp.add_argument("--xlsx", metavar="FILE", help=f"workbook path (default {default}, or beside --json)")
    sp.add_argument("--no-xlsx", action="store_true", help="do not write the workbook")


def _plot_flags(sp, kind: str) -> None:
    sp.add_argument("--plot", metavar="FILE.png",
                    help=f"plot path (default <scenario name>-{kind}.png beside --json or --xlsx, else in outputs/)")
    sp.add_argument("--no-plot", action="store_true", help="do not write the plot")


def run(interrupted: Callable[[], int] | None = None) -> None:
    """The console entry (`fabricplan`, `python -m solver`, through `entry.run`): `main`, then leave without the
    interpreter's teardown. By then every output file is closed (output sets commit whole, `files.py`), every helper
    process is joined and standard output is flushed (`main`: a write failure there is an error naming it, exit 2);
    freeing Pyomo's, pydantic's and the design space's objects one by one took about 0.09 s of every command (issue
    26, measured on its VM). A stream that still cannot be flushed leaves the usual way; so does a run under a profiler, a tracer or
    coverage (cProfile, `coverage run`, which write their results at the interpreter's exit). A Ctrl-C before the
    command starts gives `interrupted()` (its exit code; `entry.interrupted_at_start`), else the KeyboardInterrupt."""
    hold_collector()
    try:
        code = main()
    except KeyboardInterrupt:  # before the command started (its own Ctrl-C is handled in `main`)
        if interrupted is None:
            raise
        code = interrupted()
    if sys.getprofile() is not None or sys.gettrace() is not None or "coverage" in sys.modules:
        sys.exit(code)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        sys.exit(code)
    os._exit(code)


def main(argv=None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not args.command:
        parser.print_help()
        return EXIT_INPUT
    from rich.console import Console

    try:
        closed_streams(args)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    if sys.stdout is sys.__stdout__:  # the real one (tests capture it otherwise)
        sys.stdout = Stdout(sys.stdout)
    # pipes and files get every column at full width; --wide prints every column on a terminal too
    width = WIDE_COLUMNS if getattr(args, "wide", False) or not sys.stdout.isatty() else None
    err = Console(stderr=True, width=WIDE_COLUMNS if getattr(args, "wide", False) else None, emoji=False)
    out = err if getattr(args, "json", None) == "-" else Console(width=width, emoji=False)  # stdout: only the JSON
    from ..files import commit_mark

    mark = commit_mark()
    try:
        code = _COMMANDS[args.command](args, out, err)
        sys.stdout.flush()  # what the stream still holds fails here, named (`Stdout`), not at the exit
        return code
    except KeyboardInterrupt:
        err.print(safe(_interrupted_message(mark) + getattr(args, "interrupt_hint", "")))
        return EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - mapped to exit codes below
        return _handle(exc, args, err)


def _interrupted_message(mark: int) -> str:
    """True to what was written: output sets are committed whole (files.py), so either none of
    this run's files replaced the earlier ones, or the listed ones did."""
    from ..files import committed_files

    written = committed_files(mark)
    if not written:
        return "interrupted: earlier output files are unchanged"
    return "interrupted after writing " + ", ".join(str(p) for p in written)


def _handle(exc: Exception, args, err) -> int:
    from ..errors import CatalogCannotBuild, InputError, OutputError, SolverFailure

    if args.debug:
        traceback.print_exc()
    if isinstance(exc, InputError):
        for problem in exc.problems:
            print(plain(problem), file=sys.stderr)
        print(f"{len(exc.problems)} problem(s) found; nothing was written", file=sys.stderr)
        return EXIT_INPUT
    if isinstance(exc, (OutputError, UsageError, CatalogCannotBuild)):
        print(f"error: {plain(exc)}", file=sys.stderr)
        return EXIT_INPUT
    if isinstance(exc, SolverFailure):
        print(f"solver failure: {plain(exc)}", file=sys.stderr)
        return EXIT_SOLVER
    print(f"internal error: {type(exc).__name__}: {plain(exc)}" + ("" if args.debug else " (rerun with --debug for the traceback)"),
          file=sys.stderr)
    return EXIT_SOLVER


# ------------------------------------------------------------------------------- commands


def cmd_calibrate(args, out, err) -> int:
    from ..calibration.command import run_calibrate

    release_collector()  # it loads no scenario (`load_scenario_of_args`): its fits collect garbage as any work does
    return run_calibrate(args, out, catalog_paths_of_args(args), err)


def cmd_validate(args, out, err) -> int:
    from .. import api
    from ..errors import InputError
    from ..inputs import check_against_catalog, read_yaml

    release_collector()  # it may read many files and plan large sweeps (`load_scenario_of_args` is not used here)
    problems = []
    for path in args.paths:
        try:
            doc = read_yaml(path)
            if "workload" in doc.data or "target" in doc.data:
                ls = api.load_scenario(path)
                cat = catalog_of_args(args, ls)
                check_against_catalog(ls, cat)
                from ..optimize.user_rows import check_user_rows, refuse_user_rows

                if ls.scenario.workload.kind == "inference":  # as `solve` refuses them
                    refuse_user_rows(ls, (), "a serving scenario's fleet MILP")
                check_user_rows(ls, cat)  # constraints.user selectors name catalog parts, as `solve` checks
                kind = "scenario"
                if ls.scenario.sweep.parameters or ls.scenario.sweep.models:
                    from ..sweep.plan import plan_sweep

                    points = len(plan_sweep(ls, cat).tasks)  # every sweep path and value checked
                    kind = f"scenario with a {points}-point sweep"
                if ls.scenario.plan is not None:
                    from ..plan.periods import plan_periods

                    kind += f" and a {len(plan_periods(ls, cat).periods)}-period plan"  # every period checked
                print_catalog_warnings(cat, err)  # its --catalog / catalog: files' renamed keys, as `solve` prints
                print_warnings(ls, err)
                for text in ls.scenario.workload.assumptions:  # a model named by preset or size (docs/asking.md)
                    out.print(safe(f"assumption: {text}"))
            else:
                print_catalog_warnings(api.load_catalog(catalog_paths_of_args(args) + [path]), err)  # checked over its base
                kind = "catalog"
            out.print(safe(f"{path}: valid {kind}"))
        except InputError as exc:
            both = exc.problems + _catalog_names_too(args, path, exc.problems)
            problems.extend(sorted(both, key=lambda p: (p.line, p.column)) if len(both) > len(exc.problems) else both)
    if problems:
        raise InputError(problems)
    return EXIT_OK


def _catalog_names_too(args, path, found: list) -> list:
    """A scenario whose schema failed: its allow-list and pin ids checked against the catalog in the same pass
    (`inputs.scenario.raw_catalog_problems`); nothing when the file or the catalog cannot be read."""
    from .. import api
    from ..errors import InputError
    from ..inputs import read_yaml
    from ..inputs.scenario import raw_catalog_problems

    try:
        doc = read_yaml(path)
        if not isinstance(doc.data, dict) or not ("workload" in doc.data or "target" in doc.data):
            return []
        listed = doc.data.get("catalog") or []
        base = Path(path).resolve().parent
        own = [base / p for p in ([listed] if isinstance(listed, str) else listed) if isinstance(p, str)]
        cat = api.load_catalog(catalog_paths_of_args(args) + own)
    except (InputError, OSError, TypeError):
        return []
    seen = {(p.line, p.column, p.path) for p in found}
    return [p for p in raw_catalog_problems(doc, cat) if (p.line, p.column, p.path) not in seen]


def cmd_catalog(args, out, err) -> int:
    from .. import api
    from ..inputs import provenance
    from ..reports.json import dumps

    paths = catalog_paths_of_args(args)
    if not paths:
        raise UsageError("--no-default-catalog needs a --catalog file")
    cat = api.load_catalog(paths)
    print_catalog_warnings(cat, err)
    files = provenance(cat).files
    if args.verbose:
        for line in provenance(cat).overridden:
            err.print(safe(f"override: {line}"))
    if args.json:
        data = cat.model_dump(mode="json")
        data["files"] = [{"path": p, "sha256": h} for p, h in files]
        sys.stdout.write(dumps(data))
        return EXIT_OK
    from ..reports.catalog_terminal import catalog_tables

    for table in catalog_tables(cat, out.width):
        out.print(table)
    out.print(safe(f"files: {', '.join(p for p, _ in files)}"))
    return EXIT_OK


def _frontier_plot_path(args, name: str) -> Path | None:
    """The frontier PNG (only with --frontier): --plot, else outputs/<name>-frontier.png."""
    from ..files import check_writable

    if args.frontier is None:
        return None
    return check_writable(args.plot or default_output(name, "-frontier.png", args))


def _add_solve_notes(ls, cat, result) -> None:
    """The budget note (what the money left buys) and what the scale-up domain bought (issue 46)."""
    from ..optimize.budget import budget_note
    from ..optimize.scaleup_value import scaleup_note

    for note in (budget_note(ls.scenario, cat, result), scaleup_note(cat, result)):
        result.notes += [note] if note else []


def _bom_csv_of(result, bom_path, outputs) -> None:
    """`--bom-csv`: every ranked design's bill of materials (FILE, FILE-2, …), or no file (an earlier run's would
    contradict this one)."""
    if bom_path is not None and result.designs:
        from ..reports.bom_csv import write_bom_csvs

        write_bom_csvs(result.designs, bom_path)
    elif bom_path is not None:
        outputs.remove_on_commit(bom_path)


def cmd_solve(args, out, err) -> int:
    from .. import api
    from ..files import check_writable, output_set
    from ..optimize.frontier import MAX_POINTS, add_to_result
    from ..reports.frontier import print_frontier, print_next_faster, write_frontier_plot
    from ..reports.side_process import side_process, write_alongside
    from ..reports.terminal import print_solve

    if args.top is not None and not 1 <= args.top <= 100:
        raise UsageError("--top must be between 1 and 100")
    if args.frontier is not None and not 1 <= args.frontier <= MAX_POINTS:
        raise UsageError(f"--frontier N must be between 1 and {MAX_POINTS}")
    if args.plot and args.frontier is None:
        raise UsageError("--plot writes the frontier plot: give --frontier too")
    check_time_limit_arg(args.time_limit)
    ls, cat = load_scenario_of_args(args, err)
    if ls.scenario.workload.kind == "inference":  # a serving fleet (SPEC §4.9)
        from .serving import cmd_solve as serve

        return serve(args, ls, cat, out, err)
    json_path = json_output_path(args, ls.scenario.name, ".json")
    xlsx_path = xlsx_output_path(args, ls.scenario.name, ".xlsx")
    plot_path = _frontier_plot_path(args, ls.scenario.name)
    bom_path = check_writable(args.bom_csv) if getattr(args, "bom_csv", None) else None
    check_outputs_of([(ls, cat)], json=json_path, xlsx=xlsx_path, plot=plot_path, bom_csv=bom_path)
    # the workbook's process (forked now, before any thread starts) imports openpyxl while this one solves
    site = None
    with side_process("workbook", xlsx_path is not None, inherit=(cat,)) as book_writer:
        with err.status("solving…") as status:
            if ls.scenario.site is not None:  # power-first site: cooling and power profile decided (issue 43)
                from ..optimize.site import site_result

                site, result, cat = site_result(ls, cat, args.top, lambda text: status.update(text),
                                                solve_fn=api.solve)
            else:
                result = api.solve(ls, cat, top_k=args.top, distinct_by=args.distinct_by, time_limit_s=args.time_limit,
                                   progress=lambda i, k: status.update(f"solving: {i} of {k} designs found…"))
                status.update("the cost–speed frontier…" if args.frontier else "the next faster design…")
                add_to_result(result, ls, cat, args.frontier, args.time_limit,
                              progress=lambda i, n: status.update(f"the cost–speed frontier: {i} of up to {n} points…"))
        _add_solve_notes(ls, cat, result)
        result.input_warnings = input_warnings(ls)
        book = xlsx_path if result.designs else None
        with output_set() as outputs:  # JSON, workbook and plot replace the earlier set together, or not at all
            # the workbook is written by its process while this one prints and writes the JSON (or here, after)
            with write_alongside(book_writer, "workbook", (replace(result, space_memo=None), ls, cat), book):
                print_solve(result, out, wide=getattr(args, "wide", False))
                if site is not None:
                    from ..reports.site_terminal import print_site

                    print_site(site, out)
                print_next_faster(result, out)
                if result.frontier is not None:
                    print_frontier(result.frontier, result.scenario, out, wide=getattr(args, "wide", False))
                if plot_path is not None and result.frontier is not None and result.frontier["points"]:
                    write_frontier_plot(result.frontier, result.scenario, plot_path)
                write_json_output({**result.to_dict(), **({"site": site.to_dict()} if site is not None else {})}, json_path)
            if book is None:
                outputs.remove_on_commit(xlsx_path)  # an earlier run's workbook would contradict this JSON
            _bom_csv_of(result, bom_path, outputs)
    say_written(outputs, out)
    if result.status == "infeasible":
        return EXIT_INFEASIBLE
    warn_status(result, err)
    return EXIT_OK


def cmd_evaluate(args, out, err) -> int:
    """Evaluate the pinned design; decisions the pin block leaves open are optimised (SPEC §8.1)."""
    from .. import api
    from ..files import output_set
    from ..reports.side_process import side_process, write_alongside
    from ..reports.terminal import print_design, print_solve
    from ..results import SCHEMA, SolveResult

    ls, cat = load_scenario_of_args(args, err)
    if ls.scenario.workload.kind == "inference":  # a pinned serving fleet (SPEC §4.9)
        from .serving import cmd_solve as serve

        return serve(args, ls, cat, out, err, evaluate=True)
    json_path = json_output_path(args, ls.scenario.name, "-evaluate.json")
    xlsx_path = xlsx_output_path(args, ls.scenario.name, "-evaluate.xlsx")
    check_outputs_of([(ls, cat)], json=json_path, xlsx=xlsx_path)
    # the workbook's process imports openpyxl while this one evaluates
    with side_process("workbook", xlsx_path is not None, inherit=(cat,)) as book_writer:
        result = api.evaluate_pins(ls, cat)
        if not result.designs:
            print_solve(result, out, wide=getattr(args, "wide", False))
            with output_set() as outputs:
                write_json_output(result.to_dict(), json_path)
                outputs.remove_on_commit(xlsx_path)  # an earlier run's workbook would contradict this JSON
            say_written(outputs, out)
            return EXIT_INFEASIBLE
        design = result.designs[0]
        status = "infeasible" if result.status == "infeasible" or not (design.meets_target and design.perf.fits_memory) \
            else "feasible"
        data = {"schema": SCHEMA, "scenario": ls.scenario.name, "stack": result.stack, "status": status,
                "solve_time_s": result.solve_time_s,
                "pinned": result.stats.get("pinned", []), "designs": [design.to_dict()]}
        if result.explanation:
            data["explanation"] = result.explanation
        book = SolveResult(ls.scenario.name, status, [design], result.solve_time_s, result.gap, result.explanation,
                           result.timings_s, result.stats, result.solver, stack=ls.scenario.workload.stack)
        with output_set() as outputs:  # JSON and workbook replace the earlier pair together, or not at all
            with write_alongside(book_writer, "workbook", (book, ls, cat), xlsx_path):  # written while this one prints
                if result.explanation:
                    out.print(f"[bold red]infeasible[/]: {safe(result.explanation)}")
                print_design(design, out, wide=getattr(args, "wide", False))
                write_json_output(data, json_path)
    say_written(outputs, out)
    return EXIT_OK if status == "feasible" else EXIT_INFEASIBLE


def cmd_compare(args, out, err) -> int:
    """Solve each scenario (its best design) and print them side by side."""
    from .. import api
    from ..files import check_writable, output_set
    from ..reports.compare_terminal import compare_tables

    check_time_limit_arg(args.time_limit)
    loaded = [load_scenario_of_args(args, err, path) for path in args.scenarios]  # every file checked before any solve
    if any(ls.scenario.workload.kind == "inference" for ls, _ in loaded):
        if not all(ls.scenario.workload.kind == "inference" for ls, _ in loaded):
            raise UsageError("compare serving scenarios with serving scenarios (workload.kind: inference), "
                             "training with training")
        from .serving import cmd_compare as serve_compare

        return serve_compare(args, loaded, out, err)
    json_path = json_output_path(args, "compare", ".json")
    xlsx_path = check_writable(args.xlsx) if getattr(args, "xlsx", None) else None
    check_outputs_of(loaded, json=json_path, xlsx=xlsx_path)
    results = []
    for path, (ls, cat) in zip(args.scenarios, loaded):
        with err.status(f"solving {path}…"):
            results.append(api.solve(ls, cat, top_k=1, time_limit_s=args.time_limit))
        results[-1].input_warnings = input_warnings(ls)
    for table in compare_tables(results, [str(p) for p in args.scenarios], out.width, wide=getattr(args, "wide", False)):
        out.print(table)
    for path, r in zip(args.scenarios, results):
        if not r.designs:
            out.print(f"[bold red]{safe(r.scenario)}[/] ({safe(path)}) infeasible: {safe(r.explanation)}")
        warn_status(r, err, f"{r.scenario} ({path})")
        for w in r.warnings:
            out.print(f"[yellow]warning[/] ({safe(path)}): {safe(w)}")
    from ..results import SCHEMA

    data = {"schema": SCHEMA.replace("result", "compare"), "scenarios": [
        {"file": str(p), **r.to_dict()} for p, r in zip(args.scenarios, results)]}
    with output_set() as outputs:
        write_json_output(data, json_path)
        if xlsx_path is not None:
            from ..reports.compare_excel import write_compare_workbook

            write_compare_workbook(results, [str(p) for p in args.scenarios], xlsx_path)
    say_written(outputs, out)
    return EXIT_OK if all(r.designs for r in results) else EXIT_INFEASIBLE


_COMMANDS = {"validate": cmd_validate, "catalog": cmd_catalog, "solve": cmd_solve, "evaluate": cmd_evaluate,
             "compare": cmd_compare, "sweep": cmd_sweep, "plan": cmd_plan,
             "calibrate": cmd_calibrate}


if __name__ == "__main__":
    sys.exit(main())
