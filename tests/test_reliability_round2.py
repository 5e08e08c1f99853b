"""Reliability round 2 (issue 18): no wrong answer with exit 0, bounded time and memory, hostile
text, and the smaller items. docs/reliability.md lists every fault class with its test here (R2).

Expected numbers are worked out by hand from the shipped catalog (catalogs/default.yaml) in the
comments; every test here failed on main before the fix it checks (docs/reliability.md says how).
"""
from __future__ import annotations

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from solver import api, inputs
from solver.sweep.plan import plan_sweep
from solver.sweep.run import run_points

REPO = Path(__file__).resolve().parent.parent
DEFAULT = yaml.safe_load((REPO / "catalogs" / "default.yaml").read_text(encoding="utf-8"))
H100_PRICE_USD = 255_240  # catalogs/default.yaml, platforms: hgx-h100 unit_price_usd


# ------------------------------------------------------------------------------------ helpers


def catalog_entry(kind: str, ident: str) -> dict:
    """A deep copy of one shipped catalog entry, to edit in an override file."""
    return copy.deepcopy(next(e for e in DEFAULT[kind] if e["id"] == ident))


def write_yaml(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def tiny_scenario(**changes) -> dict:
    """A 2-layer, 256-wide model on one H100 architecture with every layout dimension pinned to 1
    (the scenario of tests/test_reliability.py): every point fits one 8-GPU node."""
    sc = {
        "name": "tiny",
        "workload": {"model": {"layers": 2, "hidden_size": 256, "ffn_hidden_size": 1024, "attention_heads": 4,
                               "vocab_size": 1024, "seq_len": 256}, "global_batch_size": 8},
        "target": {"step_time_s": 1.0},
        "constraints": {"platforms": ["hgx-h100"], "nics": ["cx7-ndr"], "switches": ["qm9700"], "rails_per_node": [1]},
        "parallelism": {"tp": 1, "cp": 1, "pp": 1, "vp": 1, "microbatch_size": 1},
        "top_k": 1,
    }
    sc.update(changes)
    return sc


def h100_quote(path: Path, price_usd: float) -> Path:
    """An override catalog that re-prices the hgx-h100 platform."""
    plat = catalog_entry("platforms", "hgx-h100")
    plat["unit_price_usd"] = price_usd
    return write_yaml(path, {"name": "quote", "platforms": [plat]})


def run_cli(*args, timeout_s: float = 180, cwd: Path = REPO, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout_s, **kwargs)


def assert_clean_exit(proc: subprocess.CompletedProcess, code: int) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "internal error" not in proc.stderr


def compute_line(row: dict) -> dict:
    return next(line for line in row["design"]["bom"] if line["category"] == "compute")


# ------------------------------------------------------------- 1. stale catalog in a sweep


def _sweep_twice_with_an_edit(tmp_path: Path, executor: str) -> tuple[list[dict], list[dict]]:
    """Sweep B = 8, 16 with the H100 quoted at $200,000, edit the quote to $300,000 in place, plan
    and sweep again in the same process (and, for Dask, on the same long-lived workers)."""
    quote = h100_quote(tmp_path / "quote.yaml", 200_000)
    ls = api.load_scenario(tiny_scenario())
    runs = []
    for price_usd in (200_000, 300_000):
        h100_quote(quote, price_usd)
        cat = api.catalog_for(ls, [inputs.default_catalog_path(), quote])
        plan = plan_sweep(ls, cat, ["workload.global_batch_size=8,16"])
        runs.append(run_points(plan, executor=executor))
    return runs[0], runs[1]


def _assert_new_prices(before: list[dict], after: list[dict]) -> None:
    # Each point is one 8-GPU node (tp = cp = pp = 1, d ≤ 8 meets 1.0 s): one platform at the quoted
    # price, and nothing else depends on it (contingency 0), so capex moves by exactly $100,000.
    for old, new in zip(before, after):
        assert old["status"] == new["status"] == "optimal"
        assert old["nodes"] == new["nodes"] == 1
        assert compute_line(old)["unit_price_usd"] == 200_000
        assert compute_line(new)["unit_price_usd"] == 300_000
        assert new["capex_usd"] - old["capex_usd"] == pytest.approx(100_000, abs=0.01)


def test_sweep_rerun_in_one_process_sees_an_edited_catalog(tmp_path):
    before, after = _sweep_twice_with_an_edit(tmp_path, "local")
    _assert_new_prices(before, after)


def test_sweep_rerun_on_a_local_cluster_sees_an_edited_catalog(tmp_path):
    distributed = pytest.importorskip("distributed")
    import dask

    dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        address = cluster.scheduler_address.replace("tcp://", "dask://")
        before, after = _sweep_twice_with_an_edit(tmp_path, address)
    _assert_new_prices(before, after)


# ---------------------------------------------------- 10. relative --catalog paths under Dask


def test_relative_catalog_path_under_dask_is_resolved_in_the_client(tmp_path):
    # The CLI runs in tmp_path with `--catalog quote.yaml` (relative); the Dask workers run in this
    # test's cwd, where no quote.yaml exists. Both points must be solved with the quote's price.
    distributed = pytest.importorskip("distributed")
    import dask

    h100_quote(tmp_path / "quote.yaml", 200_000)
    write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    dask.config.set({"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None})
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        executor = cluster.scheduler_address.replace("tcp://", "dask://")
        proc = run_cli("sweep", "sc.yaml", "--catalog", inputs.default_catalog_path(), "--catalog", "quote.yaml",
                       "--vary", "workload.global_batch_size=8,16", "--executor", executor, "--json", "s.json",
                       "--xlsx", "s.xlsx", "--plot", "s.png", cwd=tmp_path)
    assert_clean_exit(proc, 0)
    report = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert [p["status"] for p in report["points"]] == ["optimal", "optimal"]
    assert [compute_line(p)["unit_price_usd"] for p in report["points"]] == [200_000, 200_000]
