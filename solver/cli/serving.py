"""`fabricplan solve | evaluate | compare | sweep` on a serving scenario (`workload.kind: inference`, SPEC §4.9):
the commands in solver/cli/__init__.py and cli/sweep.py hand an inference scenario here after loading it."""
from __future__ import annotations

from ..errors import UsageError
from ..reports.text import safe
from .common import EXIT_INFEASIBLE, EXIT_OK, json_output_path, say_written, write_json_output, xlsx_output_path


def _bom_csv(result, path) -> None:
    import csv

    from ..files import atomic_path

    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["pool", "category", "part", "description", "quantity", "unit_price_usd", "extended_usd",
                    "price_source", "price_date"])
        for p in result.designs[0].pools:
            for line in p.cost.bom:
                x = line.to_dict()
                w.writerow([p.role, x["category"], x["part"], x["description"], x["quantity"], x["unit_price_usd"],
                            x["extended_usd"], x.get("price_source", ""), x.get("price_date", "")])


def cmd_solve(args, ls, cat, out, err, evaluate: bool = False) -> int:
    """The K best fleets (or `--frontier N`: cost against tokens/s per user); terminal, JSON, workbook."""
    from ..files import check_writable, output_set
    from ..optimize.serving_solve import solve_fleet
    from ..reports.serving_terminal import print_fleet_frontier, print_fleets
    from ..reports.side_process import side_process, write_alongside

    top = getattr(args, "top", None)
    if top is not None and not 1 <= top <= 100:
        raise UsageError("--top must be between 1 and 100")
    frontier = getattr(args, "frontier", None)
    if getattr(args, "plot", None):
        raise UsageError(f"--plot: {ls.scenario.name} is a serving scenario, and a serving frontier has no plot (its points "
                         "are in the terminal table and the JSON's frontier): leave --plot out")
    suffix = "-evaluate" if evaluate else ""
    json_path = json_output_path(args, ls.scenario.name, f"{suffix}.json")
    xlsx_path = xlsx_output_path(args, ls.scenario.name, f"{suffix}.xlsx")
    bom_path = check_writable(args.bom_csv) if getattr(args, "bom_csv", None) else None
    # the workbook's process (forked now, before the status spinner's thread starts) imports openpyxl while this one
    # solves, and writes the workbook while this one prints and writes the JSON (reports/side_process.py)
    with side_process("fleet", xlsx_path is not None, inherit=(ls.scenario,)) as book_writer:  # sent by reference
        with err.status("solving the serving fleet…"):
            result = solve_fleet(ls, cat, top_k=1 if evaluate else top, frontier_points=frontier,
                                 distinct_by=getattr(args, "distinct_by", None) or "architecture")
        book = xlsx_path if result.designs else None
        with output_set() as outputs:
            with write_alongside(book_writer, "fleet", (result, ls.scenario), book):
                print_fleets(result, out, wide=getattr(args, "wide", False))
                if result.site is not None:  # a power-first site: the lines training site solves print (issue 43s)
                    from ..reports.site_terminal import print_site_data

                    print_site_data(result.site, out)
                if result.frontier is not None:
                    print_fleet_frontier(result, out, wide=getattr(args, "wide", False))
                write_json_output(result.to_dict(), json_path)
            if xlsx_path is not None and book is None:
                outputs.remove_on_commit(xlsx_path)
            if bom_path is not None and result.designs:
                _bom_csv(result, bom_path)
    say_written(outputs, out)
    return EXIT_OK if result.designs else EXIT_INFEASIBLE


def cmd_compare(args, loaded, out, err) -> int:
    """Each serving scenario's best fleet, side by side."""
    from ..files import output_set
    from ..optimize.serving_solve import solve_fleet
    from ..reports.serving_terminal import compare_rows

    results = [solve_fleet(ls, cat, top_k=1) for ls, cat in loaded]
    names = [str(p) for p in args.scenarios]
    compare_rows(results, names, out, wide=getattr(args, "wide", False))
    for name, r in zip(names, results):
        if not r.designs:
            out.print(f"[bold red]{safe(r.scenario)}[/] ({safe(name)}) infeasible: {safe(r.explanation)}")
    data = {"schema": "fabricplan.compare/1", "scenarios": [{"file": n, **r.to_dict()} for n, r in zip(names, results)]}
    xlsx = getattr(args, "xlsx", None)
    with output_set() as outputs:
        write_json_output(data, json_output_path(args, "compare", ".json"))
        best = [r.designs[0] for r in results if r.designs]
        if xlsx and best:
            from dataclasses import replace

            from ..optimize.serving_results import FleetResult
            from ..reports.serving_excel import write_fleet_workbook

            side = FleetResult("compare: " + ", ".join(r.scenario for r in results if r.designs), "optimal",
                               [replace(d, rank=i + 1) for i, d in enumerate(best)], results[0].objective)
            write_fleet_workbook(side, None, xlsx)
    say_written(outputs, out)
    return EXIT_OK if all(r.designs for r in results) else EXIT_INFEASIBLE


def sweep_rows(plan, cat) -> list[dict]:
    """Solve every point of a sweep plan (serially: each point takes well under a second)."""
    from ..inputs import load_scenario
    from ..optimize.serving_solve import solve_fleet

    rows = []
    for task in plan.tasks:
        r = solve_fleet(load_scenario(task["scenario"], display="<sweep point>"), cat, top_k=1)
        d = r.designs[0] if r.designs else None
        s = d.serving_dict() if d else {}
        full = d.to_dict() if d else None  # once: it builds every pool's bill of materials
        rows.append({"index": task["index"], "values": task["values"], "status": r.status,
                     "fleet": full["serving"]["pools"] if full else None,
                     "mode": d.mode if d else None, "platform": full["platform"] if full else None,
                     "gpus": d.gpus if d else None, "capex_usd": d.capex_usd if d else None,
                     "peak_requests_per_s": s.get("peak_requests_per_s"),
                     "tokens_per_s_per_user": s.get("tokens_per_s_per_user"),
                     "usd_per_million_output_tokens": s.get("usd_per_million_output_tokens"),
                     "flags": s.get("flags", []), "explanation": r.explanation})
    return rows


def cmd_sweep(args, ls, cat, out, err) -> int:
    """Sweep a serving scenario (e.g. traffic growth): one row per point, where the best fleet changes."""
    from ..files import output_set
    from ..reports.serving_terminal import print_sweep
    from ..sweep.plan import plan_sweep

    plan = plan_sweep(ls, cat, args.vary, args.combine, args.time_limit)
    with err.status(f"solving {len(plan.tasks)} serving points…"):
        rows = sweep_rows(plan, cat)
    changes = [r["index"] for prev, r in zip(rows, rows[1:])
               if (prev["mode"], prev["platform"]) != (r["mode"], r["platform"])]
    report = {"schema": "fabricplan.sweep/1", "scenario": ls.scenario.name, "workload_kind": "inference",
              "points": rows, "architecture_changes_at": changes}
    print_sweep(report, out, wide=getattr(args, "wide", False))
    xlsx_path = xlsx_output_path(args, ls.scenario.name, "-sweep.xlsx")
    with output_set() as outputs:
        write_json_output(report, json_output_path(args, ls.scenario.name, "-sweep.json"))
        if xlsx_path is not None:
            from ..reports.serving_excel import write_sweep_workbook

            write_sweep_workbook(report, xlsx_path)
    say_written(outputs, out)
    return EXIT_OK if all(r["status"] != "infeasible" for r in rows) else EXIT_INFEASIBLE
