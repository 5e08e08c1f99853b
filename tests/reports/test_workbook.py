"""The budget-planning workbook (solver/reports/excel.py; SPEC §8.4, issues 6 and 17).

The test scenario is the shipped llama3-70b example restricted to hgx-h100, with 5 % spares and a
10 % contingency, on the shipped catalog plus an override file that re-prices hgx-h100 at round
numbers ($250,000 and 10 kW per node) and gives it a name starting with "=HYPERLINK(" and a
price source starting with "@", so formula injection is exercised on real BOM lines.

Values are checked twice: as cached in the file (what pandas reads without a spreadsheet
application), and after LibreOffice headless recalculates the workbook (tests/reports/office.py makes
it recalculate rather than show the cached values). Expected totals are the JSON result's (SPEC §8.4:
"the totals recomputed by a real spreadsheet application equal the JSON totals") or worked out by
hand in the test. The PDF that LibreOffice prints is checked for page count, orientation and type size.
"""
from __future__ import annotations

import hashlib
import math
import re
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
import yaml
from conftest import REPO
from office import (
    assert_readable,
    box_per_pt,
    convert,
    needs_soffice,
    pdf_pages,
    profile,
    recalc_many,
    set_cached_value,
)

import solver
from solver import api
from solver.perf.traffic import CLASS_NAMES
from solver.reports.assumptions_sheet import flatten
from solver.reports.bom_sheet import BOM_FIRST_ROW, BOM_HEADER_ROW, BOM_HEADERS
from solver.reports.excel import write_workbook
from solver.reports.prices_sheet import PRICE_HEADERS
from solver.reports.summary_sheet import TCO_NAMES
from solver.reports.xlsx import put

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
    rails_per_node_options: [1, 2, 4, 8]
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

UNIT_PRICE = 250_000  # the override's hgx-h100 price per node
UNIT_KW = 10.0  # and its power per node
GPUS_PER_NODE = 8  # HGX H100: 8 GPUs per node, one node per compute unit


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
    return profile(work / "lo_profile")


def bom_rows(ws) -> list[int]:
    """Rows of the BOM lines (from the first line under the header to the first empty row)."""
    rows = []
    r = BOM_FIRST_ROW
    while ws.cell(row=r, column=1).value is not None:
        rows.append(r)
        r += 1
    return rows


def row_of(ws, column: int, label: str) -> int:
    hits = [c.row for c in ws.iter_cols(min_col=column, max_col=column).__next__()
            if isinstance(c.value, str) and (c.value == label or c.value.startswith(label + " ="))]
    assert hits, f"no {label!r} in column {column} of {ws.title}"
    return hits[0]


def total(ws, label: str = "Grand total (USD)"):
    """A value in a BOM sheet's totals block (labels in column C, money in column F)."""
    return ws.cell(row=row_of(ws, 3, label), column=6).value


def quantity(ws, label: str):
    """A count in a BOM sheet's 'What the lines buy' block (labels in column C, counts in column D)."""
    return ws.cell(row=row_of(ws, 3, label), column=4).value


def summary(ws, label: str, design: int = 1):
    return ws.cell(row=row_of(ws, 1, label), column=1 + design).value


def line_quantity(design_json: dict, category: str) -> int:
    return sum(line["quantity"] for line in design_json["bom"] if line["category"] == category)


def price_row(wb, part: str, unit_price: float) -> int:
    ws = wb["Prices"]
    rows = [r for r in range(5, ws.max_row + 1) if ws.cell(row=r, column=1).value == part
            and ws.cell(row=r, column=4).value == unit_price]
    assert len(rows) == 1, (part, unit_price, rows)
    return rows[0]


def non_contingency_sum(design_json: dict) -> float:
    return sum(line["extended_usd"] for line in design_json["bom"] if line["category"] != "contingency")


# ----------------------------------------------------------------------------------- structure


def test_sheet_names_headers_and_print_setup(book):
    wb = openpyxl.load_workbook(book)
    assert wb.sheetnames == ["Summary", "Prices", "BOM 1", "BOM 2", "Cables", "Rent or buy", "Performance",
                             "Assumptions"]
    # every sheet prints landscape, one page wide, sheet name and page in the footer; Cables prints at 100 %
    # split across pages (test_bom_csv_cables.py)
    for ws in (w for w in wb.worksheets if w.title != "Cables"):
        assert ws.page_setup.orientation == "landscape"
        assert ws.page_setup.fitToWidth == 1 and ws.sheet_properties.pageSetUpPr.fitToPage
        assert ws.oddFooter.center.text == "&A, page &P of &N"
    for title in ("BOM 1", "BOM 2"):
        ws = wb[title]
        header = ws[BOM_HEADER_ROW]
        assert tuple(c.value for c in header) == BOM_HEADERS
        # numbers sit under right-aligned headers (Quantity … Extended power), text under left-aligned ones
        assert [c.alignment.horizontal for c in header] == ["left"] * 3 + ["right"] * 5
        assert ws.freeze_panes == "A5"
        assert ws.auto_filter.ref.startswith("A4:H")
        assert ws.print_title_rows == "$4:$4"
        assert ws.column_dimensions["C"].width > 20
    assert wb["Prices"].print_title_rows == "$4:$4"
    summary_ws = wb["Summary"]
    assert summary_ws.freeze_panes == "B4"
    assert summary_ws.print_title_cols == "$A:$A"
    labels = [c.value for c in summary_ws["A"]]
    for wanted in ("Architecture", "GPUs bought (spares included)", "Nodes", "NVLink domains", "NIC × rails per node",
                   "Switch", "Fabric family", "Fabric tiers", "Parallel layout", "Step time (s)", "Target step time (s)",
                   "Headroom (1 − step / target)", "MFU", "IT power (kW)", "Facility power (kW) = IT × PUE",
                   "Racks", "Capex (USD)", "TCO (USD) = capex + energy", "Capex per GPU (USD)",
                   "Network (NICs, switches, links)", "Network share of capex"):
        assert wanted in labels
    capex = summary_ws.cell(row=row_of(summary_ws, 1, "Capex (USD)"), column=2)
    assert capex.value.startswith("='BOM 1'!$F$")  # links to BOM 1's grand total
    assert "#,##0" in capex.number_format and "$" in capex.number_format


def test_every_unit_price_is_in_one_cell(book, solved):
    _, _, _, js = solved
    wb = openpyxl.load_workbook(book)
    prices = wb["Prices"]
    assert tuple(c.value for c in prices[4]) == PRICE_HEADERS
    # One Prices row per part at a unit price and power (a compute unit and its spares share one: a hot
    # spare idles, so its power is the row's times its idle fraction), worked out from the JSON lines of both designs.
    def key(category, part, price, power):
        group = "compute" if category == "spares" else category
        return (group, part, price, None if group == "compute" else power)

    keys = {key(x["category"], x["part"], x["unit_price_usd"], x["power_w"])
            for d in js["designs"] for x in d["bom"] if x["category"] != "contingency"}
    rows = [r for r in prices.iter_rows(min_row=5, values_only=True) if r[0] is not None]
    assert len(rows) == len(keys) and {key(r[2], r[0], r[3], r[4]) for r in rows} == keys
    # $250,000 (hgx-h100) is the price of 4 BOM lines (compute and spares of two designs) and sits in ONE cell.
    cells = [(ws.title, c.coordinate) for ws in wb.worksheets for row in ws.iter_rows() for c in row
             if c.data_type == "n" and c.value == UNIT_PRICE]
    assert len(cells) == 1 and cells[0][0] == "Prices"
    # Every BOM line reads its unit price and power from the Prices row of its part.
    for i in range(1, len(js["designs"]) + 1):
        ws = wb[f"BOM {i}"]
        for r in bom_rows(ws):
            m = re.fullmatch(r"='Prices'!\$D\$(\d+)", ws.cell(row=r, column=5).value)
            assert m, ws.cell(row=r, column=5).value
            idle = "*0.3" if ws.cell(row=r, column=1).value == "spares" else ""  # catalog spare_idle_power_fraction
            assert ws.cell(row=r, column=7).value == f"='Prices'!$E${m[1]}{idle}"
            assert prices.cell(row=int(m[1]), column=1).value == ws.cell(row=r, column=2).value
            assert prices.cell(row=int(m[1]), column=4).fill.fgColor.rgb.endswith("FFF2CC")  # yellow: editable


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
        grand = ws.cell(row=row_of(ws, 3, "Grand total (USD)"), column=6).value
        assert f"Discount_{i}" in grand and f"Contingency_{i}" in grand
        assert any(str(ws.cell(row=r, column=6).value).startswith("=SUMIF(") for r in range(rows[-1], ws.max_row + 1))


def test_bom_counts_nodes_gpus_and_racks_from_its_quantities(book):
    wb = openpyxl.load_workbook(book)
    ws = wb["BOM 1"]
    # nodes = (compute + spare units) · 1 node per HGX unit; GPUs = nodes · 8; racks = the rack lines
    nodes = ws.cell(row=row_of(ws, 3, "Nodes"), column=4)
    assert '"compute"' in nodes.value and '"spares"' in nodes.value and nodes.value.endswith(")*1")
    assert ws.cell(row=row_of(ws, 3, "GPUs"), column=4).value == f"=D{nodes.row}*{GPUS_PER_NODE}"
    assert '"rack"' in ws.cell(row=row_of(ws, 3, "Racks"), column=4).value
    s = wb["Summary"]
    for label, bom_label in (("GPUs bought (spares included)", "GPUs"), ("Nodes", "Nodes"), ("Racks", "Racks")):
        assert summary(s, label) == f"='BOM 1'!$D${row_of(ws, 3, bom_label)}"
    gpus_row = row_of(s, 1, "GPUs bought (spares included)")
    assert summary(s, "NVLink domains") == f"=ROUNDUP(B{gpus_row}/8,0)"
    assert summary(s, "Capex per GPU (USD)") == f"=B{row_of(s, 1, 'Capex (USD)')}/B{gpus_row}"


def test_defined_names_point_at_cells(book):
    wb = openpyxl.load_workbook(book)
    names = wb.defined_names
    for i in (1, 2):
        assert names[f"Contingency_{i}"].attr_text == f"'BOM {i}'!$B$2"
        assert names[f"Discount_{i}"].attr_text == f"'BOM {i}'!$B$3"
    for name in TCO_NAMES:
        assert names[name].attr_text.startswith("'Assumptions'!$B$")


def _chart_series(book) -> list[list[str]]:
    """Per chart (in file order), the cells naming its series."""
    with zipfile.ZipFile(book) as z:
        names = sorted((n for n in z.namelist() if re.fullmatch(r"xl/charts/chart\d+\.xml", n)),
                       key=lambda n: int(re.findall(r"\d+", n)[0]))
        xml = [z.read(n).decode() for n in names]
    for text in xml:
        assert "<barChart>" in text.replace("c:", "") and 'grouping val="stacked"' in text
        assert "<smooth val=\"1\"" not in text.replace("c:", "")
    return [re.findall(r"<tx><strRef><f>([^<]*)</f>", text.replace("c:", "")) for text in xml]


def test_charts_show_all_of_capex_and_the_network_without_compute(book, solved):
    _, _, _, js = solved
    series = _chart_series(book)
    assert len(series) == 3  # Summary: capex by category, capex without compute; Performance: step time
    ws = openpyxl.load_workbook(book)["Summary"]

    def label(ref: str) -> str:
        return ws[ref.split("!")[1].replace("$", "")].value

    everything, beyond = ([label(r) for r in refs] for refs in series[:2])
    # issue 24: complete capex adds the site categories after the racks (HGX H100: no cooling plant)
    site = ["storage", "management", "installation"]
    assert everything == ["compute", "spares", "nic", "switch", "link", "rack", *site, "contingency − discount"]
    # without compute and spares ($134.5M of $182.0M in design 1) the network's $28.8M is drawn at a visible scale
    assert beyond == ["nic", "switch", "link", "rack", *site]
    d = js["designs"][0]
    network = sum(x["extended_usd"] for x in d["bom"] if x["category"] in ("nic", "switch", "link"))
    # Design 1 under physics v2: 512 + ⌈0.05·512⌉ = 538 HGX H100 nodes, 8 rails of 400G Ethernet
    # (bf3-400gbe, $2,200) → 4,304 NICs (spares carry theirs); SN5600 ($60,000) split 2 × 400G = 128 ports. The
    # fabric is the job's 512 nodes (issue 42: the 26 spares find no free port, 512 = 8 · 64, and are not cabled):
    # 8 leaves per rail (64 ports down, 64 up) × 8 rails = 64 leaves and the smallest divisor of 64 ≥ ⌈64·64/128⌉
    # = 32 spines; links: 4,096 node–leaf cables ($100) with 2,048 twin-port switch-end modules ($1,100) and 4,096
    # NIC-end modules ($650); 64 · 64 = 4,096 leaf–spine cables ($120) with 2,048 twin-port modules at each end.
    assert network == (4304 * 2_200 + (64 + 32) * 60_000
                       + (4096 * 100 + 2048 * 1_100 + 4096 * 650 + 4096 * 120 + 2 * 2048 * 1_100))
    cached = openpyxl.load_workbook(book, data_only=True)["Summary"]
    assert summary(cached, "Network (NICs, switches, links)") == pytest.approx(network)
    assert summary(cached, "Network share of capex") == pytest.approx(network / d["capex_usd"])


def test_cached_values_let_pandas_read_the_numbers(book, solved):
    _, _, _, js = solved
    frame = pd.read_excel(book, sheet_name="Summary", header=None)
    at = {label: i for i, label in reversed(list(enumerate(frame[0])))}  # first row of each label
    for i, d in enumerate(js["designs"], start=1):
        assert abs(frame.iloc[at["Capex (USD)"], i] - d["capex_usd"]) < 0.005
        assert abs(frame.iloc[at["TCO (USD) = capex + energy"], i] - d["tco_usd"]) < 0.005
        assert frame.iloc[at["GPUs bought (spares included)"], i] == d["gpus"]
        assert frame.iloc[at["Nodes"], i] == d["nodes"]
        assert frame.iloc[at["Racks"], i] == d["racks"]
        assert frame.iloc[at["Capex per GPU (USD)"], i] == pytest.approx(d["cost_per_gpu_usd"], rel=1e-12)
        bom = pd.read_excel(book, sheet_name=f"BOM {i}", header=None)
        grand = bom[bom[2] == "Grand total (USD)"].iloc[0, 5]
        assert abs(grand - d["capex_usd"]) < 0.005
    # every formula in the file carries a cached number
    formulas, values = openpyxl.load_workbook(book), openpyxl.load_workbook(book, data_only=True)
    missing = [(ws.title, c.coordinate) for ws in formulas.worksheets for row in ws.iter_rows() for c in row
               if c.data_type == "f" and not isinstance(values[ws.title][c.coordinate].value, (int, float))]
    assert missing == []


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
    row = price_row(wb, "hgx-h100", UNIT_PRICE)
    source = wb["Prices"].cell(row=row, column=8)
    assert source.value == AT_SOURCE and source.data_type == "s"
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
        row = [c.value for c in ws[5 + i]]
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
        assert row[4 + k] == ("; ".join(design["uncalibrated"] + design["caveats"]) or "none")


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


def sheet_xml(path: Path, title: str) -> str:
    """The zip member holding sheet `title` (xl/workbook.xml names it, its relationships locate it)."""
    with zipfile.ZipFile(path) as z:
        book_xml = z.read("xl/workbook.xml").decode()
        rels = z.read("xl/_rels/workbook.xml.rels").decode()
    rid = re.search(rf'<sheet [^>]*name="{title}"[^>]*r:id="([^"]+)"', book_xml) or \
        re.search(rf'<sheet [^>]*r:id="([^"]+)"[^>]*name="{title}"', book_xml)
    assert rid
    target = re.search(rf'<Relationship [^>]*Id="{rid[1]}"[^>]*Target="([^"]+)"', rels) or \
        re.search(rf'<Relationship [^>]*Target="([^"]+)"[^>]*Id="{rid[1]}"', rels)
    assert target
    return target[1].lstrip("/") if target[1].startswith("/xl/") else f"xl/{target[1]}"


def _grand_total_ref(book: Path) -> str:
    return f"F{row_of(openpyxl.load_workbook(book)['BOM 1'], 3, 'Grand total (USD)')}"


def _poisoned(book: Path, work: Path) -> Path:
    """A copy whose cached grand total of BOM 1 is a wrong 1.0."""
    return set_cached_value(book, work / "poisoned.xlsx", sheet_xml(book, "BOM 1"), _grand_total_ref(book), 1.0)


def _edited_price(book: Path, work: Path) -> Path:
    """hgx-h100 at $1,000 more on the Prices sheet."""
    wb = openpyxl.load_workbook(book)
    wb["Prices"].cell(row=price_row(wb, "hgx-h100", UNIT_PRICE), column=4).value = UNIT_PRICE + 1_000
    wb.save(work / "edited_price.xlsx")
    return work / "edited_price.xlsx"


def _one_year_pue_1_ten_cents(wb) -> None:
    for name, value in zip(TCO_NAMES, (1, 1.0, 0.10)):  # 1 year, PUE 1, $0.10/kWh
        wb["Assumptions"][wb.defined_names[name].attr_text.split("!")[1].replace("$", "")].value = value


def _edited_quantity(book: Path, work: Path) -> Path:
    """One more HGX H100 node on BOM 1's compute line; TCO over 1 year at PUE 1 and $0.10/kWh."""
    wb = openpyxl.load_workbook(book)
    ws = wb["BOM 1"]
    assert ws["A5"].value == "compute"
    ws["D5"].value += 1  # one more HGX H100 node
    _one_year_pue_1_ten_cents(wb)
    wb.save(work / "edited_quantity.xlsx")
    return work / "edited_quantity.xlsx"


def _edited_terms(book: Path, work: Path) -> Path:
    """BOM 1: every quantity 0 but 2 nodes at a typed $1,000, contingency 20 %, discount 5 %; BOM 2: discount 50 %,
    no contingency; TCO over 1 year at PUE 1 and $0.10/kWh."""
    wb = openpyxl.load_workbook(book)
    ws = wb["BOM 1"]
    for r in bom_rows(ws):
        ws.cell(row=r, column=4).value = 0
    ws["D5"].value, ws["E5"].value = 2, 1_000  # 2 nodes at $1,000 (a quote typed over the Prices link), 10 kW each
    ws["B2"].value, ws["B3"].value = 0.20, 0.05  # contingency 20 %, discount 5 %
    wb["BOM 2"]["B2"].value, wb["BOM 2"]["B3"].value = 0.0, 0.5
    _one_year_pue_1_ten_cents(wb)
    wb.save(work / "edited_terms.xlsx")
    return work / "edited_terms.xlsx"


@pytest.fixture(scope="module")
def recalculated_set(book, lo_profile, work) -> dict:
    """The workbook as written, its poisoned copy and its three edited copies, recalculated by LibreOffice in one
    start (one soffice run instead of five; each file is still loaded and recalculated on its own). Each test
    below checks its own copy; the edits are made by the functions above, from the workbook as written."""
    files = {"as written": book, "poisoned": _poisoned(book, work), "price": _edited_price(book, work),
             "quantity": _edited_quantity(book, work), "terms": _edited_terms(book, work)}
    books = recalc_many(list(files.values()), lo_profile)
    return {key: books[path] for key, path in files.items()}


@pytest.fixture(scope="module")
def recalculated(recalculated_set):
    return recalculated_set["as written"]


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_recalculates_instead_of_showing_cached_values(book, solved, recalculated_set, work):
    # The tests below would be empty if LibreOffice showed our cached values: a wrong one must not survive.
    _, _, _, js = solved
    ref = _grand_total_ref(book)
    assert openpyxl.load_workbook(work / "poisoned.xlsx", data_only=True)["BOM 1"][ref].value == 1.0
    out = recalculated_set["poisoned"]
    assert abs(out["BOM 1"][ref].value - js["designs"][0]["capex_usd"]) < 0.005


@pytest.mark.libreoffice
@needs_soffice
def test_totals_equal_json_to_the_cent(recalculated, solved):
    _, _, _, js = solved
    s = recalculated["Summary"]
    for i, design in enumerate(js["designs"], start=1):
        ws = recalculated[f"BOM {i}"]
        assert abs(total(ws) - design["capex_usd"]) < 0.005
        assert abs(summary(s, "Capex (USD)", i) - design["capex_usd"]) < 0.005
        assert abs(summary(s, "TCO (USD)", i) - design["tco_usd"]) < 0.005
        assert summary(s, "IT power (kW)", i) == pytest.approx(design["power_kw"]["it"], rel=1e-12)
        assert (summary(s, "GPUs bought (spares included)", i), summary(s, "Nodes", i), summary(s, "Racks", i)) == \
            (design["gpus"], design["nodes"], design["racks"])
        # Category subtotals (SUMIF) equal the JSON lines summed per category.
        for cat in ("compute", "spares", "nic", "switch", "link", "rack"):
            want = sum(line["extended_usd"] for line in design["bom"] if line["category"] == cat)
            assert abs(total(ws, cat) - want) < 0.005
            assert abs(s.cell(row=row_of(s, 1, cat), column=1 + i).value - want) < 0.005
        # compute line: quantity · $250,000 (the override's round price)
        assert ws["F5"].value == ws["D5"].value * UNIT_PRICE
    # Each design's stacked pieces add up to capex (adjustment = contingency − discount).
    # (issue 24: the site categories storage, management and installation are pieces too)
    pieces = ("compute", "spares", "nic", "switch", "link", "rack", "storage", "management", "installation",
              "contingency − discount")
    for i, design in enumerate(js["designs"], start=1):
        stacked = sum(s.cell(row=row_of(s, 1, p), column=1 + i).value for p in pieces)
        assert abs(stacked - design["capex_usd"]) < 0.01


@pytest.mark.libreoffice
@needs_soffice
def test_every_cached_value_equals_the_recalculated_one(book, recalculated):
    formulas, cached = openpyxl.load_workbook(book), openpyxl.load_workbook(book, data_only=True)
    checked = 0
    for ws in formulas.worksheets:
        for row in ws.iter_rows():
            for c in row:
                if c.data_type == "f":
                    mine, theirs = cached[ws.title][c.coordinate].value, recalculated[ws.title][c.coordinate].value
                    assert theirs == pytest.approx(mine, rel=1e-9, abs=1e-6), (ws.title, c.coordinate, c.value)
                    checked += 1
    assert checked > 100


@pytest.mark.libreoffice
@needs_soffice
def test_injected_strings_stay_text_after_recalc(recalculated):
    ws = recalculated["BOM 1"]
    assert ws["C5"].value == f"{HYPERLINK} (per node)"
    assert ws["C6"].value == f"spare {HYPERLINK} (per node)"
    assert AT_SOURCE in [c.value for c in recalculated["Prices"]["H"]]


@pytest.mark.libreoffice
@needs_soffice
def test_price_edit_on_the_prices_sheet_moves_every_dependent_total(solved, recalculated_set):
    _, _, _, js = solved
    out = recalculated_set["price"]  # hgx-h100 at $1,000 more on the Prices sheet (_edited_price)
    s = out["Summary"]
    for i, d in enumerate(js["designs"], start=1):
        compute, spares = line_quantity(d, "compute"), line_quantity(d, "spares")  # 512 and 26 nodes
        # Δcapex = (compute + spares) · $1,000 · (1 − discount 0) · (1 + contingency 0.10); the energy is unchanged
        delta = (compute + spares) * 1_000 * 1.1
        assert abs(total(out[f"BOM {i}"]) - (d["capex_usd"] + delta)) < 0.005
        assert abs(summary(s, "Capex (USD)", i) - (d["capex_usd"] + delta)) < 0.005
        assert abs(summary(s, "TCO (USD)", i) - (d["tco_usd"] + delta)) < 0.005
        assert summary(s, "Capex per GPU (USD)", i) == pytest.approx((d["capex_usd"] + delta) / d["gpus"], rel=1e-12)
        for cat, count in (("compute", compute), ("spares", spares)):
            want = sum(x["extended_usd"] for x in d["bom"] if x["category"] == cat) + count * 1_000
            assert abs(s.cell(row=row_of(s, 1, cat), column=1 + i).value - want) < 0.005


@pytest.mark.libreoffice
@needs_soffice
def test_quantity_edit_flows_into_the_summary(solved, recalculated_set):
    _, _, _, js = solved
    s = recalculated_set["quantity"]["Summary"]  # one more node on BOM 1; 1 year, PUE 1, $0.10/kWh (_edited_quantity)
    d, other = js["designs"]
    nodes, gpus = d["nodes"] + 1, d["gpus"] + GPUS_PER_NODE  # 539 nodes, 4,312 GPUs
    capex = d["capex_usd"] + UNIT_PRICE * 1.1  # + $275,000 (contingency 10 %)
    it_kw = d["power_kw"]["it"] + UNIT_KW  # + 10 kW
    assert (summary(s, "Nodes"), summary(s, "GPUs bought (spares included)")) == (nodes, gpus)
    assert summary(s, "NVLink domains") == math.ceil(gpus / 8)  # 8 GPUs per HGX NVLink domain
    assert summary(s, "Racks") == d["racks"]  # the rack lines were not edited
    assert abs(summary(s, "Capex (USD)") - capex) < 0.005
    assert summary(s, "Capex per GPU (USD)") == pytest.approx(capex / gpus, rel=1e-12)
    assert summary(s, "IT power (kW)") == pytest.approx(it_kw, rel=1e-12)
    # energy = 1 year · 8,760 h · IT kW · PUE 1 · $0.10 per kWh
    assert summary(s, "TCO (USD)") == pytest.approx(capex + 8_760 * it_kw * 0.10, rel=1e-12)
    assert (summary(s, "Nodes", 2), summary(s, "GPUs bought (spares included)", 2)) == (other["nodes"], other["gpus"])


@pytest.mark.libreoffice
@needs_soffice
def test_contingency_discount_and_tco_inputs_hand_worked(solved, recalculated_set):
    _, _, _, js = solved
    # BOM 1: only 2 nodes at a typed $1,000, contingency 20 %, discount 5 %; BOM 2: discount 50 %, no contingency;
    # 1 year, PUE 1, $0.10/kWh (_edited_terms)
    out = recalculated_set["terms"]
    b1 = out["BOM 1"]
    value = {label: total(b1, label)
             for label in ("Subtotal (lines)", "Discount", "Contingency", "Grand total (USD)", "IT power (kW)")}
    # subtotal 2 · 1,000 = 2,000; discount −5 % = −100; contingency 20 % of 1,900 = 380; total 2,280
    assert value["Subtotal (lines)"] == pytest.approx(2_000)
    assert value["Discount"] == pytest.approx(-100)
    assert value["Contingency"] == pytest.approx(380)
    assert value["Grand total (USD)"] == pytest.approx(2_280)
    assert value["IT power (kW)"] == pytest.approx(20.0)  # 2 · 10,000 W / 1000
    s = out["Summary"]
    assert summary(s, "Capex (USD)") == pytest.approx(2_280)
    # facility = 20 kW · PUE 1 = 20 kW; energy = 1 y · 8,760 h · 20 kW · $0.10 = $17,520; TCO = 2,280 + 17,520
    assert summary(s, "Facility power (kW)") == pytest.approx(20.0)
    assert summary(s, "TCO (USD)") == pytest.approx(19_800)
    # 2 nodes · 8 GPUs = 16 GPUs (the spares line is 0 now), so capex per GPU = 2,280 / 16
    assert summary(s, "GPUs bought (spares included)") == 16
    assert summary(s, "Capex per GPU (USD)") == pytest.approx(2_280 / 16)
    # BOM 2: contingency 0, discount 50 % → total = ½ · Σ catalog lines of design 2
    assert abs(total(out["BOM 2"]) - 0.5 * non_contingency_sum(js["designs"][1])) < 0.005


# ----------------------------------------------------------------------------------- the printed workbook


@pytest.fixture(scope="module")
def printed(book, lo_profile, work):
    return pdf_pages(convert(book, "pdf", work / "pdf", lo_profile))


@pytest.mark.libreoffice
@needs_soffice
def test_printed_page_count_and_orientation(printed):
    sheets = [p.sheet for p in printed]
    # Every sheet of this workbook, in sheet order, with its printed pages:
    # Summary: the two designs on page 1, capex by category and the two charts after a page break. The Summary
    # is fitted to 2 pages tall (its 4 rows of issue 24 would push the designs onto a second page).
    # Prices: 16 rows whose price sources wrap to 4-9 lines, about 830 pt of rows printed at about 70 %: 2 pages.
    # Each BOM: 16 lines since issue 24 (12 + storage, in-band and out-of-band management, installation), its
    # totals and counts no longer fit one page at 70 % or more: 2 pages.
    # Cables (planner3): about 1,050 pt of columns at 100 %: 2 pages across.
    # Rent or buy (issue 43): the ownership inputs, one column per design and the offers once, fitted to one page.
    # Performance: the breakdown and its chart; (page break) bytes and memory per GPU, the margins and the
    # caveats; (page break) the goodput table of issue 25 (hot spares, checkpoints): 3 pages.
    # Assumptions: 69 rows, about 1,400 pt at 74 % on 500 pt pages: 2 to 3 pages (the heights of wrapped rows
    # are estimates).
    # Frontier: none; the sheet is written only for a cost-speed frontier run (result.frontier), not a solve.
    # Issue 42: the Summary's reference-design and goodput-assumption rows, and the longer caveats (reference,
    # spares not cabled) in the Summary and the Performance sheet's caveat column, take a page more each;
    # issue 43: rent, own and the verdict on one page; the Summary prints on 4 pages so that its words stay ≥ 7 pt
    # (issue 42 and 45 rows).
    expected = {"Summary": 4, "Prices": 2, "BOM 1": 2, "BOM 2": 2, "Cables": 2, "Rent or buy": 1, "Performance": 4}
    assert list(dict.fromkeys(sheets)) == [*expected, "Assumptions"]  # no other sheet (no Frontier)
    assert {s: sheets.count(s) for s in expected} == expected
    assert sheets.count("Assumptions") in (2, 3)
    performance = [p for p in printed if p.sheet == "Performance"]
    assert performance[3].words[0][0] == "Goodput:"  # the goodput table's title starts its own page
    assert all(p.width_pt > p.height_pt for p in printed)  # landscape


@pytest.mark.libreoffice
@needs_soffice
def test_printed_text_is_readable(printed, lo_profile, work):
    assert_readable(printed, box_per_pt(lo_profile, work / "reference"))


@pytest.mark.libreoffice
@needs_soffice
def test_printed_numbers_line_up_under_their_headers(printed, solved):
    _, _, _, js = solved
    page = next(p for p in printed if p.sheet == "BOM 1")
    compute = f"{line_quantity(js['designs'][0], 'compute'):,}"  # 512 on the first line

    def right_edge(text: str) -> float:
        return next(w[3] for w in page.words if w[0] == text)

    assert abs(right_edge("Quantity") - right_edge(compute)) < 3  # both end at column D's right edge (3 pt pad)
