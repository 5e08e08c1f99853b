"""The workbook's "Rent or buy" sheet (solver/reports/rent_excel.py), recalculated in LibreOffice
headless and printed to PDF: every offer's rent, own, break-even month and cheaper choice equal the
JSON; an edited price or run length flows through the live formulas (arithmetic by hand); the sheet
prints landscape at 9 pt or more.
"""
from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from conftest import REPO
from office import box_per_pt, convert, needs_soffice, pdf_pages, profile, recalc_many

import solver
from solver import api
from solver.reports.excel import write_workbook
from solver.reports.rent_excel import HEADER_ROW, HEADERS, SHEET

EXAMPLE = REPO / "scenarios" / "rent-or-buy.yaml"
COL = {h: i + 1 for i, h in enumerate(HEADERS)}
CHEAPER = HEADERS[14]


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("rent_workbook")


@pytest.fixture(scope="module")
def solved(work):
    ls = solver.load_scenario(EXAMPLE)
    cat = api.catalog_for(ls)
    # best per platform: a B200, a GB200 NVL72, an H200 and an H100 design (by TCO in that order since hot spares,
    # site lines and physics v3; the H100 one has four offers, one reserved)
    result = solver.solve(ls, cat, top_k=4, distinct_by="platform")
    book = write_workbook(result, ls, cat, work / "rent.xlsx")
    return result, result.to_dict(), book


@pytest.fixture(scope="module")
def lo_profile(work) -> Path:
    return profile(work / "lo_profile")


def _edited(book: Path, work: Path) -> Path:
    """The first offer's row at $1 per GPU-hour for a 100-hour run."""
    wb = openpyxl.load_workbook(book)
    ws = wb[SHEET]
    ws.cell(row=HEADER_ROW + 1, column=COL["USD per GPU-hour"]).value = 1.0
    ws.cell(row=HEADER_ROW + 1, column=COL["Hours of the run"]).value = 100.0
    wb.save(work / "edited.xlsx")
    return work / "edited.xlsx"


@pytest.fixture(scope="module")
def recalculated(solved, lo_profile, work) -> dict:
    """The sheet as written and as edited (`_edited`), both recalculated by LibreOffice in one start."""
    book, edited = solved[2], _edited(solved[2], work)
    books = recalc_many([book, edited], lo_profile)
    return {"as written": books[book][SHEET], "edited": books[edited][SHEET]}


def _rows(ws) -> list[int]:
    rows, r = [], HEADER_ROW + 1
    while ws.cell(row=r, column=1).value:
        rows.append(r)
        r += 1
    return rows


def test_sheet_order_and_one_row_per_offer(solved):
    result, js, book = solved
    wb = openpyxl.load_workbook(book)
    assert wb.sheetnames.index(SHEET) == wb.sheetnames.index("Performance") - 1
    quotes = [(f"#{d['rank']}", q["offer"]) for d in js["designs"] for q in d["rent_or_buy"]["quotes"]]
    ws = wb[SHEET]
    got = [(ws.cell(row=r, column=1).value, ws.cell(row=r, column=2).value.split(" (")[0]) for r in _rows(ws)]
    assert got == quotes
    # 1 B200 + 1 GB200 + 1 H200 (aws-p5e) + the four H100 offers (catalogs/default.yaml rentals:) = 7
    assert len({q for _, q in quotes}) == 7


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_values_equal_the_json(solved, recalculated):
    _, js, _ = solved
    ws = recalculated["as written"]
    rows = iter(_rows(ws))
    for d in js["designs"]:
        rb = d["rent_or_buy"]
        for q in rb["quotes"]:
            r = next(rows)
            assert ws.cell(row=r, column=COL["Rent (USD)"]).value == pytest.approx(q["rent_usd"], abs=0.01)
            assert ws.cell(row=r, column=COL["Capex (USD)"]).value == pytest.approx(d["capex_usd"], abs=0.005)
            assert ws.cell(row=r, column=COL["TCO (USD)"]).value == pytest.approx(d["tco_usd"], abs=0.005)
            own = ws.cell(row=r, column=COL["Own for the hours (USD)"]).value
            assert own == pytest.approx(rb["own_usd"], abs=0.01)
            month = ws.cell(row=r, column=COL["Break-even month"]).value
            if q["offer"] == rb["offer"]:
                assert month == (-1 if rb["break_even_month"] is None else rb["break_even_month"])  # −1 prints "never"
            # own − rent: positive when renting is cheaper
            assert ws.cell(row=r, column=COL[CHEAPER]).value == pytest.approx(rb["own_usd"] - q["rent_usd"], abs=0.01)


@pytest.mark.libreoffice
@needs_soffice
def test_an_edited_price_and_run_length_flow_through(solved, recalculated):
    _, js, book = solved
    r = HEADER_ROW + 1
    gpus = openpyxl.load_workbook(book)[SHEET].cell(row=r, column=COL["GPUs rented"]).value
    out = recalculated["edited"]  # row r at $1 per GPU-hour for 100 hours (_edited)
    d = js["designs"][0]
    energy_month = d["rent_or_buy"]["energy_usd_per_month"]
    # rent = GPUs · $1 · 100 h; own = capex + energy per month · 100 / 730
    assert out.cell(row=r, column=COL["Rent (USD)"]).value == pytest.approx(gpus * 100.0, abs=0.01)
    assert out.cell(row=r, column=COL["Own for the hours (USD)"]).value == pytest.approx(
        d["capex_usd"] + energy_month * 100 / 730, abs=0.01)
    # a month of renting: GPUs · $1 · 730 h; break-even = ⌈capex / (that − energy per month)⌉, or never
    saving = gpus * 730.0 - energy_month
    expected = -(-d["capex_usd"] // saving) if saving > 0 else -1
    assert out.cell(row=r, column=COL["Break-even month"]).value == expected


@pytest.mark.libreoffice
@needs_soffice
def test_the_sheet_prints_landscape_at_9_pt_or_more(solved, lo_profile, work):
    _, _, book = solved
    pages = [p for p in pdf_pages(convert(book, "pdf", work / "pdf", lo_profile)) if p.sheet == SHEET]
    per_pt = box_per_pt(lo_profile, work / "reference")
    # 16 columns, about 1,700 pt wide, printed at 100 % (734 pt per landscape page inside the margins):
    # 3 pages, Design and Offer repeated on each
    assert 2 <= len(pages) <= 4
    assert all(p.width_pt > p.height_pt for p in pages)
    for page in pages:
        heights = sorted(w[4] - w[2] for w in page.words)
        assert heights[len(heights) // 2] >= 9 * per_pt, heights[len(heights) // 2] / per_pt
    assert all(any(w[0] == "Design" for w in p.words) for p in pages)  # the title columns repeat
