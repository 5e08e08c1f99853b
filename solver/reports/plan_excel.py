"""The plan workbook (SPEC §6.1, §8.4): a Plan sheet a budget planner can edit, with live formulas.

    spend of a purchase line, period p = quantity_p · unit price · price factor (its category, period p)
    hardware_p   = Σ spend of the non-extra lines          extra_p = Σ spend of the extra lines
    fraction_p   = F_p · hardware_p                         contingency_p = c_p · (hardware + fraction + extra)
    capex_p      = hardware + fraction + extra + contingency
    energy_p     = period years · 8,760 h · facility kW_p · $/kWh_p
    spend_p      = capex_p + (1 if TCO else 0) · energy_p
    discounted_p = spend_p · (1 + rate)^−(p · period years)          total = Σ_p discounted_p

Price factors, unit prices, quantities, the discount rate, contingency and electricity are yellow
input cells; everything else follows. A chart shows the spend and the GPUs owned per period. The
cell helpers (`put`, `formula`, `header_row`, `write_title`) are the ones of solver/reports/excel.py, so
strings from inputs are always text, never formulas. Written atomically.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.chart import BarChart, LineChart, Reference
from openpyxl.styles import Alignment, Font, PatternFill
from openpyxl.utils import get_column_letter

from ..inputs.schema import PRICE_CATEGORIES
from ..units import HOURS_PER_YEAR
from .xlsx import fit_widths, formula, header_row, put, save_workbook, wrap, write_file, write_title

USD = '"$"#,##0'
NUMBER = "#,##0"
FACTOR = "0.000"
PERCENT = "0.0%"
INPUT = PatternFill("solid", fgColor="FFF2CC")  # editable cells are yellow
BOLD = Font(bold=True)
WRAP = Alignment(wrap_text=True, vertical="top")
SHEET = "Plan"
PRINT_SCALE = 90  # percent
PERIOD_WIDTH = 18  # characters: each period's column

# rows of the inputs block and of the per-period table (column B onwards = periods)
RATE, YEARS, ENERGY_ON = 5, 6, 7
HEAD = 9
ROWS = ("index", "discount", *[f"factor:{c}" for c in PRICE_CATEGORIES], "contingency", "fraction", "architecture",
        "cluster", "gpus_running", "gpus_owned", "idle", "hardware", "extra", "fraction_usd", "contingency_usd", "capex",
        "facility_kw", "usd_per_kwh", "energy", "spend", "discounted")
ROW = {key: HEAD + 1 + i for i, key in enumerate(ROWS)}
LABELS = {
    "index": "Period index p", "discount": "Discount factor = (1 + rate)^−(p · years)",
    "contingency": "Contingency (fraction)", "fraction": "Fraction-of-hardware extras F",
    "architecture": "Architecture running the job", "cluster": "Cluster", "gpus_running": "GPUs running the job",
    "gpus_owned": "GPUs owned (after this period's purchases)",
    "idle": "Owned hardware idle (compute, switches, NICs)", "hardware": "Hardware bought (USD)",
    "extra": "Extra lines bought (USD)", "fraction_usd": "Fraction-of-hardware lines (USD)",
    "contingency_usd": "Contingency (USD)", "capex": "Capex (USD)", "facility_kw": "Facility kW of the running design",
    "usd_per_kwh": "Electricity (USD per kWh)", "energy": "Energy (USD) = years · 8,760 h · kW · $/kWh",
    "spend": "Spend (USD) = capex + energy if TCO", "discounted": "Discounted spend (USD)",
    **{f"factor:{c}": f"Price factor: {c}" for c in PRICE_CATEGORIES},
}


def _col(p: int) -> str:
    """Column of period p in the per-period table."""
    return get_column_letter(2 + p)


def _inputs(ws, report: dict) -> None:
    put(ws, 4, 1, "Inputs (yellow cells are editable; every total follows)").font = BOLD
    for row, label, value, fmt in ((RATE, "Discount rate per year", report["discount_rate"], PERCENT),
                                   (YEARS, "Period length (years)", report["period_years"], "0.0#"),
                                   (ENERGY_ON, "Energy counted in the spend (1 = TCO, 0 = capex)",
                                    1 if report["objective"] == "tco" else 0, "0")):
        put(ws, row, 1, label)
        put(ws, row, 2, value, fmt).fill = INPUT


def _period_table(ws, report: dict, first: int, last: int) -> None:
    """The per-period rows: inputs (factors, contingency, F, electricity) and the live totals."""
    periods = report["periods"]
    header_row(ws, HEAD, ["Period"] + [p["label"] for p in periods])
    for key, row in ROW.items():
        put(ws, row, 1, LABELS[key]).font = BOLD if key in ("capex", "spend", "discounted") else Font()
    for p, period in enumerate(periods):
        c, spend = _col(p), _spend_col(p, len(periods))
        design = period["design"]
        put(ws, ROW["index"], 2 + p, p)
        formula(ws, ROW["discount"], 2 + p, f"=1/(1+$B${RATE})^({c}{ROW['index']}*$B${YEARS})", "0.0000",
                period["discount_factor"])  # each live total also caches the ledger's value (readers without Excel)
        for cat in PRICE_CATEGORIES:
            put(ws, ROW[f"factor:{cat}"], 2 + p, period["price_factors"][cat], FACTOR).fill = INPUT
        put(ws, ROW["contingency"], 2 + p, period["contingency_fraction"], PERCENT).fill = INPUT
        put(ws, ROW["fraction"], 2 + p, period["hardware_fraction"], PERCENT).fill = INPUT
        put(ws, ROW["architecture"], 2 + p, period["architecture"])
        wrap(ws, ROW["architecture"], 2 + p, PERIOD_WIDTH)  # the text stays in its own period's cell
        put(ws, ROW["cluster"], 2 + p, period["cluster"])
        put(ws, ROW["gpus_running"], 2 + p, period["gpus"], NUMBER)
        put(ws, ROW["gpus_owned"], 2 + p, period["gpus_owned"], NUMBER)
        put(ws, ROW["idle"], 2 + p, idle_text(period)).alignment = WRAP
        cats, spends = f"$A${first}:$A${max(first, last)}", f"{spend}{first}:{spend}{max(first, last)}"
        formula(ws, ROW["hardware"], 2 + p, f'=SUMIF({cats},"<>extra",{spends})', USD, period["hardware_usd"])
        formula(ws, ROW["extra"], 2 + p, f'=SUMIF({cats},"extra",{spends})', USD, period["extra_usd"])
        formula(ws, ROW["fraction_usd"], 2 + p, f"={c}{ROW['fraction']}*{c}{ROW['hardware']}", USD,
                period["fraction_usd"])
        formula(ws, ROW["contingency_usd"], 2 + p,
                f"={c}{ROW['contingency']}*({c}{ROW['hardware']}+{c}{ROW['fraction_usd']}+{c}{ROW['extra']})", USD,
                period["contingency_usd"])
        formula(ws, ROW["capex"], 2 + p,
                f"={c}{ROW['hardware']}+{c}{ROW['fraction_usd']}+{c}{ROW['extra']}+{c}{ROW['contingency_usd']}", USD,
                period["capex_usd"])
        put(ws, ROW["facility_kw"], 2 + p, design["power_kw"]["facility"], "#,##0.00")
        put(ws, ROW["usd_per_kwh"], 2 + p, period["usd_per_kwh"], "0.0000").fill = INPUT
        formula(ws, ROW["energy"], 2 + p,
                f"=$B${YEARS}*{HOURS_PER_YEAR:g}*{c}{ROW['facility_kw']}*{c}{ROW['usd_per_kwh']}", USD, period["energy_usd"])
        formula(ws, ROW["spend"], 2 + p, f"={c}{ROW['capex']}+$B${ENERGY_ON}*{c}{ROW['energy']}", USD, period["spend_usd"])
        formula(ws, ROW["discounted"], 2 + p, f"={c}{ROW['spend']}*{c}{ROW['discount']}", USD, period["discounted_usd"])


def idle_text(period: dict) -> str:
    """The period's idle owned hardware in words ("none" when everything is in use)."""
    idle = [x for x in period.get("idle", []) if x["category"] in ("compute", "switch", "nic")]
    return "; ".join(f"{x['idle']:,} × {x['part']} (${x['value_usd']:,.0f})" for x in idle) or "none"


def _spend_col(p: int, periods: int) -> str:
    """Column of period p's spend in the purchases table (after category, part, key, cluster, price, quantities)."""
    return get_column_letter(6 + periods + p)


def _purchase_lines(report: dict) -> list[dict]:
    """One row per (cluster, stock key) bought in any period, with its quantity per period."""
    rows: dict[tuple, dict] = {}
    for p, period in enumerate(report["periods"]):
        for b in period["bought"]:
            row = rows.setdefault((b["cluster"], b["key"]), {**b, "quantities": [0] * len(report["periods"]), "factors": {}})
            row["quantities"][p] += b["quantity"]
            row["factors"][p] = b["price_factor"]  # a lifecycle price trend may differ from the category's
    return sorted(rows.values(), key=lambda r: (r["cluster"], _order(r["category"]), r["key"]))


def _order(category: str) -> int:
    return PRICE_CATEGORIES.index(category) if category in PRICE_CATEGORIES else len(PRICE_CATEGORIES)


def _purchases(ws, report: dict, lines: list[dict], head: int) -> tuple[int, int]:
    """The purchases table: quantity per period (editable) × unit price (editable) × price factor."""
    n = len(report["periods"])
    labels = [p["label"] for p in report["periods"]]
    put(ws, head - 1, 1, "Purchases per period (quantities and unit prices are editable)").font = BOLD
    header_row(ws, head, ["Category", "Part", "Stock key", "Cluster", "Unit price (USD)"]
            + [f"Qty {x}" for x in labels] + [f"Spend {x} (USD)" for x in labels])
    row = head + 1
    for line in lines:
        put(ws, row, 1, line["category"])
        put(ws, row, 2, line["part"])
        put(ws, row, 3, line["key"])
        put(ws, row, 4, line["cluster"])
        put(ws, row, 5, line["unit_price_usd"], USD).fill = INPUT
        for p, q in enumerate(line["quantities"]):
            put(ws, row, 6 + p, q, NUMBER).fill = INPUT
            qty = get_column_letter(6 + p)
            φ = line["factors"].get(p, report["periods"][p]["price_factors"][line["category"]])
            own = abs(φ - report["periods"][p]["price_factors"][line["category"]]) > 1e-12  # the part's own trend
            factor = repr(φ) if own else f"{_col(p)}${ROW['factor:' + line['category']]}"
            formula(ws, row, 6 + n + p, f"={qty}{row}*$E{row}*{factor}", USD, q * line["unit_price_usd"] * φ)
        row += 1
    return head + 1, row - 1


def _totals(ws, report: dict, row: int) -> int:
    n = len(report["periods"])
    last = _col(n - 1)
    put(ws, row, 1, "Discounted total (USD)").font = BOLD
    formula(ws, row, 2, f"=SUM(B{ROW['discounted']}:{last}{ROW['discounted']})", USD,
            report["totals"].get("discounted_gross_usd", report["totals"]["discounted_usd"])).font = BOLD
    put(ws, row + 1, 1, "Spend total, undiscounted (USD)")
    formula(ws, row + 1, 2, f"=SUM(B{ROW['spend']}:{last}{ROW['spend']})", USD, report["totals"]["spend_usd"])
    comp = report.get("comparison", {})
    scratch, up = comp.get("from_scratch"), comp.get("up_front")
    r = row + 3
    put(ws, r, 1, "Compared with (values from the solver, not live)").font = BOLD
    if comp.get("computed") is False:
        put(ws, r + 1, 1, "not computed (--no-compare)")
    if scratch:
        put(ws, r + 1, 1, "Each period bought from scratch: discounted total (USD)")
        put(ws, r + 1, 2, scratch.get("discounted_usd"), USD)
        for p, x in enumerate(scratch["periods"]):
            put(ws, r + 2, 2 + p, x.get("architecture") or x.get("status"))
            wrap(ws, r + 2, 2 + p, PERIOD_WIDTH)
            put(ws, r + 3, 2 + p, x.get("discounted_usd"), USD)
        put(ws, r + 2, 1, "  architecture per period")
        put(ws, r + 3, 1, "  discounted spend per period (USD)")
    if up:
        put(ws, r + 4, 1, "Everything bought in the first period: discounted total (USD)")
        put(ws, r + 4, 2, up.get("discounted_usd"), USD)
        put(ws, r + 4, 3, up.get("architecture") or up.get("status"))
        wrap(ws, r + 4, 3, PERIOD_WIDTH)
    manual = comp.get("manual")
    if manual:
        put(ws, r + 5, 1, "Best manual schedule (final cluster bought when needed): discounted total (USD)")
        put(ws, r + 5, 2, manual.get("discounted_usd"), USD)
        put(ws, r + 5, 3, manual.get("architecture") or manual.get("status"))
        wrap(ws, r + 5, 3, PERIOD_WIDTH)
    return r + 7


def _chart(ws, report: dict, row: int) -> None:
    """Spend per period (bars) and GPUs owned (line, right axis)."""
    n = len(report["periods"])
    bars = BarChart()
    bars.title = "Spend and GPUs owned per period"
    bars.y_axis.title = "USD"
    bars.y_axis.numFmt = '"$"#,##0,,"M"'
    bars.y_axis.scaling.min = 0
    bars.add_data(Reference(ws, min_col=1, max_col=1 + n, min_row=ROW["spend"]), from_rows=True, titles_from_data=True)
    bars.set_categories(Reference(ws, min_col=2, max_col=1 + n, min_row=HEAD))
    line = LineChart()
    line.add_data(Reference(ws, min_col=1, max_col=1 + n, min_row=ROW["gpus_owned"]), from_rows=True,
                  titles_from_data=True)
    for series in line.series:
        series.smooth = False  # straight segments between the periods (a smoothed line overshoots)
    line.y_axis.axId = 200
    line.y_axis.title = "GPUs owned"
    line.y_axis.crosses = "max"
    bars.x_axis.delete = False
    bars.y_axis.delete = False
    line.y_axis.delete = False
    bars += line
    bars.height, bars.width = 9, 18
    ws.add_chart(bars, f"A{row}")  # under the purchases, at the left edge: on one printed page


def build_plan_workbook(report: dict) -> Workbook:
    """The Plan workbook in memory (no I/O)."""
    wb = Workbook()
    ws = wb.active
    ws.title = SHEET
    write_title(ws, f"fabricplan purchase plan: {report['scenario']}")
    put(ws, 2, 1, f"status {report['status']}; objective {report['objective']}; architectures "
                  f"{report['architectures']}; yellow cells are editable")
    _inputs(ws, report)
    lines = _purchase_lines(report)
    head = ROW["discounted"] + 12
    first, last = _purchases(ws, report, lines, head)
    _period_table(ws, report, first, last)
    _totals(ws, report, ROW["discounted"] + 2)
    _chart(ws, report, last + 3)
    ws.freeze_panes = f"B{HEAD + 1}"
    # printed at 90 % (11 pt text at 9.9 pt), split across landscape pages, the labels repeated on each
    ws.page_setup.orientation = "landscape"
    ws.sheet_properties.pageSetUpPr.fitToPage = False
    ws.page_setup.scale = PRINT_SCALE
    ws.print_title_cols = "A:A"
    ws.oddFooter.center.text = "&A, page &P of &N"
    ws.column_dimensions["A"].width = 46
    for col in range(2, 8 + 2 * len(report["periods"])):
        ws.column_dimensions[get_column_letter(col)].width = PERIOD_WIDTH
    fit_widths(ws, label_columns="A", label_cap=46)  # no ### and no cut label when printed (issue 45)
    from .plan_generations import add_generations_sheet  # issue 43b: generations side by side, resale

    add_generations_sheet(wb, report, SHEET, ROW["discount"], plan_cells()["discounted_total"])
    wb.calculation.fullCalcOnLoad = True
    return wb


def write_plan_workbook(report: dict, path: str | Path) -> Path:
    """Write the plan workbook atomically (temp file + os.replace)."""
    return save_workbook(build_plan_workbook(report), path)  # atomic, with the run id and cached values


def write_plan_workbook_file(report: dict, file: Path, run_id: str | None) -> None:
    """The workbook of `write_plan_workbook`, written to `file` as it is, with `run_id` (what the process of
    `reports/side_process.py` writes into the caller's temporary file; the caller renames it into place)."""
    write_file(build_plan_workbook(report), file, run_id)


def plan_cells() -> dict[str, Any]:
    """Where the totals are (for tests and readers): row per key, and the discounted total cell."""
    return {"row": dict(ROW), "discounted_total": f"B{ROW['discounted'] + 2}"}
