"""The terminal report of `fabricplan calibrate`: one row per run (its line, what it is, measured,
predicted, the error with the catalog's values, fitted and left out), then the fitted values and the
medians. Numbers never wrap; the run's description folds. Fits 80 columns."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from ..reports.text import safe
from .numbers import percent

if TYPE_CHECKING:
    from rich.console import Console

    from . import Calibration


def _pct(x: float) -> str:
    return percent(x)


def _what(run) -> str:
    w, pin = run.scenario.workload, run.scenario.pin
    m = w.model
    return f"{pin.platform} {w.precision} L{m.layers} h{m.hidden_size} t{pin.tp}c{pin.cp}p{pin.pp}d{pin.dp}"


def _number(x: float) -> str:
    return f"{x:,.4g}" if x < 1000 else f"{x:,.0f}"


def runs_table(cal: Calibration) -> Table:
    unit = "step s" if cal.column == "measured_step_time_s" else "tok/s/GPU"
    t = Table(title=f"{len(cal.runs)} runs of stack '{safe(cal.stack)}' ({unit}; error = predicted / measured − 1)",
              title_justify="left")
    t.add_column("line", justify="right", no_wrap=True)
    t.add_column("run", justify="left", overflow="fold", min_width=12)
    for header in ("measured", "predicted", "default", "fitted", "LOO"):
        t.add_column(header, justify="right", no_wrap=True)
    predicted = cal.predicted("fitted")
    for r, pred, d, f, lo in zip(cal.runs, predicted, cal.errors("default"), cal.errors("fitted"), cal.errors("loo"),
                                 strict=True):
        t.add_row(str(r.line), safe(_what(r)), _number(r.measured), _number(pred), _pct(d), _pct(f), _pct(lo))
    return t


def print_report(cal: Calibration, out: Console) -> None:
    out.print(runs_table(cal))
    if cal.skipped:
        out.print(f"{cal.skipped} run(s) of other stacks skipped")
    for pidx, rows in cal.outcome.groups:
        for k in pidx:
            p = cal.params[k]
            out.print(safe(f"fitted {p.label}: {p.default:.4f} → {cal.outcome.values[k]:.4f} ({len(rows)} runs)"))
    left = "left out" if not cal.outcome.linearised else "left out (linearised)"
    out.print(f"median |error|: defaults {percent(cal.median('default'), sign=False)}, fitted "
              f"{percent(cal.median('fitted'), sign=False)}, {left} {percent(cal.median('loo'), sign=False)}; "
              f"worst {percent(cal.worst('default'), sign=False)} → {percent(cal.worst('loo'), sign=False)}")
