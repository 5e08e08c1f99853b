"""A serving scenario's workbook is written by a forked process (reports/side_process.py, kind "fleet"), as the
training solve's is: the command does not import openpyxl itself, and the workbook is the one it would have written,
with the JSON's run id."""
from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import REPO

from solver.files import output_set
from solver.reports import side_process as side_process_module
from solver.reports.side_process import side_process, write_alongside

SERVING = "scenarios/serve-llama3-8b-pcie.yaml"  # a small serving fleet: solved in a fraction of a second


def _parts(path: Path) -> dict[str, bytes]:
    """The workbook's zip members but its creation and modification times (docProps/core.xml)."""
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist() if n != "docProps/core.xml"}


def _identifier(path: Path) -> str:
    import openpyxl

    return openpyxl.load_workbook(path).properties.identifier


@pytest.fixture(scope="module")
def fleet_inputs():
    from solver import api
    from solver.optimize.serving_solve import solve_fleet

    ls = api.load_scenario(REPO / SERVING)
    cat = api.catalog_for(ls)
    result = solve_fleet(ls, cat)
    assert result.designs
    return result, ls.scenario, cat


def test_the_fleet_workbook_process_writes_the_workbook_this_process_would(tmp_path, fleet_inputs, monkeypatch):
    # as in a fresh `fabricplan` process: openpyxl not loaded yet, so the workbook process is worth starting
    monkeypatch.setattr(side_process_module, "worth_a_process", lambda kind: True)
    from solver.reports.serving_excel import write_fleet_workbook, write_fleet_workbook_file

    result, sc, cat = fleet_inputs
    here, there, saved = tmp_path / "here.xlsx", tmp_path / "there.xlsx", tmp_path / "saved.xlsx"
    with output_set() as outputs:
        write_fleet_workbook_file((result, sc), here, outputs.run_id)
        with side_process("fleet", True, inherit=(sc,)) as proc:
            assert proc is not None and proc._process.pid is not None
            with write_alongside(proc, "fleet", (result, sc), there):
                assert not there.exists()  # staged until the output set commits
    write_fleet_workbook(result, sc, saved)  # the one-call form (compare, the tests) writes the same sheets
    assert _parts(there) == _parts(here) == _parts(saved)
    assert len(_parts(here)) > 5 and _identifier(there) == outputs.run_id


def test_a_fresh_serving_solve_leaves_openpyxl_to_the_workbook_process(tmp_path):
    code = ("import sys; from solver.cli import main; code = main(['solve', sys.argv[1], '--json', sys.argv[2], "
            "'--xlsx', sys.argv[3]]); print('openpyxl' in sys.modules); sys.exit(code)")
    out = subprocess.run([sys.executable, "-c", code, str(REPO / SERVING), str(tmp_path / "r.json"),
                          str(tmp_path / "r.xlsx")], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "False"
    assert _identifier(tmp_path / "r.xlsx") == json.loads((tmp_path / "r.json").read_text())["run_id"]
    assert "Serving" in _sheets(tmp_path / "r.xlsx")


def test_an_infeasible_serving_solve_writes_no_workbook_and_removes_an_old_one(tmp_path):
    # the workbook process is started but sent nothing; an earlier run's workbook is removed with the JSON's commit
    import yaml

    doc = yaml.safe_load((REPO / SERVING).read_text())
    doc["constraints"]["budget_usd"] = 1000  # no fleet costs $1,000
    scenario = tmp_path / "tight.yaml"
    scenario.write_text(yaml.safe_dump(doc))
    old = tmp_path / "r.xlsx"
    old.write_bytes(b"stale")
    out = subprocess.run([sys.executable, "-m", "solver", "solve", str(scenario), "--json", str(tmp_path / "r.json"),
                          "--xlsx", str(old)], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert out.returncode == 1, out.stdout + out.stderr
    assert not old.exists() and (tmp_path / "r.json").exists()


def _sheets(path: Path) -> list[str]:
    import openpyxl

    return openpyxl.load_workbook(path).sheetnames
