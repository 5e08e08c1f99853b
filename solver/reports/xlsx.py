"""Workbook building blocks shared by every fabricplan workbook (solve, sweep, plan).

Cells: `put` stores a value (a str is ALWAYS text, never a formula); `formula` stores a formula we
built ourselves together with the number it evaluates to (its cached value).

Cached values: openpyxl writes formulas without results, so a program that reads the file without a
spreadsheet application (pandas, openpyxl with data_only=True) would see empty cells. `save_workbook`
therefore writes each formula's value next to it (the `<v>` element of the cell). The values are the
solver's own numbers for the file as written; Excel recalculates on open (fullCalcOnLoad) and
LibreOffice recalculates every cell that depends on an edit. tests/reports check that LibreOffice's
recalculation of every formula equals its cached value.

Print setup: `print_setup` makes a sheet print landscape, N pages wide, with header rows repeated
and the sheet name and page number in the footer; fonts are explicit (Calibri, LibreOffice
substitutes a metric-compatible or similar font).
"""
from __future__ import annotations

import math
import re
import weakref
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.chart.data_source import AxDataSource, StrRef
from openpyxl.chart.text import RichText, Text
from openpyxl.chart.title import Title
from openpyxl.drawing.spreadsheet_drawing import AbsoluteAnchor
from openpyxl.drawing.text import CharacterProperties, Paragraph, ParagraphProperties, RegularTextRun
from openpyxl.drawing.xdr import XDRPoint2D, XDRPositiveSize2D
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter, quote_sheetname
from openpyxl.utils.units import cm_to_EMU, pixels_to_EMU
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.page import PageMargins

from ..figures import NUMBER_FORMATS
from ..files import atomic_path, current_run_id

USD = NUMBER_FORMATS["usd"]  # the figures' formats (solver/figures.py), one source
USD_CENTS = NUMBER_FORMATS["usd_cents"]
USD_MILLIONS = '"$"#,##0.0,,"M"'
PERCENT = NUMBER_FORMATS["fraction"]
SECONDS = NUMBER_FORMATS["s"]
NUMBER = NUMBER_FORMATS["count"]
NUMBER_2 = "#,##0.00"
GB = "#,##0.00"

FONT_NAME = "Calibri"
BODY_SIZE = 11
HEADER_FONT = Font(name=FONT_NAME, size=BODY_SIZE, bold=True, color="FFFFFF")
HEADER_FILL = PatternFill("solid", fgColor="1F4E78")
INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")  # editable cells are yellow
TITLE_FONT = Font(name=FONT_NAME, size=14, bold=True)
SECTION_FONT = Font(name=FONT_NAME, size=12, bold=True)
BOLD = Font(name=FONT_NAME, size=BODY_SIZE, bold=True)
NOTE_FONT = Font(name=FONT_NAME, size=10, italic=True, color="404040")
RIGHT = Alignment(horizontal="right", vertical="top")
TOP = Alignment(vertical="top")
LEFT_TOP = Alignment(horizontal="left", vertical="top")
LEFT_WRAP = Alignment(horizontal="left", vertical="top", wrap_text=True)
RIGHT_WRAP = Alignment(horizontal="right", vertical="top", wrap_text=True)
LINE_HEIGHT_PT = 15.0  # one line of 11 pt text


# ----------------------------------------------------------------------------------- cells


def _text(value: Any) -> str:
    # openpyxl refuses control characters; drop them rather than fail on a catalog string.
    return ILLEGAL_CHARACTERS_RE.sub("", str(value))


def put(ws, row: int, col: int, value: Any, number_format: str | None = None):
    """Write a value; a str is ALWAYS stored as text, so "=HYPERLINK(…)" can never become a formula."""
    cell = ws.cell(row=row, column=col)
    if isinstance(value, str):
        cell.value = _text(value)
        cell.data_type = "s"
    else:
        cell.value = value
    if number_format:
        cell.number_format = number_format
    return cell


_CACHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def cached_values(wb: Workbook) -> dict[tuple[str, str], float]:
    """{(sheet title, "F5"): value} of the formulas written with a value, for `save_workbook`."""
    if wb not in _CACHES:
        _CACHES[wb] = {}
    return _CACHES[wb]


def formula(ws, row: int, col: int, expression: str, number_format: str | None = None, value: Any = None):
    """Write a formula we built ourselves (never from input text); `expression` starts with "=".

    `value` is what the formula evaluates to in the file as written (a finite number); it is stored
    as the cell's cached value so readers without a spreadsheet application see it.
    """
    assert expression.startswith("="), expression
    cell = ws.cell(row=row, column=col)
    cell.value = expression
    if number_format:
        cell.number_format = number_format
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        cached_values(ws.parent)[ws.title, cell.coordinate] = float(value)
    return cell


@dataclass(frozen=True)
class Live:
    """A formula we built and the value it has in the file as written (its cached value)."""

    expression: str
    value: float


def write_cell(ws, row: int, col: int, value: Any, fmt: str | None = None):
    """A Live value becomes a formula with its cached value; anything else is `put` (text stays text)."""
    if isinstance(value, Live):
        return formula(ws, row, col, value.expression, fmt, value.value)
    return put(ws, row, col, value, fmt)


def header_row(ws, row: int, labels, first_col: int = 1, right: Iterable[int] = (), height: float = 32) -> None:
    """A dark header row; the columns in `right` (1-based) hold numbers and are right-aligned."""
    right = set(right)
    for i, label in enumerate(labels):
        col = first_col + i
        cell = put(ws, row, col, label)
        cell.font, cell.fill = HEADER_FONT, HEADER_FILL
        cell.alignment = Alignment(wrap_text=True, vertical="center", horizontal="right" if col in right else "left")
    ws.row_dimensions[row].height = height  # 32 pt: room for two wrapped lines


def write_title(ws, text: str) -> None:
    """The sheet's title in A1."""
    put(ws, 1, 1, text).font = TITLE_FONT


def section_row(ws, row: int, text: str, col: int = 1):
    """A section heading in a sheet."""
    cell = put(ws, row, col, text)
    cell.font = SECTION_FONT
    return cell


def note(ws, row: int, text: str, col: int = 1):
    cell = put(ws, row, col, text)
    cell.font = NOTE_FONT
    return cell


PRINTABLE_PT = (792 - 0.8 * 72, 612 - 1.1 * 72 - 30)  # landscape Letter inside the margins, footer room
MIN_PRINT_SCALE = 0.7  # 11 pt text prints at 7.7 pt or larger


def print_setup(ws, pages_wide: int = 1, title_rows: str | None = None, title_cols: str | None = None,
                pages_tall: int = 0, fit: bool | None = None, labels: str = "") -> None:
    """Print landscape, `pages_wide` pages across and `pages_tall` down (0: as many as needed), header
    rows repeated on every page, narrow margins, the sheet name and page number in the footer.

    Call it last (it measures the sheet). Fit-to-page is switched on only when the cells are larger
    than the pages (LibreOffice would otherwise also enlarge a narrow sheet to the page width), or
    when `fit` says so: a sheet with charts beside each other must fit them, since a page break
    between columns would cut a chart that reaches past the cells.
    """
    fit_widths(ws, labels)  # no ###, headers broken between words, the `labels` columns' labels whole (issue 45)
    width, height = sheet_size_pt(ws)
    shrink = width > pages_wide * PRINTABLE_PT[0] or (pages_tall > 0 and height > pages_tall * PRINTABLE_PT[1])
    shrink = shrink if fit is None else fit
    ws.page_setup.orientation = "landscape"
    ws.sheet_properties.pageSetUpPr.fitToPage = shrink
    if shrink:
        ws.page_setup.fitToWidth = pages_wide
        ws.page_setup.fitToHeight = pages_tall
    else:
        ws.page_setup.scale = 100
    ws.page_margins = PageMargins(left=0.4, right=0.4, top=0.5, bottom=0.6, header=0.25, footer=0.25)
    ws.print_options.horizontalCentered = False
    ws.oddFooter.center.text = "&A, page &P of &N"
    if title_rows:
        ws.print_title_rows = title_rows
    if title_cols:
        ws.print_title_cols = title_cols


# ----------------------------------------------------------------------------------- widths that print (issue 45)

# Measured in LibreOffice 7 headless (DejaVu Sans for Calibri), columns 6 … 24.5 characters wide in steps of 0.5: a
# number of n characters printed whole from a width of 10.5 (n = 11), 12.0 (13) and 15.5 (17), about 0.88·n + 0.6;
# in bold from 12.0, 14.0 and 18.0, n + 1; below that it printed ###. The rules keep a quarter to half a character
# spare: 0.92·n + 0.5, and n + 1.25 in bold.
NUMBER_PER_CHAR, NUMBER_PAD = 0.92, 0.5
BOLD_PER_CHAR, BOLD_PAD = 1.0, 1.25
# A header word is measured letter by letter: DejaVu Sans Bold advance widths in 1/1000 em (a digit: 696), so
# "Interruptions" is 10.7 digits wide, not 13; other characters count as a digit.
_BOLD_EM = dict(zip("abcdefghijklmnopqrstuvwxyz", (675, 716, 593, 716, 678, 435, 716, 712, 343, 343, 665, 343, 1042,
                                                     712, 687, 716, 716, 493, 595, 478, 712, 652, 924, 645, 652, 582)))
_BOLD_EM.update(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", (774, 762, 734, 830, 683, 683, 821, 837, 372, 372, 775, 637, 995,
                                                     837, 850, 733, 850, 770, 720, 682, 812, 774, 1103, 771, 724, 725)))
_BOLD_EM.update({" ": 348, "(": 457, ")": 457, ",": 380, ".": 380, "-": 415, "/": 365, "_": 500, ":": 400, "·": 380,
                 "'": 332, "%": 1002, "×": 838, "+": 838, "=": 838, "#": 838, "&": 872})
DIGIT_EM = 696
BOLD_WORD_FACTOR, BOLD_WORD_PAD = 1.094, 1.5  # a bold digit in columns of normal digits (696/636); as the digits


def bold_word_chars(word: str) -> float:
    """Column width (characters) a bold word needs to print on one line: its advance in bold digits, times
    1.094 (a bold digit in normal-digit units), plus the cell padding measured for bold numbers."""
    return sum(_BOLD_EM.get(ch, DIGIT_EM) for ch in word) / DIGIT_EM * BOLD_WORD_FACTOR + BOLD_WORD_PAD


_VOWELS = set("aeiouyAEIOUY")
_DIGRAPHS = {"ch", "sh", "th", "ph", "wh", "ck", "ng", "qu"}


def _syllable_break(word: str, k: int) -> bool:
    """A plausible syllable boundary before word[k]: between two consonants that are not a digraph (Band|width,
    Inter|ruptions), or a vowel then a consonant then a vowel (Cate|gory)."""
    a, b = word[k - 1], word[k]
    if not (a.isalpha() and b.isalpha()):
        return False
    if a not in _VOWELS and b not in _VOWELS:
        return (a + b).lower() not in _DIGRAPHS
    return a in _VOWELS and b not in _VOWELS and k + 1 < len(word) and word[k + 1] in _VOWELS


def hyphenated(word: str, width: float) -> str:
    """A header word too long for `width`, broken with a hyphen after the longest head that fits (at least three
    letters on each side), at a syllable boundary (`_syllable_break`); the rest on the next line. The word itself
    when no such break fits (the column is widened instead)."""
    fits = [k for k in range(len(word) - 3, 2, -1)
            if word[k - 1].isalpha() and word[k].isalpha() and bold_word_chars(word[:k] + "-") <= width]
    best = next((k for k in fits if _syllable_break(word, k)), None)
    return word if best is None else f"{word[:best]}-\n{word[best:]}"
LABEL_CAP = 40.0  # a label column widens to its text up to this many characters, then the label wraps


def number_text(value: float, fmt: str | None) -> str:
    """About what a spreadsheet shows for `value` under `fmt` (its length decides the column width): the
    decimals of the format's first section, thousands separators, a $ or % sign, a scaling comma."""
    section = (fmt or "General").split(";")[0]
    literal = "".join(re.findall(r'"([^"]*)"', section))
    bare = re.sub(r'"[^"]*"', "", section)
    scaled = value / 1000 ** len(re.findall(r",(?=,|$|\s|\))", bare.rstrip())) if re.search(r"0,+(?:$|\W)", bare) else value
    if "%" in bare:
        scaled *= 100
    decimals = len(m.group(1)) if (m := re.search(r"\.(0+)", bare)) else 0
    if bare == "General":
        body = f"{value:.10g}"
    else:
        body = f"{scaled:,.{decimals}f}" if "," in bare else f"{scaled:.{decimals}f}"
    return literal + body + ("%" if "%" in bare else "")


def _needed_chars(cell, cache: dict) -> float:
    """Characters of column width a cell needs so that it prints whole: a number, or the longest word of a wrapped
    bold header (0 for other text, which overflows or wraps)."""
    value = cell.value
    if isinstance(value, str) and value.startswith("=") and cell.data_type == "f":
        value = cache.get((cell.parent.title, cell.coordinate))
    bold = cell.font is not None and cell.font.b
    per_char, pad = (BOLD_PER_CHAR, BOLD_PAD) if bold else (NUMBER_PER_CHAR, NUMBER_PAD)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return len(number_text(float(value), cell.number_format)) * per_char + pad
    if isinstance(value, str) and bold and cell.alignment is not None and cell.alignment.wrap_text:
        words = value.split()  # a wrapped header breaks between words, never inside one ("Commitmen t")
        return max((bold_word_chars(w) for w in words), default=0.0)
    return 0.0


def _cut_label(ws, cell, cap: float = LABEL_CAP) -> float:
    """A text cell whose right neighbour holds something is cut at the column's edge (a right-aligned one runs
    into its left neighbour): the width it needs."""
    value = cell.value
    if not isinstance(value, str) or (cell.alignment is not None and cell.alignment.wrap_text) or value.startswith("="):
        return 0.0
    right = ws.cell(row=cell.row, column=cell.column + 1).value
    flush_right = cell.alignment is not None and cell.alignment.horizontal == "right"  # spills to the left
    if (right is None or right == "") and not flush_right:
        return 0.0
    bold = cell.font is not None and cell.font.b
    per_char, pad = (BOLD_PER_CHAR, BOLD_PAD) if bold else (NUMBER_PER_CHAR, NUMBER_PAD)
    size = (cell.font.sz or BODY_SIZE) if cell.font is not None else BODY_SIZE
    return min(cap, len(value) * per_char * size / BODY_SIZE + pad)


def _hyphenate_headers(ws, merged: set) -> None:
    """A bold wrapped header whose word is more than one character too wide for its column gets that word broken
    with a hyphen (`hyphenated`) instead of widening the column (a sheet printed one page wide keeps its size)."""
    for row in ws.iter_rows():
        for cell in row:
            value = cell.value
            if (not isinstance(value, str) or cell.coordinate in merged or not (cell.font is not None and cell.font.b)
                    or cell.alignment is None or not cell.alignment.wrap_text):
                continue
            width = ws.column_dimensions[cell.column_letter].width or 8.43
            lines = [" ".join(hyphenated(w, width) if bold_word_chars(w) > width + 1.0 and len(w) >= 7 else w
                              for w in line.split(" ")) for line in value.split("\n")]
            text = "\n".join(lines)
            if text != value:
                cell.value = text


def fit_widths(ws, label_columns: Iterable[str] = (), label_cap: float = LABEL_CAP) -> None:
    """Widen every column just enough that no number prints as ###, a wrapped header breaks between words
    only, and a label of `label_columns` with a value beside it is not cut (the column widens up to `label_cap`
    characters, a longer label wraps). `print_setup` calls it before it measures the sheet; merged cells are left
    as they are."""
    labels = set(label_columns)
    cache = cached_values(ws.parent)
    merged = {c for rng in ws.merged_cells.ranges for row in ws.iter_rows(min_row=rng.min_row, max_row=rng.max_row,
                                                                          min_col=rng.min_col, max_col=rng.max_col)
              for c in (x.coordinate for x in row)}
    _hyphenate_headers(ws, merged)
    need: dict[str, float] = {}
    long_labels = []
    for row in ws.iter_rows():
        for cell in row:
            if cell.value is None or cell.coordinate in merged:
                continue
            label = _cut_label(ws, cell, label_cap) if cell.column_letter in labels else 0.0
            if label >= label_cap:
                long_labels.append(cell)
            chars = max(_needed_chars(cell, cache), label)
            letter = cell.column_letter
            if chars > need.get(letter, 0.0):
                need[letter] = chars
    for letter, chars in need.items():
        dim = ws.column_dimensions[letter]
        if (dim.width or 8.43) < chars:
            dim.width = math.ceil(chars * 10) / 10
    for cell in long_labels:  # longer than label_cap: wrapped in the widened column, its row made taller
        width = ws.column_dimensions[cell.column_letter].width or 8.43
        wrap(ws, cell.row, cell.column, width, Alignment(horizontal=cell.alignment.horizontal if cell.alignment else None,
                                                         vertical="top", wrap_text=True))


CHAR_PX = 9.75  # one character of column width: 7 px in Excel (Calibri 11), 9.75 px in LibreOffice with DejaVu Sans


EXCEL_CHAR_PX = 7.0


def column_pt(width_chars: float, char_px: float = CHAR_PX) -> float:
    """A column's printed width in points; by default measured with the wider of the two fonts the
    workbook meets (Excel's Calibri, or LibreOffice's DejaVu Sans where Calibri and Carlito are missing)."""
    return (char_px * width_chars + 5) * 0.75


def sheet_size_pt(ws) -> tuple[float, float]:
    """(width, height) of the used cells in points: columns as in `column_pt`; a row is its set height
    or 15 pt."""
    width = sum(column_pt(ws.column_dimensions[col_letter(c)].width or 8.43) for c in range(1, ws.max_column + 1))
    height = sum(ws.row_dimensions[r].height or LINE_HEIGHT_PT for r in range(1, ws.max_row + 1))
    return width, height


def fits_one_page(ws, min_scale: float = MIN_PRINT_SCALE) -> bool:
    """True when the used cells fit on one landscape page at a print scale of `min_scale` or more."""
    width, height = sheet_size_pt(ws)
    return min(1.0, PRINTABLE_PT[0] / width, PRINTABLE_PT[1] / height) >= min_scale


def _fit_landscape(ws) -> None:
    """Print landscape, one page wide (kept for callers; `print_setup` takes the options)."""
    print_setup(ws)


def set_widths(ws, widths: dict) -> None:
    """Column widths by letter ({'A': 30, …})."""
    for col, width in widths.items():
        ws.column_dimensions[col].width = width


def word_lines(text: str, width_chars: float) -> int:
    """Lines a text takes when it breaks between words only, each line holding about 1.1·width characters as in
    `wrap` (a word longer than a line takes a line of its own)."""
    room, lines, used = max(1.0, 1.1 * width_chars), 1, 0.0
    for word in text.split():
        need = len(word) if used == 0 else used + 1 + len(word)
        if used and need > room:
            lines, used = lines + 1, float(len(word))
        else:
            used = need
    return lines


def wrap(ws, row: int, col: int, width_chars: float, align: Alignment = LEFT_WRAP) -> None:
    """Wrap a text cell in its column and make its row tall enough for the lines it needs.

    lines = ⌈len(text) / (1.1 · width)⌉ (a column w characters wide holds about 1.1·w characters of
    11 pt DejaVu Sans, more in Calibri); Excel does not grow rows for wrapped text on open, so the
    height is set here.
    """
    cell = ws.cell(row=row, column=col)
    cell.alignment = align
    text = "" if cell.value is None else str(cell.value)
    lines = max(1, math.ceil(len(text) / max(1.0, 1.1 * width_chars)), word_lines(text, width_chars))
    current = ws.row_dimensions[row].height or LINE_HEIGHT_PT
    ws.row_dimensions[row].height = max(current, LINE_HEIGHT_PT * lines)


def top(ws, row: int, first_col: int, last_col: int) -> None:
    """Align a table row's cells to the top (numbers stay right-aligned), so that a row whose text
    wraps reads as one line: the numbers sit beside the first line of the text."""
    for col in range(first_col, last_col + 1):
        cell = ws.cell(row=row, column=col)
        if not cell.alignment.wrap_text and cell.alignment.horizontal is None:
            cell.alignment = TOP


def define(wb, name: str, sheet_title: str, cell: str) -> None:
    """A workbook-level name pointing at ONE cell (LibreOffice evaluates constant names wrongly)."""
    col, row = cell.rstrip("0123456789"), cell[len(cell.rstrip("0123456789")):]
    wb.defined_names[name] = DefinedName(name, attr_text=f"{quote_sheetname(sheet_title)}!${col}${row}")


def sheet_ref(sheet_title: str, cell: str) -> str:
    """A cell of another sheet for a formula (`'Sheet name'!B3`)."""
    return f"{quote_sheetname(sheet_title)}!{cell}"


def col_letter(col: int) -> str:
    return get_column_letter(col)


# ----------------------------------------------------------------------------------- saving


def save_workbook(wb: Workbook, path: str | Path) -> Path:
    """Write `wb` to `path` atomically (temp file + rename) with every formula's cached value."""
    with atomic_path(path) as tmp:
        write_file(wb, tmp, current_run_id())  # the output set's run id (commit.py)
    return Path(path)


def write_file(wb: Workbook, file: Path, run_id: str | None) -> None:
    """Write `wb` to `file` as it is (the temporary file of an atomic write) with every formula's cached value and
    `run_id` as the workbook's identifier."""
    cache = cached_values(wb)
    wb.properties.identifier = run_id
    wb.save(file)
    if cache:
        _store_cached_values(file, cache)


_NS = {"m": "http://schemas.openxmlformats.org/spreadsheetml/2006/main",
       "r": "http://schemas.openxmlformats.org/officeDocument/2006/relationships",
       "rel": "http://schemas.openxmlformats.org/package/2006/relationships"}
# A formula cell as openpyxl writes it: <c r="F5" s="3"><f>D5*E5</f><v /></c> (or <v/>, <v></v>).
_FORMULA_CELL = re.compile(r'<c r="(?P<ref>[A-Z]+[0-9]+)"(?P<attrs>[^>]*)>(?P<f><f>[^<]*</f>)<v\s*/>(?:</c>)')
_EMPTY_V = re.compile(r'<c r="(?P<ref>[A-Z]+[0-9]+)"(?P<attrs>[^>]*)>(?P<f><f>[^<]*</f>)<v></v></c>')


def _sheet_parts(z: zipfile.ZipFile) -> dict[str, str]:
    """{sheet title: zip member of its XML}, read from xl/workbook.xml and its relationships."""
    book = ElementTree.fromstring(z.read("xl/workbook.xml"))
    rels = ElementTree.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    target = {r.get("Id"): r.get("Target", "") for r in rels.findall("rel:Relationship", _NS)}
    parts = {}
    for sheet in book.findall("m:sheets/m:sheet", _NS):
        rid = sheet.get(f"{{{_NS['r']}}}id")
        t = target.get(rid, "")
        parts[sheet.get("name", "")] = t.lstrip("/") if t.startswith("/") else f"xl/{t}"
    return parts


def _with_values(xml: str, values: dict[str, float]) -> str:
    def fill(m: re.Match) -> str:
        value = values.get(m["ref"])
        if value is None:
            return m[0]
        return f'<c r="{m["ref"]}"{m["attrs"]}>{m["f"]}<v>{value!r}</v></c>'

    return _EMPTY_V.sub(fill, _FORMULA_CELL.sub(fill, xml))


def _store_cached_values(path: Path, cache: dict[tuple[str, str], float]) -> None:
    """Rewrite the saved file with `<v>value</v>` in the formula cells we know the value of."""
    by_sheet: dict[str, dict[str, float]] = {}
    for (title, ref), value in cache.items():
        by_sheet.setdefault(title, {})[ref] = value
    with zipfile.ZipFile(path) as z:
        parts = _sheet_parts(z)
        members = [(info, z.read(info.filename)) for info in z.infolist()]
    patch = {parts[t]: v for t, v in by_sheet.items() if t in parts}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info, data in members:
            if info.filename in patch:
                data = _with_values(data.decode("utf-8"), patch[info.filename]).encode("utf-8")
            out.writestr(info, data)


# ----------------------------------------------------------------------------------- charts


def _chars(size_pt: float, bold: bool = False) -> CharacterProperties:
    return CharacterProperties(sz=int(size_pt * 100), b=bold)


def chart_title(text: str, size_pt: float = 12) -> Title:
    """A chart title at a set size (the default is large enough to wrap short titles)."""
    chars = _chars(size_pt, bold=True)
    para = Paragraph(pPr=ParagraphProperties(defRPr=chars), r=[RegularTextRun(rPr=chars, t=text)])
    return Title(tx=Text(rich=RichText(p=[para])), overlay=False)


def text_size(size_pt: float) -> RichText:
    """Text properties for axis tick labels and legends: `size_pt` points."""
    chars = _chars(size_pt)
    return RichText(p=[Paragraph(pPr=ParagraphProperties(defRPr=chars), endParaRPr=chars)])


def style_chart(chart, title: str, x_title: str | None, y_title: str | None, size_pt: float = 10) -> None:
    """Title, axis titles, readable tick labels (`size_pt`), axes shown, legend at the bottom."""
    chart.title = chart_title(title)
    for axis, name in ((chart.x_axis, x_title), (chart.y_axis, y_title)):
        axis.delete = False
        axis.txPr = text_size(size_pt)
        if name:
            axis.title = chart_title(name, size_pt)
    if chart.legend is not None:
        chart.legend.position = "b"
        chart.legend.txPr = text_size(size_pt)


def text_categories(chart, sheet_title: str, cells: str) -> None:
    """Category labels read as text (openpyxl's set_categories makes a number reference, which Excel
    shows as 1, 2, 3 when the cells hold text such as "#1")."""
    for series in chart.series:
        series.cat = AxDataSource(strRef=StrRef(f=sheet_ref(sheet_title, cells)))


def place_chart(ws, chart, row: int, left_cm: float = 0.0) -> None:
    """Put a chart `left_cm` from the sheet's left edge, at the top of `row`, by absolute position.

    Column widths differ between Excel (Calibri) and LibreOffice without Calibri, so a chart anchored
    to a column would land elsewhere in each; rows above `row` get an explicit height (15 pt unless
    set) so the vertical position is the same in both. `chart.width` × `chart.height` are in cm.
    """
    top_pt = 0.0
    for r in range(1, row):
        if ws.row_dimensions[r].height is None:
            ws.row_dimensions[r].height = LINE_HEIGHT_PT
        top_pt += ws.row_dimensions[r].height
    chart.anchor = AbsoluteAnchor(pos=XDRPoint2D(cm_to_EMU(left_cm), pixels_to_EMU(top_pt * 4 / 3)),
                                  ext=XDRPositiveSize2D(cm_to_EMU(chart.width), cm_to_EMU(chart.height)))
    ws.add_chart(chart)
