"""The bill of materials of every ranked design as CSV for a purchasing system (`solve --bom-csv FILE`):
#1 in FILE, #k in FILE's name with `-k` before the suffix (bom.csv, bom-2.csv, …), one row per BOM line,
written atomically (solver/reports/io.py) with the solve's JSON and workbook.

Columns: category, part id, description, quantity, unit price (USD), extended price (USD), price
source, price date, estimate (yes/no), owned (yes/no: reused from the inventory, price 0), role (what the
line is: three lines share a link's id: its cable, switch-end and far-end module), the manufacturer's
part number where the catalog has one, the quoted lead time in weeks (empty = not known), and the run id of
the output set it belongs to (the same in the JSON and the workbook, so a mixed set shows). Text is
written as text: a cell starting with "=", "+", "-" or "@" gets a leading apostrophe so that a
spreadsheet opening the file does not run it as a formula.
"""
from __future__ import annotations

import csv
from pathlib import Path

from ..files import atomic_path, current_run_id

HEADER = ("category", "part_id", "description", "quantity", "unit_price_usd", "extended_usd", "price_source",
          "price_date", "price_is_estimate", "owned", "role", "manufacturer_part_number", "lead_time_weeks", "run_id")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str) -> str:
    return "'" + value if value.startswith(FORMULA_START) else value


def bom_rows(design) -> list[tuple]:
    """The design's BOM lines as CSV rows (money to the cent)."""
    return [(_text(x.category), _text(x.part), _text(x.description), x.quantity, f"{x.unit_price_usd:.2f}",
             f"{x.extended_usd:.2f}", _text(x.price_source), _text(x.price_date),
             "yes" if x.price_is_estimate else "no", "yes" if x.owned else "no", _text(x.role), _text(x.part_number),
             "" if x.lead_time_weeks is None else f"{x.lead_time_weeks:g}") for x in design.cost.bom]


def bom_paths(path: str | Path, ranks: int) -> list[Path]:
    """FILE for #1, then FILE with -2, -3, … before its suffix for the other ranked designs."""
    path = Path(path)
    return [path] + [path.with_name(f"{path.stem}-{k}{path.suffix}") for k in range(2, ranks + 1)]


def write_bom_csvs(designs: list, path: str | Path) -> list[Path]:
    """Each ranked design's CSV (`bom_paths`); the paths written (only #1's to the null device)."""
    from ..files import is_discard

    if is_discard(path):
        designs = designs[:1]
    return [write_bom_csv(d, p) for d, p in zip(designs, bom_paths(path, len(designs)))]


def write_bom_csv(design, path: str | Path) -> Path:
    """Write the CSV atomically (a temp file renamed over `path`, or staged with the output set)."""
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(HEADER)
        run_id = current_run_id() or ""
        writer.writerows(row + (run_id,) for row in bom_rows(design))
    return path
