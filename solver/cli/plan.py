"""`fabricplan plan` (SPEC §8.1), registered in solver/cli/__init__.py's command table."""
from __future__ import annotations

from .common import (
    EXIT_INFEASIBLE,
    EXIT_OK,
    check_time_limit_arg,
    default_output,
    json_output_path,
    load_scenario_of_args,
    say_written,
    write_json_output,
    xlsx_output_path,
)
from .guards import check_outputs_of


def cmd_plan(args, out, err) -> int:
    """`fabricplan plan`: check the plan and the output paths, solve, print, write JSON, workbook and plot.

    Exit codes: 0 planned; 1 valid input but no plan exists (with the reason); 2 bad input; 3 solver failure.
    """
    from .. import api
    from ..files import check_writable, output_set
    from ..plan.periods import plan_periods
    from ..reports.plan_terminal import print_plan
    from ..reports.side_process import side_process, write_alongside

    check_time_limit_arg(args.time_limit)
    ls, cat = load_scenario_of_args(args, err)
    plan_periods(ls, cat)  # every period checked before any output path is touched
    name = ls.scenario.name
    json_path = json_output_path(args, name, "-plan.json")
    xlsx_path = xlsx_output_path(args, name, "-plan.xlsx")
    plot_path = None if args.no_plot else check_writable(args.plot or default_output(name, "-plan.png", args))
    check_outputs_of([(ls, cat)], json=json_path, xlsx=xlsx_path, plot=plot_path)
    # the workbook's process (forked now, before any thread starts) imports openpyxl while this one plans
    with side_process("plan_workbook", xlsx_path is not None) as book_writer, \
            side_process("plan", plot_path is not None) as plotter:  # imports matplotlib on the other core
        with err.status("planning…") as status:
            result = api.plan(ls, cat, time_limit_s=args.time_limit, compare=not args.no_compare,
                              progress=status.update)
        report = result.to_dict()
        planned = report["status"] != "infeasible"
        with output_set() as outputs:  # JSON, workbook and plot replace the earlier set together, or not at all
            with write_alongside(plotter, "plan", report, plot_path if planned else None), \
                    write_alongside(book_writer, "plan_workbook", report, xlsx_path if planned else None):
                print_plan(report, out)  # the plot and the workbook are written meanwhile (or here, after)
                write_json_output(report, json_path)
            if not planned:
                outputs.remove_on_commit(xlsx_path)  # an earlier run's workbook would contradict this JSON
                outputs.remove_on_commit(plot_path)
    say_written(outputs, out)
    if report["status"] == "infeasible":
        return EXIT_INFEASIBLE
    if report["status"] in ("feasible", "time_limit"):
        err.print(f"warning: the time limit stopped the search; the plan may not be optimal (status {report['status']})")
    return EXIT_OK
