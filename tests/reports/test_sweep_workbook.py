"""The sweep workbook (solver/reports/sweep_excel.py; SPEC §9, issue 17).

A real sweep solved by HiGHS: a Llama-3-8B-shaped model whose batch doubles each year for three
years (256, 512, 1,024, 2,048 sequences) at 10 s per step, on DGX B200 / HGX H100 with 5 % spare
nodes and a 10 % contingency, capped at 100 GPUs so that the last year has no design. Expected
numbers come from the sweep's JSON (its increments are computed by solver/sweep/summary.py, not by
the workbook) or are worked out by hand in the test; LibreOffice recalculates the workbook
(tests/reports/office.py makes it recalculate rather than show the cached values).
"""
from __future__ import annotations

import copy
import re
import zipfile
from pathlib import Path

import openpyxl
import openpyxl.utils
import pytest
from office import assert_readable, box_per_pt, convert, needs_soffice, pdf_pages, profile, recalc_many

import solver
from solver.api import catalog_for
from solver.reports.sweep_excel import write_sweep_workbook
from solver.sweep.plan import plan_sweep
from solver.sweep.run import run_points
from solver.sweep.summary import sweep_report

SCENARIO = {
    "name": "sweep-book",
    "workload": {"model": {"layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "attention_heads": 32,
                           "kv_heads": 8, "vocab_size": 128256, "seq_len": 8192}, "global_batch_size": 256},
    "target": {"step_time_s": 10.0},
    "constraints": {"platforms": ["hgx-h100", "dgx-b200"], "nics": ["cx7-ndr"], "oversubscription": [1],
                    "spare_nodes_fraction": 0.05, "contingency_fraction": 0.1, "max_gpus": 100},
    "parallelism": {"tp": [1, 2], "cp": [1], "pp": [1, 2], "vp": [1], "microbatch_size": [1]},
    "sweep": {"parameters": [{"path": "workload.global_batch_size", "growth": {"factor": 2, "steps": 3}}]},
}
GPUS_PER_NODE = 8  # DGX B200 and HGX H100


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("sweep_workbook")


@pytest.fixture(scope="module")
def swept():
    ls = solver.load_scenario(copy.deepcopy(SCENARIO))
    cat = catalog_for(ls)
    plan = plan_sweep(ls, cat)
    report = sweep_report(plan, run_points(plan))
    assert [p["status"] for p in report["points"]][-1] == "infeasible"  # 2,048 sequences need more than 100 GPUs
    return report, ls, cat


@pytest.fixture(scope="module")
def book(swept, work) -> Path:
    report, ls, cat = swept
    return write_sweep_workbook(report, work / "sweep.xlsx", ls, cat)


@pytest.fixture(scope="module")
def lo_profile(work) -> Path:
    return profile(work / "lo_profile")


def label_row(ws, label: str) -> int:
    hits = [c.row for c in ws["A"] if c.value == label]
    assert hits, f"no {label!r} in column A of {ws.title}"
    return hits[0]


def solved_points(report: dict) -> list[dict]:
    return [p for p in report["points"] if p.get("architecture")]


def charts_xml(book: Path) -> list[str]:
    with zipfile.ZipFile(book) as z:
        return [z.read(n).decode().replace("c:", "") for n in sorted(z.namelist())
                if re.fullmatch(r"xl/charts/chart\d+\.xml", n)]


# ----------------------------------------------------------------------------------- structure


def test_sheets_and_the_year_axis(book, swept):
    report, _, _ = swept
    wb = openpyxl.load_workbook(book)
    assert wb.sheetnames == ["Sweep", "Charts", "BOM by point", "Increments", "Assumptions"]
    ws = wb["Sweep"]
    # growth 2× per year from 256: year k has 256 · 2^k sequences
    assert [c.value for c in ws[4]][:3] == ["year", "global_batch_size", "architecture (or why none)"]
    assert [(ws.cell(row=5 + k, column=1).value, ws.cell(row=5 + k, column=2).value) for k in range(4)] == \
        [(0, 256), (1, 512), (2, 1024), (3, 2048)]
    assert ws.cell(row=8, column=3).value.startswith("infeasible: ")
    assert ws.print_title_rows == "$4:$4"
    for sheet in wb.worksheets:
        assert sheet.page_setup.orientation == "landscape"
        assert sheet.oddFooter.center.text == "&A, page &P of &N"
    assert [c.value for c in wb["BOM by point"][4]] == ["year", "0", "1", "2", "3"]


def test_charts_draw_straight_lines_against_the_year(book):
    xml = charts_xml(book)
    assert len(xml) == 2  # capex and TCO; GPUs
    for text in xml:
        assert "<scatterChart>" in text and '<scatterStyle val="lineMarker" />' in text
        series = text.count("<ser>")
        assert text.count('<smooth val="0" />') == series and '<smooth val="1"' not in text  # no overshoot
        assert re.search(r"<valAx>.*?<a:t>year</a:t>", text, flags=re.S)  # the x axis is labelled "year"
        assert '<majorUnit val="1" />' in text and '<max val="3" />' in text  # years 0 … 3, one tick each
    assert "capex where the architecture changes (USD)" in openpyxl.load_workbook(book)["Charts"]["E22"].value


def test_growth_per_names_the_axis(swept, work):
    report, _, _ = swept
    quarterly = copy.deepcopy(report)
    quarterly["axes"][0]["growth"]["per"] = "quarter"
    path = write_sweep_workbook(quarterly, work / "quarterly.xlsx")
    wb = openpyxl.load_workbook(path)
    assert wb["Sweep"]["A4"].value == "quarter" and wb["Increments"]["A1"].value == "What to add from one quarter to the next"
    assert all(re.search(r"<valAx>.*?<a:t>quarter</a:t>", t, flags=re.S) for t in charts_xml(path))


def test_per_defaults_to_year_and_can_be_given():
    data = copy.deepcopy(SCENARIO)
    ls = solver.load_scenario(data)
    assert ls.scenario.sweep.parameters[0].growth.per == "year"
    data["sweep"]["parameters"][0]["growth"]["per"] = "quarter"
    assert solver.load_scenario(data).scenario.sweep.parameters[0].growth.per == "quarter"


# ----------------------------------------------------------------------------------- values as written


def test_bom_by_point_holds_each_point_and_live_totals(book, swept):
    report, _, _ = swept
    formulas, cached = openpyxl.load_workbook(book)["BOM by point"], openpyxl.load_workbook(book, data_only=True)["BOM by point"]
    for k, p in enumerate(report["points"]):
        col = 2 + k
        if not p.get("architecture"):
            assert cached.cell(row=label_row(cached, "GPUs"), column=col).value is None
            continue
        counts = {"GPUs": p["gpus"], "nodes": p["nodes"], "switches": p["switches"], "racks": p["racks"],
                  "links": sum(p["design"]["fabric"]["links"].values())}
        assert {label: cached.cell(row=label_row(cached, label), column=col).value for label in counts} == counts
        assert p["gpus"] == p["nodes"] * GPUS_PER_NODE
        letter = openpyxl.utils.get_column_letter(col)
        capex = formulas.cell(row=label_row(formulas, "capex (USD)"), column=col).value
        assert capex.startswith(f"=SUM({letter}") and capex.endswith(f"+{letter}{label_row(formulas, 'contingency (USD)')}")
        assert abs(cached.cell(row=label_row(cached, "capex (USD)"), column=col).value - p["capex_usd"]) < 0.005
        assert abs(cached.cell(row=label_row(cached, "TCO (USD)"), column=col).value - p["tco_usd"]) < 0.005
        assert cached.cell(row=label_row(cached, "contingency (editable)"), column=col).value == pytest.approx(0.10)
        for cat in ("compute", "spares", "switch", "link", "rack"):
            want = sum(x["extended_usd"] for x in p["design"]["bom"] if x["category"] == cat)
            assert cached.cell(row=label_row(cached, cat), column=col).value == pytest.approx(want)


def test_increments_are_live_formulas_equal_to_the_json(book, swept):
    report, _, _ = swept
    formulas, cached = openpyxl.load_workbook(book)["Increments"], openpyxl.load_workbook(book, data_only=True)["Increments"]
    # years 0→1 and 1→2 (year 3 has no design): 3 → 5 → 9 nodes (2, 4, 8 job nodes + ⌈5 %⌉ = 1 spare)
    assert [c.value for c in formulas[4]] == ["year", "0 → 1", "1 → 2"]
    assert [cached.cell(row=label_row(cached, "added nodes"), column=c).value for c in (2, 3)] == [2, 4]
    assert [cached.cell(row=label_row(cached, "added GPUs"), column=c).value for c in (2, 3)] == [16, 32]
    assert formulas.cell(row=label_row(formulas, "added GPUs"), column=2).value == \
        f"='BOM by point'!C{label_row(openpyxl.load_workbook(book)['BOM by point'], 'GPUs')}" \
        f"-'BOM by point'!B{label_row(openpyxl.load_workbook(book)['BOM by point'], 'GPUs')}"
    assert len(report["increments"]) == 2
    for col, inc in zip((2, 3), report["increments"]):
        def value(label: str, c: int = col):
            return cached.cell(row=label_row(cached, label), column=c).value

        assert (value("added GPUs"), value("added nodes"), value("added switches"), value("added racks")) == \
            (inc["added_gpus"], inc["added_nodes"], inc["added_switches"], inc["added_racks"])
        assert abs(value("added capex (USD)") - inc["capex_delta_usd"]) < 0.005
        assert value("capex per added GPU (USD)") == pytest.approx(inc["capex_delta_usd"] / inc["added_gpus"])


def test_assumptions_name_the_sweep_and_the_base_scenario(book, swept):
    report, ls, cat = swept
    rows = {r[0]: r[1] for r in openpyxl.load_workbook(book)["Assumptions"].iter_rows(values_only=True) if r[0]}
    assert rows["scenario"] == "sweep-book" and rows["points"] == 4
    assert rows["axis workload.global_batch_size"] == "growth × 2 per year for 3 years: 256, 512, 1,024, 2,048"
    assert rows["sweep hash"] == report["sweep_hash"]
    assert rows["infeasible points"] == 1 and rows["optimal points"] == 3
    assert rows["constraints.max_gpus"] == 100  # the base scenario as given
    for path, digest in cat.provenance.files:
        assert rows[str(path)] == digest
    assert rows["fabricplan version"] == solver.__version__


# ----------------------------------------------------------------------------------- LibreOffice


def _edited(book: Path, work: Path) -> Path:
    """$1,000,000 more of compute in year 1 on the BOM by point sheet."""
    wb = openpyxl.load_workbook(book)
    ws = wb["BOM by point"]
    ws.cell(row=label_row(ws, "compute"), column=3).value += 1_000_000  # year 1
    wb.save(work / "edited.xlsx")
    return work / "edited.xlsx"


@pytest.fixture(scope="module")
def recalculated_pair(book, lo_profile, work) -> dict:
    """The workbook as written and as edited (`_edited`), both recalculated by LibreOffice in one start."""
    edited = _edited(book, work)
    books = recalc_many([book, edited], lo_profile)
    return {"as written": books[book], "edited": books[edited]}


@pytest.fixture(scope="module")
def recalculated(recalculated_pair):
    return recalculated_pair["as written"]


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
                    assert isinstance(mine, float) and theirs == pytest.approx(mine, rel=1e-9, abs=1e-6), c.coordinate
                    checked += 1
    # BOM by point: contingency, capex and TCO per solved point; Increments: 6 differences and capex per
    # added GPU per pair; Charts: capex, TCO and GPUs per solved point (the architecture never changes)
    solved, pairs = 3, 2
    assert checked == 3 * solved + 7 * pairs + 3 * solved


@pytest.mark.libreoffice
@needs_soffice
def test_recalculated_increments_equal_the_json_to_the_cent(recalculated, swept):
    report, _, _ = swept
    ws = recalculated["Increments"]
    for col, inc in zip((2, 3), report["increments"]):
        assert abs(ws.cell(row=label_row(ws, "added capex (USD)"), column=col).value - inc["capex_delta_usd"]) < 0.005
    charts = recalculated["Charts"]
    capex = [charts.cell(row=23 + k, column=2).value for k in range(4)]
    assert [round(v, 2) if v is not None else None for v in capex] == \
        [round(p["capex_usd"], 2) if p.get("architecture") else None for p in report["points"]]


@pytest.mark.libreoffice
@needs_soffice
def test_a_category_edit_moves_the_increments_and_the_chart(swept, recalculated_pair):
    report, _, _ = swept
    out = recalculated_pair["edited"]  # +$1,000,000 of compute in year 1 (_edited)
    inc = out["Increments"]
    first, second = report["increments"]
    # +$1,000,000 of compute in year 1 is +$1,100,000 of capex with the 10 % contingency:
    # year 0 → 1 adds $1.1M more, year 1 → 2 adds $1.1M less; per added GPU, 0 → 1 has 16 GPUs
    added = inc.cell(row=label_row(inc, "added capex (USD)"), column=2).value
    assert abs(added - (first["capex_delta_usd"] + 1_100_000)) < 0.005
    assert abs(inc.cell(row=label_row(inc, "added capex (USD)"), column=3).value
               - (second["capex_delta_usd"] - 1_100_000)) < 0.005
    assert inc.cell(row=label_row(inc, "capex per added GPU (USD)"), column=2).value == \
        pytest.approx((first["capex_delta_usd"] + 1_100_000) / 16)
    year1 = report["points"][1]
    assert abs(out["Charts"].cell(row=24, column=2).value - (year1["capex_usd"] + 1_100_000)) < 0.005
    assert abs(out["Charts"].cell(row=24, column=3).value - (year1["tco_usd"] + 1_100_000)) < 0.005


@pytest.fixture(scope="module")
def printed(book, lo_profile, work):
    return pdf_pages(convert(book, "pdf", work / "pdf", lo_profile))


@pytest.mark.libreoffice
@needs_soffice
def test_printed_pages(printed, lo_profile, work):
    # four points: the tables are one landscape page each (the two charts side by side are fitted to
    # theirs); Assumptions lists the sweep (13 rows), the base scenario (about 30), the catalog files
    # and the run: about 60 rows of 15 pt at 100 %, two pages of about 500 pt
    assert [p.sheet for p in printed] == ["Sweep", "Charts", "BOM by point", "Increments", "Assumptions", "Assumptions"]
    assert all(p.width_pt > p.height_pt for p in printed)
    assert_readable(printed, box_per_pt(lo_profile, work / "reference"))
    # the chart's x axis reads "year" and its ticks 0 … 3
    charts = {w[0] for w in printed[1].words}
    assert {"year", "0", "1", "2", "3"} <= charts


def test_x_axis_is_the_year_the_value_or_the_label():
    from solver.sweep.summary import x_axis

    def point(index: int, **values) -> dict:
        return {"index": index, "values": values, "labels": {k: str(v) for k, v in values.items()}}

    growth = {"name": "workload.global_batch_size", "kind": "int", "values": [100, 150, 225],
              "growth": {"factor": 1.5, "steps": 2, "per": "year"}}
    points = [point(k, **{"workload.global_batch_size": v}) for k, v in enumerate([100, 150, 225])]
    x = x_axis({"axes": [growth], "combine": "product", "points": points})
    assert (x["kind"], x["title"], x["values"]) == ("step", "year", [0, 1, 2])
    assert x["description"] == "year k: workload.global_batch_size = 100 · 1.5^k"
    listed = dict(growth, growth=None)
    x = x_axis({"axes": [listed], "combine": "product", "points": points})
    assert (x["kind"], x["title"], x["values"]) == ("value", "workload.global_batch_size", [100, 150, 225])
    both = [point(0, a=1, b=2), point(1, a=1, b=3)]
    axes = [{"name": "a", "kind": "int", "values": [1]}, {"name": "b", "kind": "int", "values": [2, 3]}]
    x = x_axis({"axes": axes, "combine": "product", "points": both})
    assert (x["kind"], x["title"], x["values"], x["numeric"]) == ("label", "a, b", ["1, 2", "1, 3"], False)
