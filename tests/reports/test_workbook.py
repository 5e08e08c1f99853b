"""The budget-planning workbook (solver/report_excel.py; SPEC §8.4, issue 6).

The test scenario is the shipped llama3-70b example restricted to hgx-h100, with 5 % spares and a
10 % contingency, on the shipped catalog plus an override file that re-prices hgx-h100 at round
numbers ($250,000 and 10 kW per node) and gives it a name starting with "=HYPERLINK(" and a
price source starting with "@", so formula injection is exercised on real BOM lines.

Values are checked after LibreOffice headless recalculates the workbook (openpyxl writes formulas
without cached values). Expected totals are the JSON result's (SPEC §8.4: "the totals recomputed by
a real spreadsheet application equal the JSON totals") or worked out by hand in the test.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import openpyxl
import pytest
import yaml
from conftest import REPO

import solver
from solver import api
from solver.perf.traffic import CLASS_NAMES
from solver.reports import excel as report_excel
from solver.reports.excel import BOM_HEADERS, flatten, put, write_workbook

ROOT = REPO
HYPERLINK = '=HYPERLINK("http://example.invalid","click")'
AT_SOURCE = "@SUM(1,2) test price source"
CONTINGENCY = 0.10
TOP_K = 2

OVERRIDE = f"""
name: injected
description: hgx-h100 at round prices, with strings that look like spreadsheet formulas
platforms:
  - id: hgx-h100
    name: '{HYPERLINK}'
    gpu: h100-sxm
    gpus_per_domain: 8
    gpus_per_node: 8
    nodes_per_domain: 1
    nvlink_gbyte_s: 450
    nvlink_efficiency: 0.82
    scaleout_nics_per_node: [1, 2, 4, 8]
    compatible_nics: [cx7-ndr, bf3-400gbe]
    unit: node
    unit_price_usd: 250000
    price_source: '{AT_SOURCE}'
    price_date: "2025-01-31"
    unit_power_kw: 10.0
    unit_ru: 8
    includes_scaleout_nics: false
    source: tests/test_workbook.py
"""

needs_soffice = pytest.mark.skipif(shutil.which("soffice") is None and not os.environ.get("CI"),
                                   reason="LibreOffice (soffice) not installed; CI always runs these")


# ----------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("workbook")


@pytest.fixture(scope="module")
def solved(work):
    override = work / "override.yaml"
    override.write_text(OVERRIDE)
    data = yaml.safe_load((ROOT / "scenarios" / "llama3-70b.yaml").read_text())
    data["description"] = "-1+2 a description that starts with a minus"
    data["catalog"] = [str(override)]
    data["constraints"]["platforms"] = ["hgx-h100"]
    data["constraints"]["spare_nodes_fraction"] = 0.05
    data["constraints"]["contingency_fraction"] = CONTINGENCY
    scenario = solver.load_scenario(data)
    catalog = api.catalog_for(scenario)
    result = solver.solve(scenario, catalog, top_k=TOP_K)
    assert len(result.designs) == TOP_K
    return result, scenario, catalog, result.to_dict()


@pytest.fixture(scope="module")
def book(solved, work) -> Path:
    result, scenario, catalog, _ = solved
    return write_workbook(result, scenario, catalog, work / "budget.xlsx")


@pytest.fixture(scope="module")
def lo_profile(work) -> Path:
    return work / "lo_profile"  # one LibreOffice profile per run avoids profile-lock clashes


def recalc(path: Path, profile: Path) -> openpyxl.Workbook:
    """Open in LibreOffice headless, recalculate, save a copy; read it back with the values."""
    out = path.parent / f"recalc_{path.stem}"
    converted = out / path.name
    if converted.exists():
        converted.unlink()
    subprocess.run(
        ["soffice", f"-env:UserInstallation=file://{profile}", "--headless", "--calc",
         "--convert-to", "xlsx", "--outdir", str(out), str(path)],
        check=True, capture_output=True, timeout=180,
    )
    assert converted.exists(), "soffice exits 0 even when it could not load the file"
    return openpyxl.load_workbook(converted, data_only=True)


def bom_rows(ws) -> list[int]:
    """Rows of the BOM lines (from the first line under the header to the first empty row)."""
    rows = []
    r = report_excel.BOM_FIRST_ROW
    while ws.cell(row=r, column=1).value is not None:
        rows.append(r)
        r += 1
    return rows


def row_of(ws, column: int, label: str) -> int:
    hits = [c.row for c in ws.iter_cols(min_col=column, max_col=column).__next__() if c.value == label]
    assert hits, f"no {label!r} in column {column} of {ws.title}"
    return hits[0]


def non_contingency_sum(design_json: dict) -> float:
    return sum(line["extended_usd"] for line in design_json["bom"] if line["category"] != "contingency")


# ----------------------------------------------------------------------------------- structure


def test_sheet_names_headers_and_print_setup(book):
    wb = openpyxl.load_workbook(book)
    assert wb.sheetnames == ["Summary", "Performance", "Assumptions", "BOM 1", "BOM 2"]
    for title in ("BOM 1", "BOM 2"):
        ws = wb[title]
        assert tuple(c.value for c in ws[report_excel.BOM_HEADER_ROW]) == BOM_HEADERS
        assert ws.freeze_panes == "A5"
        assert ws.auto_filter.ref.startswith("A4:K")
        assert ws.print_title_rows == "$4:$4"
        assert ws.column_dimensions["C"].width > 20
    summary = wb["Summary"]
    assert summary.freeze_panes == "B4"
    labels = [c.value for c in summary["A"]]
    for wanted in ("Architecture", "GPUs bought (spares included)", "Nodes", "NVLink domains", "NIC × rails per node",
                   "Switch", "Fabric tiers", "Parallel layout", "Step time (s)", "Target step time (s)",
                   "Headroom (1 − step / target)", "MFU", "IT power (kW)", "Facility power (kW) = IT × PUE",
                   "Racks", "Capex (USD)", "TCO (USD) = capex + energy", "Capex per GPU (USD)"):
        assert wanted in labels
    capex = summary.cell(row=row_of(summary, 1, "Capex (USD)"), column=2)
    assert capex.value.startswith("='BOM 1'!$F$")  # links to BOM 1's grand total
    assert "#,##0" in capex.number_format and "$" in capex.number_format


def test_bom_lines_are_formulas_and_contingency_is_a_cell(book, solved):
    _, _, _, js = solved
    wb = openpyxl.load_workbook(book)
    for i, design in enumerate(js["designs"], start=1):
        ws = wb[f"BOM {i}"]
        rows = bom_rows(ws)
        # The solver's contingency line is not a line of the sheet ...
        assert len(rows) == len(design["bom"]) - 1
        assert "contingency" not in [ws.cell(row=r, column=1).value for r in rows]
        # ... its fraction is the editable cell (10 % as set in the scenario).
        assert ws["B2"].value == pytest.approx(CONTINGENCY)
        assert ws["B3"].value == 0
        assert ws["F5"].value == "=D5*E5"
        assert ws["H5"].value == "=D5*G5"
        total = ws.cell(row=row_of(ws, 5, "Grand total (USD)"), column=6).value
        assert f"Discount_{i}" in total and f"Contingency_{i}" in total
        assert any(str(ws.cell(row=r, column=6).value).startswith("=SUMIF(") for r in range(rows[-1], ws.max_row + 1))


def test_defined_names_point_at_cells(book):
    wb = openpyxl.load_workbook(book)
    names = wb.defined_names
    for i in (1, 2):
        assert names[f"Contingency_{i}"].attr_text == f"'BOM {i}'!$B$2"
        assert names[f"Discount_{i}"].attr_text == f"'BOM {i}'!$B$3"
    for name in report_excel.TCO_NAMES:
        assert names[name].attr_text.startswith("'Assumptions'!$B$")


def test_native_stacked_bar_charts_exist(book):
    with zipfile.ZipFile(book) as z:
        charts = sorted(n for n in z.namelist() if n.startswith("xl/charts/chart"))
        xml = [z.read(n).decode() for n in charts]
    assert len(charts) == 2  # capex by category (Summary) and step-time breakdown (Performance)
    for text in xml:
        assert "<c:barChart>" in text or "<barChart>" in text.replace("c:", "")
        assert 'grouping val="stacked"' in text
    assert any("'BOM 1'" in t or "Summary" in t for t in xml)


def test_put_stores_formula_looking_text_as_text():
    wb = openpyxl.Workbook()
    ws = wb.active
    for col, text in enumerate(("=1+1", "+1+1", "-1+1", "@SUM(A1)", HYPERLINK), start=1):
        cell = put(ws, 1, col, text)
        assert cell.value == text and cell.data_type == "s"
    assert put(ws, 2, 1, "bad\x01char").value == "badchar"  # control characters openpyxl rejects are dropped


def test_injected_catalog_strings_are_text_in_the_file(book):
    with zipfile.ZipFile(book) as z:
        sheets = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/sheet")]
    formulas = [f.split("</f>")[0] for s in sheets for f in s.split("<f>")[1:]]
    assert formulas, "the workbook has formulas"
    assert not any("HYPERLINK" in f or f.startswith("SUM(1,2)") or f.startswith("1+2") for f in formulas)
    wb = openpyxl.load_workbook(book)
    ws = wb["BOM 1"]
    assert ws["C5"].value == f"{HYPERLINK} (per node)" and ws["C5"].data_type == "s"
    assert ws["I5"].value == AT_SOURCE and ws["I5"].data_type == "s"
    desc = [r for r in wb["Assumptions"].iter_rows(values_only=True) if r[0] == "description"]
    assert desc == [("description", "-1+2 a description that starts with a minus", None, None)]


def test_flatten_scenario_rows():
    data = {"a": {"b": 1, "c": [1, 2]}, "d": [{"e": "x"}], "f": None}
    assert flatten(data) == [("a.b", 1), ("a.c", "1, 2"), ("d[0].e", "x"), ("f", None)]


def test_assumptions_sheet(book, solved):
    result, _, catalog, _ = solved
    wb = openpyxl.load_workbook(book)
    rows = {r[0]: r[1:] for r in wb["Assumptions"].iter_rows(values_only=True) if r[0] is not None}
    # The scenario as given: llama3-70b.yaml says layers: 80 and step_time_s: 3.0.
    assert rows["workload.model.layers"][0] == 80
    assert rows["target.step_time_s"][0] == 3.0
    assert rows["parallelism.tp"][0] == "1, 2, 4, 8"
    # Catalog files with their sha256, hashed here independently of the loader.
    for path, _digest in catalog.provenance.files:
        assert rows[str(path)][0] == hashlib.sha256(Path(path).read_bytes()).hexdigest()
    assert rows["fabricplan version"][0] == solver.__version__
    assert rows["HiGHS version"][0] == result.solver["version"]
    assert rows["status"][0] == "optimal"
    assert "written on" in rows
    # Overlaps in force: the scenario gives none, so the defaults: TP exposed (0), every other class hides behind
    # its whole schedule window (1; traffic.DEFAULT_OVERLAP, docs/model.md "Overlap windows"), and 0 for the
    # expert-parallel all-to-all (on the critical path unless expert_dispatch.overlap says otherwise).
    overlaps = [r for r in wb["Assumptions"].iter_rows(values_only=True) if str(r[1]).startswith("overlap ")]
    assert [(r[1], r[2]) for r in overlaps] == [("overlap tp", 0.0), ("overlap cp", 1.0), ("overlap pp", 1.0),
                                                ("overlap dp_rs", 1.0), ("overlap dp_ag", 1.0), ("overlap ep", 0.0)]
    eff = [r for r in wb["Assumptions"].iter_rows(values_only=True) if str(r[1]).startswith("compute efficiency")]
    assert len(eff) == TOP_K and all(r[3] for r in eff)  # each with its source


def test_performance_sheet_rows_add_up(book, solved):
    _, _, _, js = solved
    ws = openpyxl.load_workbook(book)["Performance"]
    for i, design in enumerate(js["designs"]):
        row = [c.value for c in ws[4 + i]]
        # compute + bubble + each traffic class's exposed time (the registry: tp, cp, pp, dp_rs, dp_ag, ep) + link
        # capacity = step time (SPEC §4.5)
        n = 3 + len(CLASS_NAMES)
        assert sum(row[1:1 + n]) == pytest.approx(row[1 + n], rel=1e-12)
        assert row[1 + n] == pytest.approx(design["step_time_s"], rel=1e-12)
        assert row[2 + n] == 3.0  # target from the scenario
        assert row[3 + n] == pytest.approx(design["mfu"], rel=1e-12)


def test_performance_sheet_margins_windows_and_coverage(book, solved):
    """Every design's margins, each class's overlap window and its uncalibrated regimes, as in the JSON."""
    _, _, _, js = solved
    ws = openpyxl.load_workbook(book)["Performance"]
    rows = [[c.value for c in r] for r in ws.iter_rows()]
    head = next(i for i, r in enumerate(rows) if r[0] == "Design" and r[1] == "Slack to target")
    k = len(CLASS_NAMES)
    for i, design in enumerate(js["designs"]):
        row = rows[head + 1 + i]
        assert row[1] == pytest.approx(design["margins"]["slack_fraction"], rel=1e-12)
        assert row[2] == pytest.approx(design["margins"]["compute_slowdown"], rel=1e-12)
        assert row[3] == pytest.approx(design["margins"]["bandwidth_derate"], rel=1e-12)
        assert row[4:4 + k] == pytest.approx([design["traffic"][c]["window_s"] for c in CLASS_NAMES])
        assert row[4 + k] == ("; ".join(design["uncalibrated"]) or "none")


# ----------------------------------------------------------------------------------- atomic write


def test_failed_write_keeps_the_old_file_and_leaves_no_temp(solved, tmp_path, monkeypatch):
    result, scenario, catalog, _ = solved
    target = tmp_path / "plan.xlsx"
    write_workbook(result, scenario, catalog, target)
    before = target.read_bytes()

    def broken_save(self, filename):
        Path(filename).write_bytes(b"PK\x03\x04 half a zip")  # fail mid-way, after writing bytes
        raise OSError("disk full")

    monkeypatch.setattr(openpyxl.Workbook, "save", broken_save)
    with pytest.raises(OSError, match="disk full"):
        write_workbook(result, scenario, catalog, target)
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.xlsx"]
    with pytest.raises(OSError):
        write_workbook(result, scenario, catalog, tmp_path / "new.xlsx")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.xlsx"]


# ----------------------------------------------------------------------------------- LibreOffice


@pytest.fixture(scope="module")
def recalculated(book, lo_profile):
    return recalc(book, lo_profile)


@pytest.mark.libreoffice
@needs_soffice
def test_totals_equal_json_to_the_cent(recalculated, solved):
    _, _, _, js = solved
    summary = recalculated["Summary"]
    capex_row = row_of(summary, 1, "Capex (USD)")
    tco_row = row_of(summary, 1, "TCO (USD) = capex + energy")
    it_row = row_of(summary, 1, "IT power (kW)")
    for i, design in enumerate(js["designs"], start=1):
        ws = recalculated[f"BOM {i}"]
        total = ws.cell(row=row_of(ws, 5, "Grand total (USD)"), column=6).value
        assert abs(total - design["capex_usd"]) < 0.005
        assert abs(summary.cell(row=capex_row, column=1 + i).value - design["capex_usd"]) < 0.005
        assert abs(summary.cell(row=tco_row, column=1 + i).value - design["tco_usd"]) < 0.005
        assert summary.cell(row=it_row, column=1 + i).value == pytest.approx(design["power_kw"]["it"], rel=1e-12)
        # Category subtotals (SUMIF) equal the JSON lines summed per category.
        for cat in ("compute", "spares", "nic", "switch", "link", "rack"):
            want = sum(line["extended_usd"] for line in design["bom"] if line["category"] == cat)
            cells = [r for r in ws.iter_rows(min_col=5, max_col=6, values_only=True) if r[0] == cat]
            if want:
                assert abs(cells[0][1] - want) < 0.005
        # compute line: quantity · $250,000 (the override's round price)
        assert ws["F5"].value == ws["D5"].value * 250_000
    # The chart table's stacked pieces add up to capex (adjustment = contingency − discount).
    chart_rows = [r for r in summary.iter_rows(values_only=True) if str(r[0]).startswith("#")]
    for r, design in zip(chart_rows, js["designs"]):
        pieces = [v for v in r[1:] if isinstance(v, (int, float))]
        assert abs(sum(pieces[:-1]) - pieces[-1]) < 0.01 and abs(pieces[-1] - design["capex_usd"]) < 0.005


@pytest.mark.libreoffice
@needs_soffice
def test_injected_strings_stay_text_after_recalc(recalculated):
    ws = recalculated["BOM 1"]
    assert ws["C5"].value == f"{HYPERLINK} (per node)"
    assert ws["I5"].value == AT_SOURCE
    assert ws["C6"].value == f"spare {HYPERLINK} (per node)"


@pytest.mark.libreoffice
@needs_soffice
def test_unit_price_edit_moves_the_total(book, solved, lo_profile, work):
    _, _, _, js = solved
    wb = openpyxl.load_workbook(book)
    ws = wb["BOM 1"]
    assert ws["A5"].value == "compute"
    quantity = ws["D5"].value
    ws["E5"].value = 250_000 + 1_000  # +$1,000 per node
    edited = work / "edited_price.xlsx"
    wb.save(edited)
    out = recalc(edited, lo_profile)
    total = out["BOM 1"].cell(row=row_of(out["BOM 1"], 5, "Grand total (USD)"), column=6).value
    # Δtotal = quantity · Δprice · (1 − discount 0) · (1 + contingency 0.10) = quantity · 1,000 · 1.1
    assert abs(total - (js["designs"][0]["capex_usd"] + quantity * 1_000 * 1.1)) < 0.005
    # BOM 2 untouched
    other = out["BOM 2"].cell(row=row_of(out["BOM 2"], 5, "Grand total (USD)"), column=6).value
    assert abs(other - js["designs"][1]["capex_usd"]) < 0.005


@pytest.mark.libreoffice
@needs_soffice
def test_contingency_discount_and_tco_inputs_hand_worked(book, solved, lo_profile, work):
    _, _, _, js = solved
    wb = openpyxl.load_workbook(book)
    ws = wb["BOM 1"]
    for r in bom_rows(ws):
        ws.cell(row=r, column=4).value = 0
    ws["D5"].value, ws["E5"].value = 2, 1_000  # 2 nodes at $1,000, 10,000 W each
    ws["B2"].value, ws["B3"].value = 0.20, 0.05  # contingency 20 %, discount 5 %
    wb["BOM 2"]["B2"].value, wb["BOM 2"]["B3"].value = 0.0, 0.5
    a = wb["Assumptions"]
    for name, value in zip(report_excel.TCO_NAMES, (1, 1.0, 0.10)):  # 1 year, PUE 1, $0.10/kWh
        cell = wb.defined_names[name].attr_text.split("!")[1].replace("$", "")
        a[cell].value = value
    edited = work / "edited_terms.xlsx"
    wb.save(edited)
    out = recalc(edited, lo_profile)
    b1 = out["BOM 1"]
    value = {label: b1.cell(row=row_of(b1, 5, label), column=6).value
             for label in ("Subtotal (lines)", "Discount", "Contingency", "Grand total (USD)", "IT power (kW)")}
    # subtotal 2 · 1,000 = 2,000; discount −5 % = −100; contingency 20 % of 1,900 = 380; total 2,280
    assert value["Subtotal (lines)"] == pytest.approx(2_000)
    assert value["Discount"] == pytest.approx(-100)
    assert value["Contingency"] == pytest.approx(380)
    assert value["Grand total (USD)"] == pytest.approx(2_280)
    assert value["IT power (kW)"] == pytest.approx(20.0)  # 2 · 10,000 W / 1000
    s = out["Summary"]
    col = 2
    assert s.cell(row=row_of(s, 1, "Capex (USD)"), column=col).value == pytest.approx(2_280)
    # facility = 20 kW · PUE 1 = 20 kW; energy = 1 y · 8,760 h · 20 kW · $0.10 = $17,520; TCO = 2,280 + 17,520
    assert s.cell(row=row_of(s, 1, "Facility power (kW) = IT × PUE"), column=col).value == pytest.approx(20.0)
    assert s.cell(row=row_of(s, 1, "TCO (USD) = capex + energy"), column=col).value == pytest.approx(19_800)
    gpus = s.cell(row=row_of(s, 1, "GPUs bought (spares included)"), column=col).value
    assert s.cell(row=row_of(s, 1, "Capex per GPU (USD)"), column=col).value == pytest.approx(2_280 / gpus)
    # BOM 2: contingency 0, discount 50 % → total = ½ · Σ catalog lines of design 2
    b2 = out["BOM 2"]
    total2 = b2.cell(row=row_of(b2, 5, "Grand total (USD)"), column=6).value
    assert abs(total2 - 0.5 * non_contingency_sum(js["designs"][1])) < 0.005
