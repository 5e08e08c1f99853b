"""The workbook's Frontier sheet (SPEC §7 v3, issue 24 item 5): one row per point of the cost–speed
frontier, live formulas for the cost per million tokens and the changes against point 1, and a
scatter chart of capex against step time."""
from __future__ import annotations

from openpyxl.chart import Reference, ScatterChart, Series

from ..results import SolveResult
from ..units import SECONDS_PER_YEAR
from .frontier import cost_label, layout_label
from .xlsx import (
    NUMBER,
    PERCENT,
    SECONDS,
    USD,
    USD_CENTS,
    formula,
    header_row,
    note,
    place_chart,
    print_setup,
    put,
    set_widths,
    style_chart,
    wrap,
    write_title,
)

FRONTIER_SHEET = "Frontier"

HEADERS = ("Point", "Architecture", "Layout tp·cp·pp·vp·dp·mbs", "GPUs", "Capex (USD)", "TCO (USD)",
           "Step time (s)", "Tokens per step", "Goodput", "Cost per million tokens (USD)", "Cost vs point 1",
           "Step time vs point 1", "Capex (million USD)")
HEADER_ROW = 5


def write_frontier_sheet(wb, result: SolveResult) -> None:
    """The Frontier sheet: one row per point; the cost per million tokens, the changes against point 1
    and the chart's capex in millions are formulas (the years are the Assumptions' TCO_years)."""
    front = result.frontier
    assert front is not None
    ws = wb.create_sheet(FRONTIER_SHEET)
    money = cost_label(front["cost"])
    write_title(ws, f"Cost–speed frontier: {result.scenario}")
    note(ws, 2, f"Each point is the cheapest design ({money}) at least as fast as it, from the MILP; a point is "
                f"faster than the one before by at least {front['epsilon_rel']:g} (relative). Status "
                f"{front['status']}: {front['ended']}.")
    note(ws, 3, f"Cost per million tokens = {money} / (tokens per step / step time × goodput × TCO_years × "
                f"{SECONDS_PER_YEAR:,.0f} s) × 10^6 (docs/model.md).")
    header_row(ws, HEADER_ROW, HEADERS, right=range(4, len(HEADERS) + 1))
    first = HEADER_ROW + 1
    points = front["points"]
    for i, p in enumerate(points):
        _point_row(ws, first + i, first, p, points[0], money)
    last = first + len(front["points"]) - 1
    set_widths(ws, {"A": 7, "B": 52, "C": 18, "D": 9, "E": 15, "F": 15, "G": 10, "H": 11, "I": 9, "J": 14, "K": 11,
                 "L": 11, "M": 12})
    ws.freeze_panes = f"A{first}"
    if front["points"]:
        place_chart(ws, _chart(ws, first, last, money), last + 2)
    print_setup(ws)


def _point_row(ws, row: int, first: int, p: dict, p1: dict, money: str) -> None:
    """One point: its values, then the formulas (cached values computed the same way for readers without recalculation)."""
    put(ws, row, 1, p["point"])
    put(ws, row, 2, p["architecture"])
    wrap(ws, row, 2, 52)
    put(ws, row, 3, layout_label(p["layout"]))
    put(ws, row, 4, p["gpus"], NUMBER)
    put(ws, row, 5, p["capex_usd"], USD)
    put(ws, row, 6, p["tco_usd"], USD)
    put(ws, row, 7, p["step_time_s"], SECONDS)
    put(ws, row, 8, p["tokens_per_step"], NUMBER)
    put(ws, row, 9, p["goodput"], PERCENT)
    cost = "F" if money == "TCO" else "E"
    formula(ws, row, 10, f"={cost}{row}/(H{row}/G{row}*I{row}*TCO_years*{SECONDS_PER_YEAR:.0f})*1000000", USD_CENTS,
            p["cost_per_million_tokens_usd"])
    formula(ws, row, 11, f"={cost}{row}/{cost}${first}-1", PERCENT, p["cost_usd"] / p1["cost_usd"] - 1)
    formula(ws, row, 12, f"=G{row}/G${first}-1", PERCENT, p["step_time_s"] / p1["step_time_s"] - 1)
    formula(ws, row, 13, f"=E{row}/1000000", "#,##0.00", p["capex_usd"] / 1e6)


def _chart(ws, first: int, last: int, money: str) -> ScatterChart:
    chart = ScatterChart(scatterStyle="lineMarker")  # straight segments: a smoothed line dips below the points
    chart.style = 13
    x = Reference(ws, min_col=7, min_row=first, max_row=last)
    y = Reference(ws, min_col=13, min_row=first - 1, max_row=last)
    series = Series(y, x, title_from_data=True)
    series.smooth = False
    series.marker.symbol = "circle"
    series.marker.size = 7
    chart.series.append(series)
    style_chart(chart, f"Cost–speed frontier ({money})", "step time (s)", "capex (million USD)")
    chart.width, chart.height = 18.0, 10.0
    return chart


