"""`compare --xlsx` and warnings carried into every output (issue 28 item 6): the scenario's
plausibility warnings go into the solve JSON (`input_warnings`), the solve workbook's Summary, the
compare JSON and workbook, and the sweep JSON and workbook; each workbook recalculates in LibreOffice.
"""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest
import yaml
from conftest import REPO
from office import needs_soffice, profile, recalc

EXAMPLE = REPO / "scenarios" / "rent-or-buy.yaml"
WARNING = "per kWh is unusual"  # plausibility: usd_per_kwh 5 (cents meant)


def _run(args: list, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("warnings")
    data = copy.deepcopy(yaml.safe_load(EXAMPLE.read_text(encoding="utf-8")))
    data["name"] = "warned"
    data["objective"] = "capex"
    data["tco"] = {"usd_per_kwh": 5}
    data["top_k"] = 2
    (folder / "warned.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return folder


def _cells(ws) -> list[str]:
    return [str(c.value) for row in ws.iter_rows() for c in row if c.value is not None]


def test_solve_carries_the_warning_into_json_and_summary(work):
    proc = _run(["solve", "warned.yaml", "--json", "s.json", "--xlsx", "s.xlsx"], work)
    assert proc.returncode == 0, proc.stderr
    assert WARNING in proc.stderr
    js = json.loads((work / "s.json").read_text(encoding="utf-8"))
    assert any(WARNING in w for w in js["input_warnings"])
    summary = openpyxl.load_workbook(work / "s.xlsx")["Summary"]
    texts = _cells(summary)
    assert "Warnings" in texts and any(WARNING in t for t in texts)


def test_compare_writes_a_workbook_with_the_warnings(work):
    proc = _run(["compare", "warned.yaml", EXAMPLE, "--json", "c.json", "--xlsx", "c.xlsx"], work)
    assert proc.returncode == 0, proc.stderr
    js = json.loads((work / "c.json").read_text(encoding="utf-8"))
    assert any(WARNING in w for w in js["scenarios"][0]["input_warnings"])
    assert "input_warnings" not in js["scenarios"][1]
    ws = openpyxl.load_workbook(work / "c.xlsx")["Compare"]
    texts = _cells(ws)
    assert any(t.startswith("warned.yaml: ") and WARNING in t for t in texts)
    # capex per GPU is a formula: capex / GPUs (values of the JSON)
    for i, s in enumerate(js["scenarios"]):
        d = s["designs"][0]
        col = "BC"[i]
        assert ws[f"{col}5"].value == d["gpus"] and ws[f"{col}13"].value == pytest.approx(d["capex_usd"])
        assert ws[f"{col}15"].value == f"={col}13/{col}5"


@pytest.mark.libreoffice
@needs_soffice
def test_compare_workbook_recalculates(work):
    out = recalc(work / "c.xlsx", profile(work / "lo"))["Compare"]
    js = json.loads((work / "c.json").read_text(encoding="utf-8"))
    for i, s in enumerate(js["scenarios"]):
        d = s["designs"][0]
        assert out[f"{'BC'[i]}15"].value == pytest.approx(d["capex_usd"] / d["gpus"], abs=0.01)


def test_sweep_carries_the_warning_into_json_and_workbook(work):
    proc = _run(["sweep", "warned.yaml", "--vary", "workload.global_batch_size=1024", "--json", "w.json",
                 "--xlsx", "w.xlsx", "--no-plot"], work)
    assert proc.returncode == 0, proc.stderr
    js = json.loads((work / "w.json").read_text(encoding="utf-8"))
    assert any(WARNING in w for w in js["warnings"])
    texts = _cells(openpyxl.load_workbook(work / "w.xlsx")["Assumptions"])
    assert "warning" in texts and any(WARNING in t for t in texts)
