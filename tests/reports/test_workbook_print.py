"""A workbook finance can print (issue 45 item 4): every sheet of the solve, plan and sweep workbooks rendered
by LibreOffice headless to PDF at the default widths shows no `###` (a number wider than its column), no label
cut at its column's edge, headers broken between words only, the plan's architecture inside its own cell, and
the Frontier chart drawn with straight segments (a smoothed line dips below the real points between designs).
"""
from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import openpyxl
import pytest
from conftest import REPO
from office import convert, needs_soffice, pdf_pages, profile

from solver.reports.xlsx import number_text, word_lines


def _run(args: list, cwd: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr


@pytest.fixture(scope="module")
def books(tmp_path_factory) -> dict[str, Path]:
    """goodput-32k ($1.9B of capex: the widest numbers of the shipped examples) with its frontier, the 5-year plan,
    the growth sweep."""
    work = tmp_path_factory.mktemp("print")
    _run(["solve", REPO / "scenarios" / "goodput-32k.yaml", "--json", "g.json", "--xlsx", "g.xlsx", "--frontier", "3"],
         work)
    _run(["plan", REPO / "scenarios" / "plan-5-years.yaml", "--json", "p.json", "--xlsx", "p.xlsx", "--no-plot"], work)
    _run(["sweep", REPO / "scenarios" / "growth-sweep.yaml", "--json", "s.json", "--xlsx", "s.xlsx", "--no-plot"], work)
    return {k: work / f"{k}.xlsx" for k in ("g", "p", "s")}


def test_number_text_is_as_wide_as_the_spreadsheet_shows_it():
    # by hand: $1,919,989,640.00 is 17 characters; 12.3% is 5; "$"#,##0 of 51,982.4 is $51,982
    assert number_text(1_919_989_640, '"$"#,##0.00') == "$1,919,989,640.00"
    assert number_text(0.123, "0.0%") == "12.3%"
    assert number_text(51_982.4, '"$"#,##0') == "$51,982"
    assert len(number_text(5.2e9, '"$"#,##0.0,,"M"')) == len("$5,200.0M")


def test_word_lines_break_between_words_only():
    # "gb200-nvl72 · 4×cx7-ndr · qm9700, 3-tier" in 18 characters: "gb200-nvl72 ·" / "4×cx7-ndr ·" / "qm9700, 3-tier"
    assert word_lines("gb200-nvl72 · 4×cx7-ndr · qm9700, 3-tier", 18) == 3
    assert word_lines("short", 18) == 1


@needs_soffice
def test_no_sheet_prints_hashes_or_cut_labels(books, tmp_path):
    lo = profile(tmp_path / "lo")
    for key, book in books.items():
        pdf = convert(book, "pdf", tmp_path / "pdf", lo)
        text = subprocess.run(["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True,
                              timeout=120).stdout
        assert "###" not in text, f"{book.name}: a number does not fit its column"
        words = {w[0] for page in pdf_pages(pdf) for w in page.words}
        wb = openpyxl.load_workbook(book)
        if key == "g":  # every Summary label prints whole (issue 45: "Cost per million tokens (USD, cap")
            ws = wb["Summary"]
            for row in range(1, ws.max_row + 1):
                label = ws.cell(row=row, column=1).value
                if isinstance(label, str) and ws.cell(row=row, column=2).value is not None:
                    assert all(w in words for w in label.split()), label  # a cut label loses its last word
        if key == "p":  # the plan's architecture text stays in its cell: every word of it prints
            ws = wb["Plan"]
            for row in ws.iter_rows(min_col=2):  # the periods' columns (column A holds the labels)
                for cell in row:
                    if isinstance(cell.value, str) and " · " in cell.value:
                        assert cell.alignment.wrap_text, cell.coordinate
                        # LibreOffice may break "4×cx7-ndr" after its hyphen: compare the pieces between hyphens
                        pieces = {x for w in words for x in re.split(r"(?<=-)", w) if x}
                        assert all(x in pieces for w in cell.value.split() for x in re.split(r"(?<=-)", w) if x), \
                            cell.value


def test_headers_wrap_at_word_boundaries_and_numbers_fit(books):
    from solver.reports.xlsx import bold_word_chars

    for book in books.values():
        wb = openpyxl.load_workbook(book)
        for ws in wb.worksheets:
            merged = {c.coordinate for rng in ws.merged_cells.ranges for row in ws[rng.coord] for c in row}
            for row in ws.iter_rows():
                for cell in row:
                    if cell.coordinate in merged or not isinstance(cell.value, str):
                        continue
                    width = ws.column_dimensions[cell.column_letter].width or 8.43
                    if cell.alignment.wrap_text and cell.font.b:  # a header: each word (or hyphenated piece) fits
                        for piece in cell.value.split():
                            assert bold_word_chars(piece) <= width + 1e-6, (book.name, ws.title, cell.coordinate, piece)
                        # a word broken by the fitting is broken with a hyphen at the end of a line
                        assert all(line.endswith("-") or line == lines[-1]
                                   for lines in [cell.value.split("\n")] for line in lines[:-1]) or "\n" not in cell.value


def test_frontier_and_plan_charts_are_not_smoothed(books):
    with zipfile.ZipFile(books["g"]) as z:
        charts = [z.read(n).decode("utf-8") for n in z.namelist() if n.startswith("xl/charts/chart")]
    scatter = [c for c in charts if re.search(r"<(c:)?scatterChart>", c)]
    assert scatter, "the Frontier sheet has a scatter chart"
    for xml in scatter:
        assert re.search(r'<(c:)?scatterStyle val="lineMarker"', xml)
        smooth = re.findall(r'<(?:c:)?smooth val="(\d)"', xml)
        assert smooth and set(smooth) == {"0"}
    with zipfile.ZipFile(books["p"]) as z:
        lines = [z.read(n).decode("utf-8") for n in z.namelist() if n.startswith("xl/charts/chart")]
    assert lines
    for xml in lines:
        assert not re.search(r'<(c:)?smooth val="1"', xml)
