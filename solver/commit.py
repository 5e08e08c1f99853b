"""Committing one run's output set as a unit (issue 27): a lock per output folder, so that two runs
writing the same paths rename their sets one after the other (never interleaved), and a journal,
so that a run killed between two renames is finished by the next run that checks those outputs.

- `folders_locked(folders)`: flock on `.fabricplan-outputs.lock` in each folder (sorted, so two
  sets never wait on each other in a cycle; removed when released); the kernel releases it if the
  process dies.
- `write_journal(...)`: before the first rename, every (temp file, target) pair and the companions
  to remove are written, fsynced, to `.fabricplan-commit.<pid>.<run id>.json` in each folder; the
  journal is removed once the set is complete.
- `roll_forward(folder)`: a journal whose process is gone belongs to a run killed during its
  renames: its remaining temp files are renamed over their targets (the set it committed to), its
  stale companions removed, and the journal deleted. `files.check_writable` calls it before
  it removes stale temp files, so the new set is completed, never half-kept.

Every file of a set also carries the set's run id (JSON `run_id`, workbook document property
`identifier`, PNG text chunk `fabricplan run id`), so a reader can check that a JSON, workbook
and plot belong to one run.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import secrets
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

LOCK_NAME = ".fabricplan-outputs.lock"
JOURNAL = re.compile(r"^\.fabricplan-commit\.(\d+)\.[A-Za-z0-9T_-]+\.json$")


def new_run_id() -> str:
    """A run id: UTC time, process id and 8 random hex digits (e.g. 20261203T063310Z-4242-9f3ac01b)."""
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{os.getpid()}-{secrets.token_hex(4)}"


@contextlib.contextmanager
def folders_locked(folders: Iterable[Path]) -> Iterator[None]:
    """Hold an exclusive flock on the output lock file of every folder (in sorted order). The lock
    file is removed before it is released, so none is left beside the outputs; a waiter that then
    holds the lock of a removed file notices (its inode is no longer the path's) and locks anew."""
    held: list[tuple[str, int]] = []
    try:
        for folder in sorted({os.path.abspath(f) for f in folders}):
            path = os.path.join(folder, LOCK_NAME)
            held.append((path, _lock(path)))
        yield
    finally:
        for path, fd in reversed(held):
            with contextlib.suppress(OSError):
                os.unlink(path)
            os.close(fd)  # closing the descriptor releases its lock


def _lock(path: str) -> int:
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)  # the holder before us removed this file: lock the current one


def _folders(paths: Iterable[Path]) -> set[Path]:
    return {Path(os.path.abspath(p)).parent for p in paths}


def write_journal(run_id: str, renames: list[tuple[Path, Path]], remove: list[Path]) -> list[Path]:
    """Write the journal of a set about to be renamed into each of its folders (durably)."""
    doc = {"pid": os.getpid(), "run_id": run_id,
           "renames": [[os.path.abspath(t), os.path.abspath(p)] for t, p in renames],
           "remove": [os.path.abspath(p) for p in remove]}
    text = json.dumps(doc)
    written = []
    for folder in sorted(_folders([p for _, p in renames] + list(remove))):
        path = folder / f".fabricplan-commit.{os.getpid()}.{run_id}.json"
        tmp = path.with_name(path.name + ".part")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        _fsync_folder(folder)
        written.append(path)
    return written


def remove_journals(journals: list[Path]) -> None:
    for path in journals:
        with contextlib.suppress(OSError):
            path.unlink()
    for folder in {p.parent for p in journals}:
        _fsync_folder(folder)


def roll_forward(folder: Path, alive) -> list[Path]:
    """Finish the sets whose runs died during their renames (journals in `folder` of dead
    processes); returns the targets it renamed into place."""
    done: list[Path] = []
    try:
        entries = [e for e in folder.iterdir() if JOURNAL.match(e.name)]
    except OSError:
        return done
    for journal in entries:
        m = JOURNAL.match(journal.name)
        if m is None or alive(int(m[1])):
            continue
        try:
            doc = json.loads(journal.read_text(encoding="utf-8"))
            renames = [(Path(t), Path(p)) for t, p in doc["renames"]]
            remove = [Path(p) for p in doc["remove"]]
        except (OSError, ValueError, KeyError, TypeError):
            with contextlib.suppress(OSError):
                journal.unlink()
            continue
        with folders_locked(_folders([p for _, p in renames] + remove + [journal])):
            for tmp, target in renames:
                if tmp.is_file():
                    os.replace(tmp, target)
                    done.append(target)
            for path in remove:
                if path.is_file() and not path.is_symlink() and path not in {p for _, p in renames}:
                    path.unlink()
            remove_journals([f / journal.name for f in _folders([p for _, p in renames] + remove + [journal])])
    return done


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
