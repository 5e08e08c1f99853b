"""A second process for large design spaces (issue 26): on a machine with two or more cores, a build of at least
PARALLEL_MIN_SIZE (architectures × layout shapes) hands about half its platforms to a helper process forked once
per command and catalog (`build._split`: platforms that share their scans stay together), and scans the others
itself.

Exactness: each platform's scan reads only the build's scenario, catalog and its process's UB_K, and the shapes are
put back in their canonical order, so they are those of the serial build but for what each process's UB_K cuts
(the K-th best cost of K real designs of distinct identities found by that process, a bound on the K best as the
serial build's is). Each process's bound is its own, so a build is the same every time it is run. (UB_K shared
through shared memory was measured: no faster on the 10M-combination case, where each half finds a tight UB_K in its
own probes, and the shapes kept then varied from run to run.)
The helper keeps its own scan memos (`memo.ScanMemo`, the points it evaluated on its platforms), one per memo of
this process (`ScanMemo.token`), so the next faster design's build reuses them as a serial build would.
The helper is started only in the main thread of the main process (a sweep's workers run one scenario each, a core
apiece), only on Linux (fork), and never for a catalog other than the one it was forked with; FABRICPLAN_SERIAL=1
switches it off. If it dies, raises or cannot be started, its platforms are scanned here.
"""
from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import signal
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

PARALLEL_MIN_SIZE = 150_000  # architectures × layout shapes from which a build uses the helper
MEMOS_KEPT = 2  # scan memos the helper holds (the solve's and the next faster design's share one)
_TOKENS = itertools.count(1)


def cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class Helper:
    """The helper process of one catalog: `build(request)` scans its platforms and returns what it made."""

    def __init__(self, catalog, process, conn):
        self.catalog, self._process, self._conn = catalog, process, conn

    def send(self, request: dict) -> bool:
        try:
            self._conn.send(request)
        except (OSError, ValueError, TypeError, AttributeError):
            return False
        return True

    def receive(self) -> Any:
        """The helper's part of the build, or None if it died or raised (the caller then scans its platforms itself,
        so an error is raised there with its own type and text: not every exception survives the pipe's pickling)."""
        try:
            ok, payload = self._conn.recv()
        except (EOFError, OSError):
            self.stop()
            return None
        except Exception:  # noqa: BLE001 - an answer that does not unpickle (an exception of its own arguments)
            return None
        return payload if ok else None

    def alive(self) -> bool:
        return self._process.is_alive()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self._conn.close()
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(5.0)


_HELPER: Helper | None = None


def helper_for(catalog, size: int, serve: Callable[[Any, dict, dict], Any]) -> Helper | None:
    """The helper process for a build of `size` (architectures × layout shapes) on `catalog`, started on first use;
    None when the build is small, the machine has one core, this is not the main process, or fork is unavailable.
    `serve(catalog, memos, request)` makes the helper's part of a build."""
    global _HELPER
    if size < PARALLEL_MIN_SIZE or cores() < 2 or multiprocessing.parent_process() is not None:
        return None
    if threading.current_thread() is not threading.main_thread():
        return None  # one helper, one pipe: only the main thread's builds use it (a threaded sweep does not)
    if not sys.platform.startswith("linux") or os.environ.get("FABRICPLAN_SERIAL"):
        return None
    if _HELPER is not None and _HELPER.catalog is catalog and _HELPER.alive():
        return _HELPER
    if _HELPER is not None:
        _HELPER.stop()
        _HELPER = None
    ctx: Any = multiprocessing.get_context("fork")
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        conn, child = ctx.Pipe()
        process = ctx.Process(target=_serve, args=(child, conn, catalog, serve), name="fabricplan-build",
                              daemon=True)
        process.start()
    except (OSError, ValueError, RuntimeError):
        return None
    child.close()
    _HELPER = Helper(catalog, process, conn)
    return _HELPER


def forget() -> None:
    """Stop the helper (after a build it was part of failed or was interrupted: its pipe may hold a stale answer)."""
    global _HELPER
    if _HELPER is not None:
        _HELPER.stop()
        _HELPER = None


def new_token() -> int:
    """A number naming one scan memo of this process (the helper keeps its own memo under it)."""
    return next(_TOKENS)


def _serve(conn, parent_end, catalog, serve) -> None:
    """The helper: answer each request with (True, its part) or (False, the exception); end at end of file."""
    parent_end.close()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the main process handles Ctrl-C and ends this one
    memos: OrderedDict[int, Any] = OrderedDict()
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple = (True, serve(catalog, memos, request))
        except Exception as exc:  # noqa: BLE001 - raised in the main process
            reply = (False, exc)
        while len(memos) > MEMOS_KEPT:
            memos.popitem(last=False)
        try:
            conn.send(reply)
        except Exception:  # noqa: BLE001 - an exception that does not pickle: its text instead
            conn.send((False, RuntimeError(f"{type(reply[1]).__name__}: {reply[1]}")))
