"""The budget-planning workbook (SPEC §8.4): Summary, one BOM sheet per design, Performance, Assumptions.

Every money total is a live formula, so a budget planner can edit a quantity, a unit price, the
contingency or the discount and see every total, the TCO and the chart follow:

    extended_usd   = quantity · unit_price_usd                       (per BOM line)
    subtotal_usd   = Σ extended_usd                                   (catalog lines only)
    total_usd      = subtotal_usd · (1 − discount) · (1 + contingency)
    IT kW          = Σ quantity · power_w / 1000
    facility kW    = IT kW · PUE
    TCO            = capex + years · 8,760 h · facility kW · $/kWh

The solver's own contingency BOM line is not written as a line: its fraction goes into the
editable contingency cell, so with discount 0 the sheet total equals the JSON capex_usd.

Every string that comes from a catalog or scenario is written as text (never a formula), even
when it starts with "=", "+", "-" or "@". The file is written atomically (temp file + os.replace).
"""
from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter, quote_sheetname
from openpyxl.workbook.defined_name import DefinedName

from .. import __version__
from ..costing import HOURS_PER_YEAR
from ..inputs import LoadedScenario, provenance
from ..inputs.schema import Catalog, Scenario
from ..perf import moe
from ..perf.hardware import hardware_for
from ..perf.traffic import BY_NAME, CLASS_NAMES, overlap_for
from ..sweep.summary import point_label
from .io import atomic_path

USD = '"$"#,##0'
USD_CENTS = '"$"#,##0.00'
PERCENT = "0.0%"
SECONDS = "0.000"
NUMBER = "#,##0"
NUMBER_2 = "#,##0.00"
GB = "#,##0.00"

BOM_HEADERS = ("Category", "Part", "Description", "Quantity", "Unit price (USD)", "Extended (USD)",
               "Power per unit (W)", "Extended power (W)", "Price source", "Price date", "Estimate")
BOM_HEADER_ROW = 4
BOM_FIRST_ROW = BOM_HEADER_ROW + 1
# Order of the category subtotals and chart series; a category not listed here is appended.
CATEGORIES = ("compute", "spares", "nic", "switch", "link", "rack")
ADJUSTMENT = "contingency − discount"
TERMS = ("compute", "bubble", *CLASS_NAMES, "capacity")  # the step-time breakdown: compute, bubble, each class exposed, link capacity

HEADER_FONT = Font(bold=True, color="FFFFFF")
HEADER_FILL = PatternFill("solid", fgColor="1F4E78")
INPUT_FILL = PatternFill("solid", fgColor="FFF2CC")  # editable cells are yellow
TITLE_FONT = Font(bold=True, size=14)
BOLD = Font(bold=True)


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


def formula(ws, row: int, col: int, expression: str, number_format: str | None = None):
    """Write a formula we built ourselves (never from input text); `expression` starts with "="."""
    assert expression.startswith("="), expression
    cell = ws.cell(row=row, column=col)
    cell.value = expression
    if number_format:
        cell.number_format = number_format
    return cell


def _header(ws, row: int, labels, first_col: int = 1) -> None:
    for i, label in enumerate(labels):
        cell = put(ws, row, first_col + i, label)
        cell.font, cell.fill = HEADER_FONT, HEADER_FILL
        cell.alignment = Alignment(wrap_text=True, vertical="center")
    ws.row_dimensions[row].height = 32  # room for two wrapped lines


def _title(ws, text: str) -> None:
    put(ws, 1, 1, text).font = TITLE_FONT


def _fit_landscape(ws) -> None:
    """Print landscape, one page wide."""
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth = 1
    ws.page_setup.fitToHeight = 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True


def _widths(ws, widths: dict) -> None:
    for col, width in widths.items():
        ws.column_dimensions[col].width = width


def _define(wb, name: str, sheet_title: str, cell: str) -> None:
    """A workbook-level name pointing at ONE cell (LibreOffice evaluates constant names wrongly)."""
    col, row = cell.rstrip("0123456789"), cell[len(cell.rstrip("0123456789")):]
    wb.defined_names[name] = DefinedName(name, attr_text=f"{quote_sheetname(sheet_title)}!${col}${row}")


def _ref(sheet_title: str, cell: str) -> str:
    return f"{quote_sheetname(sheet_title)}!{cell}"


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


class BomCells:
    """Where one BOM sheet keeps its totals (A1 addresses on that sheet)."""

    def __init__(self, title: str, first: int, last: int, total: str, it_power_kw: str, categories: list):
        self.title, self.first, self.last = title, first, last
        self.total, self.it_power_kw, self.categories = total, it_power_kw, categories

    def column(self, col: str) -> str:
        return _ref(self.title, f"${col}${self.first}:${col}${max(self.first, self.last)}")


def _categories_of(lines: list) -> list[str]:
    seen = [c for c in CATEGORIES if any(line.category == c for line in lines)]
    return seen + sorted({line.category for line in lines} - set(seen))


def write_bom_sheet(wb, index: int, design, contingency_fraction: float) -> BomCells:
    """One design's bill of materials with live formulas; returns where its totals are."""
    title = bom_sheet_title(index)
    ws = wb.create_sheet(title)
    lines, fraction = split_contingency(design.cost.bom, contingency_fraction)
    _title(ws, f"Bill of materials, design #{design.rank}: {design.label}")

    put(ws, 2, 1, "Contingency (editable)").font = BOLD
    put(ws, 2, 2, fraction, PERCENT).fill = INPUT_FILL
    put(ws, 2, 3, f"fraction of the lines, added after the discount (defined name {contingency_name(index)})")
    put(ws, 3, 1, "Discount (editable)").font = BOLD
    put(ws, 3, 2, 0.0, PERCENT).fill = INPUT_FILL
    put(ws, 3, 3, f"negotiated discount on the lines (defined name {discount_name(index)})")
    _define(wb, contingency_name(index), title, "B2")
    _define(wb, discount_name(index), title, "B3")

    _header(ws, BOM_HEADER_ROW, BOM_HEADERS)
    row = BOM_FIRST_ROW
    for line in lines:
        put(ws, row, 1, line.category)
        put(ws, row, 2, line.part)
        put(ws, row, 3, line.description)
        put(ws, row, 4, line.quantity, NUMBER).fill = INPUT_FILL
        put(ws, row, 5, line.unit_price_usd, USD_CENTS).fill = INPUT_FILL
        formula(ws, row, 6, f"=D{row}*E{row}", USD_CENTS)
        put(ws, row, 7, line.power_w, NUMBER_2)
        formula(ws, row, 8, f"=D{row}*G{row}", NUMBER)
        put(ws, row, 9, line.price_source)
        put(ws, row, 10, line.price_date)
        put(ws, row, 11, "estimate" if line.price_is_estimate else "quoted")
        row += 1
    last = row - 1
    ws.auto_filter.ref = f"A{BOM_HEADER_ROW}:K{max(BOM_HEADER_ROW + 1, last)}"

    cells = _bom_totals(ws, index, title, last, _categories_of(lines))
    ws.freeze_panes = f"A{BOM_FIRST_ROW}"
    ws.print_title_rows = f"{BOM_HEADER_ROW}:{BOM_HEADER_ROW}"
    _fit_landscape(ws)
    _widths(ws, {"A": 22, "B": 18, "C": 58, "D": 10, "E": 16, "F": 18, "G": 12, "H": 14, "I": 60, "J": 12, "K": 10})
    return cells


def _bom_totals(ws, index: int, title: str, last: int, cats: list[str]) -> BomCells:
    """Category subtotals (SUMIF), subtotal, discount, contingency, grand total, IT power.

    total = subtotal · (1 − Discount_i) · (1 + Contingency_i).
    """
    first = BOM_FIRST_ROW
    span = max(first, last)
    row = last + 2
    put(ws, row, 5, "Subtotals by category").font = BOLD
    row += 1
    for cat in cats:
        put(ws, row, 5, cat)
        formula(ws, row, 6, f'=SUMIF($A${first}:$A${span},"{cat}",$F${first}:$F${span})', USD)
        row += 1
    sub_row = row
    put(ws, sub_row, 5, "Subtotal (lines)").font = BOLD
    formula(ws, sub_row, 6, f"=SUM(F{first}:F{span})", USD_CENTS)
    d, c = discount_name(index), contingency_name(index)
    put(ws, sub_row + 1, 5, "Discount")
    formula(ws, sub_row + 1, 6, f"=-F{sub_row}*{d}", USD_CENTS)
    put(ws, sub_row + 2, 5, "Contingency")
    formula(ws, sub_row + 2, 6, f"=F{sub_row}*(1-{d})*{c}", USD_CENTS)
    total_row = sub_row + 3
    put(ws, total_row, 5, "Grand total (USD)").font = BOLD
    formula(ws, total_row, 6, f"=F{sub_row}*(1-{d})*(1+{c})", USD_CENTS).font = BOLD
    power_row = total_row + 1
    put(ws, power_row, 5, "IT power (kW)").font = BOLD
    formula(ws, power_row, 6, f"=SUM(H{first}:H{span})/1000", NUMBER_2)
    return BomCells(title, first, last, f"$F${total_row}", f"$F${power_row}", cats)



# ----------------------------------------------------------------------------------- summary


TCO_NAMES = ("TCO_years", "TCO_PUE", "TCO_usd_per_kWh")


def design_name(design) -> str:
    """Short name for chart axes and row headers: '#1 hgx-h100 2×cx7-ndr'."""
    a = design.architecture
    return f"#{design.rank} {a.platform} {a.rails_per_node}×{a.nic}"


def _layout_text(lay) -> str:
    experts = f" · EP{lay.ep}" + (f" · ETP{lay.etp}" if lay.etp > 1 else "") if lay.ep > 1 or lay.etp > 1 else ""
    return f"TP{lay.tp} · CP{lay.cp} · PP{lay.pp} · VP{lay.vp} · DP{lay.dp} · mbs {lay.microbatch_size}" + experts


def _summary_rows(design, cells: BomCells, col: str, row_of: dict) -> list:
    """(key, label, value-or-formula, number format) for one design column of the Summary."""
    a, c, p = design.architecture, design.cost, design.perf
    r = row_of
    return [
        ("rank", "Rank", design.rank, None),
        ("architecture", "Architecture", design.label, None),
        ("platform", "Platform", a.platform, None),
        ("gpu", "GPU", design.gpu, None),
        ("gpus", "GPUs bought (spares included)", c.gpus, NUMBER),
        ("gpus_used", "GPUs used by the job", p.gpus, NUMBER),
        ("nodes", "Nodes", c.nodes, NUMBER),
        ("domains", "NVLink domains", -(-c.gpus // design.gpus_per_domain), NUMBER),
        ("nic", "NIC × rails per node", f"{a.nic} × {a.rails_per_node}", None),
        ("switch", "Switch", a.switch, None),
        ("tiers", "Fabric tiers", design.tiers, None),
        ("oversubscription", "Oversubscription (down:up)", a.oversubscription, "0.0#"),
        ("layout", "Parallel layout", _layout_text(design.layout), None),
        ("step", "Step time (s)", p.step_time_s, SECONDS),
        ("target", "Target step time (s)", design.target_step_time_s, SECONDS),
        ("headroom", "Headroom (1 − step / target)", f"=1-{col}{r['step']}/{col}{r['target']}", PERCENT),
        ("mfu", "MFU", p.mfu, PERCENT),
        ("it_kw", "IT power (kW)", f"={_ref(cells.title, cells.it_power_kw)}", NUMBER_2),
        ("facility_kw", "Facility power (kW) = IT × PUE", f"={col}{r['it_kw']}*TCO_PUE", NUMBER_2),
        ("racks", "Racks", c.racks, NUMBER),
        ("capex", "Capex (USD)", f"={_ref(cells.title, cells.total)}", USD),
        ("energy", "Energy over the TCO years (USD)",
         f"=TCO_years*{HOURS_PER_YEAR:g}*{col}{r['facility_kw']}*TCO_usd_per_kWh", USD),
        ("tco", "TCO (USD) = capex + energy", f"={col}{r['capex']}+{col}{r['energy']}", USD),
        ("per_gpu", "Capex per GPU (USD)", f"={col}{r['capex']}/{col}{r['gpus']}", USD),
    ]


SUMMARY_HEADER_ROW = 3


# Row order of the Summary; `_summary_rows` must list the same keys in the same order.
SUMMARY_KEYS = (
    "rank", "architecture", "platform", "gpu", "gpus", "gpus_used", "nodes", "domains", "nic", "switch",
    "tiers", "oversubscription", "layout", "step", "target", "headroom", "mfu", "it_kw", "facility_kw",
    "racks", "capex", "energy", "tco", "per_gpu",
)


def _summary_row_numbers() -> dict:
    """Row of every Summary key (the same for every design column)."""
    return {key: SUMMARY_HEADER_ROW + 1 + i for i, key in enumerate(SUMMARY_KEYS)}


def write_summary_sheet(wb, result, bom_cells: list[BomCells]) -> None:
    """Ranked designs side by side, then capex by category (SUMIF on each BOM sheet) and its chart."""
    ws = wb["Summary"]
    _title(ws, f"fabricplan budget workbook: {result.scenario}")
    put(ws, 2, 1, f"status {result.status}; {len(result.designs)} design(s); yellow cells on the BOM sheets "
                  "and the Assumptions sheet are editable, every total follows")
    if not result.designs:
        put(ws, SUMMARY_HEADER_ROW, 1, "No design meets the scenario.").font = BOLD
        put(ws, SUMMARY_HEADER_ROW + 1, 1, result.explanation or "")
        return
    row_of = _summary_row_numbers()
    _header(ws, SUMMARY_HEADER_ROW, ["Design"] + [f"#{d.rank}" for d in result.designs])
    for i, (design, cells) in enumerate(zip(result.designs, bom_cells)):
        col_idx = 2 + i
        col = get_column_letter(col_idx)
        rows = _summary_rows(design, cells, col, row_of)
        assert tuple(r[0] for r in rows) == SUMMARY_KEYS
        for key, label, value, fmt in rows:
            row = row_of[key]
            if i == 0:
                put(ws, row, 1, label).font = BOLD
            if isinstance(value, str) and value.startswith("=") and key in FORMULA_KEYS:
                formula(ws, row, col_idx, value, fmt)
            else:
                put(ws, row, col_idx, value, fmt)
        ws.column_dimensions[col].width = 40
    ws.column_dimensions["A"].width = 34
    ws.freeze_panes = f"B{SUMMARY_HEADER_ROW + 1}"
    ws.print_title_cols = "A:A"
    ws.print_title_rows = f"{SUMMARY_HEADER_ROW}:{SUMMARY_HEADER_ROW}"
    _fit_landscape(ws)
    _capex_by_category(ws, result, bom_cells, row_of)


# Only these Summary keys hold formulas we built; any other "=…" string is input text.
FORMULA_KEYS = frozenset({"headroom", "it_kw", "facility_kw", "capex", "energy", "tco", "per_gpu"})


def _capex_by_category(ws, result, bom_cells: list[BomCells], row_of: dict) -> None:
    """Rows = designs, columns = categories (SUMIF on the BOM sheet) + the contingency/discount
    adjustment (= capex − Σ categories), so each stacked bar adds up to the design's capex."""
    cats = []
    for cells in bom_cells:
        cats += [c for c in cells.categories if c not in cats]
    head = max(row_of.values()) + 3
    put(ws, head - 1, 1, "Capex by category (USD)").font = TITLE_FONT
    _header(ws, head, ["Design"] + cats + [ADJUSTMENT, "Capex (USD)"])
    for i, (design, cells) in enumerate(zip(result.designs, bom_cells)):
        row = head + 1 + i
        put(ws, row, 1, design_name(design))
        for j, cat in enumerate(cats):
            formula(ws, row, 2 + j, f'=SUMIF({cells.column("A")},"{cat}",{cells.column("F")})', USD)
        first, last_cat = get_column_letter(2), get_column_letter(1 + len(cats))
        capex_col = get_column_letter(3 + len(cats))
        formula(ws, row, 2 + len(cats), f"={capex_col}{row}-SUM({first}{row}:{last_cat}{row})", USD)
        formula(ws, row, 3 + len(cats), f"={get_column_letter(2 + i)}{row_of['capex']}", USD)
    last = head + len(result.designs)
    for col in range(2, 4 + len(cats)):
        letter = get_column_letter(col)
        ws.column_dimensions[letter].width = max(ws.column_dimensions[letter].width or 0, 16)
    chart = BarChart()
    chart.type, chart.grouping, chart.overlap = "col", "stacked", 100
    chart.title = "Capex by category"
    chart.y_axis.title = "USD"
    chart.y_axis.numFmt = '"$"#,##0,,"M"'
    chart.y_axis.scaling.min = 0  # a stacked bar must start at zero, or the categories look wrong
    chart.x_axis.title = "Design"
    chart.x_axis.delete = False
    chart.y_axis.delete = False
    data = Reference(ws, min_col=2, max_col=2 + len(cats), min_row=head, max_row=last)
    chart.add_data(data, titles_from_data=True)
    chart.set_categories(Reference(ws, min_col=1, min_row=head + 1, max_row=last))
    chart.height, chart.width = 9, 18
    ws.add_chart(chart, f"A{last + 3}")


# ----------------------------------------------------------------------------------- performance


def write_performance_sheet(wb, result) -> None:
    """Step-time breakdown per design (stacked chart), bytes per GPU, memory per GPU, MFU."""
    ws = wb.create_sheet("Performance")
    _title(ws, "Performance per design (one training step)")
    designs = result.designs
    head = 3
    _header(ws, head, ["Design", "Compute (s)", "Bubble (s)"] + [f"{k.upper()} exposed (s)" for k in CLASS_NAMES]
            + ["Link capacity (s)", "Step time (s)", "Target (s)", "MFU"])
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
    ws.print_title_rows = f"{head}:{head}"
    _fit_landscape(ws)
    if designs:
        chart = BarChart()
        chart.type, chart.grouping, chart.overlap = "col", "stacked", 100
        chart.title = "Step time breakdown (s)"
        chart.y_axis.title = "seconds per step"
        chart.y_axis.scaling.min = 0
        chart.x_axis.title = "Design"
        chart.x_axis.delete = False
        chart.y_axis.delete = False
        chart.add_data(Reference(ws, min_col=2, max_col=1 + len(TERMS), min_row=head, max_row=last),
                       titles_from_data=True)
        chart.set_categories(Reference(ws, min_col=1, min_row=head + 1, max_row=last))
        chart.height, chart.width = 10, 20
        ws.add_chart(chart, f"A{last + 2 * len(designs) + 12}")  # below the three tables

    row = last + 3
    put(ws, row - 1, 1, "Bytes per GPU per step (GB)").font = BOLD
    _header(ws, row, ["Design"] + [f"{k.upper()} {net} (GB)" for k in CLASS_NAMES for net in ("NVLink", "scale-out")]
            + ["NVLink total (GB)", "Scale-out total (GB)"])
    for i, d in enumerate(designs):
        p = d.perf
        r = row + 1 + i
        put(ws, r, 1, design_name(d))
        values = [b for k in CLASS_NAMES for b in (p.traffic[k].nvlink_bytes, p.traffic[k].scaleout_bytes)]
        values += [p.nvlink_bytes, p.scaleout_bytes]
        for j, v in enumerate(values):
            put(ws, r, 2 + j, v / 1e9, GB)

    row = row + len(designs) + 3
    put(ws, row - 1, 1, "Memory per GPU (GB)").font = BOLD
    _header(ws, row, ["Design", "Weights, grads, optimizer (GB)", "Activations (GB)", "Total per GPU (GB)",
                      "Usable HBM (GB)", "Fits", "HBM used", "Hardware TFLOP/s per GPU", "MFU"])
    for i, d in enumerate(designs):
        p = d.perf
        r = row + 1 + i
        put(ws, r, 1, design_name(d))
        put(ws, r, 2, p.memory_states_gb, GB)
        put(ws, r, 3, p.memory_activations_gb, GB)
        put(ws, r, 4, p.memory_per_gpu_gb, GB)
        put(ws, r, 5, p.hbm_usable_gb, GB)
        put(ws, r, 6, "yes" if p.fits_memory else "NO")
        formula(ws, r, 7, f"=D{r}/E{r}", PERCENT)
        put(ws, r, 8, p.hardware_tflops_per_gpu, NUMBER_2)
        put(ws, r, 9, p.mfu, PERCENT)
    row = row + len(designs) + 3
    write_margins_table(ws, row, designs)
    ws.column_dimensions["A"].width = 22
    for col in range(2, 12):
        ws.column_dimensions[get_column_letter(col)].width = 15


def write_margins_table(ws, row: int, designs) -> None:
    """Per design: slack to the target, the largest compute slowdown and scale-out bandwidth derate it survives,
    each class's overlap window, and the regimes no calibration row covers (perf.coverage)."""
    put(ws, row - 1, 1, "Margins, overlap windows and calibration coverage").font = BOLD
    _header(ws, row, ["Design", "Slack to target", "Compute slowdown survived", "Bandwidth derate survived"]
            + [f"{k.upper()} window (s)" for k in CLASS_NAMES] + ["Uncalibrated regimes"])
    for i, d in enumerate(designs):
        r = row + 1 + i
        put(ws, r, 1, design_name(d))
        m = d.margins or {}
        for j, key in enumerate(("slack_fraction", "compute_slowdown", "bandwidth_derate")):
            put(ws, r, 2 + j, m.get(key, 0.0), PERCENT)
        for j, k in enumerate(CLASS_NAMES):
            put(ws, r, 5 + j, d.perf.traffic[k].window_s, SECONDS)
        put(ws, r, 5 + len(CLASS_NAMES), "; ".join(d.uncalibrated) if d.uncalibrated else "none")


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


def write_assumptions_sheet(wb, result, scenario: LoadedScenario, catalog: Catalog) -> None:
    ws = wb.create_sheet("Assumptions")
    _title(ws, "Assumptions and provenance")
    row = 3

    def section(title: str, headers: list) -> None:
        nonlocal row
        put(ws, row, 1, title).font = BOLD
        _header(ws, row + 1, headers)
        row += 2

    section("TCO inputs (editable: the Summary's energy and TCO follow)", ["Input", "Value", "Defined name"])
    first = result.designs[0].cost if result.designs else None
    sc = scenario.scenario
    tco_values = (("years", first.tco_years if first else sc.tco.years, "0.0#"),
                  ("PUE", first.pue if first else (sc.tco.pue or 1.0), "0.00"),
                  ("electricity (USD per kWh)", first.usd_per_kwh if first else (sc.tco.usd_per_kwh or 0.0), "0.0000"))
    for name, (label, value, fmt) in zip(TCO_NAMES, tco_values):
        put(ws, row, 1, label)
        put(ws, row, 2, value, fmt).fill = INPUT_FILL
        put(ws, row, 3, name)
        _define(wb, name, "Assumptions", f"B{row}")
        row += 1
    row += 1

    section("Scenario as given", ["Key", "Value"])
    for key, value in flatten(scenario.doc.data or {}):
        put(ws, row, 1, key)
        put(ws, row, 2, value)
        row += 1
    row += 1

    section("Efficiencies and overlaps in force", ["Design", "Parameter", "Value", "Source"])
    for d in result.designs:
        for what, value, source in efficiency_rows(sc, catalog, d):
            put(ws, row, 1, f"#{d.rank}")
            put(ws, row, 2, what)
            put(ws, row, 3, value, PERCENT)
            put(ws, row, 4, source)
            row += 1
    for what, value, source in overlap_rows(sc):
        put(ws, row, 1, "all")
        put(ws, row, 2, what)
        put(ws, row, 3, value, PERCENT)
        put(ws, row, 4, source)
        row += 1
    row += 1

    section("Catalog files", ["Path", "sha256"])
    for path, digest in provenance(catalog).files:
        put(ws, row, 1, str(path))
        put(ws, row, 2, digest)
        row += 1
    row += 1

    section("Solver run", ["Item", "Value"])
    info = dict(result.solver or {})
    run_rows = [
        ("status", result.status),
        ("relative gap", result.gap),
        ("solve time (s)", result.solve_time_s),
        ("fabricplan version", __version__),
        ("solver", info.get("name", "HiGHS")),
        ("HiGHS version", info.get("version", _highs_version())),
        ("interface", info.get("interface", "")),
        ("MIP relative gap requested", info.get("mip_rel_gap")),
        ("time limit (s)", info.get("time_limit_s")),
        ("written on", _dt.date.today().isoformat()),
    ]
    run_rows += [("warning", w) for w in result.warnings]
    for label, value in run_rows:
        put(ws, row, 1, label)
        put(ws, row, 2, "none" if value is None else value)
        row += 1

    ws.freeze_panes = "A3"
    _fit_landscape(ws)
    _widths(ws, {"A": 44, "B": 40, "C": 16, "D": 90})


def _highs_version() -> str:
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
    bom_cells = [write_bom_sheet(wb, i + 1, d, contingency) for i, d in enumerate(result.designs)]
    write_summary_sheet(wb, result, bom_cells)
    write_performance_sheet(wb, result)
    write_assumptions_sheet(wb, result, scenario, catalog)
    # Sheet order: Summary, Performance, Assumptions, then the BOM sheets.
    order = ["Summary", "Performance", "Assumptions"] + [c.title for c in bom_cells]
    wb._sheets = [wb[name] for name in order]
    wb.active = 0
    wb.calculation.fullCalcOnLoad = True  # no cached values: ask the application to compute on open
    return wb


def write_workbook(result, scenario: LoadedScenario, catalog: Catalog, path) -> Path:
    """Write the workbook to `path` atomically: a temp file in the same directory, then os.replace.

    An existing file is replaced only when the whole write succeeded; the temp file never survives.
    """
    wb = build_workbook(result, scenario, catalog)
    with atomic_path(path) as tmp:
        wb.save(tmp)
    return Path(path)


# ------------------------------------------------------------------------------------ sweeps


SWEEP_COLUMNS = (("point", None), ("status", None), ("architecture", None), ("GPUs", "#,##0"), ("nodes", "#,##0"),
                 ("switches", "#,##0"), ("racks", "#,##0"), ("step time (s)", "0.00"), ("MFU", "0.0%"),
                 ("capex (USD)", '"$"#,##0'), ("TCO (USD)", '"$"#,##0'), ("capex per PFLOP/s (USD)", '"$"#,##0'),
                 ("TCO per M tokens (USD)", '"$"#,##0.00'), ("switch point", None), ("capex at switch (USD)", '"$"#,##0'))


def write_sweep_workbook(report: dict, path: str | Path) -> Path:
    """An .xlsx with a `Sweep` sheet: one row per point, line charts of capex and GPUs, switch points marked."""
    wb = Workbook()
    ws = wb.active
    ws.title = "Sweep"
    add_sweep_sheet(ws, report)
    with atomic_path(path) as tmp:
        wb.save(tmp)
    return Path(path)


def add_sweep_sheet(ws, report: dict) -> None:
    """Fill `ws` (an openpyxl worksheet) with the sweep table and its charts."""
    axis_names = [a["name"] for a in report["axes"]]
    headers = axis_names + [c for c, _ in SWEEP_COLUMNS]
    for col, h in enumerate(headers, 1):
        put(ws, 1, col, h)
    for cell in ws[1]:
        cell.font = Font(bold=True)
    switch_at = {s["index"]: f"{s['from']} → {s['to']}" for s in report["switch_points"]}
    for row_index, r in enumerate(report["points"], 2):
        swept = [r["values"].get(n) for n in axis_names]
        got = r if r.get("architecture") else {}  # an unsolved point leaves its numbers empty
        get = got.get
        row = swept + [point_label(r), r["status"], r.get("architecture") or r.get("reason"), get("gpus"), get("nodes"),
                       get("switches"), get("racks"), get("step_time_s"), get("mfu"), get("capex_usd"), get("tco_usd"),
                       get("capex_usd_per_pflop_s"), get("tco_usd_per_million_tokens"), switch_at.get(r["index"]),
                       get("capex_usd") if r["index"] in switch_at else None]
        for col, value in enumerate(row, 1):
            put(ws, row_index, col, value)
    first = len(axis_names)
    for offset, (_, fmt) in enumerate(SWEEP_COLUMNS):
        if fmt:
            for cells in ws.iter_rows(min_row=2, min_col=first + offset + 1, max_col=first + offset + 1):
                cells[0].number_format = fmt
    for i, width in enumerate([16] * len(axis_names) + [28, 10, 44, 10, 10, 10, 8, 12, 8, 16, 16, 18, 16, 44, 18], start=1):
        ws.column_dimensions[get_column_letter(i)].width = width
    ws.freeze_panes = "A2"
    _charts(ws, report, first)


def _charts(ws, report: dict, first: int) -> None:
    """Two native line charts against the swept value; switch points as a marker-only series."""
    n = len(report["points"])
    if n == 0:
        return
    headers = [c for c, _ in SWEEP_COLUMNS]
    col_of = {h: first + i + 1 for i, h in enumerate(headers)}
    # x labels: the swept value for a one-axis sweep, else the point label
    x_col = 1 if len(report["axes"]) == 1 else col_of["point"]
    cats = Reference(ws, min_col=x_col, min_row=2, max_row=n + 1)
    x_title = report["axes"][0]["name"] if len(report["axes"]) == 1 else "point"
    specs = (("Capex against the swept value", ("capex (USD)", "capex at switch (USD)"), "capex (USD)", "H2"),
             ("GPUs against the swept value", ("GPUs",), "GPUs", "H20"))
    for title, cols, y_title, anchor in specs:
        chart = LineChart()
        chart.title, chart.y_axis.title, chart.x_axis.title = title, y_title, x_title
        chart.height, chart.width = 8, 16
        chart.display_blanks = "gap"
        for name in cols:
            chart.add_data(Reference(ws, min_col=col_of[name], min_row=1, max_row=n + 1), titles_from_data=True)
        chart.set_categories(cats)
        for series in chart.series:
            series.marker.symbol = "circle"
        if len(chart.series) > 1:  # the switch-point series: big diamonds, no line
            marks = chart.series[1]
            marks.marker.symbol, marks.marker.size = "diamond", 10
            marks.graphicalProperties.line.noFill = True
        ws.add_chart(chart, get_column_letter(len(report["axes"]) + len(SWEEP_COLUMNS) + 2) + anchor[1:])
