"""The sweep workbook (SPEC §9, docs/sweeps.md, docs/workbook.md): five sheets.

    Sweep         the solver's best design at each point (the values as solved)
    Charts        capex and TCO, and GPUs, against the year (growth sweeps) or the swept value:
                  straight lines through the points (no smoothing), markers where the architecture
                  changes; the chart data is a live table on the same sheet
    BOM by point  what each point buys (GPUs, nodes, switches, links, racks) and its capex by category:
                  contingency = Σ categories · fraction, capex = Σ categories + contingency,
                  TCO = capex + energy (live formulas)
    Increments    between consecutive solved points of a one-dimensional sweep (per year for growth):
                  added_x = x_to − x_from for GPUs, nodes, switches, links, racks and capex
                  (live formulas on BOM by point); capex per added GPU = Δcapex / ΔGPUs
    Assumptions   the sweep's axes and notes, the base scenario as given, catalog files, versions

Every formula carries its cached value (solver/reports/xlsx.py); text from inputs stays text.
"""
from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.chart import LineChart, Reference, ScatterChart, Series
from openpyxl.styles import Alignment

from ..figures import figure
from ..inputs import LoadedScenario
from ..inputs.schema import Catalog
from ..sweep.summary import TCO_PER_MTOK, x_axis
from ..version import __version__
from .assumptions_sheet import Sections, catalog_lines, highs_version, scenario_lines
from .prices_sheet import CATEGORIES, split_contingency
from .summary_sheet import category_colour
from .xlsx import (
    BOLD,
    INPUT_FILL,
    NUMBER,
    PERCENT,
    RIGHT,
    RIGHT_WRAP,
    TOP,
    USD,
    USD_MILLIONS,
    Live,
    col_letter,
    header_row,
    note,
    place_chart,
    print_setup,
    put,
    save_workbook,
    section_row,
    sheet_ref,
    style_chart,
    text_categories,
    text_size,
    top,
    wrap,
    write_cell,
    write_file,
    write_title,
)

SWEEP, CHARTS, BOMS, INCREMENTS, ASSUMPTIONS = "Sweep", "Charts", "BOM by point", "Increments", "Assumptions"
HEAD = 4  # header row of every table sheet; data from row 5
ARCH_WIDTH = 26
POINT_WIDTH = 14
TALL = 46  # header rows with three-line labels
TEXT_AFTER_NUMBER = Alignment(horizontal="left", vertical="top", wrap_text=True, indent=1)


SWEEP_COLUMNS = [*(figure(key) for key in ("gpus", "step_time_s", "mfu", "goodput", "capex_usd", "tco_usd",
                                           "capex_usd_per_pflop_s")), TCO_PER_MTOK]
_FIGURE_WIDTH = {"count": 9, "s": 9, "fraction": 8, "usd": 14, "usd_cents": 11, "ratio": 8, "kw": 10, "days": 9}


@dataclass(frozen=True)
class Column:
    header: str
    width: float
    fmt: str | None
    value: Callable[[int, dict], Any]  # (position, point row) → cell value
    number: bool = True


def _solved(p: dict) -> bool:
    return bool(p.get("architecture"))


def _get(key: str) -> Callable[[int, dict], Any]:
    return lambda i, p: p.get(key) if _solved(p) else None


def _swept(name: str) -> Callable[[int, dict], Any]:
    return lambda i, p: p["values"].get(name)


def _architecture(i: int, p: dict) -> str:
    """The best design's architecture; for a point without one, its status and why."""
    if _solved(p):
        return p["architecture"] + ("" if p["status"] == "optimal" else f" ({p['status']})")
    return f"{p['status']}: {p.get('reason') or 'no design'}"


def _x_text(x: dict, i: int) -> Any:
    return x["values"][i]


# ----------------------------------------------------------------------------------- Sweep


def _sweep_columns(report: dict, x: dict) -> list[Column]:
    axes = report["axes"]
    cols = []
    if x["kind"] == "step":
        cols.append(Column(x["title"], 6, "0", lambda i, p: x["values"][i]))
    for a in axes:
        fmt = None if a["kind"] == "model" else ("#,##0" if a["kind"] == "int" else "#,##0.###")
        # the header is the field's last part (the full path is in the note above the table)
        short = a["name"].split(".")[-1]
        cols.append(Column(short, max(10, len(short) + 2), fmt, _swept(a["name"]), a["kind"] != "model"))
    cols.append(Column("architecture (or why none)", ARCH_WIDTH, None, _architecture, False))
    # the design's figures as the sweep's rows hold them (`figures.FIGURES`, `sweep.summary.ROW_FIGURES`)
    cols += [Column(f.label, _FIGURE_WIDTH[f.unit], f.number_format, _get(f.key)) for f in SWEEP_COLUMNS]
    return cols


def write_sweep_sheet(ws, report: dict, x: dict) -> None:
    """One row per point (the solver's numbers), then where the best architecture changes."""
    points = report["points"]
    write_title(ws, f"Sweep: {report['scenario']}, {len(points)} point(s), the best design at each")
    note(ws, 2, f"x: {x['description']}; swept: {', '.join(a['name'] for a in report['axes'])}.")
    note(ws, 3, "Values as solved. What each point buys, and the live formulas: BOM by point, Increments, Charts.")
    cols = _sweep_columns(report, x)
    header_row(ws, HEAD, [c.header for c in cols], right=[i + 1 for i, c in enumerate(cols) if c.number], height=TALL)
    arch_col = 1 + next(i for i, c in enumerate(cols) if c.header.startswith("architecture"))
    for i, p in enumerate(points):
        row = HEAD + 1 + i
        for j, c in enumerate(cols):
            put(ws, row, 1 + j, c.value(i, p), c.fmt)
        wrap(ws, row, arch_col, ARCH_WIDTH, TEXT_AFTER_NUMBER)
        top(ws, row, 1, len(cols))
    for j, c in enumerate(cols):
        ws.column_dimensions[col_letter(1 + j)].width = c.width
    _changes_table(ws, report, x, HEAD + len(points) + 3, len(cols))
    ws.freeze_panes = f"A{HEAD + 1}"
    print_setup(ws, title_rows=f"{HEAD}:{HEAD}")


def _changes_table(ws, report: dict, x: dict, row: int, width_cols: int) -> None:
    position = {p["index"]: i for i, p in enumerate(report["points"])}
    section_row(ws, row, "Where the best architecture changes")
    if not report["switch_points"]:
        put(ws, row + 1, 1, "nowhere: every solved point has the same best architecture")
        return
    header_row(ws, row + 1, [x["title"], "from → to"], right=[1] if x["numeric"] else [])
    for k, s in enumerate(report["switch_points"]):
        r = row + 2 + k
        put(ws, r, 1, x["values"][position[s["index"]]])
        put(ws, r, 2, f"{s['from']} → {s['to']}")
        top(ws, r, 1, 2)
    # the change text spans the columns up to the architecture column's end
    for r in range(row + 1, row + 2 + len(report["switch_points"])):
        ws.merge_cells(start_row=r, start_column=2, end_row=r, end_column=width_cols)


# ----------------------------------------------------------------------------------- BOM by point


@dataclass
class PointCells:
    """Where BOM by point keeps each point's numbers: one column per point, one row per quantity."""

    col: dict  # position → column letter
    row: dict  # "gpus", "nodes", "switches", "links", "racks", "capex", "tco" → row
    values: dict  # position → {key: value as written}

    def ref(self, position: int, key: str) -> str:
        """The BOM by point cell of one point's quantity, e.g. 'BOM by point'!C12."""
        return sheet_ref(BOMS, f"{self.col[position]}{self.row[key]}")


BUYS = (("gpus", "GPUs"), ("nodes", "nodes"), ("switches", "switches"), ("links", "links"), ("racks", "racks"))
POINTS_PER_PAGE = 7


def _point_counts(p: dict) -> dict:
    d = p["design"]
    return {"gpus": p["gpus"], "nodes": p["nodes"], "switches": p["switches"],
            "links": sum(d["fabric"]["links"].values()), "racks": p["racks"]}


def _point_header(ws, row: int, x: dict, first_label: str) -> None:
    """The header row: the x title, then one column per point named by its x value."""
    labels = [first_label] + [str(v) if not isinstance(v, str) else v for v in x["values"]]
    header_row(ws, row, labels, right=range(2, len(labels) + 1))


def _categories_in(points: list) -> list[str]:
    """The BOM categories some point buys, in report order (a sweep of NVL72 racks has no NIC lines)."""
    seen = {line["category"] for p in points if _solved(p) for line in p["design"]["bom"]}
    return [c for c in CATEGORIES if c in seen]


def write_boms_sheet(ws, report: dict, x: dict) -> PointCells:
    """One column per point: what it buys, then its capex by category with live totals."""
    points = report["points"]
    write_title(ws, "What each point buys, and its capex by category")
    note(ws, 2, "Edit a yellow cell: capex, TCO, Increments and Charts follow (Sweep keeps the values as solved).")
    _point_header(ws, HEAD, x, x["title"])
    cats = _categories_in(points)
    money = ["contingency (editable)", "contingency (USD)", "capex (USD)", "energy over the TCO years (USD)", "TCO (USD)"]
    rows = {"architecture": HEAD + 1} | {k: HEAD + 2 + j for j, (k, _) in enumerate(BUYS)}
    section = HEAD + 3 + len(BUYS)
    rows |= {c: section + 1 + j for j, c in enumerate(cats)}
    rows |= {m: section + 1 + len(cats) + j for j, m in enumerate(money)}
    labels = {"architecture": "architecture"} | dict(BUYS)
    for key, row in rows.items():
        put(ws, row, 1, labels.get(key, key)).font = BOLD
        ws.cell(row=row, column=1).alignment = TOP
    section_row(ws, section, "Capex by category (USD)")
    cells = PointCells({}, {"gpus": rows["gpus"], "nodes": rows["nodes"], "switches": rows["switches"],
                            "links": rows["links"], "racks": rows["racks"], "capex": rows["capex (USD)"],
                            "tco": rows["TCO (USD)"]}, {})
    for i, p in enumerate(points):
        col = 2 + i
        cells.col[i] = col_letter(col)
        put(ws, rows["architecture"], col, p.get("architecture") or p["status"])
        wrap(ws, rows["architecture"], col, POINT_WIDTH, RIGHT_WRAP)
        if _solved(p):
            cells.values[i] = _point_counts(p)
            for key, _ in BUYS:
                put(ws, rows[key], col, cells.values[i][key], NUMBER)
            _point_money(ws, col, p, cats, rows, cells.values[i])
    ws.column_dimensions["A"].width = 30
    for i in range(len(points)):
        ws.column_dimensions[col_letter(2 + i)].width = POINT_WIDTH
    ws.freeze_panes = f"B{HEAD + 1}"
    print_setup(ws, pages_wide=max(1, -(-len(points) // POINTS_PER_PAGE)), title_cols="A:A")
    return cells


def _point_money(ws, col: int, p: dict, cats: list[str], rows: dict, values: dict) -> None:
    """contingency = Σ categories · fraction; capex = Σ categories + contingency; TCO = capex + energy."""
    c = col_letter(col)
    lines, fraction = split_contingency(_Lines.of(p["design"]["bom"]), 0.0)
    by_cat = {cat: sum(x_.extended_usd for x_ in lines if x_.category == cat) for cat in cats}
    for cat in cats:
        put(ws, rows[cat], col, by_cat[cat], USD).fill = INPUT_FILL
    put(ws, rows["contingency (editable)"], col, fraction, PERCENT).fill = INPUT_FILL
    span = f"{c}{rows[cats[0]]}:{c}{rows[cats[-1]]}"
    base = sum(by_cat.values())
    write_cell(ws, rows["contingency (USD)"], col,
           Live(f"=SUM({span})*{c}{rows['contingency (editable)']}", base * fraction), USD)
    total = base + base * fraction
    write_cell(ws, rows["capex (USD)"], col, Live(f"=SUM({span})+{c}{rows['contingency (USD)']}", total), USD)
    energy = p["tco_usd"] - p["capex_usd"]
    put(ws, rows["energy over the TCO years (USD)"], col, energy, USD)
    write_cell(ws, rows["TCO (USD)"], col,
           Live(f"={c}{rows['capex (USD)']}+{c}{rows['energy over the TCO years (USD)']}", total + energy), USD)
    values.update(capex=total, tco=total + energy)


class _Lines:
    """BOM lines of a design dict as objects with attributes (what split_contingency reads)."""

    def __init__(self, line: dict):
        self.category, self.extended_usd = line["category"], line["extended_usd"]

    @classmethod
    def of(cls, bom: list[dict]) -> list:
        return [cls(line) for line in bom]


# ----------------------------------------------------------------------------------- Increments


def consecutive_solved(points: list) -> list[tuple[int, int]]:
    """(from, to) positions of adjacent points that both have a design."""
    return [(i, i + 1) for i in range(len(points) - 1) if _solved(points[i]) and _solved(points[i + 1])]


INCREMENT_ROWS = (("gpus", "added GPUs"), ("nodes", "added nodes"), ("switches", "added switches"),
                  ("links", "added links"), ("racks", "added racks"), ("capex", "added capex (USD)"))


def write_increments_sheet(ws, report: dict, x: dict, cells: PointCells) -> None:
    """added = to − from, as formulas on BOM by point, for each pair of consecutive solved points."""
    points = report["points"]
    per = x["title"] if x["kind"] == "step" else "point"
    write_title(ws, f"What to add from one {per} to the next")
    if not (len(report["axes"]) == 1 or report.get("combine") == "zip"):
        note(ws, 2, "Increments are for one-dimensional sweeps (one axis, or several combined by zip).")
        print_setup(ws)
        return
    note(ws, 2, "Live: the later point minus the earlier one, from the BOM by point sheet.")
    note(ws, 3, "Where the architecture changes, the later point is a different build, not an add-on.")
    pairs = consecutive_solved(points)
    labels = [x["title"]] + [f"{_label(x['values'][a])} → {_label(x['values'][b])}" for a, b in pairs]
    header_row(ws, HEAD, labels, right=range(2, len(labels) + 1))
    arch, per_gpu = HEAD + 1, HEAD + 2 + len(INCREMENT_ROWS)
    row_of = {key: HEAD + 2 + j for j, (key, _) in enumerate(INCREMENT_ROWS)}
    for label, row in [("architecture", arch)] + [(lab, row_of[k]) for k, lab in INCREMENT_ROWS] + \
            [("capex per added GPU (USD)", per_gpu)]:
        put(ws, row, 1, label).font = BOLD
        ws.cell(row=row, column=1).alignment = TOP
    for k, (a, b) in enumerate(pairs):
        col = 2 + k
        same = points[a]["architecture"] == points[b]["architecture"]
        put(ws, arch, col, "same" if same else f"changes to {points[b]['architecture']}")
        wrap(ws, arch, col, POINT_WIDTH, RIGHT_WRAP)
        _increment_column(ws, col, a, b, cells, row_of, per_gpu)
    ws.column_dimensions["A"].width = 30
    for k in range(len(pairs)):
        ws.column_dimensions[col_letter(2 + k)].width = POINT_WIDTH
    ws.freeze_panes = f"B{HEAD + 1}"
    print_setup(ws, pages_wide=max(1, -(-len(pairs) // POINTS_PER_PAGE)), title_cols="A:A")


def _widths_of(ws, widths: list) -> None:
    for j, w in enumerate(widths):
        ws.column_dimensions[col_letter(1 + j)].width = w


def _label(value: Any) -> str:
    return f"{value:,}" if isinstance(value, int) else (f"{value:,g}" if isinstance(value, float) else str(value))


def _increment_column(ws, col: int, a: int, b: int, cells: PointCells, row_of: dict, per_gpu: int) -> None:
    va, vb = cells.values[a], cells.values[b]
    for key, row in row_of.items():
        expr = f"={cells.ref(b, key)}-{cells.ref(a, key)}"
        write_cell(ws, row, col, Live(expr, vb[key] - va[key]), USD if key == "capex" else NUMBER)
    added_gpus, added_capex = vb["gpus"] - va["gpus"], vb["capex"] - va["capex"]
    c = col_letter(col)
    if added_gpus != 0:
        write_cell(ws, per_gpu, col, Live(f"={c}{row_of['capex']}/{c}{row_of['gpus']}", added_capex / added_gpus), USD)
    else:
        put(ws, per_gpu, col, "no GPUs added").alignment = RIGHT


# ----------------------------------------------------------------------------------- Charts


CHART_SERIES = ("capex (USD)", "TCO (USD)", "GPUs", "capex where the architecture changes (USD)")
CHART_DATA_HEAD = 22  # the live table under the two charts


def write_charts_sheet(ws, report: dict, x: dict, cells: PointCells) -> None:
    """A live table (capex, TCO, GPUs per point, from BOM by point) and two charts of it."""
    points = report["points"]
    write_title(ws, f"{report['scenario']}: capex, TCO and GPUs by {x['title']}")
    note(ws, 2, f"x: {x['description']}.")
    note(ws, 3, "Straight lines from point to point; a diamond marks where the best architecture changes.")
    head = CHART_DATA_HEAD
    section_row(ws, head - 1, "Chart data (live, from BOM by point)")
    header_row(ws, head, [x["title"]] + list(CHART_SERIES), right=range(1 if x["numeric"] else 2, 6), height=TALL)
    changed = {s["index"] for s in report["switch_points"]}
    for i, p in enumerate(points):
        row = head + 1 + i
        put(ws, row, 1, _x_text(x, i))
        if not _solved(p):
            continue  # a gap in the lines
        v = cells.values[i]
        write_cell(ws, row, 2, Live(f"={cells.ref(i, 'capex')}", v["capex"]), USD)
        write_cell(ws, row, 3, Live(f"={cells.ref(i, 'tco')}", v["tco"]), USD)
        write_cell(ws, row, 4, Live(f"={cells.ref(i, 'gpus')}", v["gpus"]), NUMBER)
        if p["index"] in changed:
            write_cell(ws, row, 5, Live(f"=B{row}", v["capex"]), USD)
    _widths_of(ws, [12 if x["numeric"] else 18, 16, 16, 12, 18])
    if points:
        last = head + len(points)
        marks = (5,) if changed else ()  # the diamonds' series only when the architecture changes
        money = _line_chart(ws, x, head, last, (2, 3) + marks, f"Capex and TCO by {x['title']}", "USD")
        largest = max((v["tco"] for v in cells.values.values() if "tco" in v), default=0.0)
        money.y_axis.numFmt = '"$"#,##0,,"M"' if largest >= 1e8 else USD_MILLIONS  # no ".0" on $100M and up
        place_chart(ws, money, 4)
        place_chart(ws, _line_chart(ws, x, head, last, (4,), f"GPUs by {x['title']}", "GPUs"), 4, 13.0)
    print_setup(ws, pages_tall=1, fit=True)  # the two charts side by side on one page


def _line_chart(ws, x: dict, head: int, last: int, cols: tuple, title: str, y_title: str):
    """Straight lines with a marker on every point (scatter on a numeric x, so the spacing is true)."""
    chart: Any = ScatterChart(scatterStyle="lineMarker") if x["numeric"] else LineChart()
    xs = Reference(ws, min_col=1, min_row=head + 1, max_row=last)
    for col in cols:
        values = Reference(ws, min_col=col, min_row=head, max_row=last)
        series = Series(values, xs, title_from_data=True) if x["numeric"] else Series(values, title_from_data=True)
        series.smooth = False  # a smoothed line overshoots: it dips below and rises above the points
        series.marker.symbol = "circle"
        series.marker.size = 6
        if col == 5:  # where the architecture changes: big diamonds, no line
            series.marker.symbol, series.marker.size = "diamond", 11
            series.graphicalProperties.line.noFill = True
            series.marker.graphicalProperties.solidFill = category_colour("switch")
        elif col == 3:
            series.graphicalProperties.line.dashStyle = "dash"
        chart.series.append(series)
    if not x["numeric"]:
        text_categories(chart, ws.title, f"$A${head + 1}:$A${last}")
    style_chart(chart, title, x["title"], y_title)
    chart.display_blanks = "gap"
    if x["kind"] == "step":  # year 0 … steps, one tick per year
        chart.x_axis.majorUnit = 1
        chart.x_axis.number_format = "0"
        chart.x_axis.scaling.min, chart.x_axis.scaling.max = 0, max(x["values"])
    if not x["numeric"]:
        chart.x_axis.txPr = text_size(8)  # point labels ("2,048, 10") are longer than numbers
    chart.y_axis.scaling.min = 0
    chart.width, chart.height = 12.5, 8.5
    return chart


# ----------------------------------------------------------------------------------- Assumptions


def _axis_text(a: dict) -> str:
    values = a.get("values", [])
    shown = values if len(values) <= 12 else values[:8] + ["…"] + values[-3:]
    listed = ", ".join(f"{v:,}" if isinstance(v, int) else (f"{v:,g}" if isinstance(v, float) else str(v)) for v in shown)
    g = a.get("growth")
    rule = f"growth × {g['factor']:g} per {g['per']} for {g['steps']} {g['per']}s: " if g else ""
    return rule + listed + (" (rounded to whole numbers)" if a.get("rounded_to_int") else "")


def write_sweep_assumptions(wb, report: dict, scenario: LoadedScenario | None, catalog: Catalog | None) -> None:
    ws = wb.create_sheet(ASSUMPTIONS)
    write_title(ws, "Assumptions and provenance")
    out = Sections(ws, wrap_cols={2: 70})
    out.section("The sweep", ["Item", "Value"])
    rows: list[tuple[str, Any]] = [("scenario", report["scenario"]), ("points", len(report["points"])),
                                   ("combine", report.get("combine", "product")), ("sweep hash", report.get("sweep_hash", ""))]
    rows += [(f"axis {a['name']}", _axis_text(a)) for a in report["axes"]]
    rows += [("note", n) for n in report.get("notes", [])]
    rows += [("warning", w) for w in report.get("warnings", [])]
    rows += [(f"warning, point {p['index']}", w) for p in report["points"] for w in p.get("warnings", [])]
    rows += list(report.get("cost_per_unit_definitions", {}).items())
    rows += [(f"{status} points", n) for status, n in report.get("status_counts", {}).items()]
    for label, value in rows:
        out.line(label, value, left=True)
    out.gap()
    if scenario is not None:
        scenario_lines(out, scenario, "Base scenario as given (each point changes the swept fields)")
    if catalog is not None:
        catalog_lines(out, catalog)
    out.section("Run", ["Item", "Value"])
    for label, value in (("fabricplan version", __version__), ("HiGHS version", highs_version()),
                         ("written on", _dt.date.today().isoformat())):
        out.line(label, value, left=True)
    ws.freeze_panes = "A3"
    _widths_of(ws, [34, 70])
    print_setup(ws)


# ----------------------------------------------------------------------------------- workbook


def build_sweep_workbook(report: dict, scenario: LoadedScenario | None = None,
                         catalog: Catalog | None = None) -> Workbook:
    wb = Workbook()
    ws = wb.active
    ws.title = SWEEP
    x = x_axis(report)
    write_sweep_sheet(ws, report, x)
    charts = wb.create_sheet(CHARTS)
    cells = write_boms_sheet(wb.create_sheet(BOMS), report, x)
    write_increments_sheet(wb.create_sheet(INCREMENTS), report, x, cells)
    write_charts_sheet(charts, report, x, cells)
    write_sweep_assumptions(wb, report, scenario, catalog)
    wb.calculation.fullCalcOnLoad = True
    return wb


def write_sweep_workbook(report: dict, path: str | Path, scenario: LoadedScenario | None = None,
                         catalog: Catalog | None = None) -> Path:
    """Sweep, Charts, BOM by point, Increments and Assumptions, written atomically."""
    return save_workbook(build_sweep_workbook(report, scenario, catalog), path)


def write_sweep_workbook_file(inputs: tuple, file: Path, run_id: str | None) -> None:
    """The workbook of `write_sweep_workbook` for `inputs` = (report, loaded scenario, catalog), written to `file` as
    it is, with `run_id` (what the process of `reports/side_process.py` writes into the caller's temporary file)."""
    report, scenario, catalog = inputs
    write_file(build_sweep_workbook(report, scenario, catalog), file, run_id)


def add_sweep_sheet(ws, report: dict) -> None:
    """Fill `ws` with the sweep table (the Sweep sheet alone)."""
    write_sweep_sheet(ws, report, x_axis(report))
