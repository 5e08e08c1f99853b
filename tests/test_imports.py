"""Imports only where used (issue 26 item 2): each command is run in a fresh interpreter and the modules it
loaded are read off `sys.modules` afterwards. Not timed: which libraries a command loads does not depend on
the machine's load, their import times do (docs/performance.md measures those with `python -X importtime`)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("openpyxl", "matplotlib", "pandas", "pyomo", "highspy", "numpy")

# Runs `solver.cli.main(argv)` with its output swallowed, then prints which heavy libraries are loaded.
PROBE = """
import contextlib, io, json, sys
from solver.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        code = main(sys.argv[1:])
    except SystemExit as stop:
        code = stop.code
print(json.dumps({"code": code, "loaded": [m for m in HEAVY if m in sys.modules]}), file=sys.__stdout__)
""".replace("HEAVY", repr(HEAVY))


def loaded_by(*argv: str, cwd: Path) -> tuple[int, set[str]]:
    proc = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=cwd, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    return report["code"], set(report["loaded"])


@pytest.mark.parametrize("argv, allowed", [
    (["--help"], set()),
    (["validate", str(ROOT / "scenarios" / "llama3-70b.yaml")], set()),
    (["catalog"], set()),
])
def test_commands_that_build_no_model_import_no_heavy_library(argv, allowed, tmp_path):
    code, loaded = loaded_by(*argv, cwd=tmp_path)
    assert code == 0
    assert loaded <= allowed, f"{argv[0]} imported {sorted(loaded - allowed)}"


def test_solve_without_workbook_imports_no_excel_plotting_or_pandas(tmp_path):
    code, loaded = loaded_by("solve", str(ROOT / "scenarios" / "evaluate-llama3-70b-h100.yaml"), "--no-xlsx",
                             "--json", "-", cwd=tmp_path)
    assert code == 0
    assert not loaded & {"openpyxl", "matplotlib", "pandas"}, sorted(loaded)
    assert {"pyomo", "highspy"} <= loaded  # it did build and solve the model: the probe sees what a solve loads


def test_solve_with_workbook_leaves_openpyxl_to_its_workbook_process(tmp_path):
    """A solve writing its workbook has it written by a forked process (reports/side_process.py), which imports
    openpyxl: this one does not. The probe can fail: `compare` writing its workbook loads openpyxl here."""
    code, loaded = loaded_by("solve", str(ROOT / "scenarios" / "evaluate-llama3-70b-h100.yaml"), "--json",
                             str(tmp_path / "out.json"), "--xlsx", str(tmp_path / "out.xlsx"), cwd=tmp_path)
    assert code == 0 and (tmp_path / "out.xlsx").stat().st_size > 0
    assert not loaded & {"openpyxl", "matplotlib"}, sorted(loaded)
    code, loaded = loaded_by("compare", str(ROOT / "scenarios" / "evaluate-llama3-70b-h100.yaml"),
                             str(ROOT / "scenarios" / "expand-owned-h100.yaml"), "--xlsx", str(tmp_path / "c.xlsx"),
                             cwd=tmp_path)
    assert code == 0
    assert "openpyxl" in loaded and "matplotlib" not in loaded


def test_solver_api_is_reachable_right_after_import_solver(tmp_path):
    """docs/architecture.md and the README write `solver.api.solve(…, constraints=[fn])` and `solver.api.frontier(…)`:
    before, a fresh `import solver` had no `api` until some other name had imported it (AttributeError)."""
    probe = "import solver, sys; print(callable(solver.api.frontier), callable(solver.api.user_constraints))"
    proc = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True"]
