"""The plan's and the sweep's workbooks written by a forked process (issue plan; reports/side_process.py kinds
"plan_workbook" and "sweep_workbook"): byte for byte the workbook written here (but its creation times)."""
from __future__ import annotations

import copy
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import DATA

import solver
from solver.files import output_set
from solver.reports import side_process as side_process_module
from solver.reports.side_process import side_process, write_alongside

# the toy plan of tests/plan/test_plan.py (two periods, the target halves) and the small sweep of tests/sweep/test_sweep.py
TOY_PLAN = dict(name="toy-plan", workload=dict(model=dict(layers=1, hidden_size=256, ffn_hidden_size=256, ffn_type="gelu",
                                                          attention_heads=1, vocab_size=2048, seq_len=256),
                                               global_batch_size=64, activation_recompute="none"),
                target=dict(step_time_s=0.004), overlap=dict(tp=1, cp=1, pp=1, dp=1),
                parallelism=dict(tp=1, cp=1, pp=1, vp=1, microbatch_size=1),
                plan={"periods": [{"set": {"target.step_time_s": 0.004}}, {"set": {"target.step_time_s": 0.002}}]})
SWEEP = {"name": "sweep-test",
         "workload": {"model": {"layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "attention_heads": 32,
                                "kv_heads": 8, "vocab_size": 128256, "seq_len": 8192}, "global_batch_size": 256},
         "target": {"step_time_s": 10.0},
         "constraints": {"platforms": ["hgx-h100", "dgx-b200"], "nics": ["cx7-ndr"], "oversubscription": [1]},
         "parallelism": {"tp": [1, 2], "cp": [1], "pp": [1, 2], "vp": [1], "microbatch_size": [1]}}

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the workbook process forks on Linux only")


@pytest.fixture(autouse=True)
def _fresh_command(monkeypatch):
    """As in a fresh `fabricplan` process: openpyxl not loaded yet, so the workbook process is worth starting."""
    monkeypatch.setattr(side_process_module, "worth_a_process", lambda kind: True)


def _parts(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist() if n != "docProps/core.xml"}


def test_the_plan_workbook_process_writes_the_workbook_this_process_would(tmp_path):
    from solver.plan.run import run_plan
    from solver.reports.plan_excel import write_plan_workbook_file

    catalog = solver.load_catalog([DATA / "toy-catalog.yaml"])
    report = run_plan(solver.load_scenario(copy.deepcopy(TOY_PLAN)), catalog).to_dict()
    here, there = tmp_path / "here.xlsx", tmp_path / "there.xlsx"
    with output_set() as outputs:
        write_plan_workbook_file(report, here, outputs.run_id)
        with side_process("plan_workbook", True) as proc:
            assert proc is not None and proc._process.pid is not None
            with write_alongside(proc, "plan_workbook", report, there):
                assert not there.exists()  # staged until the output set commits
    assert _parts(there) == _parts(here)
    assert len(_parts(here)) > 5


def test_the_sweep_workbook_process_writes_the_workbook_this_process_would(tmp_path):
    from solver.reports.sweep_excel import write_sweep_workbook_file
    from solver.sweep.plan import plan_sweep
    from solver.sweep.run import run_points
    from solver.sweep.summary import sweep_report

    ls = solver.load_scenario(copy.deepcopy(SWEEP))
    cat = solver.api.catalog_for(ls)
    report = sweep_report(plan := plan_sweep(ls, cat, ["workload.global_batch_size=256,384"]), run_points(plan))
    here, there = tmp_path / "here.xlsx", tmp_path / "there.xlsx"
    with output_set() as outputs:
        write_sweep_workbook_file((report, ls, cat), here, outputs.run_id)
        with side_process("sweep_workbook", True, inherit=(ls, cat)) as proc:
            assert proc is not None
            with write_alongside(proc, "sweep_workbook", (report, ls, cat), there):
                pass
    assert _parts(there) == _parts(here)
    assert len(_parts(here)) > 5
