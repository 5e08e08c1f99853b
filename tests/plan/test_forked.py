"""The up-front comparison solved by a forked copy of the process (issue plan, solver/plan/forked.py): the copy's
value is the one computed here, a copy that fails is replaced by computing here, and a plan's report is the same
with and without the copy."""
from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import DATA

import solver
from solver.plan import forked as forked_module
from solver.plan.forked import Forked, forked
from solver.plan.run import run_plan

pytestmark = pytest.mark.skipif(not forked_module.can_fork(), reason="no copy is forked here (Linux, ≥ 2 cores, "
                                                                     "main thread, no FABRICPLAN_SERIAL)")

TIMING = ("timings_s", "solve_time_s", "run_id")


def test_the_value_comes_from_the_copy():
    """The copy computes in another process (its pid differs from this one's) and sends the value back."""
    job = Forked(lambda: (os.getpid(), [1.5, {"a": 2}]))
    assert job.forked
    pid, value = job.result()
    assert pid != os.getpid()
    assert value == [1.5, {"a": 2}]
    assert not job.forked


def test_a_failing_copy_is_replaced_by_computing_here():
    """The copy's error is not sent back: the value is computed here, raising here what it raises."""
    calls = []

    def fails():
        calls.append(os.getpid())
        raise ValueError("no value")

    job = Forked(fails)
    with pytest.raises(ValueError, match="no value"):
        job.result()
    assert calls == [os.getpid()]  # this process's list: only the call made here is in it


def test_a_value_that_does_not_pickle_is_computed_here():
    job = Forked(lambda: (lambda: None, os.getpid()))
    _, pid = job.result()
    assert pid == os.getpid()


def test_cancel_ends_the_copy():
    with forked(lambda: __import__("time").sleep(30), True) as job:
        assert job is not None
        pid = job._pid
    assert not job.forked
    with pytest.raises(ChildProcessError):
        os.waitpid(pid, 0)  # already reaped: ended, not left behind


def test_fabricplan_serial_computes_here(monkeypatch):
    monkeypatch.setenv("FABRICPLAN_SERIAL", "1")
    job = Forked(os.getpid)
    assert not job.forked
    assert job.result() == os.getpid()


def test_not_wanted_is_none():
    with forked(lambda: 1, False) as job:
        assert job is None


def _report(doc, catalog) -> dict:
    report = json.loads(json.dumps(run_plan(solver.load_scenario(copy.deepcopy(doc)), catalog).to_dict(), default=str))
    for key in TIMING:
        report.pop(key, None)
    return report


def _strip(x):
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in TIMING}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def test_plan_report_is_the_same_with_and_without_the_copy(monkeypatch):
    """The toy plan of tests/plan/test_plan.py (up front: 64 cheap-boxes + switch = $321,000, worked out there):
    the whole report, comparisons included, is the same whether the up-front comparison is solved by a copy or
    here."""
    from test_plan import TOY, TWO_PERIODS

    catalog = solver.load_catalog([DATA / "toy-catalog.yaml"])
    doc = {**copy.deepcopy(TOY), "plan": {"periods": TWO_PERIODS}}
    with_copy = _strip(_report(doc, catalog))
    monkeypatch.setattr(forked_module, "ENABLED", False)
    here = _strip(_report(doc, catalog))
    assert with_copy == here
    assert round(with_copy["comparison"]["up_front"]["discounted_usd"]) == 321_000


_SPINNER_SCRIPT = r'''
import os, sys, threading, time
r, w = os.pipe()
os.dup2(w, 2)                                          # stderr: a terminal slow to take output
sys.stderr = open(2, "w", buffering=1, closefd=False)
stop = threading.Event()
def spinner():                                         # as rich's refresh thread: it writes to sys.stderr
    while not stop.is_set():
        sys.stderr.write("x" * 65535 + "\n")
def drain():
    while True:
        os.read(r, 4096); time.sleep(0.0005)
threading.Thread(target=drain, daemon=True).start()
threading.Thread(target=spinner, daemon=True).start()
time.sleep(0.3)
import pyomo.environ as pyo
from solver.optimize.highs import HighsAdapter
from solver.plan.forked import Forked
def up_front():
    m = pyo.ConcreteModel(); m.x = pyo.Var(domain=pyo.NonNegativeIntegers); m.c = pyo.Constraint(expr=m.x >= 2.5)
    m.o = pyo.Objective(expr=m.x)
    HighsAdapter().solve(m)
    return pyo.value(m.x)
job = Forked(up_front)
forked = job.forked
stop.set()
print("forked", forked, "value", job.result(), file=sys.__stdout__, flush=True)
'''


def test_a_copy_forked_while_a_thread_writes_to_stderr_does_not_hang(tmp_path):
    """The CLI forks the up-front copy while rich's spinner thread writes to stderr. A fork that catches the thread
    inside that write leaves the copy with sys.stderr's lock held for ever, and Pyomo flushes the streams before
    every solve (fork review): the copy gets fresh stream objects on the same descriptors. x ≥ 2.5, x integer,
    minimised: 3. Without the fresh streams this hung in 3 of 3 runs."""
    script = tmp_path / "spin.py"
    script.write_text(_SPINNER_SCRIPT, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("FABRICPLAN_SERIAL", None)
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "value 3.0" in proc.stdout
