"""LibreOffice headless and poppler for the workbook tests: recalculate, convert to PDF, read pages.

LibreOffice, by default, shows the values cached in an .xlsx instead of recalculating it. The
workbooks carry cached values, so a test that only converted the file would read our own numbers
back. `profile` therefore writes a LibreOffice user profile whose setting "recalculation on file
load, Excel 2007 and newer" is "always" (OOXMLRecalcMode = 0); `test_libreoffice_recalculates_*`
checks that a wrong cached value does not survive.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

import openpyxl
import openpyxl.styles
import pytest

needs_soffice = pytest.mark.skipif(shutil.which("soffice") is None and not os.environ.get("CI"),
                                   reason="LibreOffice (soffice) not installed; CI always runs these")

ALWAYS_RECALCULATE = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


def profile(folder: Path) -> Path:
    """A LibreOffice user profile (one per test module avoids profile-lock clashes) that recalculates."""
    user = folder / "user"
    user.mkdir(parents=True, exist_ok=True)
    (user / "registrymodifications.xcu").write_text(ALWAYS_RECALCULATE, encoding="utf-8")
    return folder


def convert(path: Path, fmt: str, out: Path, lo_profile: Path) -> Path:
    """`soffice --convert-to fmt`; returns the converted file (soffice exits 0 even when it failed)."""
    converted = out / f"{path.stem}.{fmt}"
    if converted.exists():
        converted.unlink()
    subprocess.run(
        ["soffice", f"-env:UserInstallation=file://{lo_profile}", "--headless", "--calc",
         "--convert-to", fmt, "--outdir", str(out), str(path)],
        check=True, capture_output=True, timeout=240,
    )
    assert converted.exists(), f"LibreOffice could not convert {path} to {fmt}"
    return converted


def recalc_many(paths: list[Path], lo_profile: Path) -> dict[Path, openpyxl.Workbook]:
    """`recalc` of several workbooks in one LibreOffice start (soffice converts every file it is given, each
    recalculated on load as in `recalc`); the copies go to one folder, so the file names must differ."""
    assert len({p.stem for p in paths}) == len(paths), "one output folder: the workbooks need distinct names"
    out = paths[0].parent / "recalc_batch"
    converted = [out / f"{p.stem}.xlsx" for p in paths]
    for c in converted:
        if c.exists():
            c.unlink()
    subprocess.run(
        ["soffice", f"-env:UserInstallation=file://{lo_profile}", "--headless", "--calc",
         "--convert-to", "xlsx", "--outdir", str(out), *map(str, paths)],
        check=True, capture_output=True, timeout=240,
    )
    for p, c in zip(paths, converted):
        assert c.exists(), f"LibreOffice could not convert {p} to xlsx"
    return {p: openpyxl.load_workbook(c, data_only=True) for p, c in zip(paths, converted)}


def recalc(path: Path, lo_profile: Path) -> openpyxl.Workbook:
    """Open in LibreOffice headless, recalculate, save a copy; read it back with the values."""
    out = path.parent / f"recalc_{path.stem}"
    return openpyxl.load_workbook(convert(path, "xlsx", out, lo_profile), data_only=True)


def set_cached_value(path: Path, target: Path, sheet_xml: str, ref: str, value: float) -> Path:
    """A copy of the workbook with the cached value of formula cell `ref` replaced by `value`."""
    with zipfile.ZipFile(path) as z, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in z.infolist():
            data = z.read(info.filename)
            if info.filename == sheet_xml:
                text, n = re.subn(rf'(<c r="{ref}"[^>]*><f>[^<]*</f><v>)[^<]*(</v>)', rf"\g<1>{value!r}\g<2>",
                                  data.decode("utf-8"))
                assert n == 1, f"no cached formula value at {ref} in {sheet_xml}"
                data = text.encode("utf-8")
            out.writestr(info, data)
    return target


@dataclass
class Page:
    width_pt: float
    height_pt: float
    words: list  # (text, x_min, y_min, x_max, y_max) in points
    sheet: str  # from the footer "SHEET, page n of N"


def pdf_pages(pdf: Path) -> list[Page]:
    """Every page of a PDF with its words' boxes (poppler's pdftotext -bbox)."""
    html = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], check=True, capture_output=True,
                          text=True, timeout=60).stdout
    pages = []
    for chunk in html.split("<page ")[1:]:
        size = re.match(r'width="([\d.]+)" height="([\d.]+)"', chunk)
        assert size is not None
        words = [(m[5], float(m[1]), float(m[2]), float(m[3]), float(m[4])) for m in re.finditer(
            r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', chunk)]
        pages.append(Page(float(size[1]), float(size[2]), words, _footer_sheet(words)))
    return pages


def _footer_sheet(words: list) -> str:
    """The sheet name in the footer (the lowest line): the words before ', page n of N'."""
    if not words:
        return ""
    footer_y = max(w[2] for w in words)
    line = " ".join(w[0] for w in sorted(words, key=lambda w: w[1]) if abs(w[2] - footer_y) < 1)
    return line.split(", page ")[0] if ", page " in line else ""


_BOX_PER_PT: list[float] = []


def box_per_pt(lo_profile: Path, folder: Path) -> float:
    """Height of poppler's word box per point of type, measured on a one-cell sheet of 11 pt text
    printed at 100 % (about 1.3 with DejaVu Sans, the font LibreOffice substitutes for Calibri here).
    A property of the machine's LibreOffice, fonts and poppler, not of the workbook or the profile: measured
    once per test session (the first caller's profile and folder) and reused by every printed-size test."""
    if not _BOX_PER_PT:
        _BOX_PER_PT.append(_measure_box_per_pt(lo_profile, folder))
    return _BOX_PER_PT[0]


def _measure_box_per_pt(lo_profile: Path, folder: Path) -> float:
    folder.mkdir(parents=True, exist_ok=True)
    wb = openpyxl.Workbook()
    ws = wb.active
    ws["A1"] = "Reference 11 pt"
    ws["A1"].font = openpyxl.styles.Font(name="Calibri", size=11)
    ws.page_setup.scale = 100
    wb.save(folder / "reference.xlsx")
    words = pdf_pages(convert(folder / "reference.xlsx", "pdf", folder, lo_profile))[0].words
    return (words[0][4] - words[0][2]) / 11


def assert_readable(pages: list[Page], per_pt: float, smallest_pt: float = 7.0, body_pt: float = 8.0) -> None:
    """Every word prints at `smallest_pt` or more (10 pt notes and chart labels, shrunk to fit the
    width), and the typical word (the median) at `body_pt` or more: 11 pt body text at 73 % or more."""
    for page in pages:
        heights = sorted(w[4] - w[2] for w in page.words)
        assert heights[0] >= smallest_pt * per_pt, (page.sheet, heights[:5])
        assert heights[len(heights) // 2] >= body_pt * per_pt, (page.sheet, heights[len(heights) // 2])
