"""The workbook's BOM sheets (docs/workbook.md): one per design, every total a live formula over the Prices sheet."""
from __future__ import annotations

from dataclasses import dataclass

from .prices_sheet import CATEGORIES, PRICES, price_key, spare_power_ratio, split_contingency
from .xlsx import (
    BOLD,
    INPUT_FILL,
    NUMBER,
    NUMBER_2,
    PERCENT,
    RIGHT,
    USD,
    USD_CENTS,
    Live,
    define,
    fits_one_page,
    formula,
    header_row,
    note,
    print_setup,
    put,
    set_widths,
    sheet_ref,
    top,
    wrap,
    write_cell,
    write_title,
)

BOM_HEADERS = ("Category", "Part", "Description", "Quantity", "Unit price (USD)", "Extended (USD)",
               "Power per unit (W)", "Extended power (W)")
BOM_NUMBER_COLUMNS = (4, 5, 6, 7, 8)
BOM_HEADER_ROW = 4
BOM_FIRST_ROW = BOM_HEADER_ROW + 1
BOM_DESCRIPTION_WIDTH = 45
BOM_LABEL_COL = 3  # the labels of the totals under the lines (values under Quantity and Extended)
NETWORK = ("nic", "switch", "link")  # the network share of capex


def bom_sheet_title(rank_index: int) -> str:
    return f"BOM {rank_index}"


def contingency_name(rank_index: int) -> str:
    return f"Contingency_{rank_index}"


def discount_name(rank_index: int) -> str:
    return f"Discount_{rank_index}"


@dataclass
class BomCells:
    """Where one BOM sheet keeps its totals (A1 addresses on that sheet) and their values as written."""

    title: str
    first: int
    last: int
    total: str
    it_power_kw: str
    categories: list
    gpus: str = ""
    nodes: str = ""
    racks: str = ""
    values: dict | None = None  # {"total", "it_power_kw", "gpus", "nodes", "racks", category: subtotal}
    end_row: int = 0  # the last row the totals use

    def column(self, col: str) -> str:
        return sheet_ref(self.title, f"${col}${self.first}:${col}${max(self.first, self.last)}")

    def sumif(self, category: str) -> str:
        return f'SUMIF({self.column("A")},"{category}",{self.column("F")})'


def _categories_of(lines: list) -> list[str]:
    seen = [c for c in CATEGORIES if any(line.category == c for line in lines)]
    return seen + sorted({line.category for line in lines} - set(seen))


def _bom_inputs(ws, wb, index: int, title: str, fraction: float) -> None:
    put(ws, 2, 1, "Contingency").font = BOLD
    put(ws, 2, 2, fraction, PERCENT).fill = INPUT_FILL
    note(ws, 2, f"editable: added after the discount (defined name {contingency_name(index)})", col=3)
    put(ws, 3, 1, "Discount").font = BOLD
    put(ws, 3, 2, 0.0, PERCENT).fill = INPUT_FILL
    note(ws, 3, f"editable: negotiated discount on the lines (defined name {discount_name(index)})", col=3)
    define(wb, contingency_name(index), title, "B2")
    define(wb, discount_name(index), title, "B3")


def write_bom_sheet(wb, index: int, design, contingency_fraction: float, prices: dict | None = None) -> BomCells:
    """One design's bill of materials with live formulas; returns where its totals are.

    With `prices` ({price_key: row} of the Prices sheet) each line's unit price and power are
    references to that row; without, they are written on the line.
    """
    title = bom_sheet_title(index)
    ws = wb.create_sheet(title)
    lines, fraction = split_contingency(design.cost.bom, contingency_fraction)
    write_title(ws, f"Bill of materials, design #{design.rank}: {design.label}")
    _bom_inputs(ws, wb, index, title, fraction)
    header_row(ws, BOM_HEADER_ROW, BOM_HEADERS, right=BOM_NUMBER_COLUMNS)
    row = BOM_FIRST_ROW
    for line in lines:
        put(ws, row, 1, line.category)
        put(ws, row, 2, line.part)
        put(ws, row, 3, line.description)
        wrap(ws, row, 3, BOM_DESCRIPTION_WIDTH)
        put(ws, row, 4, line.quantity, NUMBER).fill = INPUT_FILL
        if prices is None:
            put(ws, row, 5, line.unit_price_usd, USD_CENTS).fill = INPUT_FILL
            put(ws, row, 7, line.power_w, NUMBER_2)
        else:
            price_row = prices[price_key(line)]
            formula(ws, row, 5, f"={sheet_ref(PRICES, f'$D${price_row}')}", USD_CENTS, line.unit_price_usd)
            ratio = spare_power_ratio(design, line)
            scaled = "" if ratio == 1.0 else f"*{ratio:.12g}"
            formula(ws, row, 7, f"={sheet_ref(PRICES, f'$E${price_row}')}{scaled}", NUMBER_2, line.power_w)
        formula(ws, row, 6, f"=D{row}*E{row}", USD_CENTS, line.quantity * line.unit_price_usd)
        formula(ws, row, 8, f"=D{row}*G{row}", NUMBER, line.quantity * line.power_w)
        top(ws, row, 1, len(BOM_HEADERS))
        row += 1
    last = row - 1
    _lead_times(ws, lines)
    ws.auto_filter.ref = f"A{BOM_HEADER_ROW}:H{max(BOM_HEADER_ROW + 1, last)}"
    cells = _bom_totals(ws, index, title, lines, fraction, last)
    _bom_quantities(ws, cells, design, lines)
    ws.freeze_panes = f"A{BOM_FIRST_ROW}"
    set_widths(ws, {"A": 13, "B": 19, "C": BOM_DESCRIPTION_WIDTH, "D": 9, "E": 13, "F": 15, "G": 11, "H": 11})
    print_setup(ws, title_rows=f"{BOM_HEADER_ROW}:{BOM_HEADER_ROW}", pages_tall=1 if fits_one_page(ws) else 0)
    return cells


def _lead_times(ws, lines: list) -> None:
    """A "Lead time (weeks)" column after the power columns when the catalog quotes any (catalog lead_time_weeks,
    issue 45); none otherwise."""
    weeks = [getattr(line, "lead_time_weeks", None) for line in lines]
    if all(w is None for w in weeks):
        return
    col = len(BOM_HEADERS) + 1
    header_row(ws, BOM_HEADER_ROW, ["Lead time (weeks)"], first_col=col, right=[col])
    for i, w in enumerate(weeks):
        if w is not None:
            put(ws, BOM_FIRST_ROW + i, col, w, NUMBER)
    ws.column_dimensions["I"].width = 10


def _label(ws, row: int, text: str, bold: bool = False) -> None:
    cell = put(ws, row, BOM_LABEL_COL, text)
    cell.alignment = RIGHT
    if bold:
        cell.font = BOLD


def _bom_totals(ws, index: int, title: str, lines: list, fraction: float, last: int) -> BomCells:
    """Category subtotals (SUMIF), subtotal, discount, contingency, grand total, IT power.

    total = subtotal · (1 − Discount_i) · (1 + Contingency_i)   (values cached with discount 0).
    """
    first, span = BOM_FIRST_ROW, max(BOM_FIRST_ROW, last)
    cats = _categories_of(lines)
    values: dict[str, float] = {}
    row = last + 2
    _label(ws, row, "Subtotals by category", bold=True)
    row += 1
    for cat in cats:
        values[cat] = sum(x.quantity * x.unit_price_usd for x in lines if x.category == cat)
        _label(ws, row, cat)
        formula(ws, row, 6, f'=SUMIF($A${first}:$A${span},"{cat}",$F${first}:$F${span})', USD, values[cat])
        row += 1
    subtotal = sum(x.quantity * x.unit_price_usd for x in lines)
    sub_row = row
    _label(ws, sub_row, "Subtotal (lines)", bold=True)
    formula(ws, sub_row, 6, f"=SUM(F{first}:F{span})", USD_CENTS, subtotal)
    d, c = discount_name(index), contingency_name(index)
    _label(ws, sub_row + 1, "Discount")
    formula(ws, sub_row + 1, 6, f"=-F{sub_row}*{d}", USD_CENTS, 0.0)
    _label(ws, sub_row + 2, "Contingency")
    formula(ws, sub_row + 2, 6, f"=F{sub_row}*(1-{d})*{c}", USD_CENTS, subtotal * fraction)
    total_row = sub_row + 3
    values["total"] = subtotal * (1 - 0.0) * (1 + fraction)
    _label(ws, total_row, "Grand total (USD)", bold=True)
    formula(ws, total_row, 6, f"=F{sub_row}*(1-{d})*(1+{c})", USD_CENTS, values["total"]).font = BOLD
    power_row = total_row + 1
    values["it_power_kw"] = sum(x.quantity * x.power_w for x in lines) / 1000
    _label(ws, power_row, "IT power (kW)", bold=True)
    formula(ws, power_row, 6, f"=SUM(H{first}:H{span})/1000", NUMBER_2, values["it_power_kw"])
    return BomCells(title, first, last, f"$F${total_row}", f"$F${power_row}", cats, values=values, end_row=power_row)


def _bom_quantities(ws, cells: BomCells, design, lines: list) -> None:
    """What the lines buy, as formulas of the quantities (so an edited quantity reaches the Summary).

    nodes = (Σ compute + spares quantities) · nodes per unit;  GPUs = nodes · GPUs per node
    racks = Σ rack quantities (+ the compute units when each ships as its own rack, e.g. NVL72)
    """
    c = design.cost
    first, span = cells.first, max(cells.first, cells.last)
    units = sum(x.quantity for x in lines if x.category in ("compute", "spares"))
    rack_lines = sum(x.quantity for x in lines if x.category == "rack")
    nodes_per_unit = c.nodes // max(1, units)
    gpus_per_node = c.gpus // max(1, c.nodes)
    own_rack = c.racks != rack_lines

    def sumif(category: str) -> str:
        return f'SUMIF($A${first}:$A${span},"{category}",$D${first}:$D${span})'

    row = cells.end_row + 2
    _label(ws, row, "What the lines buy", bold=True)
    nodes, gpus, racks = row + 1, row + 2, row + 3
    units_expr = f"{sumif('compute')}+{sumif('spares')}"
    rows = [
        (nodes, f"Nodes = (compute + spare units) × {nodes_per_unit}",
         Live(f"=({units_expr})*{nodes_per_unit}", units * nodes_per_unit)),
        (gpus, f"GPUs = nodes × {gpus_per_node}", Live(f"=D{nodes}*{gpus_per_node}", units * nodes_per_unit * gpus_per_node)),
        (racks, "Racks = rack lines + compute units (each its own rack)" if own_rack else "Racks = rack lines",
         Live(f"={sumif('rack')}" + (f"+{units_expr}" if own_rack else ""), rack_lines + (units if own_rack else 0))),
    ]
    for r, label, value in rows:
        _label(ws, r, label)
        write_cell(ws, r, 4, value, NUMBER)
    cells.gpus, cells.nodes, cells.racks = f"$D${gpus}", f"$D${nodes}", f"$D${racks}"
    assert cells.values is not None
    cells.values.update(nodes=rows[0][2].value, gpus=rows[1][2].value, racks=rows[2][2].value)
