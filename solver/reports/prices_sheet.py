"""The workbook's Prices sheet (docs/workbook.md): one row per part, the single place a unit price is edited."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..costing import BOM_CATEGORIES
from .xlsx import (
    INPUT_FILL,
    NUMBER_2,
    USD_CENTS,
    header_row,
    note,
    print_setup,
    put,
    set_widths,
    top,
    wrap,
    write_title,
)

# Order of the category subtotals and chart series: the BOM's own (costing.BOM_CATEGORIES, `extra` included).
CATEGORIES = BOM_CATEGORIES
PRICES = "Prices"
PRICE_HEADERS = ("Part", "Description", "Category", "Unit price (USD)", "Power per unit (W)", "Estimate or quoted",
                 "Price date", "Price source", "Used by")
PRICE_HEADER_ROW = 4
PRICE_WRAP = {2: 30, 8: 34, 9: 8}  # column: width of the wrapped text columns


def price_key(line) -> tuple:
    """Lines that buy the same part at the same unit price and power share one Prices row: a compute
    unit and its spares (a spare idles: its power is the row's times `spare_power_ratio`), leaf and spine
    switches, compute and network racks of one model."""
    group = "compute" if line.category == "spares" else line.category
    return (group, line.part, line.unit_price_usd, None if group == "compute" else line.power_w)


def spare_power_ratio(design, line) -> float:
    """A spares line's power per unit over its compute line's (the idle fraction; 1 for other lines)."""
    if line.category != "spares":
        return 1.0
    full = next((x.power_w for x in design.cost.bom if x.category == "compute" and x.part == line.part), 0.0)
    return line.power_w / full if full > 0 else 1.0


_ROLE = re.compile(r"^(?:spare |[\w-]+ (?=(?:switch|rack): ))")


def price_description(description: str) -> str:
    """A BOM line's description without its role ('leaf switch: X' → 'switch: X', 'spare X' → 'X')."""
    return _ROLE.sub("", description)


@dataclass
class PriceRow:
    row: int
    line: Any  # the first BOM line with this price
    used_by: list


def write_prices_sheet(wb, designs: list) -> dict[tuple, int]:
    """Every unit price once (with its power, source and date); returns {price_key: row}."""
    ws = wb.create_sheet(PRICES)
    write_title(ws, "Unit prices: every BOM line reads its unit price and power from this sheet")
    note(ws, 2, "Edit a yellow cell: every design's BOM, the Summary and the charts follow.")
    note(ws, 3, "One row per part and price: a compute unit and its spares share one, as do leaf and spine switches.")
    header_row(ws, PRICE_HEADER_ROW, PRICE_HEADERS, right=(4, 5))
    found: dict[tuple, PriceRow] = {}
    for design in designs:
        lines, _ = split_contingency(design.cost.bom, 0.0)
        for line in lines:
            entry = found.setdefault(price_key(line), PriceRow(0, line, []))
            if f"#{design.rank}" not in entry.used_by:
                entry.used_by.append(f"#{design.rank}")
    order = sorted(found, key=lambda k: category_rank(k[0]))  # by category, then as first met (sort is stable)
    rows = {key: found[key] for key in order}
    for i, entry in enumerate(rows.values()):
        entry.row = PRICE_HEADER_ROW + 1 + i
    for key, entry in rows.items():
        r, line = entry.row, entry.line
        put(ws, r, 1, line.part)
        put(ws, r, 2, price_description(line.description))
        put(ws, r, 3, key[0])
        put(ws, r, 4, line.unit_price_usd, USD_CENTS).fill = INPUT_FILL
        put(ws, r, 5, line.power_w, NUMBER_2).fill = INPUT_FILL
        put(ws, r, 6, "estimate" if line.price_is_estimate else "quoted")
        put(ws, r, 7, line.price_date)
        put(ws, r, 8, line.price_source)
        put(ws, r, 9, ", ".join(entry.used_by))
        for col, width in PRICE_WRAP.items():
            wrap(ws, r, col, width)
        top(ws, r, 1, len(PRICE_HEADERS))
    ws.freeze_panes = f"A{PRICE_HEADER_ROW + 1}"
    ws.auto_filter.ref = f"A{PRICE_HEADER_ROW}:I{PRICE_HEADER_ROW + max(1, len(rows))}"
    set_widths(ws, {"A": 18, "B": PRICE_WRAP[2], "C": 9, "D": 13, "E": 10, "F": 10, "G": 9, "H": PRICE_WRAP[8], "I": 8})
    print_setup(ws, title_rows=f"{PRICE_HEADER_ROW}:{PRICE_HEADER_ROW}")
    return {key: entry.row for key, entry in rows.items()}


def category_rank(category: str) -> int:
    """A category's place in the workbook's category order (unknown categories last)."""
    return CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES)


def split_contingency(bom: list, contingency_fraction: float) -> tuple[list, float]:
    """The catalog lines, and the contingency fraction in force.

    fraction = contingency line / Σ other lines when the BOM has one (it is exactly the scenario's
    contingency_fraction, fabric.contingency_line), else the scenario's (0 by default).
    """
    lines = [line for line in bom if line.category != "contingency"]
    extra = [line for line in bom if line.category == "contingency"]
    base = sum(line.extended_usd for line in lines)
    if extra and base > 0 and contingency_fraction == 0:
        contingency_fraction = sum(line.extended_usd for line in extra) / base
    return lines, contingency_fraction
