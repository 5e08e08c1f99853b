"""Running a sweep plan: each point solved independently, serially, in a local process pool or on
a Dask cluster; finished rows appended to a JSONL results file as they arrive (so `--resume`
loses nothing).

Workers receive and return plain dicts only (Pyomo models and HiGHS objects do not pickle); each
worker process keeps HiGHS at one thread (the adapter's default).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SolverFailure, UsageError
from ..files import atomic_path, clean
from ..inputs.schema import Catalog
from .plan import SweepPlan
from .summary import SCHEMA, point_summary

if TYPE_CHECKING:
    from concurrent.futures import Executor

DASK_SCHEMES = ("dask", "tcp")  # `--executor tcp://HOST:PORT` is what `dask scheduler` prints

# ------------------------------------------------------------------------------ one point


_CATALOGS: dict[str, Catalog] = {}  # sha256 of the catalog contents -> the catalog, in this process
_CATALOG_CACHE_SIZE = 4


def _catalog(shipped: dict) -> Catalog:
    """The catalog a task carries, cached by the SHA-256 of its contents (recomputed here, so a
    cached entry is only ever reused for byte-identical contents: an edited catalog is a new key)."""
    from ..inputs.catalog import CatalogProvenance

    data = shipped["data"]
    digest = hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    if digest != shipped["sha256"]:
        raise ValueError(f"the catalog sent with this point is damaged (sha256 {digest[:12]}, expected "
                         f"{shipped['sha256'][:12]})")
    if digest not in _CATALOGS:
        cat = Catalog.model_validate(data)
        cat._provenance = CatalogProvenance(files=[(str(p), str(h)) for p, h in shipped["files"]])
        while len(_CATALOGS) >= _CATALOG_CACHE_SIZE:
            _CATALOGS.pop(next(iter(_CATALOGS)))
        _CATALOGS[digest] = cat
    return _CATALOGS[digest]


def solve_point(task: dict) -> dict:
    """Solve one point (module level and dict-in/dict-out, so it pickles to any worker)."""
    from ..optimize.solve import solve

    start = time.perf_counter()
    row = {"index": task["index"], "values": task["values"], "labels": task["labels"]}
    try:
        cat = _catalog(task["catalog"])
        result = solve(task["scenario"], cat, top_k=1, time_limit_s=task.get("time_limit_s"))
        if result.designs:
            row.update(status=result.status, reason=None, **point_summary(result.designs[0].to_dict(), task["scenario"]))
            if result.warnings:
                row["warnings"] = list(result.warnings)
        else:
            row.update(status="infeasible", reason=result.explanation)
    except SolverFailure as exc:
        row.update(status="error", reason=f"solver failure: {exc}")
    except Exception as exc:  # noqa: BLE001 - a failing point is recorded and the others go on
        row.update(status="error", reason=f"{type(exc).__name__}: {exc}")
    row["wall_s"] = time.perf_counter() - start
    return row


# ------------------------------------------------------------------------------- execution


def results_path_for(json_path: str | Path) -> Path:
    """The JSONL file of finished points, next to the sweep's JSON output."""
    p = Path(json_path)
    return p.with_name(p.stem + ".points.jsonl")


ROW_CHECKSUM = "row_sha256"  # each row of the results file carries the SHA-256 of its own contents
ROW_STATUSES = ("optimal", "feasible", "time_limit", "infeasible", "error")


def row_checksum(row: dict) -> str:
    """SHA-256 of a row's canonical JSON (its checksum field left out)."""
    body = {k: v for k, v in row.items() if k != ROW_CHECKSUM}
    return hashlib.sha256(json.dumps(clean(body), sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def read_results(path: Path, sweep_hash: str, indexes: set[int] | None = None) -> dict[int, dict]:
    """Finished points of an earlier run of the same sweep that can be reused."""
    return read_results_checked(path, sweep_hash, indexes)[0]


def read_results_checked(path: Path, sweep_hash: str, indexes: set[int] | None = None) -> tuple[dict[int, dict], int]:
    """(reusable rows by index, lines not reused). A line is reused only if it is a JSON object
    with an index of this sweep, a known status other than error (failed points are tried again)
    and a checksum that matches its contents; anything else — the torn line a killed run was
    writing, an edited row, a line that is JSON but not a row — is solved again."""
    if not path.is_file():
        raise UsageError(f"{path}: the sweep's results file is not a regular file: remove it, or give another --json")
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    if not lines:
        return {}, 0
    try:
        header = json.loads(lines[0])
    except json.JSONDecodeError:
        header = {}
    found = header.get("sweep_hash") if isinstance(header, dict) else None
    if found != sweep_hash:
        raise UsageError(f"{path} belongs to a different sweep (hash {found!r}, this sweep is "
                         f"{sweep_hash!r}): delete it, or run without --resume to start over")
    done: dict[int, dict] = {}
    rejected = 0
    for line in lines[1:]:
        row = _reusable_row(line, indexes)
        if row is None:
            rejected += 1
        elif row["status"] != "error":
            done[row["index"]] = row
    return done, rejected


def _reusable_row(line: str, indexes: set[int] | None) -> dict | None:
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return None
    if not isinstance(row, dict) or row.get(ROW_CHECKSUM) != row_checksum(row):
        return None
    index = row.get("index")
    if not isinstance(index, int) or isinstance(index, bool) or (indexes is not None and index not in indexes):
        return None
    if row.get("status") not in ROW_STATUSES:
        return None
    return {k: v for k, v in row.items() if k != ROW_CHECKSUM}


def _row_line(row: dict) -> str:
    stored = dict(clean(row))
    stored[ROW_CHECKSUM] = row_checksum(stored)
    return json.dumps(stored, allow_nan=False, separators=(",", ":"))


def _append(path: Path, row: dict) -> None:
    """Append one finished row (with its checksum) and make it durable (a power cut keeps every row
    already counted)."""
    with path.open("a", encoding="utf-8") as fh:
        fh.write(_row_line(row) + "\n")
        fh.flush()
        os.fsync(fh.fileno())


@contextlib.contextmanager
def results_lock(path: Path) -> Iterator[None]:
    """Hold `<results>.lock` for the whole run: a second run of the same sweep (a concurrent
    `--resume`) fails at once instead of solving every point again and interleaving rows.

    flock is released by the kernel when a run dies, so a killed run never blocks the next; the
    lock file is removed on release, and a run that locked a file someone removed meanwhile tries
    again on the new one (the inode check), so two runs never both hold "the" lock."""
    import fcntl

    lock = path.with_name(path.name + ".lock")
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.read(fd, 32).decode(errors="replace").strip()
            os.close(fd)
            raise UsageError(f"another run of this sweep is writing {path} (pid {owner or '?'}): wait for it to "
                             "finish, then run again with --resume") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)


def run_points(plan: SweepPlan, jobs: int = 1, executor: str = "local", results_path: Path | None = None,
               resume: bool = False, on_result: Callable[[dict], None] | None = None,
               pool: Executor | None = None) -> list[dict]:
    """Solve every point of `plan`; return one row per point in point order.

    `executor`: "local" (serial when jobs = 1, else `pool` if given — `local_pool`'s, started before the caller's
    threads — or a spawn ProcessPoolExecutor of `jobs` workers) or
    "dask://HOST:PORT" / "tcp://HOST:PORT" (an existing distributed scheduler; tcp:// is the address
    Dask's scheduler prints). Finished rows are appended to
    `results_path` as they arrive; with `resume`, rows already there are reused.
    """
    done: dict[int, dict] = {}
    if results_path is not None:
        results_path = Path(results_path)
        if resume and results_path.exists():
            done = read_results(results_path, plan.sweep_hash, {t["index"] for t in plan.tasks})
        _rewrite(results_path, plan, done)
    todo = [t for t in plan.tasks if t["index"] not in done]

    def finished(row: dict) -> None:
        done[row["index"]] = row
        if results_path is not None:
            _append(results_path, row)
        if on_result is not None:
            on_result(row)

    for row in list(done.values()):
        if on_result is not None:
            on_result(row)
    scheme, _, address = executor.partition("://")
    if scheme in DASK_SCHEMES and address:
        _run_dask(todo, address, finished)
    elif executor != "local":
        raise UsageError(f"--executor must be local, dask://HOST:PORT or tcp://HOST:PORT (got '{executor}')")
    elif jobs <= 1 or len(todo) <= 1:
        for task in todo:
            finished(solve_point(task))
    else:
        _run_pool(todo, jobs, finished, pool)
    return [done[t["index"]] for t in plan.tasks]


def _rewrite(path: Path, plan: SweepPlan, done: dict[int, dict]) -> None:
    """Start the results file: a header naming the sweep, then the rows being kept (atomically)."""

    header = {"schema": SCHEMA + "+points", "scenario": plan.scenario_name, "sweep_hash": plan.sweep_hash,
              "points": len(plan.tasks)}
    lines = [json.dumps(header)] + [_row_line(done[i]) for i in sorted(done)]
    with atomic_path(path) as tmp:
        tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _run_pool(tasks: list[dict], jobs: int, finished: Callable[[dict], None], pool: Executor | None = None) -> None:
    """On `pool` (`local_pool`'s) if given, else on a spawn pool of `jobs` workers made here."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    if pool is not None:
        _run_on(pool, tasks, finished)
        return
    with ProcessPoolExecutor(max_workers=max(1, min(jobs, len(tasks))), mp_context=multiprocessing.get_context("spawn"),
                             initializer=exit_with_parent, initargs=(os.getpid(),)) as pool:
        _run_on(pool, tasks, finished)


def _run_on(pool: Executor, tasks: list[dict], finished: Callable[[dict], None]) -> None:
    from concurrent.futures import as_completed

    futures = [pool.submit(solve_point, t) for t in tasks]
    try:
        for fut in as_completed(futures):
            finished(fut.result())
    except BaseException:
        for fut in futures:
            fut.cancel()
        raise


@contextlib.contextmanager
def local_pool(plan: SweepPlan, jobs: int, executor: str = "local") -> Iterator[Executor | None]:
    """The local process pool of `run_points` (None when it would solve serially or on Dask), its `jobs` workers
    started now — call it before any thread starts (the CLI's progress bar). Forked when this process runs no other
    thread (issue plan): each worker then has every module and the catalog this process loaded (the catalog the tasks
    carry, validated here once, `_catalog`), where a spawned worker imported the solver and validated the catalog
    again (about 0.7 s of CPU each, on the 2 cores the workers share); otherwise spawned, as `run_points` does. The
    answers do not change: a worker runs the same `solve_point` on the same task either way."""
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    scheme = executor.partition("://")[0]
    if executor != "local" or scheme in DASK_SCHEMES or jobs <= 1 or len(plan.tasks) <= 1:
        yield None
        return
    fork = (sys.platform.startswith("linux") and threading.active_count() == 1
            and "fork" in multiprocessing.get_all_start_methods())
    if fork:  # what every worker needs, loaded once here rather than once in each worker
        from ..optimize.solve import solve  # noqa: F401 - imported for the workers to inherit
        with contextlib.suppress(Exception):  # a damaged payload: the worker says so for its point, as before
            _catalog(plan.tasks[0]["catalog"])
    with ProcessPoolExecutor(max_workers=min(jobs, len(plan.tasks)),  # a forked pool starts them all at once
                             mp_context=multiprocessing.get_context("fork" if fork else "spawn"),
                             initializer=exit_with_parent, initargs=(os.getpid(),)) as pool:
        if fork:  # every worker forked now, while this is the only thread (the first submit starts them all)
            pool.submit(int).result()
        yield pool


def exit_with_parent(parent_pid: int, poll_s: float = 0.5) -> None:
    """Pool worker initializer: end this worker when the sweep's main process dies (killed by the
    OOM killer, `kill PID`, a parent's timeout), instead of solving on and holding its pipes open.

    Linux: the kernel sends SIGKILL the moment the parent goes (prctl PR_SET_PDEATHSIG), even while
    HiGHS holds the GIL. Everywhere: a daemon thread checks every `poll_s` that the parent is still
    the parent (an orphan is re-parented) and exits otherwise.
    """
    import threading

    with contextlib.suppress(Exception):  # not Linux, or no libc: the thread below still works
        import ctypes
        import signal

        pr_set_pdeathsig = 1
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the line above took effect
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(poll_s)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="fabricplan-parent-watch", daemon=True).start()


def _run_dask(tasks: list[dict], address: str, finished: Callable[[dict], None]) -> None:
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise UsageError("--executor dask://… needs Dask: pip install 'fabricplan[dask]'") from None
    if not re.fullmatch(r"[^\s:/]+:\d+", address):
        raise UsageError(f"--executor expects dask://HOST:PORT or tcp://HOST:PORT (got '{address}')")
    try:
        client = Client(f"tcp://{address}", timeout="10s")
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        futures = client.map(solve_point, tasks, pure=False)
        for fut in as_completed(futures):
            finished(fut.result())
    finally:
        client.close()

