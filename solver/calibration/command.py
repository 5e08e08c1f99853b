"""`fabricplan calibrate RUNS -o OVERLAY.yaml [--stack NAME] [--catalog …] [--time-limit S]` (SPEC §8.1): the
CLI's part: the output guard, the time limit, progress on long fits, the warnings."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..errors import SolverFailure, UsageError
from .fit import Work

DEFAULT_TIME_LIMIT_S = 600.0  # a fit of the 2,000-run cap, linearised leave-one-out, takes ≈ 2-4 min on one core
QUIET_S = 2.0  # progress appears once a fit has run this long
LINE_EVERY_S = 5.0  # without a terminal, a progress line this often


class Progress(Work):
    """Progress of a long fit on standard error (a rich bar on a terminal, else a line every LINE_EVERY_S), and
    the time limit: past it, `tick` raises SolverFailure (exit 3, nothing written)."""

    def __init__(self, err, time_limit_s: float):
        self.err, self.limit = err, time_limit_s
        self.begin = self.last = time.monotonic()
        self.total, self.done, self.what = 0, 0, "preparing"
        self.bar: Any = None  # the rich bar, once shown
        self.task: Any = None

    def start(self, total: int) -> None:
        self.total = total

    def advance(self, what: str) -> None:
        self.done += 1
        self.what = what
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=self.done, total=self.total)

    def tick(self) -> None:
        now = time.monotonic()
        elapsed = now - self.begin
        if elapsed > self.limit:
            self.close()
            raise SolverFailure(f"calibrate: the fit did not finish within the {self.limit:g} s time limit "
                                f"({self.done} of {self.total} fits and left-out runs done); no overlay written: "
                                "allow more with --time-limit, or fit fewer runs")
        if elapsed < QUIET_S:
            return
        if getattr(self.err, "is_terminal", False):
            if self.bar is None:
                from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
                from rich.progress import Progress as Bar

                self.bar = Bar(TextColumn("calibrate"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                               console=self.err, transient=True)
                self.bar.start()
                self.task = self.bar.add_task("calibrate", total=self.total, completed=self.done)
        elif now - self.last >= LINE_EVERY_S:
            self.last = now
            self.err.print(f"calibrate: {self.done} of {self.total} fits and left-out runs done, {elapsed:.0f} s",
                           highlight=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


def run_calibrate(args, out, catalog_paths: list, err=None) -> int:
    from ..files import atomic_path, check_outputs, check_writable
    from ..inputs.catalog import load_catalog, provenance
    from ..optimize.solve import check_time_limit
    from ..reports.text import safe
    from . import FITS, calibrate
    from .table import print_report

    err = err or out
    target = Path(args.output)
    if target.suffix.lower() not in (".yaml", ".yml"):
        raise UsageError(f"-o {args.output}: the overlay is a catalog file; give a .yaml or .yml name")
    if not catalog_paths:
        raise UsageError("--no-default-catalog needs a --catalog file")
    fits = tuple(f.strip() for f in args.fit.split(",") if f.strip())
    unknown = [f for f in fits if f not in FITS]
    if unknown or not fits:
        raise UsageError(f"--fit {args.fit}: name one or more of {', '.join(FITS)}, separated by commas")
    limit = getattr(args, "time_limit", None)
    check_time_limit(limit)
    check_writable(target)
    catalog = load_catalog(catalog_paths)
    for line in provenance(catalog).deprecations:
        err.print(safe(f"warning: {line}"), highlight=False)
    # the overlay must not replace a file this run reads: the shipped catalog, a --catalog quote, the runs
    check_outputs({"-o": target}, [*(f for f, _ in provenance(catalog).files), *catalog_paths, args.runs])
    progress = Progress(err, limit or DEFAULT_TIME_LIMIT_S)
    try:
        cal = calibrate(args.runs, catalog, args.stack, fits=fits, work=progress)
    finally:
        progress.close()
    print_report(cal, out)
    for line in cal.warnings():
        err.print(safe(f"warning: {line}"), highlight=False)
    cal.check()  # a fit no better than the defaults, or one on a bound that explains nothing: exit 2, nothing written
    text = cal.overlay_yaml()
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    out.print(safe(f"wrote {target}: layer it with --catalog {target}"))
    return 0
