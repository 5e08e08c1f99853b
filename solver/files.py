"""Output files: checked before any work starts, written atomically and durably, committed as a set.
A foundation module (like errors.py): every stage that writes a file may import it, the sweep's resumable
results included, without importing the reports (docs/architecture.md).

- `atomic_path(path)`: write to a temp file beside `path` (named `.<name>.<pid>.<random>.tmp`),
  then fsync it, rename it over `path` and fsync the folder; on failure the old file stays.
- `output_set()`: the files of one run (the JSON, the workbook, the plot) are all written to temp
  names first and renamed together at the end, with Ctrl-C held off during the renames, so an
  interrupted or failed run leaves the earlier set whole; companions this run no longer produces
  (the workbook of an earlier feasible solve after an infeasible one) are removed in the same step.
- `check_writable(path)`: fail early, and clean the temp files runs killed before their rename left.
- `clean(value)`: JSON has no NaN or infinity: they are written as null.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
import signal
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from .errors import OutputError

LEGACY_TEMP_AGE_S = 3600  # temp files without an owner pid are removed once this old


def check_writable(path: str | Path) -> Path:
    """Fail early, with a clear message, when `path` cannot be written."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise OutputError(f"{path}: is a directory; give a file name")
    try:
        parent.mkdir(parents=True, exist_ok=True)
        # really write: os.access says yes to root even on read-only or virtual file systems
        fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=parent)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OutputError(f"{path}: cannot write in {parent}: {exc.strerror or exc}") from None
    if path.exists() and not os.access(path, os.W_OK):
        raise OutputError(f"{path}: the file exists and is not writable")
    remove_stale_temps(path)
    return path


def remove_stale_temps(path: Path) -> list[Path]:
    """Remove the temp files of `path` that runs killed before their rename left behind: those whose
    owner process is gone, and untagged ones (older versions) over an hour old. Returns them."""
    pattern = re.compile(r"^\." + re.escape(path.name) + r"\.(?:(\d+)\.)?[A-Za-z0-9_]+\.tmp$")
    removed: list[Path] = []
    parent = path.parent if str(path.parent) else Path(".")
    try:
        entries = list(parent.iterdir())
    except OSError:
        return removed
    for entry in entries:
        m = pattern.match(entry.name)
        if not m:
            continue
        with contextlib.suppress(OSError):
            stale = not _alive(int(m[1])) if m[1] else time.time() - entry.stat().st_mtime > LEGACY_TEMP_AGE_S
            if stale:
                entry.unlink()
                removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's live process
    return True


def fsync_path(path: Path) -> None:
    """Flush a file's data (or a folder's entries) to disk; file systems that cannot are skipped."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if path.is_dir() else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # e.g. EINVAL: this file system does not sync folders
    finally:
        os.close(fd)


def _new_temp(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    return Path(tmp)


def _mode_for(path: Path) -> int:
    # mkstemp makes the file 0600; give the result the old file's mode, or the usual 0644.
    return path.stat().st_mode & 0o777 if path.exists() else 0o644


class OutputSet:
    """Files staged under temp names, renamed over their targets together by `commit`."""

    def __init__(self) -> None:
        self.staged: list[tuple[Path, Path]] = []  # (temp, target)
        self.stale: list[Path] = []
        self.committed: list[Path] = []
        self.removed: list[Path] = []

    def remove_on_commit(self, path: str | Path | None) -> None:
        """A companion this run does not produce: removed when the set is committed (if it exists)."""
        if path is not None:
            self.stale.append(Path(path))

    def commit(self) -> None:
        """fsync every staged file, rename each over its target, remove stale companions, fsync the
        folders — with SIGINT held off until the set is complete."""
        with _sigint_deferred():
            for tmp, _ in self.staged:
                fsync_path(tmp)
            for tmp, target in self.staged:
                os.chmod(tmp, _mode_for(target))
                os.replace(tmp, target)
                self.committed.append(target)
            for path in self.stale:
                if path.exists() and path not in self.committed:
                    path.unlink()
                    self.removed.append(path)
            for folder in {p.parent for p in self.committed + self.removed}:
                fsync_path(folder)
            self.staged = []
        _COMMITTED.extend(self.committed)

    def discard(self) -> None:
        for tmp, _ in self.staged:
            with contextlib.suppress(OSError):
                tmp.unlink()
        self.staged = []


_CURRENT: contextvars.ContextVar[OutputSet | None] = contextvars.ContextVar("fabricplan_output_set", default=None)
_COMMITTED: list[Path] = []  # every output set file this process committed (for an honest Ctrl-C message)


def commit_mark() -> int:
    """A mark to pass to `committed_files` later: files committed after it belong to that run."""
    return len(_COMMITTED)


def committed_files(since: int = 0) -> list[Path]:
    """Output files (of output sets) this process has replaced since `since` (a `commit_mark`)."""
    return list(_COMMITTED[since:])


@contextlib.contextmanager
def output_set() -> Iterator[OutputSet]:
    """Every `atomic_path` inside the block is staged; the set is committed when the block ends
    without an exception, and discarded (temp files removed, targets untouched) otherwise."""
    outputs = OutputSet()
    token = _CURRENT.set(outputs)
    try:
        yield outputs
    except BaseException:
        outputs.discard()
        raise
    finally:
        _CURRENT.reset(token)
    outputs.commit()


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path next to `path`; rename it over `path` (durably) only if the block
    succeeds — at once, or when the enclosing `output_set` commits."""
    path = Path(path)
    tmp_path = _new_temp(path)
    handed_over = False
    try:
        yield tmp_path
        outputs = _CURRENT.get()
        if outputs is not None:
            outputs.staged.append((tmp_path, path))
        else:
            fsync_path(tmp_path)
            os.chmod(tmp_path, _mode_for(path))
            os.replace(tmp_path, path)
            fsync_path(path.parent)
        handed_over = True
    finally:
        if not handed_over and tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def _sigint_deferred() -> Iterator[None]:
    """Hold SIGINT until the block ends, then raise KeyboardInterrupt if one came (main thread
    only; elsewhere the block simply runs)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_DFL if previous is None else previous)
    if not received or previous is signal.SIG_IGN:
        return
    if callable(previous) and previous is not signal.default_int_handler:
        previous(signal.SIGINT, None)
    elif previous == signal.SIG_DFL:
        os.kill(os.getpid(), signal.SIGINT)
    else:
        raise KeyboardInterrupt


def clean(value):
    """JSON has no NaN or infinity: write them as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(v) for v in value]
    return value
