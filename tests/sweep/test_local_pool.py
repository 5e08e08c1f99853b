"""The sweep's local pool started before the CLI's progress bar (issue plan, `sweep.run.local_pool`): forked when the
process runs no other thread, its rows are those of the serial run; with another thread running it spawns."""
from __future__ import annotations

import sys
import threading

import pytest
from test_sweep import loaded, without_timing

from solver.sweep.plan import plan_sweep
from solver.sweep.run import local_pool, run_points

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the pool forks on Linux only")


def _method(pool) -> str:
    return pool._mp_context.get_start_method()


def test_forked_pool_rows_equal_the_serial_rows():
    ls, cat = loaded()
    plan = plan_sweep(ls, cat, ["workload.global_batch_size=256,384,512"])
    serial = run_points(plan)
    if threading.active_count() != 1:
        pytest.skip("another thread runs in this test process: the pool would spawn")
    with local_pool(plan, 2) as pool:
        assert pool is not None and _method(pool) == "fork"
        pooled = run_points(plan, jobs=2, pool=pool)
    assert [r["index"] for r in pooled] == [0, 1, 2]
    assert without_timing(pooled) == without_timing(serial)


def test_with_another_thread_the_pool_spawns():
    ls, cat = loaded()
    plan = plan_sweep(ls, cat, ["workload.global_batch_size=256,384"])
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        with local_pool(plan, 2) as pool:
            assert pool is not None and _method(pool) == "spawn"
    finally:
        stop.set()
        other.join()


def test_no_pool_when_serial_or_one_point():
    ls, cat = loaded()
    plan = plan_sweep(ls, cat, ["workload.global_batch_size=256,384"])
    with local_pool(plan, 1) as pool:
        assert pool is None
    with local_pool(plan, 2, "dask://localhost:8786") as pool:
        assert pool is None
    one = plan_sweep(ls, cat, ["workload.global_batch_size=256"])
    with local_pool(one, 2) as pool:
        assert pool is None


def test_no_more_workers_than_points():
    """`--jobs 16` on a 2-point sweep: a forked pool starts every worker at once, so it is sized to the points (fork
    review: 16 workers were forked for 6 points)."""
    ls, cat = loaded()
    plan = plan_sweep(ls, cat, ["workload.global_batch_size=256,384"])
    with local_pool(plan, 16) as pool:
        assert pool is not None and pool._max_workers == 2
