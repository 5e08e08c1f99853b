"""One computation run in a forked copy of this process while this one goes on (issue plan: `fabricplan plan`
interactive).

`fabricplan plan` solved its comparisons one after another on one core; the up-front comparison (one MILP over every
period, whose HiGHS presolve alone takes about 0.5 s on plan-5-years) needs nothing the plan or the other comparisons
compute, only the period models already built. `Forked(fn)` forks once those exist: the copy has them (and every
imported module) from the fork, computes `fn()`, sends back the pickled value through a pipe and ends with
`os._exit` (it flushes, prints and cleans up nothing of this process's); this process meanwhile solves the plan and
the from-scratch comparisons, then reads the value with `result()`.

The answer cannot change: the copy runs the same function on the same inputs (HiGHS is deterministic: one thread,
seed 0), and whenever the copy cannot be started (`can_fork`), dies, or fails (its error is not sent back), `result()`
computes `fn()` here, as before — raising here whatever it raises. Only on Linux (fork is unsafe after some system
frameworks on macOS and absent on Windows); `cancel()` (or leaving the `with` block) ends a copy whose value is no
longer wanted. On a loaded machine (no idle core) the copy saves nothing: the same work is done, on both cores.
The copy ignores Ctrl-C: this process handles it and ends the copy.
"""
from __future__ import annotations

import contextlib
import gc
import os
import pickle
import signal
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

ENABLED = True  # False computes every value here (tests compare the two)


def can_fork() -> bool:
    """A copy is forked as the design space's helper is (`design_space.parallel.helper_for`): when ENABLED, on Linux,
    with two cores or more, from the main thread of the main process, and not with FABRICPLAN_SERIAL=1."""
    import multiprocessing
    import threading

    from ..design_space.parallel import cores

    return (ENABLED and sys.platform.startswith("linux") and hasattr(os, "fork") and not os.environ.get("FABRICPLAN_SERIAL")
            and cores() >= 2 and multiprocessing.parent_process() is None
            and threading.current_thread() is threading.main_thread())


class Forked(Generic[T]):
    """`fn()` computed by a forked copy of this process (or here, when none can be started or it fails)."""

    def __init__(self, fn: Callable[[], T]):
        self._fn = fn
        self._pid: int | None = None
        self._fd: int | None = None
        if can_fork():
            self._start()

    @property
    def forked(self) -> bool:
        """True while a copy is computing the value."""
        return self._pid is not None

    def _start(self) -> None:
        sys.stdout.flush()  # nothing buffered here is written twice (the copy never flushes anyway)
        sys.stderr.flush()
        try:
            r, w = os.pipe()
        except OSError:
            return
        # Ctrl-C is held back across the fork: a copy interrupted before it ignores SIGINT would run this process's
        # own clean-up (and print "interrupted" twice); the copy ignores it, then unblocks it
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
        try:
            parent = os.getpid()
            with warnings.catch_warnings():  # Python ≥ 3.12 warns when a process with threads forks: the copy
                warnings.simplefilter("ignore", DeprecationWarning)  # only computes and writes to its pipe
                pid = os.fork()
        except OSError:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.close(r)
            os.close(w)
            return
        if pid == 0:  # the copy
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            os.close(r)
            _serve(self._fn, w, parent)
        os.close(w)
        self._pid, self._fd = pid, r
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)

    def result(self) -> T:
        """The value: read from the copy, or computed here if there is none or it failed."""
        if self._pid is None or self._fd is None:
            return self._fn()
        chunks = []
        with os.fdopen(self._fd, "rb") as pipe:
            self._fd = None
            while chunk := pipe.read(1 << 20):
                chunks.append(chunk)
        _, status = os.waitpid(self._pid, 0)
        self._pid = None
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and chunks:
            with contextlib.suppress(Exception):
                value: T = pickle.loads(b"".join(chunks))
                return value
        return self._fn()  # the copy failed: here, as before (raising here what it raises)

    def cancel(self) -> None:
        """End the copy (its value is no longer wanted) and wait for it."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        if self._pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                os.waitpid(self._pid, 0)
            self._pid = None


def _serve(fn: Callable[[], object], fd: int, parent: int) -> None:
    """In the copy: compute, send the pickled value, end at once (exit code 1 on any failure). The copy ends with
    its parent (killed: the kernel sends it SIGKILL, prctl PR_SET_PDEATHSIG, as a sweep's workers)."""
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        # the fork may have caught another thread (the CLI's spinner) inside a write to sys.stderr: that stream's lock
        # would stay held for ever here, and Pyomo flushes both streams before every solve. Fresh objects, same fds.
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        with contextlib.suppress(Exception):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        if os.getppid() != parent:  # the parent died before the line above took effect
            return
        gc.freeze()  # the collector never walks what the copy has from the fork (nor touches its pages)
        data = pickle.dumps(fn(), protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        code = 0
    except BaseException:  # noqa: BLE001 - the parent computes the value itself
        code = 1
    finally:
        os._exit(code)


@contextlib.contextmanager
def forked(fn: Callable[[], T], wanted: bool = True) -> Iterator[Forked[T] | None]:
    """A `Forked(fn)` for the block (None when not `wanted`); ended when the block is left without its value."""
    job = Forked(fn) if wanted else None
    try:
        yield job
    finally:
        if job is not None:
            job.cancel()
