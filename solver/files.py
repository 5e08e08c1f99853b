"""Output files: checked before any work starts, written atomically and durably, committed as a set.

- `atomic_path(path)`: write to a temp file beside `path` (named `.<name>.<pid>.<random>.tmp`),
  then fsync it, rename it over `path` and fsync the folder; on failure the old file stays.
- `output_set()`: the files of one run (the JSON, the workbook, the plot) are all written to temp
  names first and renamed together at the end, with Ctrl-C held off during the renames, so an
  interrupted or failed run leaves the earlier set whole; companions this run no longer produces
  (the workbook of an earlier feasible solve after an infeasible one) are removed in the same step.
- `check_writable(path)`: fail early, and clean the temp files runs killed before their rename left.
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
import signal
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from .commit import folders_locked, new_run_id, remove_journals, roll_forward, write_journal
from .errors import OutputError, OutputWriteError

LEGACY_TEMP_AGE_S = 3600  # temp files without an owner pid are removed once this old


def is_discard(path: str | Path | None) -> bool:
    """True when `path` is the null device (`/dev/null`): the output is discarded — written to a
    temp file elsewhere and removed, never renamed over the device."""
    if path is None:
        return False
    try:
        st, null = os.stat(path), os.stat(os.devnull)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and st.st_rdev == null.st_rdev


def _kind(st: os.stat_result) -> str:
    for test, name in ((stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISFIFO, "named pipe (FIFO)"), (stat.S_ISSOCK, "socket")):
        if test(st.st_mode):
            return name
    return "special file"


def check_writable(path: str | Path) -> Path:
    """Fail early, with a clear message, when `path` cannot be written, or is not a regular file a
    run may replace (a link, a device, a pipe: never replaced; the null device: discarded)."""
    path = Path(path)
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_symlink():
        raise OutputError(f"{path}: is a symbolic link; give the path of a regular file (an output never replaces "
                          "a link, nor writes through one)")
    if is_discard(path):
        return path
    if path.is_dir():
        raise OutputError(f"{path}: is a directory; give a file name")
    with contextlib.suppress(OSError):
        st = path.stat()
        if not stat.S_ISREG(st.st_mode):
            raise OutputError(f"{path}: is a {_kind(st)}, not a regular file; give a file name (use '-' for "
                              "standard output where a command offers it)")
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
    roll_forward(parent, _alive)  # finish a set whose run was killed during its renames, then
    remove_stale_temps(path)  # remove the temp files of runs killed before theirs
    return path


def _same_file(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)  # hard links
    except OSError:
        return False


def check_outputs(outputs: dict[str, Path | None], inputs: list[str | Path]) -> None:
    """Refuse an output path that is one of the run's input files (scenario, catalogs, quotes) or
    the same file as another output: either would be overwritten by the run (issue 27)."""
    named = [(flag, Path(p)) for flag, p in outputs.items() if p is not None and not is_discard(p)]
    for flag, path in named:
        for source in inputs:
            if _same_file(path, Path(source)):
                raise OutputError(f"{path}: {flag} would overwrite the input file {source}; give another output path")
    for i, (flag, path) in enumerate(named):
        for other_flag, other in named[i + 1:]:
            if _same_file(path, other):
                raise OutputError(f"{path}: {flag} and {other_flag} name the same file; give each output its own path")


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
        self.run_id = new_run_id()  # written into every file of the set (commit.py)
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
            folders = {p.parent for _, p in self.staged} | {p.parent for p in self.stale}
            for folder in folders:
                roll_forward(folder, _alive)  # a killed run's set first, so this one lands after it
            with folders_locked(folders):  # a concurrent run renames its set before or after, never between
                journals = write_journal(self.run_id, self.staged, self.stale)
                for tmp, target in self.staged:
                    os.chmod(tmp, _mode_for(target))
                    os.replace(tmp, target)
                    self.committed.append(target)
                for path in self.stale:  # only regular files: never a link, a device or /dev/null
                    if path.is_file() and not path.is_symlink() and path not in self.committed:
                        path.unlink()
                        self.removed.append(path)
                for folder in {p.parent for p in self.committed + self.removed}:
                    fsync_path(folder)
                remove_journals(journals)
            self.staged = []
        _COMMITTED.extend(self.committed)

    def discard(self) -> None:
        for tmp, _ in self.staged:
            with contextlib.suppress(OSError):
                tmp.unlink()
        self.staged = []


_CURRENT: contextvars.ContextVar[OutputSet | None] = contextvars.ContextVar("fabricplan_output_set", default=None)
_COMMITTED: list[Path] = []  # every output set file this process committed (for an honest Ctrl-C message)


def current_run_id() -> str | None:
    """The run id of the output set being written (None outside one): every file of a set carries it."""
    outputs = _CURRENT.get()
    return outputs.run_id if outputs is not None else None


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
    try:
        outputs.commit()
    except OutputWriteError:
        raise
    except OSError as exc:
        raise OutputWriteError(str(exc.filename or "the output set"), exc) from exc


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path next to `path`; rename it over `path` (durably) only if the block
    succeeds — at once, or when the enclosing `output_set` commits."""
    path = Path(path)
    discard = is_discard(path)
    try:
        tmp_path = _new_temp(Path(tempfile.gettempdir()) / "fabricplan-discard") if discard else _new_temp(path)
    except OSError as exc:
        raise OutputWriteError(str(path), exc) from exc
    handed_over = False
    try:
        yield tmp_path
        outputs = _CURRENT.get()
        if discard:  # the null device: written, then thrown away; the device itself is never replaced
            tmp_path.unlink()
        elif outputs is not None:
            outputs.staged.append((tmp_path, path))
        else:
            fsync_path(tmp_path)
            os.chmod(tmp_path, _mode_for(path))
            os.replace(tmp_path, path)
            fsync_path(path.parent)
        handed_over = True
    except OutputWriteError:
        raise
    except OSError as exc:  # a full disk, a quota, an I/O error: named, exit 2 (an OSError still)
        raise OutputWriteError(str(path), exc) from exc
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
