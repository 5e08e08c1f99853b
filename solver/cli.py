"""The command line (SPEC §8.1): a thin layer over the library API.

Exit codes: 0 solved; 1 valid input but infeasible (with the explanation); 2 invalid input or
usage; 3 solver failure, or a time limit without a feasible design; 130 interrupted.
"""
from __future__ import annotations

import argparse
import sys
import traceback
from pathlib import Path

EXIT_OK, EXIT_INFEASIBLE, EXIT_INPUT, EXIT_SOLVER, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(Exception):
    pass


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
    from .api import SolverFailure
    from .loading import InputError
    from .report_json import OutputError

    if args.debug:
        traceback.print_exc()
    if isinstance(exc, InputError):
        for problem in exc.problems:
            print(str(problem), file=sys.stderr)
        print(f"{len(exc.problems)} problem(s) found; nothing was written", file=sys.stderr)
        return EXIT_INPUT
    if isinstance(exc, (OutputError, UsageError)):
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
    from . import loading

    problems, checked = [], 0
    for path in args.paths:
        try:
            doc = loading.read_yaml(path)
            if "workload" in doc.data or "target" in doc.data:
                ls = loading.load_scenario(path)
                from .api import catalog_for

                cat = catalog_for(ls, _catalog_paths(args))
                loading.check_against_catalog(ls, cat)
                kind = "scenario"
                if ls.scenario.sweep.parameters or ls.scenario.sweep.models:
                    from . import sweep

                    points = len(sweep.plan_sweep(ls, cat).tasks)  # every sweep path and value checked
                    kind = f"scenario with a {points}-point sweep"
            else:
                loading.load_catalog([path])
                kind = "catalog"
            checked += 1
            out.print(f"{path}: valid {kind}")
        except loading.InputError as exc:
            problems.extend(exc.problems)
    if problems:
        raise loading.InputError(problems)
    return EXIT_OK


def cmd_catalog(args, out, err) -> int:
    from . import loading
    from .report_json import dumps

    cat = loading.load_catalog(_catalog_paths(args) or None)
    if args.verbose:
        for line in cat.overridden:
            err.print(f"override: {line}")
    if args.json:
        data = cat.catalog.model_dump(mode="json")
        data["files"] = [{"path": p, "sha256": h} for p, h in cat.files]
        sys.stdout.write(dumps(data))
        return EXIT_OK
    from .report_terminal import catalog_tables

    for table in catalog_tables(cat):
        out.print(table)
    out.print(f"files: {', '.join(p for p, _ in cat.files)}")
    return EXIT_OK


def _load(args, err):
    from . import api

    ls = api.load_scenario(args.scenario)
    cat = api.catalog_for(ls, _catalog_paths(args))
    if args.verbose:
        for line in cat.overridden:
            err.print(f"override: {line}")
    return ls, cat


def _default_output(name: str, suffix: str) -> Path:
    return Path("outputs") / f"{name}{suffix}"


def cmd_solve(args, out, err) -> int:
    from . import api
    from .report_json import check_writable, write_json
    from .report_terminal import print_solve

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
        from .report_excel import write_workbook

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
    from .report_json import check_writable, write_json
    from .report_terminal import print_design

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
    from . import sweep

    return sweep.run_cli(args, out, err)


_COMMANDS = {"validate": cmd_validate, "catalog": cmd_catalog, "solve": cmd_solve, "evaluate": cmd_evaluate,
             "sweep": cmd_sweep}


if __name__ == "__main__":
    sys.exit(main())
