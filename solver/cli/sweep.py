"""`fabricplan sweep` (SPEC §8.1), registered in solver/cli/__init__.py's command table."""
from __future__ import annotations

from pathlib import Path

from ..errors import UsageError
from ..reports.text import safe
from .common import (
    EXIT_INFEASIBLE,
    EXIT_OK,
    EXIT_SOLVER,
    check_time_limit_arg,
    default_output,
    input_warnings,
    json_output_path,
    load_scenario_of_args,
    say_written,
    write_json_output,
    xlsx_output_path,
)
from .guards import check_outputs_of


def cmd_sweep(args, out, err) -> int:
    """`fabricplan sweep`: plan, run with a progress bar, print the table, write JSON, workbook and plot.

    Exit codes: 0 every point solved; 1 some points infeasible; 3 some points failed; 2 bad input.
    """
    from ..files import check_writable, is_discard, output_set
    from ..reports.side_process import side_process, write_alongside
    from ..reports.terminal import print_report
    from ..sweep.plan import plan_sweep
    from ..sweep.run import results_path_for
    from ..sweep.summary import sweep_report

    if args.jobs is not None and args.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    check_time_limit_arg(args.time_limit)
    ls, cat = load_scenario_of_args(args, err)
    if ls.scenario.workload.kind == "inference":  # a serving fleet over traffic growth (SPEC §4.9)
        from .serving import cmd_sweep as serve_sweep

        return serve_sweep(args, ls, cat, out, err)
    plan = plan_sweep(ls, cat, args.vary, args.combine, args.time_limit)
    name = ls.scenario.name
    json_path = json_output_path(args, name, "-sweep.json")
    xlsx_path = xlsx_output_path(args, name, "-sweep.xlsx")
    plot_path = None if args.no_plot else check_writable(args.plot or default_output(name, "-sweep.png", args))
    results_path = results_path_for(json_path if json_path is not None and not is_discard(json_path)
                                    else check_writable(default_output(name, "-sweep.json", args)))
    check_writable(results_path)  # the finished points are appended there as they come
    check_outputs_of([(ls, cat)], json=json_path, xlsx=xlsx_path, plot=plot_path, results=results_path)
    for note in plan.notes:
        err.print(safe(f"note: {note}"))
    args.interrupt_hint = (f"; the finished points are kept in {results_path}: run the same command with --resume "
                           "to continue")
    # the workbook's process (forked now, before any thread starts: it has the scenario and catalog from the fork)
    # imports openpyxl while the points solve
    with side_process("sweep_workbook", xlsx_path is not None, inherit=(ls, cat)) as book_writer, \
            side_process("sweep", plot_path is not None) as plotter:  # imports matplotlib while the points solve
        rows = _run_with_progress(plan, args, results_path, err)
        args.interrupt_hint = ""
        report = sweep_report(plan, rows)
        report["warnings"] = input_warnings(ls)
        with output_set() as outputs:  # JSON, workbook and plot replace the earlier set together, or not at all
            with write_alongside(plotter, "sweep", report, plot_path), \
                    write_alongside(book_writer, "sweep_workbook", (report, ls, cat), xlsx_path):
                print_report(report, out, wide=getattr(args, "wide", False))  # drawn and written meanwhile
                write_json_output(report, json_path)
    say_written(outputs, out)
    out.print(safe(f"finished points in {results_path}"), highlight=False)
    counts = report["status_counts"]
    if counts["feasible"] or counts["time_limit"]:
        err.print(f"warning: the time limit stopped {counts['feasible'] + counts['time_limit']} point(s) (status "
                  "feasible or time_limit): their designs may not be optimal; allow more time")
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

    from ..sweep.run import local_pool, read_results_checked, results_lock, run_points

    columns = (SpinnerColumn(), TextColumn("sweep"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("ETA"), TimeRemainingColumn())
    where = args.executor if args.executor != "local" else f"{args.jobs} local worker(s)"
    err.print(safe(f"{len(plan.tasks)} point(s) on {where}; results file {results_path}"))
    with results_lock(results_path):  # one run per results file: a second --resume fails at once
        if args.resume and results_path.exists():
            done, rejected = read_results_checked(results_path, plan.sweep_hash, {t["index"] for t in plan.tasks})
            kept = len(done)
            err.print(f"resuming: {kept} of {len(plan.tasks)} point(s) already done, {len(plan.tasks) - kept} to solve"
                      + (f" ({rejected} line(s) of the results file damaged, edited or not rows: solved again)"
                         if rejected else ""))
        # the workers start before the progress bar's thread (forked: they have what this process loaded)
        with local_pool(plan, args.jobs or 1, args.executor) as pool, \
                Progress(*columns, console=err, transient=False) as progress:
            bar = progress.add_task("sweep", total=len(plan.tasks))
            rows = run_points(plan, args.jobs or 1, args.executor, results_path, args.resume,
                              on_result=lambda row: progress.advance(bar), pool=pool)
    return rows
