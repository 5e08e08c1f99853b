"""The workbook's "Rent or buy" sheet (solver/reports/rent_excel.py): the ownership inputs with their
sources, one column of live formulas per design, every offer once with its source, one printed page.

The formulas are evaluated here by a small evaluator of the few functions the sheet uses (SUM, MAX, IF,
AND, ROUNDUP) over the cells' own formulas, with the Summary's and Assumptions' cells at their cached
values: they equal the JSON, and an edited input (hours, a price, the life) flows through to the numbers
worked by hand. With LibreOffice installed (CI) the sheet is also recalculated there and printed to PDF.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import openpyxl
import pytest
from conftest import REPO
from office import convert, needs_soffice, pdf_pages, profile, recalc_many

import solver
from solver import api
from solver.reports.excel import write_workbook
from solver.reports.rent_excel import INPUT_ROW, KWH_ROW, ROW, SHEET

EXAMPLE = REPO / "scenarios" / "rent-or-buy.yaml"


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("rent_workbook")


@pytest.fixture(scope="module")
def solved(work):
    ls = solver.load_scenario(EXAMPLE)
    cat = api.catalog_for(ls)
    # best per platform: a B200, a GB200 NVL72, an H200 and an H100 design
    result = solver.solve(ls, cat, top_k=4, distinct_by="platform")
    book = write_workbook(result, ls, cat, work / "rent.xlsx")
    return result, result.to_dict(), book


class Sheet:
    """Evaluates the sheet's formulas: cells of other sheets and named cells at their cached values."""

    REF = re.compile(r"(?:(\w+)!)?\$?([A-Z]{1,2})\$?(\d+)")
    RANGE = re.compile(r"\$?([A-Z]{1,2})\$?(\d+):\$?([A-Z]{1,2})\$?(\d+)")

    def __init__(self, book: Path, edits: dict[str, float] | None = None):
        self.formulas = openpyxl.load_workbook(book)
        self.cached = openpyxl.load_workbook(book, data_only=True)
        self.edits = edits or {}
        self.names = {n: self.formulas.defined_names[n].attr_text for n in ("TCO_usd_per_kWh",)}

    def _other(self, sheet: str, cell: str) -> float:
        return self.cached[sheet.strip("'")][cell].value

    def value(self, cell: str) -> float:
        if cell in self.edits:
            return self.edits[cell]
        v = self.formulas[SHEET][cell].value
        if not (isinstance(v, str) and v.startswith("=")):
            return v
        expr = v[1:]
        for name, target in self.names.items():
            sheet, ref = target.split("!")
            expr = expr.replace(name, repr(self._other(sheet, ref.replace("$", ""))))
        expr = self.RANGE.sub(lambda m: "[" + ",".join(f"{m[1]}{r}" for r in range(int(m[2]), int(m[4]) + 1)) + "]", expr)
        expr = self.REF.sub(lambda m: repr(self._other(m[1], f"{m[2]}{m[3]}")) if m[1] else f"V('{m[2]}{m[3]}')", expr)
        expr = expr.replace("<>", "!=").replace(">=", " >= ").replace("<=", " <= ")
        env = {"V": self.value, "SUM": lambda xs: sum(self.value(x) if isinstance(x, str) else x for x in xs),
               "MAX": max, "IF": lambda c, a, b: a if c else b, "AND": lambda *xs: all(xs),
               "ROUNDUP": lambda x, n: math.ceil(x - 1e-9)}
        expr = re.sub(r"\[([A-Z0-9,]+)\]", lambda m: "[" + ",".join(f"'{c}'" for c in m[1].split(",")) + "]", expr)
        return eval(expr, env)  # noqa: S307 - the sheet's own formulas, written by rent_excel.py


def _col(i: int) -> str:
    return "BCDEFGH"[i]


def test_inputs_with_sources_and_one_column_per_design(solved):
    _, js, book = solved
    ws = openpyxl.load_workbook(book)[SHEET]
    assert ws.cell(row=INPUT_ROW["depreciation_years"], column=2).value == 5
    assert ws.cell(row=INPUT_ROW["depreciation_years"], column=3).value == "docs/sources.md [W1]"
    assert ws.cell(row=INPUT_ROW["residual_fraction"], column=3).value == "estimate; docs/sources.md [W2]"
    full = [ws.cell(row=r, column=3).value for r in range(1, ws.max_row + 1)]
    assert any("Amazon 10-K" in str(v) for v in full) and any("CBRE" in str(v) for v in full)  # in full, below
    assert ws.cell(row=KWH_ROW, column=2).value == "=TCO_usd_per_kWh"
    designs = [d for d in js["designs"] if "rent_or_buy" in d]
    assert [ws.cell(row=ROW["capex"] - 1, column=2 + i).value for i in range(len(designs))] == \
        [f"#{d['rank']}" for d in designs]
    offers = {q["offer"] for d in designs for q in d["rent_or_buy"]["quotes"]}
    head = next(c.row for c in ws["A"] if c.value == "Offer (designs)")
    listed = [str(c.value).split(" (")[0] for c in ws["A"][head:] if c.value]
    assert set(listed) == offers and len(listed) == len(offers)  # every offer once


def test_formulas_equal_the_json(solved):
    _, js, book = solved
    sheet = Sheet(book)
    designs = [d for d in js["designs"] if "rent_or_buy" in d]
    for i, d in enumerate(designs):
        rb, c = d["rent_or_buy"], _col(i)
        o = rb["owning"]
        for key in ("depreciation", "financing", "colocation", "support", "staff", "energy"):
            assert sheet.value(f"{c}{ROW[key]}") == pytest.approx(o["run_usd"][key], abs=0.01), key
        assert sheet.value(f"{c}{ROW['own']}") == pytest.approx(rb["own_usd"], abs=0.01)
        assert sheet.value(f"{c}{ROW['rent']}") == pytest.approx(rb["rent_usd"], abs=0.01)
        assert sheet.value(f"{c}{ROW['fixed']}") == pytest.approx(o["fixed_life_usd"], abs=0.01)
        be = rb["break_even"]
        assert sheet.value(f"{c}{ROW['busy_months']}") == (-1 if be["months"] is None else be["months"])
        if be["months"] is not None:
            assert sheet.value(f"{c}{ROW['busy_share']}") == pytest.approx(be["utilisation"], abs=1e-9)


def test_edited_inputs_flow_through_by_hand(solved):
    _, js, book = solved
    d = js["designs"][0]
    rb = d["rent_or_buy"]
    c, gpus = "B", rb["quotes"][0]["gpus"]
    edits = {f"{c}{ROW['hours']}": 100.0, f"{c}{ROW['price']}": 1.0, f"{c}{ROW['committed_price']}": 3.0,
             f"B{INPUT_ROW['depreciation_years']}": 4.0, f"B{INPUT_ROW['residual_fraction']}": 0.0,
             f"B{INPUT_ROW['colocation_usd_per_kw_month']}": 0.0, f"B{INPUT_ROW['support_fraction_per_year']}": 0.0,
             f"B{INPUT_ROW['staff_usd_per_gpu_year']}": 0.0, f"B{INPUT_ROW['cost_of_capital']}": 0.0}
    sheet = Sheet(book, edits)
    capex, fac = d["capex_usd"], d["power_kw"]["facility"]
    # capex alone over a 4-year life (35,040 h): own = capex · 100 / 35,040 + facility kW · $0.08 · 100 h
    assert sheet.value(f"{c}{ROW['own']}") == pytest.approx(capex * 100 / 35_040 + fac * 0.08 * 100, abs=0.01)
    # rent = GPUs · $1 · 100 h (no commitment on the first offer)
    assert sheet.value(f"{c}{ROW['rent']}") == pytest.approx(gpus * 100.0, abs=0.01)
    # busy hours = capex / (GPUs · $3 − facility kW · $0.08); months = ⌈that / 730⌉ (never beyond 35,040 h)
    busy = capex / (gpus * 3.0 - fac * 0.08)
    assert sheet.value(f"{c}{ROW['busy_hours']}") == pytest.approx(busy, rel=1e-12)
    assert sheet.value(f"{c}{ROW['busy_months']}") == (math.ceil(busy / 730) if busy <= 35_040 else -1)


def test_the_sheet_prints_on_one_page(solved):
    _, _, book = solved
    ws = openpyxl.load_workbook(book)[SHEET]
    assert ws.sheet_properties.pageSetUpPr.fitToPage
    assert ws.page_setup.fitToWidth == 1 and ws.page_setup.fitToHeight == 1
    assert ws.page_setup.orientation == "landscape"
    assert ws.print_area is not None and "$A$1:" in ws.print_area  # the inputs and the comparison; sources below


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_recalculates_the_json_and_prints_one_page(solved, work):
    _, js, book = solved
    lo = profile(work / "lo_profile")
    ws = recalc_many([book], lo)[book][SHEET]
    for i, d in enumerate(d for d in js["designs"] if "rent_or_buy" in d):
        rb = d["rent_or_buy"]
        assert ws[f"{_col(i)}{ROW['own']}"].value == pytest.approx(rb["own_usd"], abs=0.01)
        assert ws[f"{_col(i)}{ROW['rent']}"].value == pytest.approx(rb["rent_usd"], abs=0.01)
    pages = [p for p in pdf_pages(convert(book, "pdf", work / "pdf", lo)) if p.sheet == SHEET]
    assert len(pages) == 1 and pages[0].width_pt > pages[0].height_pt
