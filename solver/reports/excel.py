"""The budget-planning workbook (SPEC §8.4): Summary, Prices, one BOM sheet per design, Performance,
Assumptions (docs/workbook.md).

Every money total is a live formula, so a budget planner can edit a unit price (once, on the Prices
sheet), a quantity, the contingency or the discount and see every total, the TCO and the charts follow:

    unit price, power      = the part's row on the Prices sheet           (per BOM line)
    extended_usd           = quantity · unit_price_usd                       (per BOM line)
    subtotal_usd           = Σ extended_usd                                   (catalog lines only)
    total_usd              = subtotal_usd · (1 − discount) · (1 + contingency)
    IT kW                  = Σ quantity · power_w / 1000
    nodes                  = (compute + spare units) · nodes per unit;  GPUs = nodes · GPUs per node
    facility kW            = IT kW · PUE
    TCO                    = capex + years · 8,760 h · facility kW · $/kWh

The solver's own contingency BOM line is not written as a line: its fraction goes into the
editable contingency cell, so with discount 0 the sheet total equals the JSON capex_usd.

Every formula is stored with its value (solver/reports/xlsx.py), so pandas and other readers see
numbers. Every string that comes from a catalog or scenario is written as text (never a formula),
even when it starts with "=", "+", "-" or "@". The file is written atomically.
"""
from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.chart import BarChart, Reference, Series
from openpyxl.chart.data_source import StrRef
from openpyxl.chart.series import SeriesLabel
from openpyxl.worksheet.pagebreak import Break

from ..costing import BOM_CATEGORIES, HOURS_PER_YEAR
from ..costing_facility import capex_scope_text
from ..inputs import LoadedScenario, provenance
from ..inputs.schema import Catalog, Scenario
from ..perf import moe
from ..perf.hardware import hardware_for
from ..perf.traffic import BY_NAME, CLASS_NAMES, overlap_for
from ..results import SECONDS_PER_YEAR, cost_per_million_tokens_usd
from ..version import __version__
from .goodput_sheet import SUMMARY_GOODPUT_KEYS, summary_goodput_rows, write_goodput_table
from .xlsx import (  # noqa: F401 - re-exported: other workbook modules import the helpers from here
    BOLD,
    EXCEL_CHAR_PX,
    GB,
    HEADER_FILL,
    HEADER_FONT,
    INPUT_FILL,
    LEFT_TOP,
    LEFT_WRAP,
    NUMBER,
    NUMBER_2,
    PERCENT,
    RIGHT,
    RIGHT_WRAP,
    SECONDS,
    TITLE_FONT,
    TOP,
    USD,
    USD_CENTS,
    USD_MILLIONS,
    Live,
    _define,
    _fit_landscape,
    _header,
    _ref,
    _section,
    _text,
    _title,
    _widths,
    _write,
    cached_values,
    col_letter,
    column_pt,
    fits_one_page,
    formula,
    note,
    place_chart,
    print_setup,
    put,
    save_workbook,
    style_chart,
    text_categories,
    top,
    wrap,
)

BOM_HEADERS = ("Category", "Part", "Description", "Quantity", "Unit price (USD)", "Extended (USD)",
               "Power per unit (W)", "Extended power (W)")
BOM_NUMBER_COLUMNS = (4, 5, 6, 7, 8)
BOM_HEADER_ROW = 4
BOM_FIRST_ROW = BOM_HEADER_ROW + 1
BOM_DESCRIPTION_WIDTH = 45
BOM_LABEL_COL = 3  # the labels of the totals under the lines (values under Quantity and Extended)
# Order of the category subtotals and chart series: the BOM's own (costing.BOM_CATEGORIES, `extra` included).
CATEGORIES = BOM_CATEGORIES
NETWORK = ("nic", "switch", "link")  # the network share of capex
ADJUSTMENT = "contingency − discount"
NETWORK_ROW = "Network (NICs, switches, links)"
TERMS = ("compute", "bubble", *CLASS_NAMES, "capacity")  # the step-time breakdown: compute, bubble, each class exposed, link capacity

PRICES = "Prices"
PRICE_HEADERS = ("Part", "Description", "Category", "Unit price (USD)", "Power per unit (W)", "Estimate or quoted",
                 "Price date", "Price source", "Used by")
PRICE_HEADER_ROW = 4
PRICE_WRAP = {2: 30, 8: 34, 9: 8}  # column: width of the wrapped text columns
SUMMARY_HEADER_ROW = 3
SUMMARY_COL_WIDTH = 20
CHART_CM = (12.5, 8.5)  # width, height of the Summary charts: two side by side fit 25.9 cm of landscape Letter


# ----------------------------------------------------------------------------------- prices


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
    _title(ws, "Unit prices: every BOM line reads its unit price and power from this sheet")
    note(ws, 2, "Edit a yellow cell: every design's BOM, the Summary and the charts follow.")
    note(ws, 3, "One row per part and price: a compute unit and its spares share one, as do leaf and spine switches.")
    _header(ws, PRICE_HEADER_ROW, PRICE_HEADERS, right=(4, 5))
    found: dict[tuple, PriceRow] = {}
    for design in designs:
        lines, _ = split_contingency(design.cost.bom, 0.0)
        for line in lines:
            entry = found.setdefault(price_key(line), PriceRow(0, line, []))
            if f"#{design.rank}" not in entry.used_by:
                entry.used_by.append(f"#{design.rank}")
    order = sorted(found, key=lambda k: _category_rank(k[0]))  # by category, then as first met (sort is stable)
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
    _widths(ws, {"A": 18, "B": PRICE_WRAP[2], "C": 9, "D": 13, "E": 10, "F": 10, "G": 9, "H": PRICE_WRAP[8], "I": 8})
    print_setup(ws, title_rows=f"{PRICE_HEADER_ROW}:{PRICE_HEADER_ROW}")
    return {key: entry.row for key, entry in rows.items()}


def _category_rank(category: str) -> int:
    return CATEGORIES.index(category) if category in CATEGORIES else len(CATEGORIES)


# ----------------------------------------------------------------------------------- BOM


def bom_sheet_title(rank_index: int) -> str:
    return f"BOM {rank_index}"


def contingency_name(rank_index: int) -> str:
    return f"Contingency_{rank_index}"


def discount_name(rank_index: int) -> str:
    return f"Discount_{rank_index}"


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
        return _ref(self.title, f"${col}${self.first}:${col}${max(self.first, self.last)}")

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
    _define(wb, contingency_name(index), title, "B2")
    _define(wb, discount_name(index), title, "B3")


def write_bom_sheet(wb, index: int, design, contingency_fraction: float, prices: dict | None = None) -> BomCells:
    """One design's bill of materials with live formulas; returns where its totals are.

    With `prices` ({price_key: row} of the Prices sheet) each line's unit price and power are
    references to that row; without, they are written on the line.
    """
    title = bom_sheet_title(index)
    ws = wb.create_sheet(title)
    lines, fraction = split_contingency(design.cost.bom, contingency_fraction)
    _title(ws, f"Bill of materials, design #{design.rank}: {design.label}")
    _bom_inputs(ws, wb, index, title, fraction)
    _header(ws, BOM_HEADER_ROW, BOM_HEADERS, right=BOM_NUMBER_COLUMNS)
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
            formula(ws, row, 5, f"={_ref(PRICES, f'$D${price_row}')}", USD_CENTS, line.unit_price_usd)
            ratio = spare_power_ratio(design, line)
            scaled = "" if ratio == 1.0 else f"*{ratio:.12g}"
            formula(ws, row, 7, f"={_ref(PRICES, f'$E${price_row}')}{scaled}", NUMBER_2, line.power_w)
        formula(ws, row, 6, f"=D{row}*E{row}", USD_CENTS, line.quantity * line.unit_price_usd)
        formula(ws, row, 8, f"=D{row}*G{row}", NUMBER, line.quantity * line.power_w)
        top(ws, row, 1, len(BOM_HEADERS))
        row += 1
    last = row - 1
    ws.auto_filter.ref = f"A{BOM_HEADER_ROW}:H{max(BOM_HEADER_ROW + 1, last)}"
    cells = _bom_totals(ws, index, title, lines, fraction, last)
    _bom_quantities(ws, cells, design, lines)
    ws.freeze_panes = f"A{BOM_FIRST_ROW}"
    _widths(ws, {"A": 13, "B": 19, "C": BOM_DESCRIPTION_WIDTH, "D": 9, "E": 13, "F": 15, "G": 11, "H": 11})
    print_setup(ws, title_rows=f"{BOM_HEADER_ROW}:{BOM_HEADER_ROW}", pages_tall=1 if fits_one_page(ws) else 0)
    return cells


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
        _write(ws, r, 4, value, NUMBER)
    cells.gpus, cells.nodes, cells.racks = f"$D${gpus}", f"$D${nodes}", f"$D${racks}"
    assert cells.values is not None
    cells.values.update(nodes=rows[0][2].value, gpus=rows[1][2].value, racks=rows[2][2].value)


# ----------------------------------------------------------------------------------- summary


TCO_NAMES = ("TCO_years", "TCO_PUE", "TCO_usd_per_kWh")

# Row order of the Summary; `_summary_rows` lists the same keys in the same order.
SUMMARY_KEYS = (
    "rank", "architecture", "platform", "gpu", "gpus", "gpus_used", "nodes", "domains", "nic", "switch",
    "tiers", "oversubscription", "layout", "step", "target", "headroom", "mfu", "it_kw", "facility_kw",
    "racks", "capex", "energy", "tco", "per_gpu", "per_mtok", "stack", "step_p10", "step_p90", *SUMMARY_GOODPUT_KEYS,
    "network_load", "caveats", "capex_includes", "capex_leaves_out",
)
WRAPPED_KEYS = ("architecture", "layout", "nic", "caveats", "capex_includes", "capex_leaves_out")


def design_name(design) -> str:
    """Short name for chart axes and column headers: '#1 hgx-h100 2×cx7-ndr'."""
    a = design.architecture
    return f"#{design.rank} {a.platform} {a.rails_per_node}×{a.nic}"


def _layout_text(lay) -> str:
    experts = f" · EP{lay.ep}" + (f" · ETP{lay.etp}" if lay.etp > 1 else "") if lay.ep > 1 or lay.etp > 1 else ""
    return f"TP{lay.tp} · CP{lay.cp} · PP{lay.pp} · VP{lay.vp} · DP{lay.dp} · mbs {lay.microbatch_size}" + experts


def _summary_rows(design, cells: BomCells, col: str, row_of: dict) -> list:
    """(key, label, value or Live formula, number format) for one design column of the Summary."""
    a, c, p = design.architecture, design.cost, design.perf
    r, v = row_of, cells.values or {}
    facility_kw = v["it_power_kw"] * c.pue
    energy = c.tco_years * HOURS_PER_YEAR * facility_kw * c.usd_per_kwh
    return [
        ("rank", "Rank", design.rank, None),
        ("architecture", "Architecture", design.label, None),
        ("platform", "Platform", a.platform, None),
        ("gpu", "GPU", design.gpu, None),
        ("gpus", "GPUs bought (spares included)", Live(f"={_ref(cells.title, cells.gpus)}", v["gpus"]), NUMBER),
        ("gpus_used", "GPUs used by the job", p.gpus, NUMBER),
        ("nodes", "Nodes", Live(f"={_ref(cells.title, cells.nodes)}", v["nodes"]), NUMBER),
        ("domains", "NVLink domains", Live(f"=ROUNDUP({col}{r['gpus']}/{design.gpus_per_domain},0)",
                                           math.ceil(v["gpus"] / design.gpus_per_domain)), NUMBER),
        ("nic", "NIC × rails per node", f"{a.nic} × {a.rails_per_node}", None),
        ("switch", "Switch", a.switch, None),
        ("tiers", "Fabric tiers", design.tiers, None),
        ("oversubscription", "Oversubscription (down:up)", a.oversubscription, "0.0#"),
        ("layout", "Parallel layout", _layout_text(design.layout), None),
        ("step", "Step time (s)", p.step_time_s, SECONDS),
        ("target", "Target step time (s)", design.target_step_time_s, SECONDS),
        ("headroom", "Headroom (1 − step / target)", Live(f"=1-{col}{r['step']}/{col}{r['target']}",
                                                          1 - p.step_time_s / design.target_step_time_s), PERCENT),
        ("mfu", "MFU", p.mfu, PERCENT),
        ("it_kw", "IT power (kW)", Live(f"={_ref(cells.title, cells.it_power_kw)}", v["it_power_kw"]), NUMBER_2),
        ("facility_kw", "Facility power (kW) = IT × PUE", Live(f"={col}{r['it_kw']}*TCO_PUE", facility_kw), NUMBER_2),
        ("racks", "Racks", Live(f"={_ref(cells.title, cells.racks)}", v["racks"]), NUMBER),
        ("capex", "Capex (USD)", Live(f"={_ref(cells.title, cells.total)}", v["total"]), USD),
        ("energy", "Energy over the TCO years (USD)",
         Live(f"=TCO_years*{HOURS_PER_YEAR:g}*{col}{r['facility_kw']}*TCO_usd_per_kWh", energy), USD),
        ("tco", "TCO (USD) = capex + energy", Live(f"={col}{r['capex']}+{col}{r['energy']}", v["total"] + energy), USD),
        ("per_gpu", "Capex per GPU (USD)", Live(f"={col}{r['capex']}/{col}{r['gpus']}", v["total"] / v["gpus"]), USD),
        _per_mtok_row(design, col, r, v["total"] + (energy if design.objective in ("tco", "rent_or_buy") else 0.0)),
        *_uncertainty_rows(design),
        *summary_goodput_rows(design),
        *orderable_rows(design),
    ]


def orderable_rows(design) -> list:
    """Network load, caveats, and what capex includes and leaves out (SPEC §5.2), as Summary rows."""
    load = design.network_load
    load_text = (f"{load['value']:.2f} (measured up to {load['measured_max']:.2f})"
                 + (" BEYOND the measured range" if load["beyond_measured"] else "")) if load else ""
    includes, leaves_out = capex_scope_text({line.category for line in design.cost.bom})
    return [("network_load", "Network load (scale-out busy ÷ compute)", load_text, None),
            ("caveats", "Caveats before ordering", "; ".join(design.caveats) or "none", None),
            ("capex_includes", "Capex includes", includes, None),
            ("capex_leaves_out", "Capex leaves out", leaves_out, None)]


def _per_mtok_row(design, col: str, r: dict, cost_usd: float) -> tuple:
    """Cost per million tokens (docs/model.md): the ranking's cost over TCO_years of training at this step time."""
    key = "tco" if design.objective in ("tco", "rent_or_buy") else "capex"
    tokens = f"{design.tokens_per_step}/{col}{r['step']}*{design.goodput!r}*TCO_years*{SECONDS_PER_YEAR:.0f}"
    value = cost_per_million_tokens_usd(cost_usd, design.tokens_per_step, design.perf.step_time_s, design.goodput,
                                        design.cost.tco_years)
    return ("per_mtok", f"Cost per million tokens (USD, {'TCO' if key == 'tco' else 'capex'} over the TCO years)",
            Live(f"={col}{r[key]}/({tokens})*1000000", value), USD_CENTS)


def _uncertainty_rows(design) -> list:
    """The software stack and the step time's p10–p90 from its calibration regime (perf/uncertainty.py; the regime
    itself is named in the Performance sheet's coverage column and the JSON's `uncertainty`)."""
    lo, hi = design.step_time_interval_s
    return [("stack", "Software stack (workload.stack)", design.stack, None),
            ("step_p10", "Step time p10 (s)", lo, SECONDS),
            ("step_p90", "Step time p90 (s)", hi, SECONDS)]


def _summary_row_numbers() -> dict:
    """Row of every Summary key (the same for every design column)."""
    return {key: SUMMARY_HEADER_ROW + 1 + i for i, key in enumerate(SUMMARY_KEYS)}


def write_summary_sheet(wb, result, bom_cells: list[BomCells]) -> None:
    """Ranked designs side by side, then capex by category (SUMIF on each BOM sheet) and its charts."""
    ws = wb["Summary"]
    _title(ws, f"fabricplan budget workbook: {result.scenario}")
    note(ws, 2, f"status {result.status}; {len(result.designs)} design(s), #1 is the best; yellow cells (Prices, BOM, "
                "Assumptions) are editable." if result.designs else f"status {result.status}: no design.")
    if not result.designs:
        put(ws, SUMMARY_HEADER_ROW, 1, "No design meets the scenario.").font = BOLD
        put(ws, SUMMARY_HEADER_ROW + 1, 1, result.explanation or "")
        ws.column_dimensions["A"].width = 100
        wrap(ws, SUMMARY_HEADER_ROW + 1, 1, 100)
        print_setup(ws)
        return
    n = len(result.designs)
    row_of = _summary_row_numbers()
    _header(ws, SUMMARY_HEADER_ROW, ["Design"] + [design_name(d) for d in result.designs], right=range(2, 2 + n))
    for i, (design, cells) in enumerate(zip(result.designs, bom_cells)):
        col = col_letter(2 + i)
        rows = _summary_rows(design, cells, col, row_of)
        assert tuple(r[0] for r in rows) == SUMMARY_KEYS
        for key, label, value, fmt in rows:
            row = row_of[key]
            if i == 0:
                put(ws, row, 1, label).font = BOLD
                ws.cell(row=row, column=1).alignment = TOP
            cell = _write(ws, row, 2 + i, value, fmt)
            cell.alignment = RIGHT
            if key in WRAPPED_KEYS:
                wrap(ws, row, 2 + i, SUMMARY_COL_WIDTH, RIGHT_WRAP)
        ws.column_dimensions[col].width = SUMMARY_COL_WIDTH
    ws.column_dimensions["A"].width = 30
    ws.freeze_panes = f"B{SUMMARY_HEADER_ROW + 1}"
    # Page 1: the designs; page 2: capex by category and the charts. Five designs per page across.
    print_setup(ws, pages_wide=-(-n // 5), title_cols="A:A", fit=True, pages_tall=2)  # charts side by side; 2 pages
    if result.next_faster is not None:  # the row between the designs and the capex by category
        note(ws, max(row_of.values()) + 1, result.next_faster["text"])
    summary_warnings(ws, result, max(row_of.values()) + 3, SUMMARY_COL_WIDTH * min(n, 5) + 30)
    _capex_by_category(ws, result, bom_cells, row_of)


def _category_rows(cats: list[str]) -> list[str]:
    """The rows of the capex-by-category table: categories, the adjustment, capex, network, share."""
    return list(cats) + [ADJUSTMENT, "Capex (USD)", NETWORK_ROW, "Network share of capex"]


def _capex_by_category(ws, result, bom_cells: list[BomCells], row_of: dict) -> None:
    """Rows = categories (SUMIF on the design's BOM sheet) + the contingency/discount adjustment
    (= capex − Σ categories, so each stacked bar adds up to capex), columns = designs; then the
    network (NICs, switches, links) in USD and as a share of capex, and two stacked charts: all of
    capex, and capex without compute and spares (the scale that shows the network)."""
    cats: list[str] = []
    for cells in bom_cells:
        cats += [c for c in cells.categories if c not in cats]
    cats.sort(key=_category_rank)
    title_row = max(max(row_of.values()), ws.max_row) + 2  # after the warnings, when there are any
    ws.row_breaks.append(Break(id=title_row - 1))
    _section(ws, title_row, "Capex by category (USD)")
    head = title_row + 1
    n = len(result.designs)
    _header(ws, head, ["Category"] + [f"#{d.rank}" for d in result.designs], right=range(2, 2 + n))
    labels = _category_rows(cats)
    row_of_cat = {label: head + 1 + i for i, label in enumerate(labels)}
    for label, row in row_of_cat.items():
        put(ws, row, 1, label).font = BOLD
    for i, cells in enumerate(bom_cells):
        _category_column(ws, 2 + i, cells, cats, row_of_cat, row_of)
    first_cat, adj = row_of_cat[cats[0]], row_of_cat[ADJUSTMENT]
    everything = [r for r in range(first_cat, adj + 1)]
    beyond = [row_of_cat[c] for c in cats if c not in ("compute", "spares")]
    chart_row = adj + 4
    place_chart(ws, _stacked_chart(ws, "Capex by category", everything, head, n), chart_row)
    place_chart(ws, _stacked_chart(ws, "Network and racks (no compute)", beyond, head, n), chart_row, CHART_CM[0] + 0.5)


def _category_column(ws, col: int, cells: BomCells, cats: list[str], row_of_cat: dict, row_of: dict) -> None:
    v = cells.values or {}
    letter = col_letter(col)
    for cat in cats:
        _write(ws, row_of_cat[cat], col, Live(f"={cells.sumif(cat)}", v.get(cat, 0.0)), USD)
    first, last = row_of_cat[cats[0]], row_of_cat[cats[-1]]
    summed = sum(v.get(cat, 0.0) for cat in cats)
    _write(ws, row_of_cat[ADJUSTMENT], col,
           Live(f"={letter}{row_of_cat['Capex (USD)']}-SUM({letter}{first}:{letter}{last})", v["total"] - summed), USD)
    _write(ws, row_of_cat["Capex (USD)"], col, Live(f"={letter}{row_of['capex']}", v["total"]), USD)
    net = [c for c in NETWORK if c in cats]
    network = sum(v.get(c, 0.0) for c in net)
    net_row = row_of_cat[NETWORK_ROW]
    expression = "+".join(f"{letter}{row_of_cat[c]}" for c in net) or "0"
    _write(ws, net_row, col, Live(f"={expression}", network), USD)
    capex = f"{letter}{row_of_cat['Capex (USD)']}"  # everything owned: capex $0, a share of nothing is 0
    _write(ws, row_of_cat["Network share of capex"], col,
           Live(f"=IF({capex}=0,0,{letter}{net_row}/{capex})", network / v["total"] if v["total"] else 0.0), PERCENT)


def _stacked_chart(ws, title: str, rows: list[int], head: int, n: int) -> BarChart:
    """Stacked columns, one per design, one series per table row (named by column A)."""
    chart = BarChart()
    chart.type, chart.grouping, chart.overlap = "col", "stacked", 100
    style_chart(chart, title, "design (as ranked)", "USD")
    chart.y_axis.numFmt = USD_MILLIONS
    chart.y_axis.scaling.min = 0  # a stacked bar must start at zero, or the categories look wrong
    for row in rows:
        series = Series(Reference(ws, min_col=2, max_col=1 + n, min_row=row, max_row=row))
        series.tx = SeriesLabel(strRef=StrRef(_ref(ws.title, f"$A${row}")))  # named by the row's label
        series.graphicalProperties.solidFill = category_colour(ws.cell(row=row, column=1).value)
        series.graphicalProperties.line.solidFill = category_colour(ws.cell(row=row, column=1).value)
        chart.series.append(series)
    text_categories(chart, ws.title, f"$B${head}:${col_letter(1 + n)}${head}")
    chart.legend.position = "r" if len(rows) > 4 else "b"  # a long legend beside the plot, not under it
    chart.width, chart.height = CHART_CM
    return chart


# One colour per category, the same in every chart (an unknown category gets a grey).
CATEGORY_COLOURS = {"compute": "4472C4", "spares": "A5A5A5", "nic": "ED7D31", "switch": "70AD47", "link": "FFC000",
                    "rack": "7F6084", "storage": "264478", "management": "9E480E", "cooling": "43682B",
                    "installation": "997300", ADJUSTMENT: "9DC3E6"}


def category_colour(category: str) -> str:
    return CATEGORY_COLOURS.get(category, "595959")


# ----------------------------------------------------------------------------------- performance


def write_performance_sheet(wb, result) -> None:
    """Step-time breakdown per design (stacked chart), bytes per GPU, memory per GPU, MFU.

    The columns follow the traffic-class registry (solver/perf/traffic.py): one per class.
    """
    ws = wb.create_sheet("Performance")
    _title(ws, f"Performance per design (one training step; software stack {result.stack})")
    note(ws, 2, "Model outputs (seconds, bytes, GB): prices do not change them; solve again to change them.")
    designs = result.designs
    head = 4
    labels = ["Design", "Compute (s)", "Bubble (s)"] + [f"{k.upper()} exposed (s)" for k in CLASS_NAMES] \
        + ["Link capacity (s)", "Step time (s)", "Target (s)", "MFU"]
    _header(ws, head, labels, right=range(2, len(labels) + 1), height=48)  # "DP_RS exposed (s)": 3 lines of 9
    after = 2 + len(TERMS)  # first column after the breakdown
    for i, d in enumerate(designs):
        row = head + 1 + i
        p = d.perf
        put(ws, row, 1, design_name(d))
        for j, value in enumerate(p.breakdown_s()[t] for t in TERMS):
            put(ws, row, 2 + j, value, SECONDS)
        put(ws, row, after, p.step_time_s, SECONDS)
        put(ws, row, after + 1, d.target_step_time_s, SECONDS)
        put(ws, row, after + 2, p.mfu, PERCENT)
    last = head + len(designs)
    ws.freeze_panes = f"B{head + 1}"
    chart_rows = 0
    if designs:
        ws.add_chart(_breakdown_chart(ws, head, last), f"A{last + 2}")
        chart_rows = 20  # 10 cm of 0.53 cm rows
    row = last + 4 + chart_rows
    if designs:
        ws.row_breaks.append(Break(id=row - 2))
    row = _bytes_table(ws, designs, row)
    _memory_table(ws, designs, row + len(designs) + 3)
    ws.column_dimensions["A"].width = 24
    for col in range(2, 3 + 2 * len(CLASS_NAMES) + 2):
        ws.column_dimensions[col_letter(col)].width = 9  # five traffic classes × two networks fit one page at ≥ 80 %
    ws.column_dimensions[col_letter(5 + len(CLASS_NAMES))].width = 12  # the margins table's wrapped coverage text
    print_setup(ws)  # no repeated header: the second page holds other tables


def _breakdown_chart(ws, head: int, last: int) -> BarChart:
    chart = BarChart()
    chart.type, chart.grouping, chart.overlap = "col", "stacked", 100
    chart.add_data(Reference(ws, min_col=2, max_col=1 + len(TERMS), min_row=head, max_row=last), titles_from_data=True)
    text_categories(chart, ws.title, f"$A${head + 1}:$A${last}")
    style_chart(chart, "Step time breakdown", "design", "seconds per step")
    chart.y_axis.scaling.min = 0
    chart.legend.position = "r"
    chart.height, chart.width = 10, 22
    return chart


def _bytes_table(ws, designs: list, row: int) -> int:
    _section(ws, row - 1, "Bytes per GPU per step (GB)")
    # the classes that move bytes in some design (a dense model's ep moves none): the table fits the page
    classes = [k for k in CLASS_NAMES if any(d.perf.traffic[k].nvlink_bytes or d.perf.traffic[k].scaleout_bytes
                                             for d in designs)]
    labels = ["Design"] + [f"{k.upper()} {net} (GB)" for k in classes for net in ("NVLink", "scale-out")] \
        + ["NVLink total (GB)", "Scale-out total (GB)"]
    _header(ws, row, labels, right=range(2, len(labels) + 1), height=48)  # "DP_RS scale-out (GB)": 3 lines
    for i, d in enumerate(designs):
        p = d.perf
        r = row + 1 + i
        put(ws, r, 1, design_name(d))
        values = [b for k in classes for b in (p.traffic[k].nvlink_bytes, p.traffic[k].scaleout_bytes)]
        values += [p.nvlink_bytes, p.scaleout_bytes]
        for j, v in enumerate(values):
            put(ws, r, 2 + j, v / 1e9, GB)
    return row


def _memory_table(ws, designs: list, row: int) -> None:
    _section(ws, row - 1, "Memory per GPU (GB)")
    labels = ["Design", "Weights, grads, optimizer (GB)", "Activations (GB)", "Total per GPU (GB)",
              "Usable HBM (GB)", "Fits in HBM", "HBM used", "Hardware TFLOP/s per GPU", "MFU"]
    _header(ws, row, labels, right=(2, 3, 4, 5, 6, 7, 8, 9), height=48)
    for i, d in enumerate(designs):
        p = d.perf
        r = row + 1 + i
        put(ws, r, 1, design_name(d))
        put(ws, r, 2, p.memory_states_gb, GB)
        put(ws, r, 3, p.memory_activations_gb, GB)
        put(ws, r, 4, p.memory_per_gpu_gb, GB)
        put(ws, r, 5, p.hbm_usable_gb, GB)
        put(ws, r, 6, "yes" if p.fits_memory else "NO").alignment = RIGHT
        formula(ws, r, 7, f"=D{r}/E{r}", PERCENT, p.memory_per_gpu_gb / p.hbm_usable_gb)
        put(ws, r, 8, p.hardware_tflops_per_gpu, NUMBER_2)
        put(ws, r, 9, p.mfu, PERCENT)
    write_margins_table(ws, row + len(designs) + 3, designs)
    goodput = row + 2 * len(designs) + 6
    if designs:  # the goodput table prints on a page of its own, its title with it (not left at the foot of page 2)
        ws.row_breaks.append(Break(id=goodput - 2))
    write_goodput_table(ws, goodput, designs)


def write_margins_table(ws, row: int, designs) -> None:
    """Per design: slack to the target, the largest compute slowdown and scale-out bandwidth derate it survives,
    each class's overlap window, and the regimes no calibration row covers (perf.coverage)."""
    put(ws, row - 1, 1, "Margins, overlap windows and calibration coverage").font = BOLD
    _header(ws, row, ["Design", "Slack to target", "Compute slowdown survived", "Bandwidth derate survived"]
            + [f"{k.upper()} window (s)" for k in CLASS_NAMES] + ["Uncalibrated regimes and caveats"])
    for i, d in enumerate(designs):
        r = row + 1 + i
        put(ws, r, 1, design_name(d))
        m = d.margins or {}
        for j, key in enumerate(("slack_fraction", "compute_slowdown", "bandwidth_derate")):
            put(ws, r, 2 + j, m.get(key, 0.0), PERCENT)
        for j, k in enumerate(CLASS_NAMES):
            put(ws, r, 5 + j, d.perf.traffic[k].window_s, SECONDS)
        flags = list(d.uncalibrated) + list(d.caveats)
        put(ws, r, 5 + len(CLASS_NAMES), "; ".join(flags) if flags else "none")
        wrap(ws, r, 5 + len(CLASS_NAMES), 12)  # long text wraps in its column instead of widening the page


# ----------------------------------------------------------------------------------- assumptions


def flatten(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested dicts/lists → (dotted.key, scalar) rows; a list of scalars stays one row, comma-joined."""
    if isinstance(data, dict):
        rows = []
        for key, value in data.items():
            rows += flatten(value, f"{prefix}.{key}" if prefix else str(key))
        return rows
    if isinstance(data, list):
        if all(not isinstance(v, (dict, list)) for v in data):
            return [(prefix, ", ".join(str(v) for v in data))]
        rows = []
        for i, value in enumerate(data):
            rows += flatten(value, f"{prefix}[{i}]")
        return rows
    if data is None or isinstance(data, (bool, int, float, str)):
        return [(prefix, data)]
    return [(prefix, str(data))]  # dates and anything else YAML may give


def efficiency_rows(scenario: Scenario, catalog: Catalog, design) -> list[tuple[str, float, str]]:
    """(what, value, source) of the efficiencies in force for one design."""
    cat, sc = catalog, scenario
    a = design.architecture
    hw = hardware_for(sc, cat, a.platform, a.nic, a.rails_per_node, a.oversubscription)
    platform = cat.by_id("platforms")[a.platform]
    gpu = cat.by_id("gpus")[platform.gpu]
    nic = cat.by_id("nics")[a.nic]
    eff = sc.efficiency
    rows = [
        (f"compute efficiency ({gpu.id}, {sc.workload.precision}; effective for this design's GEMM shapes)",
         design.perf.compute_efficiency,
         "scenario efficiency.compute_efficiency" if eff.compute_efficiency else gpu.compute_efficiency_source),
        (f"NVLink efficiency ({platform.id})", hw.nvlink_efficiency,
         "scenario efficiency.nvlink_efficiency" if eff.nvlink_efficiency else f"catalog platform {platform.id}: {platform.source}"),
        (f"NIC efficiency ({nic.id})", hw.nic_efficiency,
         "scenario efficiency.nic_efficiency" if eff.nic_efficiency else nic.efficiency_source),
    ]
    return rows + (moe_efficiency_rows(sc, design, hw, gpu, platform, nic) if sc.workload.model.moe else [])


def moe_efficiency_rows(sc: Scenario, design, hw, gpu, platform, nic) -> list[tuple[str, float, str]]:
    """The Mixture-of-Experts efficiencies in force (SPEC 4.7): expert GEMMs and the all-to-all."""
    dispatcher = sc.workload.expert_dispatch.dispatcher
    so_eff = hw.alltoall_flat_efficiency if dispatcher == "flat" else hw.alltoall_hierarchical_efficiency
    default = "no catalog value: the default in solver/perf/moe.py (docs/model.md §MoE)"
    return [
        (f"expert GEMM efficiency ({gpu.id}, {sc.workload.precision})",
         moe.expert_efficiency(hw), gpu.expert_efficiency_source or default),
        (f"all-to-all NVLink efficiency ({platform.id})", hw.alltoall_nvlink_efficiency or hw.nvlink_efficiency,
         platform.alltoall_efficiency_source or "no catalog value: the NVLink efficiency"),
        (f"all-to-all NIC efficiency ({nic.id}, {dispatcher})", so_eff or hw.nic_efficiency,
         nic.alltoall_efficiency_source or "no catalog value: the NIC efficiency"),
    ]


def overlap_rows(scenario: Scenario) -> list[tuple[str, float, str]]:
    """(what, value, source) of each traffic class's overlap fraction in force."""
    in_force = overlap_for(scenario)
    rows = []
    for name in CLASS_NAMES:
        given = getattr(scenario.overlap, name, None)
        source = (f"scenario overlap.{name}" if given is not None else
                  f"fabricplan default ({BY_NAME[name].overlap_source}; docs/model.md)")
        rows.append((f"overlap {name}", in_force[name], source))
    return rows


class Sections:
    """Writes titled sections one under another (the Assumptions sheets)."""

    def __init__(self, ws, row: int = 3, wrap_cols: dict | None = None):
        self.ws, self.row = ws, row
        self.wrap_cols = wrap_cols or {}

    def section(self, title: str, headers: list, right: tuple = ()) -> None:
        _section(self.ws, self.row, title)
        _header(self.ws, self.row + 1, headers, right=right)
        self.row += 2

    def line(self, *values, formats: tuple = (), left: bool = False) -> int:
        """One row; `left` aligns numbers left too (key / value lists read better that way)."""
        for i, value in enumerate(values):
            cell = put(self.ws, self.row, 1 + i, value, formats[i] if i < len(formats) else None)
            cell.alignment = LEFT_TOP if left else TOP
            if 1 + i in self.wrap_cols and isinstance(value, str):
                wrap(self.ws, self.row, 1 + i, self.wrap_cols[1 + i])
        self.row += 1
        return self.row - 1

    def gap(self) -> None:
        self.row += 1


def scenario_lines(out: Sections, scenario: LoadedScenario, title: str = "Scenario as given") -> None:
    out.section(title, ["Key", "Value"])
    for key, value in flatten(scenario.doc.data or {}):
        out.line(key, value, left=True)
    out.gap()


def catalog_lines(out: Sections, catalog: Catalog) -> None:
    out.section("Catalog files", ["Path", "sha256"])
    for path, digest in provenance(catalog).files:
        out.line(str(path), digest, left=True)
    out.gap()


def write_assumptions_sheet(wb, result, scenario: LoadedScenario, catalog: Catalog) -> None:
    ws = wb.create_sheet("Assumptions")
    _title(ws, "Assumptions and provenance")
    out = Sections(ws, wrap_cols={2: 30, 4: 60})
    _tco_inputs(wb, out, result, scenario.scenario)
    scenario_lines(out, scenario)
    out.section("Efficiencies and overlaps in force", ["Design", "Parameter", "Value", "Source"], right=(3,))
    for d in result.designs:
        for what, value, source in efficiency_rows(scenario.scenario, catalog, d):
            out.line(f"#{d.rank}", what, value, source, formats=(None, None, PERCENT))
    for what, value, source in overlap_rows(scenario.scenario):
        out.line("all", what, value, source, formats=(None, None, PERCENT))
    out.gap()
    catalog_lines(out, catalog)
    out.section("Solver run", ["Item", "Value"])
    for label, value in _run_rows(result):
        fmt = "0.000" if isinstance(value, float) and label != "relative gap" else None
        out.line(label, "none" if value is None else value, formats=(None, fmt), left=True)
    ws.freeze_panes = "A3"
    _widths(ws, {"A": 34, "B": 30, "C": 10, "D": 60})
    print_setup(ws)


def _tco_inputs(wb, out: Sections, result, sc: Scenario) -> None:
    out.section("TCO inputs (editable: the Summary's energy and TCO follow)", ["Input", "Value", "Defined name"],
                right=(2,))
    first = result.designs[0].cost if result.designs else None
    tco_values = (("years", first.tco_years if first else sc.tco.years, "0.0#"),
                  ("PUE", first.pue if first else (sc.tco.pue or 1.0), "0.00"),
                  ("electricity (USD per kWh)", first.usd_per_kwh if first else (sc.tco.usd_per_kwh or 0.0), "0.0000"))
    for name, (label, value, fmt) in zip(TCO_NAMES, tco_values):
        row = out.line(label, value, name, formats=(None, fmt))
        out.ws.cell(row=row, column=2).fill = INPUT_FILL
        _define(wb, name, "Assumptions", f"B{row}")
    out.gap()


def _run_rows(result) -> list[tuple[str, Any]]:
    info = dict(result.solver or {})
    rows = [
        ("status", result.status),
        ("relative gap", result.gap),
        ("solve time (s)", result.solve_time_s),
        ("fabricplan version", __version__),
        ("solver", info.get("name", "HiGHS")),
        ("HiGHS version", info.get("version", highs_version())),
        ("interface", info.get("interface", "")),
        ("MIP relative gap requested", info.get("mip_rel_gap")),
        ("time limit (s)", info.get("time_limit_s")),
        ("written on", _dt.date.today().isoformat()),
    ]
    return rows + [("warning", w) for w in result.warnings]


def highs_version() -> str:
    try:
        from ..optimize.highs import HighsAdapter
        return HighsAdapter.version()
    except Exception:  # noqa: BLE001 - provenance only; the workbook must not fail on it
        return "unknown"


# ----------------------------------------------------------------------------------- workbook


def build_workbook(result, scenario: LoadedScenario, catalog: Catalog) -> Workbook:
    """The whole workbook in memory (no I/O)."""
    wb = Workbook()
    wb.active.title = "Summary"
    contingency = scenario.scenario.constraints.contingency_fraction
    prices = write_prices_sheet(wb, result.designs)
    bom_cells = [write_bom_sheet(wb, i + 1, d, contingency, prices) for i, d in enumerate(result.designs)]
    write_summary_sheet(wb, result, bom_cells)
    from . import cables_sheet, rent_excel  # lazy: they build on this module

    cables = [cables_sheet.SHEET] if cables_sheet.write_cables_sheet(wb, result, catalog) else []
    rent = [rent_excel.SHEET] if rent_excel.write_rent_sheet(wb, result, _summary_row_numbers()) else []
    write_performance_sheet(wb, result)
    write_assumptions_sheet(wb, result, scenario, catalog)
    if result.frontier is not None:
        from .frontier_sheet import FRONTIER_SHEET, write_frontier_sheet

        write_frontier_sheet(wb, result)
    # Sheet order: Summary, Prices, the BOM sheets, Cables, Rent or buy (when offered), Performance,
    # Assumptions (, Frontier).
    order = ["Summary", PRICES] + [c.title for c in bom_cells] + cables + rent + ["Performance", "Assumptions"]
    order += [FRONTIER_SHEET] if result.frontier is not None else []
    wb._sheets = [wb[name] for name in order]
    wb.active = 0
    wb.calculation.fullCalcOnLoad = True  # Excel recomputes on open; the cached values serve other readers
    return wb


def write_workbook(result, scenario: LoadedScenario, catalog: Catalog, path) -> Path:
    """Write the workbook to `path` atomically: a temp file in the same directory, then os.replace.

    An existing file is replaced only when the whole write succeeded; the temp file never survives.
    """
    return save_workbook(build_workbook(result, scenario, catalog), path)


def summary_warnings(ws, result, row: int, width_chars: float) -> int:
    """The run's warnings (the scenario's plausibility warnings, then the solve's) under the Summary's
    design table, so the sheet finance prints carries them; the last row used."""
    warnings = list(getattr(result, "input_warnings", [])) + list(result.warnings)
    if not warnings:
        return row - 1
    put(ws, row, 1, "Warnings").font = BOLD
    for w in warnings:
        row += 1
        put(ws, row, 1, f"⚠ {w}")
        wrap(ws, row, 1, width_chars)
        ws.merge_cells(start_row=row, start_column=1, end_row=row, end_column=max(2, ws.max_column))
    return row
