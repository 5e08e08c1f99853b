"""The sweep workbook (SPEC §9): the solver's table per point, per-point BOM summaries, increments
between consecutive points as live formulas, assumptions, charts."""
from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook
from openpyxl.chart import LineChart, Reference
from openpyxl.styles import Font
from openpyxl.utils import get_column_letter

from ..sweep.summary import point_label
from .xlsx import put, save_workbook

SWEEP_COLUMNS = (("point", None), ("status", None), ("architecture", None), ("GPUs", "#,##0"), ("nodes", "#,##0"),
                 ("switches", "#,##0"), ("racks", "#,##0"), ("step time (s)", "0.00"), ("MFU", "0.0%"),
                 ("capex (USD)", '"$"#,##0'), ("TCO (USD)", '"$"#,##0'), ("capex per PFLOP/s (USD)", '"$"#,##0'),
                 ("TCO per M tokens (USD)", '"$"#,##0.00'), ("switch point", None), ("capex at switch (USD)", '"$"#,##0'))


def write_sweep_workbook(report: dict, path: str | Path, scenario=None, catalog=None) -> Path:
    """An .xlsx with a `Sweep` sheet: one row per point, line charts of capex and GPUs, switch points marked."""
    wb = Workbook()
    ws = wb.active
    ws.title = "Sweep"
    add_sweep_sheet(ws, report)
    return save_workbook(wb, path)


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
