"""The workbook's Summary sheet (docs/workbook.md): one column per design, capex by category and the charts."""
from __future__ import annotations

import math

from openpyxl.chart import BarChart, Reference, Series
from openpyxl.chart.data_source import StrRef
from openpyxl.chart.series import SeriesLabel
from openpyxl.worksheet.pagebreak import Break

from ..confidence import confidence
from ..costing.facility import capex_scope_text
from ..figures import figure
from ..results import cost_per_million_tokens_usd
from ..units import HOURS_PER_YEAR, SECONDS_PER_YEAR
from .bom_sheet import NETWORK, BomCells
from .goodput_sheet import SUMMARY_GOODPUT_KEYS, summary_goodput_rows
from .prices_sheet import category_rank
from .xlsx import (
    BOLD,
    NUMBER,
    NUMBER_2,
    PERCENT,
    RIGHT,
    RIGHT_WRAP,
    SECONDS,
    TOP,
    USD,
    USD_CENTS,
    USD_MILLIONS,
    Live,
    col_letter,
    header_row,
    note,
    place_chart,
    print_setup,
    put,
    section_row,
    sheet_ref,
    style_chart,
    text_categories,
    wrap,
    write_cell,
    write_title,
)

ADJUSTMENT = "contingency − discount"
NETWORK_ROW = "Network (NICs, switches, links)"
SUMMARY_HEADER_ROW = 3
SUMMARY_COL_WIDTH = 20
CHART_CM = (12.5, 8.5)  # width, height of the Summary charts: two side by side fit 25.9 cm of landscape Letter


TCO_NAMES = ("TCO_years", "TCO_PUE", "TCO_usd_per_kWh")

# Row order of the Summary; `_summary_rows` lists the same keys in the same order.
SUMMARY_KEYS = (
    "rank", "architecture", "platform", "gpu", "gpus", "gpus_used", "nodes", "domains", "nic", "switch", "fabric",
    "tiers", "oversubscription", "layout", "step", "target", "headroom", "mfu", "it_kw", "facility_kw",
    "racks", "capex", "energy", "tco", "per_gpu", "per_mtok", "stack", "step_p10", "step_p90", *SUMMARY_GOODPUT_KEYS,
    "network_load", "caveats", "reference_design", "capex_includes", "capex_leaves_out",
)
WRAPPED_KEYS = ("architecture", "layout", "nic", "caveats", "reference_design", "goodput_assumptions", "capex_includes",
                "capex_leaves_out")


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
    js = design.to_dict()

    def fig(name: str, key: str | None = None) -> tuple:  # a row of the design's figures (`figures.FIGURES`)
        f = figure(name)
        return key or name, f.label, f.read(js), f.number_format

    return [
        ("rank", "Rank", design.rank, None),
        fig("architecture"),
        fig("platform"),
        ("gpu", "GPU", design.gpu, None),
        ("gpus", "GPUs bought (spares included)", Live(f"={sheet_ref(cells.title, cells.gpus)}", v["gpus"]), NUMBER),
        ("gpus_used", "GPUs used by the job", p.gpus, NUMBER),
        ("nodes", "Nodes", Live(f"={sheet_ref(cells.title, cells.nodes)}", v["nodes"]), NUMBER),
        ("domains", "NVLink domains", Live(f"=ROUNDUP({col}{r['gpus']}/{design.gpus_per_domain},0)",
                                           math.ceil(v["gpus"] / design.gpus_per_domain)), NUMBER),
        ("nic", "NIC × rails per node", f"{a.nic} × {a.rails_per_node}", None),
        ("switch", "Switch", a.switch, None),
        fig("fabric"),
        ("tiers", "Fabric tiers", design.tiers, None),
        ("oversubscription", "Oversubscription (down:up)", a.oversubscription, "0.0#"),
        ("layout", "Parallel layout", _layout_text(design.layout), None),
        fig("step_time_s", "step"),
        ("target", "Target step time (s)", design.target_step_time_s, SECONDS),
        ("headroom", "Headroom (1 − step / target)", Live(f"=1-{col}{r['step']}/{col}{r['target']}",
                                                          1 - p.step_time_s / design.target_step_time_s), PERCENT),
        fig("mfu"),
        ("it_kw", "IT power (kW)", Live(f"={sheet_ref(cells.title, cells.it_power_kw)}", v["it_power_kw"]), NUMBER_2),
        ("facility_kw", "Facility power (kW) = IT × PUE", Live(f"={col}{r['it_kw']}*TCO_PUE", facility_kw), NUMBER_2),
        ("racks", "Racks", Live(f"={sheet_ref(cells.title, cells.racks)}", v["racks"]), NUMBER),
        ("capex", "Capex (USD)", Live(f"={sheet_ref(cells.title, cells.total)}", v["total"]), USD),
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
            ("caveats", "Caveats before ordering", confidence(design).flags_text(), None),
            ("reference_design", "Reference design (published architecture it follows)", design.reference_design, None),
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


def summary_row_numbers() -> dict:
    """Row of every Summary key (the same for every design column)."""
    return {key: SUMMARY_HEADER_ROW + 1 + i for i, key in enumerate(SUMMARY_KEYS)}


def write_summary_sheet(wb, result, bom_cells: list[BomCells]) -> None:
    """Ranked designs side by side, then capex by category (SUMIF on each BOM sheet) and its charts."""
    ws = wb["Summary"]
    write_title(ws, f"fabricplan budget workbook: {result.scenario}")
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
    row_of = summary_row_numbers()
    header_row(ws, SUMMARY_HEADER_ROW, ["Design"] + [design_name(d) for d in result.designs], right=range(2, 2 + n))
    for i, (design, cells) in enumerate(zip(result.designs, bom_cells)):
        col = col_letter(2 + i)
        rows = _summary_rows(design, cells, col, row_of)
        assert tuple(r[0] for r in rows) == SUMMARY_KEYS
        for key, label, value, fmt in rows:
            row = row_of[key]
            if i == 0:
                put(ws, row, 1, label).font = BOLD
                ws.cell(row=row, column=1).alignment = TOP
            cell = write_cell(ws, row, 2 + i, value, fmt)
            cell.alignment = RIGHT
            if key in WRAPPED_KEYS:
                wrap(ws, row, 2 + i, SUMMARY_COL_WIDTH, RIGHT_WRAP)
        ws.column_dimensions[col].width = SUMMARY_COL_WIDTH
    ws.column_dimensions["A"].width = 30
    ws.freeze_panes = f"B{SUMMARY_HEADER_ROW + 1}"
    # Page 1: the designs; page 2: capex by category and the charts. Five designs per page across.
    print_setup(ws, pages_wide=-(-n // 5), title_cols="A:A", fit=True, pages_tall=4,  # charts side by side; 4 pages
                labels="A")  # (issue 42's rows); the labels print whole (wrapped past 40 characters)
    if result.next_faster is not None:  # the row between the designs and the capex by category
        note(ws, max(row_of.values()) + 1, result.next_faster["text"])
    summary_warnings(ws, result, max(row_of.values()) + 3, SUMMARY_COL_WIDTH * min(n, 5) + 30)
    _capex_by_category(ws, result, bom_cells, row_of)


def summary_warnings(ws, result, row: int, width_chars: float) -> int:
    """The run's warnings (the scenario's plausibility warnings, then the solve's) under the Summary's
    design table, so the sheet finance prints carries them; the last row used."""
    warnings = list(getattr(result, "input_warnings", [])) + list(result.warnings)
    warnings += [w for w in [getattr(result, "price_warning", None)] if w]  # stale prices (issue 45)
    warnings += [f"assumed: {a}" for a in getattr(result, "assumptions", [])]  # a model named by preset or size
    if not warnings:
        return row - 1
    put(ws, row, 1, "Warnings").font = BOLD
    for w in warnings:
        row += 1
        put(ws, row, 1, f"⚠ {w}")
        wrap(ws, row, 1, width_chars)
        ws.merge_cells(start_row=row, start_column=1, end_row=row, end_column=max(2, ws.max_column))
    return row


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
    cats.sort(key=category_rank)
    title_row = max(max(row_of.values()), ws.max_row) + 2  # after the warnings, when there are any
    ws.row_breaks.append(Break(id=title_row - 1))
    section_row(ws, title_row, "Capex by category (USD)")
    head = title_row + 1
    n = len(result.designs)
    header_row(ws, head, ["Category"] + [f"#{d.rank}" for d in result.designs], right=range(2, 2 + n))
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
        write_cell(ws, row_of_cat[cat], col, Live(f"={cells.sumif(cat)}", v.get(cat, 0.0)), USD)
    first, last = row_of_cat[cats[0]], row_of_cat[cats[-1]]
    summed = sum(v.get(cat, 0.0) for cat in cats)
    write_cell(ws, row_of_cat[ADJUSTMENT], col,
           Live(f"={letter}{row_of_cat['Capex (USD)']}-SUM({letter}{first}:{letter}{last})", v["total"] - summed), USD)
    write_cell(ws, row_of_cat["Capex (USD)"], col, Live(f"={letter}{row_of['capex']}", v["total"]), USD)
    net = [c for c in NETWORK if c in cats]
    network = sum(v.get(c, 0.0) for c in net)
    net_row = row_of_cat[NETWORK_ROW]
    expression = "+".join(f"{letter}{row_of_cat[c]}" for c in net) or "0"
    write_cell(ws, net_row, col, Live(f"={expression}", network), USD)
    capex = f"{letter}{row_of_cat['Capex (USD)']}"  # everything owned: capex $0, a share of nothing is 0
    write_cell(ws, row_of_cat["Network share of capex"], col,
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
        series.tx = SeriesLabel(strRef=StrRef(sheet_ref(ws.title, f"$A${row}")))  # named by the row's label
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
