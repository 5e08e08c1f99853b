"""A file written by a second process while the command works (issue 26): the sweep's and the plan's PNG, and
the solve's workbook.

`fabricplan plan` runs on one core; importing matplotlib (about 0.5 s of CPU) and drawing (0.2–1 s)
used to come after the solve, on the same core. `SideProcess` starts a process when the command
has checked its inputs: it imports matplotlib while this process solves, then draws into the
temporary file of this process's atomic write while this process writes the JSON and the workbook.
`fabricplan solve` likewise has its workbook written by a process forked once the inputs are loaded: it imports
openpyxl (0.1–0.2 s) while this process solves, then builds and saves the workbook (0.15–0.3 s) while this process
prints the table and writes the JSON. It is sent the result (without the scan memo, which no report reads) and the
loaded scenario as the solve left it (with its stack resolved); the catalog, which nothing changes once loaded, it
has from the fork (`side_process(..., inherit=...)`: pickling it here and unpickling it there took 0.02 s of the
command's 0.1 s wait for the workbook). A serving scenario's `solve` and `evaluate` have their fleet workbook
(`serving_excel.write_fleet_workbook_file`, kind "fleet") written the same way: the command no longer imports openpyxl
(about 0.05 s) nor builds the workbook (0.09 s) itself.
What is written is unchanged: the same function (`plot.draw_plot`, `plan_plot.draw_plan_plot`,
`excel.write_workbook_file`, `serving_excel.write_fleet_workbook_file`) with the output set's run id; the file is renamed into place by this process's
`atomic_path`, so the JSON, workbook and plot are still replaced together or not at all.

If the module the process would import (matplotlib, openpyxl) is already loaded here, or the process cannot be
started or dies, the file is written here as before. An error in the writing
(a full disk) is raised here. On any exception while the file is pending (Ctrl-C, a failed JSON
write) the process is stopped before the temporary file is removed. The process ignores Ctrl-C
(this process handles it); it is ended when the command is done, and ends by itself at end of file on
its pipe when this process is killed.
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import pickle
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ..files import atomic_path, current_run_id

# kind → (module, function writing `(report, file, run_id)`, the library the process imports early)
DRAWERS = {"sweep": ("solver.reports.plot", "draw_plot", "matplotlib"),
           "plan": ("solver.reports.plan_plot", "draw_plan_plot", "matplotlib"),
           "workbook": ("solver.reports.excel", "write_workbook_file", "openpyxl"),
           "fleet": ("solver.reports.serving_excel", "write_fleet_workbook_file", "openpyxl"),
           "plan_workbook": ("solver.reports.plan_excel", "write_plan_workbook_file", "openpyxl"),
           "sweep_workbook": ("solver.reports.sweep_excel", "write_sweep_workbook_file", "openpyxl")}
# how the process starts: the workbook's is forked (it inherits every module this process has imported, so it is
# ready in the time openpyxl takes to import; it is sent its inputs as the solve left them); the plots' are fresh interpreters (a sweep's
# workers and Dask may be running threads by the time they are needed)
START_METHOD = {"sweep": "spawn", "plan": "spawn", "workbook": "fork", "fleet": "fork", "plan_workbook": "fork",
                "sweep_workbook": "fork"}
STOP_WAIT_S = 5.0
# what a forked process has from its parent as it was at the fork (`side_process(..., inherit=...)`), by position
_INHERITED: list[Any] = []


class _Inherited(NamedTuple):
    """In a request, the place of an object the process has from the fork (`_INHERITED[place]`)."""

    place: int


def _by_reference(report: Any, inherited: list[Any]) -> Any:
    """The report (a tuple of the writer's arguments) with each element the process has from the fork replaced by its
    place."""
    if not inherited or not isinstance(report, tuple):
        return report
    return tuple(next((_Inherited(i) for i, obj in enumerate(inherited) if x is obj), x) for x in report)


def _resolved(report: Any) -> Any:
    """`_by_reference` undone in the process."""
    if not isinstance(report, tuple):
        return report
    return tuple(_INHERITED[x.place] if isinstance(x, _Inherited) else x for x in report)


def _drawer(kind: str):
    module, name, _ = DRAWERS[kind]
    return getattr(importlib.import_module(module), name)


def _serve(conn, kind: str, parent_end=None) -> None:
    """The process: import the writing code and its library, then write each request; end at end of file.
    A forked process is given the parent's end of the pipe too, and closes it: it would otherwise hold it open and
    never see the end of file when the parent dies (`kill -9`)."""
    if parent_end is not None:
        parent_end.close()
    # no cyclic garbage collection (every kind: each command sends it one request): the process writes its file and
    # ends, and the collector's passes over what it inherited and unpickled took 0.05–0.1 s of the workbook's time
    # (docs/performance.md "Sixth pass")
    gc.freeze()
    gc.disable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    draw = _drawer(kind)
    if DRAWERS[kind][2] == "matplotlib":
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot  # noqa: F401 - imported now, while the parent solves

    while True:
        try:
            report, file, run_id = conn.recv()
        except (EOFError, OSError):
            return
        try:
            draw(_resolved(report), Path(file), run_id)
            reply: tuple = (True, None)
        except Exception as exc:  # noqa: BLE001 - sent back and raised in the parent
            reply = (False, exc)
        try:
            conn.send(reply)
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its text instead
            conn.send((False, RuntimeError(f"{type(reply[1]).__name__}: {reply[1]}")))


class SideProcess:
    """A running process of one kind ("sweep" or "plan": the PNG of a report; "workbook": the solve's workbook of
    a (result, loaded scenario, catalog)); `start` returns None if none can be started."""

    def __init__(self, kind: str, process, conn, inherited: list[Any] | None = None):
        self.kind, self._process, self._conn = kind, process, conn
        self._inherited = inherited or []

    @classmethod
    def start(cls, kind: str, inherit: tuple = ()) -> SideProcess | None:
        """The process; a forked one has `inherit` (objects nothing changes from now on) from the fork, and a request
        that names one of them (an element of the report tuple, by identity) is sent its place instead."""
        import multiprocessing

        method = START_METHOD[kind]
        if method == "fork" and not sys.platform.startswith("linux"):
            return None  # fork is safe only on Linux (macOS: not after system frameworks are loaded; Windows: none)
        inherited = list(inherit) if method == "fork" else []
        _INHERITED[:] = inherited  # what the forked process finds
        ctx: Any = multiprocessing.get_context(method)
        sys.stdout.flush()  # a forked process must not write this process's buffered output again
        sys.stderr.flush()
        try:
            conn, child = ctx.Pipe()
            process = ctx.Process(target=_serve, args=(child, kind, conn if method == "fork" else None),
                                  name=f"fabricplan-{kind}", daemon=True)
            process.start()
        except (OSError, ValueError, RuntimeError):
            return None
        child.close()
        return cls(kind, process, conn, inherited)

    def send(self, report, file: Path, run_id: str | None) -> bool:
        """Ask for the file; False if the process is gone or the report does not pickle (the caller writes it)."""
        try:
            self._conn.send((_by_reference(report, self._inherited), str(file), run_id))
        except (OSError, ValueError, TypeError, AttributeError, pickle.PicklingError):
            return False
        return True

    def receive(self) -> bool:
        """Wait for the file: True when written, False if the process died first; its writing error is raised."""
        try:
            ok, exc = self._conn.recv()
        except (EOFError, OSError):
            return False
        if not ok:
            raise exc
        return True

    def stop(self) -> None:
        """End the process at once (it has nothing left to do once its file is received, or none is wanted;
        if it is writing, its temporary file is removed by the caller's atomic write) and wait for it."""
        with contextlib.suppress(OSError):
            self._conn.close()
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(STOP_WAIT_S)


def worth_a_process(kind: str) -> bool:
    """A process pays for itself when this one would have to import the library (matplotlib, openpyxl: a fresh
    command); once it is loaded here (a long-lived caller, the test suite), writing here costs less than a
    second process importing it again."""
    return DRAWERS[kind][2] not in sys.modules


@contextlib.contextmanager
def side_process(kind: str, wanted: bool, inherit: tuple = ()) -> Iterator[SideProcess | None]:
    """A process for the command's lifetime (None when no file is wanted, the library is already loaded
    here, or no process can be started); `inherit`: objects nothing changes from now on, which a forked process
    has from the fork (`SideProcess.start`)."""
    proc = SideProcess.start(kind, inherit) if wanted and worth_a_process(kind) else None
    try:
        yield proc
    finally:
        if proc is not None:
            proc.stop()


@contextlib.contextmanager
def write_alongside(proc: SideProcess | None, kind: str, report, path: str | Path | None) -> Iterator[None]:
    """Write the file of `report` to `path` (atomically, in the enclosing output set) while the block runs:
    written by `proc` if there is one, else here after the block. No `path`: nothing is written."""
    if path is None:
        yield
        return
    with atomic_path(path) as tmp:
        run_id = current_run_id()
        sent = proc is not None and proc.send(report, tmp, run_id)
        try:
            yield
            drawn = sent and proc is not None and proc.receive()
        except BaseException:
            if sent and proc is not None:
                proc.stop()  # before atomic_path removes the temporary file it may be writing
            raise
        if not drawn:
            _drawer(kind)(report, tmp, run_id)
