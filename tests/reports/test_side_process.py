"""The sweep's and the plan's PNG, and the solve's workbook, written by a second process
(solver/reports/side_process.py, issue 26): the same file as written here, errors raised here, written here when
the process is gone or cannot be started."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from solver.files import output_set
from solver.reports import side_process as side_process_module
from solver.reports.plan_plot import draw_plan_plot
from solver.reports.plot import draw_plot
from solver.reports.side_process import SideProcess, side_process, write_alongside

# A two-point growth sweep's report: only the fields the plot reads (reports/plot.py, sweep/summary.py x_axis).
SWEEP_REPORT = {
    "scenario": "plot-process", "combine": "product",
    "axes": [{"name": "workload.global_batch_size", "kind": "growth", "values": [1024, 1536],
              "growth": {"factor": 1.5, "steps": 1, "per": "year"}}],
    "points": [
        {"index": 0, "labels": {"workload.global_batch_size": "1,024"}, "values": {"workload.global_batch_size": 1024},
         "status": "optimal", "architecture": "dgx-b200 · 1×cx7-ndr · qm9700, 2-tier", "gpus": 1024,
         "capex_usd": 60e6, "tco_usd": 90e6},
        {"index": 1, "labels": {"workload.global_batch_size": "1,536"}, "values": {"workload.global_batch_size": 1536},
         "status": "infeasible", "architecture": None},
    ],
    "switch_points": [],
}


@pytest.fixture(autouse=True)
def _fresh_command(monkeypatch):
    """As in a fresh `fabricplan` process: matplotlib not loaded yet, so the plot process is worth starting."""
    monkeypatch.setattr(side_process_module, "worth_a_process", lambda kind: True)


def test_no_side_process_once_matplotlib_is_loaded_here(monkeypatch):
    import types

    monkeypatch.undo()  # the real rule
    monkeypatch.setitem(sys.modules, "matplotlib", types.ModuleType("matplotlib"))
    with side_process("sweep", True) as proc:
        assert proc is None
    monkeypatch.delitem(sys.modules, "matplotlib")
    with side_process("sweep", True) as proc:
        assert proc is not None


def _png(path: Path) -> bytes:
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return data


def test_the_side_process_writes_the_file_this_process_would(tmp_path):
    # Same drawing function, same run id: byte for byte the file drawn here.
    here, there = tmp_path / "here.png", tmp_path / "there.png"
    with output_set() as outputs:
        draw_plot(SWEEP_REPORT, here, outputs.run_id)
        with side_process("sweep", True) as proc:
            assert proc is not None
            with write_alongside(proc, "sweep", SWEEP_REPORT, there):
                assert not there.exists()  # staged until the output set commits
    assert _png(there) == _png(here)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["here.png", "there.png"]


def test_a_drawing_error_in_the_side_process_is_raised_here_and_leaves_no_file(tmp_path):
    bad = {**SWEEP_REPORT, "points": [{"index": 0}]}  # no status: the drawing fails with KeyError
    target = tmp_path / "bad.png"
    with side_process("plan", True) as proc, pytest.raises(KeyError):
        with write_alongside(proc, "plan", bad, target):
            pass
    assert list(tmp_path.iterdir()) == []


def test_the_plot_is_drawn_here_when_the_side_process_is_gone(tmp_path):
    target = tmp_path / "s.png"
    with side_process("sweep", True) as proc:
        assert proc is not None
        proc.stop()  # gone before the request: send fails, the plot is drawn in this process
        with write_alongside(proc, "sweep", SWEEP_REPORT, target):
            pass
    draw_plot(SWEEP_REPORT, tmp_path / "here.png", None)
    assert _png(target) == _png(tmp_path / "here.png")


def test_without_a_side_process_or_a_path(tmp_path):
    target = tmp_path / "s.png"
    with side_process("sweep", False) as proc:
        assert proc is None  # no plot wanted: no process
        with write_alongside(proc, "sweep", SWEEP_REPORT, None):
            pass
        assert list(tmp_path.iterdir()) == []
        with write_alongside(proc, "sweep", SWEEP_REPORT, target):
            pass
    assert _png(target)


def test_an_exception_while_the_plot_is_pending_stops_the_process_and_removes_the_file(tmp_path, monkeypatch):
    stopped = []
    real_stop = SideProcess.stop
    monkeypatch.setattr(SideProcess, "stop", lambda self: (stopped.append(self.kind), real_stop(self)))
    target = tmp_path / "s.png"
    with pytest.raises(RuntimeError, match="the JSON failed"):
        with side_process("sweep", True) as proc:
            with write_alongside(proc, "sweep", SWEEP_REPORT, target):
                raise RuntimeError("the JSON failed")
    assert stopped == ["sweep", "sweep"]
    assert list(tmp_path.iterdir()) == []


def test_the_plan_side_process_draws_the_plan_plot(tmp_path):
    report = {"scenario": "p", "objective": "capex", "totals": {"discounted_usd": 1.5e8},
              "periods": [{"label": "2026", "spend_usd": 1e8, "architecture": "dgx-b200 · 1×cx7-ndr · qm9700, 2-tier",
                           "cluster": 1, "gpus_owned": 1024},
                          {"label": "2027", "spend_usd": 5e7, "architecture": "dgx-b200 · 1×cx7-ndr · qm9700, 2-tier",
                           "cluster": 1, "gpus_owned": 1536}]}
    with side_process("plan", True) as proc:
        with write_alongside(proc, "plan", report, tmp_path / "there.png"):
            pass
    draw_plan_plot(report, tmp_path / "here.png", None)
    assert _png(tmp_path / "there.png") == _png(tmp_path / "here.png")


# ----------------------------------------------------------------------------------- the solve's workbook

PINNED = "scenarios/evaluate-llama3-70b-h100.yaml"  # a pinned design: its solve takes a fraction of a second


@pytest.fixture(scope="module")
def solved_inputs():
    from dataclasses import replace

    from conftest import REPO

    from solver import api

    ls = api.load_scenario(REPO / PINNED)
    cat = api.catalog_for(ls)
    result = api.solve(ls, cat)
    assert result.designs
    return replace(result, space_memo=None), ls, cat


def _parts(path: Path) -> dict[str, bytes]:
    """The workbook's zip members but its creation and modification times (docProps/core.xml)."""
    import zipfile

    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist() if n != "docProps/core.xml"}


def test_the_workbook_process_writes_the_workbook_this_process_would(tmp_path, solved_inputs):
    # Forked, sent the same (result, scenario, catalog) and run id: every sheet's XML byte for byte the same.
    from solver.reports.excel import write_workbook_file

    here, there = tmp_path / "here.xlsx", tmp_path / "there.xlsx"
    with output_set() as outputs:
        write_workbook_file(solved_inputs, here, outputs.run_id)
        with side_process("workbook", True) as proc:
            assert proc is not None and proc._process.pid is not None
            with write_alongside(proc, "workbook", solved_inputs, there):
                assert not there.exists()  # staged until the output set commits
    assert _parts(there) == _parts(here)
    assert len(_parts(here)) > 10 and openpyxl_identifier(there) == outputs.run_id


def test_the_forked_process_has_the_catalog_from_the_fork(tmp_path, solved_inputs, monkeypatch):
    # `inherit=(catalog,)`: the request names the catalog by its place (the process has it from the fork), the
    # result and the scenario go by value, and the workbook is the one written here, byte for byte.
    import pickle

    from solver.reports.excel import write_workbook_file

    result, ls, cat = solved_inputs
    here, there = tmp_path / "here.xlsx", tmp_path / "there.xlsx"
    sent = []
    with output_set() as outputs:
        write_workbook_file(solved_inputs, here, outputs.run_id)
        with side_process("workbook", True, inherit=(cat,)) as proc:
            assert proc is not None
            real_send = proc._conn.send
            monkeypatch.setattr(proc._conn, "send", lambda msg: (sent.append(msg), real_send(msg))[1])
            with write_alongside(proc, "workbook", solved_inputs, there):
                pass
    assert _parts(there) == _parts(here)
    (report, _, _), = sent
    assert report[0] is result and report[1] is ls
    assert report[2] == side_process_module._Inherited(0)
    assert len(pickle.dumps(report)) * 5 < len(pickle.dumps(solved_inputs))  # the catalog is most of it


def test_a_spawned_process_inherits_nothing():
    with side_process("sweep", True, inherit=(SWEEP_REPORT,)) as proc:
        assert proc is not None and proc._inherited == []
        assert side_process_module._by_reference((SWEEP_REPORT,), proc._inherited) == (SWEEP_REPORT,)


def openpyxl_identifier(path: Path) -> str:
    import openpyxl

    return openpyxl.load_workbook(path).properties.identifier


def test_a_workbook_error_in_its_process_is_raised_here_and_leaves_no_file(tmp_path):
    target = tmp_path / "bad.xlsx"
    with side_process("workbook", True) as proc, pytest.raises(AttributeError):
        with write_alongside(proc, "workbook", (None, None, None), target):  # no result: building fails
            pass
    assert list(tmp_path.iterdir()) == []


def test_a_fresh_solve_leaves_openpyxl_to_the_workbook_process(tmp_path):
    # A `fabricplan solve` process never imports openpyxl itself (its forked process writes the workbook), and
    # the workbook it leaves carries the JSON's run id.
    import json
    import subprocess

    from conftest import REPO

    code = ("import sys; from solver.cli import main; code = main(['solve', sys.argv[1], '--json', sys.argv[2], "
            "'--xlsx', sys.argv[3]]); print('openpyxl' in sys.modules); sys.exit(code)")
    out = subprocess.run([sys.executable, "-c", code, str(REPO / PINNED), str(tmp_path / "r.json"),
                          str(tmp_path / "r.xlsx")], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"
    assert openpyxl_identifier(tmp_path / "r.xlsx") == json.loads((tmp_path / "r.json").read_text())["run_id"]


def test_no_forked_workbook_process_off_linux(tmp_path, monkeypatch, solved_inputs):
    # fork is used only on Linux; elsewhere the workbook is written here, as before
    monkeypatch.setattr(sys, "platform", "darwin")
    target = tmp_path / "w.xlsx"
    with side_process("workbook", True) as proc:
        assert proc is None
        with output_set():
            with write_alongside(proc, "workbook", solved_inputs, target):
                pass
    assert _parts(target)
