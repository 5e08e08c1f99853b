"""`solve --bom-csv FILE` (solver/reports/bom_csv.py) and the workbook's Cables sheet
(solver/reports/cables_sheet.py): the CSV adds up to the JSON capex line by line, formula-looking
text stays text, a bad path writes nothing; the cable schedule counts the JSON's links per tier and
prints at 9 pt or more.
"""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import openpyxl
import pytest
from conftest import REPO
from office import box_per_pt, convert, needs_soffice, pdf_pages, profile

from solver.reports.bom_csv import HEADER
from solver.reports.cables_sheet import SHEET

EXAMPLE = REPO / "scenarios" / "rent-or-buy.yaml"
LAYER = """\
name: names
platforms:
  - id: hgx-b200
    name: '=HYPERLINK("http://example.invalid","x")'
"""


def _run(args: list, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    work = tmp_path_factory.mktemp("bom_csv")
    (work / "names.yaml").write_text(LAYER, encoding="utf-8")
    proc = _run(["solve", EXAMPLE, "--catalog", REPO / "catalogs" / "default.yaml", "--catalog", "names.yaml",
                 "--json", "r.json", "--xlsx", "r.xlsx", "--bom-csv", "bom.csv"], work)
    assert proc.returncode == 0, proc.stderr
    return work, json.loads((work / "r.json").read_text(encoding="utf-8"))


def test_bom_csv_is_the_best_designs_bom_line_by_line(solved):
    work, js = solved
    with open(work / "bom.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == HEADER
    lines = js["designs"][0]["bom"]
    assert len(rows) - 1 == len(lines)
    for row, line in zip(rows[1:], lines):
        assert row[1] == line["part"] and int(row[3]) == line["quantity"]
        assert float(row[4]) == pytest.approx(line["unit_price_usd"], abs=0.005)
        # extended = quantity × unit price, to the cent
        assert float(row[5]) == pytest.approx(int(row[3]) * float(row[4]), abs=0.01)
    assert sum(float(r[5]) for r in rows[1:]) == pytest.approx(js["designs"][0]["capex_usd"], abs=0.01)
    # the platform's name starts with "=": written with a leading apostrophe, never as a formula
    compute = next(r for r in rows[1:] if r[0] == "compute")
    assert compute[2].startswith("'=HYPERLINK(")
    assert list(work.glob("*.tmp*")) == [] and list(work.glob(".*bom*")) == []


def test_bom_csv_to_a_folder_is_an_error_before_solving_and_writes_nothing(tmp_path):
    (tmp_path / "bom.csv").mkdir()  # a directory where the file should go
    proc = _run(["solve", EXAMPLE, "--json", "r.json", "--no-xlsx", "--bom-csv", "bom.csv"], tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "is a directory" in proc.stderr
    assert not (tmp_path / "r.json").exists()


def test_cables_sheet_counts_the_links_per_tier(solved):
    work, js = solved
    ws = openpyxl.load_workbook(work / "r.xlsx")[SHEET]
    counted: dict[tuple[str, str], int] = {}
    r = 5
    while ws.cell(row=r, column=1).value:
        key = (ws.cell(row=r, column=1).value, ws.cell(row=r, column=2).value)
        counted[key] = counted.get(key, 0) + ws.cell(row=r, column=6).value
        # twin-port modules at the switch end of node–leaf links: 2 links per module, so half as many
        if ws.cell(row=r, column=3).value.endswith("node-leaf-sr"):
            assert ws.cell(row=r, column=7).value * 2 == ws.cell(row=r, column=6).value
        r += 1
    expected = {(f"#{d['rank']}", tier): n for d in js["designs"] for tier, n in d["fabric"]["links"].items() if n}
    assert counted == expected


@pytest.mark.libreoffice
@needs_soffice
def test_cables_sheet_prints_at_9_pt_or_more(solved, tmp_path):
    work, _ = solved
    lo = profile(tmp_path / "lo")
    pages = [p for p in pdf_pages(convert(work / "r.xlsx", "pdf", tmp_path, lo)) if p.sheet == SHEET]
    per_pt = box_per_pt(lo, tmp_path / "reference")
    assert len(pages) == 2  # about 1,050 pt of columns at 100 %: two landscape pages across
    for page in pages:
        heights = sorted(w[4] - w[2] for w in page.words)
        assert heights[len(heights) // 2] >= 9 * per_pt
