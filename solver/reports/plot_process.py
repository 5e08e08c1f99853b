"""The sweep's and the plan's PNG drawn in a second process (issue 26).

`fabricplan plan` runs on one core; importing matplotlib (about 0.5 s of CPU) and drawing (0.2–1 s)
used to come after the solve, on the same core. `PlotProcess` starts a process when the command
has checked its inputs: it imports matplotlib while this process solves, then draws into the
temporary file of this process's atomic write while this process writes the JSON and the workbook.
What is written is unchanged: the same drawing function (`plot.draw_plot`, `plan_plot.draw_plan_plot`)
with the output set's run id; the file is renamed into place by this process's `atomic_path`, so
the JSON, workbook and plot are still replaced together or not at all.

If matplotlib is already loaded here, or the process cannot be started or dies, the plot is drawn here
as before. An error in the drawing
(a full disk) is raised here. On any exception while the plot is pending (Ctrl-C, a failed JSON
write) the process is stopped before the temporary file is removed. The process ignores Ctrl-C
(this process handles it); it is ended when the command is done, and ends by itself at end of file on
its pipe when this process is killed.
"""
from __future__ import annotations

import contextlib
import importlib
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

from ..files import atomic_path, current_run_id

DRAWERS = {"sweep": ("solver.reports.plot", "draw_plot"), "plan": ("solver.reports.plan_plot", "draw_plan_plot")}
STOP_WAIT_S = 5.0


def _drawer(kind: str):
    module, name = DRAWERS[kind]
    return getattr(importlib.import_module(module), name)


def _serve(conn, kind: str) -> None:
    """The plot process: import the drawing code and matplotlib, then draw each request; end at end of file."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    draw = _drawer(kind)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401 - imported now, while the parent solves

    while True:
        try:
            report, file, run_id = conn.recv()
        except (EOFError, OSError):
            return
        try:
            draw(report, Path(file), run_id)
            reply: tuple = (True, None)
        except Exception as exc:  # noqa: BLE001 - sent back and raised in the parent
            reply = (False, exc)
        try:
            conn.send(reply)
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its text instead
            conn.send((False, RuntimeError(f"{type(reply[1]).__name__}: {reply[1]}")))


class PlotProcess:
    """A running plot process of one kind ("sweep" or "plan"); `start` returns None if none can be started."""

    def __init__(self, kind: str, process, conn):
        self.kind, self._process, self._conn = kind, process, conn

    @classmethod
    def start(cls, kind: str) -> PlotProcess | None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")
        try:
            conn, child = ctx.Pipe()
            process = ctx.Process(target=_serve, args=(child, kind), name=f"fabricplan-{kind}-plot", daemon=True)
            process.start()
        except (OSError, ValueError, RuntimeError):
            return None
        child.close()
        return cls(kind, process, conn)

    def send(self, report: dict, file: Path, run_id: str | None) -> bool:
        """Ask for the plot; False if the process is gone (the caller draws it)."""
        try:
            self._conn.send((report, str(file), run_id))
        except (OSError, ValueError):
            return False
        return True

    def receive(self) -> bool:
        """Wait for the plot: True when drawn, False if the process died first; its drawing error is raised."""
        try:
            ok, exc = self._conn.recv()
        except (EOFError, OSError):
            return False
        if not ok:
            raise exc
        return True

    def stop(self) -> None:
        """End the process at once (it has nothing left to do once its plot is received, or none is wanted;
        if it is drawing, its temporary file is removed by the caller's atomic write) and wait for it."""
        with contextlib.suppress(OSError):
            self._conn.close()
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(STOP_WAIT_S)


def worth_a_process() -> bool:
    """A process pays for itself when this one would have to import matplotlib (a fresh command); once
    matplotlib is loaded here (a long-lived caller, the test suite), drawing here costs less than a new
    interpreter importing it again."""
    return "matplotlib" not in sys.modules


@contextlib.contextmanager
def plot_process(kind: str, wanted: bool) -> Iterator[PlotProcess | None]:
    """A plot process for the command's lifetime (None when no plot is wanted, matplotlib is already loaded
    here, or no process can be started)."""
    proc = PlotProcess.start(kind) if wanted and worth_a_process() else None
    try:
        yield proc
    finally:
        if proc is not None:
            proc.stop()


@contextlib.contextmanager
def plot_alongside(proc: PlotProcess | None, kind: str, report: dict, path: str | Path | None) -> Iterator[None]:
    """Write the plot of `report` to `path` (atomically, in the enclosing output set) while the block runs:
    drawn by `proc` if there is one, else here after the block. No `path`: nothing is drawn."""
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
