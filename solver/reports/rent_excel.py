"""The workbook's "Rent or buy" sheet (solver/rentals.py, costing.owned.OwnershipCost), one printed page:
the ownership inputs (editable, with their sources), then one column per design with live formulas tied
to the Summary (capex, IT and facility kW) and to Assumptions (TCO_usd_per_kWh):

    share            = hours ÷ (life years · 8,760)
    depreciation     = capex · (1 − residual) · share
    financing        = cost of capital · capex · (1 + residual) ÷ 2 · years · share
    colocation       = $/kW-month · IT kW · 12 · years · share
    support          = support fraction · capex · years · share
    staff            = $/GPU-year · owned GPUs · years · share
    energy           = facility kW · $/kWh · hours
    own, run share   = the sum of those six
    rent             = rented GPUs · $/GPU-h · MAX(hours, commitment hours)
    fixed, life      = the five fixed lines over the whole life (share = 1)
    busy hours B     = fixed ÷ (rented GPUs · committed $/GPU-h − facility kW · $/kWh); −1 when ≤ 0
    busy ≥ months    = ROUNDUP(B ÷ 730, 0) when 0 ≤ B ≤ life hours, else −1 ("never")
    busy ≥ share     = B ÷ life hours (−1: never)

Yellow cells are editable: the inputs, each design's hours, its offer's and its committed offer's price.
Every offer is listed once below with the designs it can rent, its price source and date (values).
"""
from __future__ import annotations

import re

from ..inputs.ownership_schema import OWNERSHIP_SOURCES
from ..units import HOURS_PER_MONTH, HOURS_PER_YEAR
from .summary_sheet import summary_row_numbers
from .xlsx import (
    BOLD,
    INPUT_FILL,
    NUMBER,
    NUMBER_2,
    USD,
    Live,
    col_letter,
    header_row,
    note,
    print_setup,
    put,
    set_widths,
    wrap,
    write_cell,
    write_title,
)

SHEET = "Rent or buy"
INPUT_HEADER_ROW = 4
INPUTS = (  # (key, label, format)
    ("depreciation_years", "Economic life (years)", NUMBER_2),
    ("residual_fraction", "Residual value (fraction of capex)", "0.0%"),
    ("colocation_usd_per_kw_month", "Colocation (USD per IT kW-month)", NUMBER_2),
    ("support_fraction_per_year", "Support (fraction of capex per year)", "0.0%"),
    ("staff_usd_per_gpu_year", "Staff (USD per owned GPU-year)", NUMBER_2),
    ("cost_of_capital", "Cost of capital (per year)", "0.0%"),
)
INPUT_ROW = {key: INPUT_HEADER_ROW + 1 + i for i, (key, _, _) in enumerate(INPUTS)}
KWH_ROW = INPUT_HEADER_ROW + 1 + len(INPUTS)
DESIGN_HEADER_ROW = KWH_ROW + 2
ROWS = ("capex", "gpus", "hours", "share", "depreciation", "financing", "colocation", "support", "staff", "energy",
        "own", "offer", "rented", "price", "rent", "cheaper", "committed", "committed_price", "fixed", "busy_hours",
        "busy_months", "busy_share")
ROW = {key: DESIGN_HEADER_ROW + 1 + i for i, key in enumerate(ROWS)}
LABELS = {
    "capex": "Capex (USD)",
    "gpus": "GPUs owned (spares included)", "hours": "Hours of the run", "share": "Share of the life",
    "depreciation": "Depreciation for the run (USD)", "financing": "Financing for the run (USD)",
    "colocation": "Colocation for the run (USD)", "support": "Support for the run (USD)",
    "staff": "Staff for the run (USD)", "energy": "Energy of the run (USD)", "own": "Own: the run's share (USD)",
    "offer": "Offer for the run (cheapest)", "rented": "GPUs rented", "price": "USD per GPU-hour",
    "rent": "Rent for the run (USD)", "cheaper": "Cheaper, by (own − rent)",
    "committed": "Cheapest committed offer", "committed_price": "Its USD per GPU-hour",
    "fixed": "Fixed cost over the life (USD)", "busy_hours": "Busy hours to break even",
    "busy_months": "Owning wins if busy ≥ (months)", "busy_share": "… ≥ share of the life",
}
NEVER_MONTHS = '#,##0;"never";0'
NEVER_SHARE = '0%;"never";0%'
CHEAPER = '"rent, by "$#,##0;"buy, by "$#,##0;"equal"'  # own − rent: positive when renting is cheaper
DESIGN_WIDTH = 18  # characters per design column
INCLUDES = ("Owning includes: depreciation (capex − residual), financing, colocation, support, staff and the energy "
            "of the busy hours (the rows above).")
LEAVES_OUT = ("Owning leaves out: energy while idle, taxes, insurance, licences beyond support, the lead time to "
              "install, rental price changes over the life.")


def _inp(key: str) -> str:
    return f"$B${INPUT_ROW[key]}"


def _design_column(ws, c: int, design, summary_col: str, rows: dict) -> None:
    """One design's column of live formulas (cached values from solver/rentals.py)."""
    rb = design.rent
    o, be, q = rb.owning, rb.break_even, rb.best
    x = col_letter(c)
    r = {k: f"{x}{v}" for k, v in ROW.items()}
    years, res, kwh = _inp("depreciation_years"), _inp("residual_fraction"), f"$B${KWH_ROW}"
    it_kw, fac_kw = f"Summary!{summary_col}{rows['it_kw']}", f"Summary!{summary_col}{rows['facility_kw']}"
    run, life = o.run_usd(), o.life_usd()
    commitment = q.paid_hours if q.paid_hours > q.hours else 0.0
    busy = be.busy_hours if be.busy_hours is not None else -1.0
    cells = {
        "capex": (Live(f"=Summary!{summary_col}{rows['capex']}", o.capex_usd), USD),
        "gpus": (o.gpus, NUMBER),
        "hours": (o.hours, NUMBER_2),
        "share": (Live(f"={r['hours']}/({years}*{HOURS_PER_YEAR:g})", o.share), "0.00%"),
        "depreciation": (Live(f"={r['capex']}*(1-{res})*{r['share']}", run["depreciation"]), USD),
        "financing": (Live(f"={_inp('cost_of_capital')}*{r['capex']}*(1+{res})/2*{years}*{r['share']}",
                           run["financing"]), USD),
        "colocation": (Live(f"={_inp('colocation_usd_per_kw_month')}*{it_kw}*12*{years}*{r['share']}",
                            run["colocation"]), USD),
        "support": (Live(f"={_inp('support_fraction_per_year')}*{r['capex']}*{years}*{r['share']}", run["support"]), USD),
        "staff": (Live(f"={_inp('staff_usd_per_gpu_year')}*{r['gpus']}*{years}*{r['share']}", run["staff"]), USD),
        "energy": (Live(f"={fac_kw}*{kwh}*{r['hours']}", run["energy"]), USD),
        "own": (Live(f"=SUM({r['depreciation']}:{r['energy']})", o.own_usd), USD),
        "offer": (q.offer_id + (" (est.)" if q.price_is_estimate else ""), None),
        "rented": (q.gpus, NUMBER),
        "price": (q.usd_per_gpu_hour, NUMBER_2),
        "rent": (Live(f"={r['rented']}*{r['price']}*MAX({r['hours']},{commitment:g})", q.rent_usd), USD),
        "cheaper": (Live(f"={r['own']}-{r['rent']}", o.own_usd - q.rent_usd), CHEAPER),
        "committed": (be.quote.offer_id + ("" if be.against_committed else " (no committed offer)"), None),
        "committed_price": (be.quote.usd_per_gpu_hour, NUMBER_2),
        "fixed": (Live(f"={r['capex']}*(1-{res})+{_inp('cost_of_capital')}*{r['capex']}*(1+{res})/2*{years}"
                       f"+{_inp('colocation_usd_per_kw_month')}*{it_kw}*12*{years}"
                       f"+{_inp('support_fraction_per_year')}*{r['capex']}*{years}"
                       f"+{_inp('staff_usd_per_gpu_year')}*{r['gpus']}*{years}", sum(life.values())), USD),
        "busy_hours": (Live(f"=IF({r['rented']}*{r['committed_price']}>{fac_kw}*{kwh},"
                            f"{r['fixed']}/({r['rented']}*{r['committed_price']}-{fac_kw}*{kwh}),-1)", busy),
                       NUMBER),
        "busy_months": (Live(f"=IF(AND({r['busy_hours']}>=0,{r['busy_hours']}<={years}*{HOURS_PER_YEAR:g}),"
                             f"ROUNDUP({r['busy_hours']}/{HOURS_PER_MONTH:g},0),-1)",
                             be.months if be.months is not None else -1), NEVER_MONTHS),
        "busy_share": (Live(f"=IF({r['busy_months']}>=0,{r['busy_hours']}/({years}*{HOURS_PER_YEAR:g}),-1)",
                            be.utilisation if be.utilisation is not None else -1), NEVER_SHARE),
    }
    for key, (value, fmt) in cells.items():
        cell = write_cell(ws, ROW[key], c, value, fmt)
        if key in ("hours", "price", "committed_price"):
            cell.fill = INPUT_FILL
        if key in ("offer", "committed"):
            wrap(ws, ROW[key], c, DESIGN_WIDTH)


def _inputs(ws, design, last_col: str) -> None:
    """The ownership inputs (editable) with their sources (merged C:last), and the electricity price."""
    header_row(ws, INPUT_HEADER_ROW, ["Ownership input", "Value", "Source"], right=range(2, 3), height=20)
    o = design.rent.owning
    sources = dict(o.sources) or OWNERSHIP_SOURCES
    values = {"depreciation_years": o.years, "residual_fraction": o.residual_fraction,
              "colocation_usd_per_kw_month": o.colocation_usd_per_kw_month,
              "support_fraction_per_year": o.support_fraction_per_year,
              "staff_usd_per_gpu_year": o.staff_usd_per_gpu_year, "cost_of_capital": o.cost_of_capital}
    for key, label, fmt in INPUTS:
        row = INPUT_ROW[key]
        put(ws, row, 1, label).font = BOLD
        put(ws, row, 2, values[key], fmt).fill = INPUT_FILL
        put(ws, row, 3, short_source(sources.get(key, "")))
        ws.merge_cells(f"C{row}:{last_col}{row}")
    put(ws, KWH_ROW, 1, "Electricity (USD per kWh)").font = BOLD
    write_cell(ws, KWH_ROW, 2, Live("=TCO_usd_per_kWh", o.usd_per_kwh), "0.0000")
    put(ws, KWH_ROW, 3, "Assumptions (the TCO's price)")
    ws.merge_cells(f"C{KWH_ROW}:{last_col}{KWH_ROW}")


def short_source(text: str) -> str:
    """The printed form of an input's source: its docs/sources.md ids, and whether it is an estimate."""
    ids = re.findall(r"\[[A-Z]?\d+\]", text)
    ref = ("docs/sources.md " + " ".join(ids)) if ids else text[:60]
    return ("estimate; " if text.startswith("estimate") else "") + ref


def _input_sources(ws, row: int, sources: dict, last_col: str) -> int:
    """The inputs' sources in full (below the printed page)."""
    header_row(ws, row, ["Ownership input", "", "Source"], height=20)
    for key, label, _ in INPUTS:
        row += 1
        put(ws, row, 1, label)
        put(ws, row, 3, sources.get(key, ""))
        ws.merge_cells(f"C{row}:{last_col}{row}")
        wrap(ws, row, 3, DESIGN_WIDTH * 5)
    return row


def _offers(ws, row: int, designs: list, last_col: str) -> None:
    """Every offer once (values): the designs it can rent, its price, term, block limit, source and date."""
    header_row(ws, row, ["Offer (designs)", "USD per GPU-hour", "Term, block limit, price source and date"],
            right=range(2, 3), height=20)
    seen: dict[str, list] = {}
    for d in designs:
        for q in d.rent.quotes:
            seen.setdefault(q.offer_id, [q]).append(d.rank)
    for offer_id, (q, *ranks) in seen.items():
        row += 1
        put(ws, row, 1, f"{offer_id} (" + ", ".join(f"#{r}" for r in ranks) + ")")
        put(ws, row, 2, q.usd_per_gpu_hour, NUMBER_2)
        put(ws, row, 3, f"{q.term}; max {q.max_gpus:,} GPUs per block; {q.price_source} ({q.price_date})")
        ws.merge_cells(f"C{row}:{last_col}{row}")
        wrap(ws, row, 3, DESIGN_WIDTH * 5)


def write_rent_sheet(wb, result) -> bool:
    """The sheet, when a design has a rental offer (False: no sheet written)."""
    designs = [d for d in result.designs if d.rent is not None]
    if not designs:
        return False
    ws = wb.create_sheet(SHEET)
    last_col = col_letter(max(6, 1 + len(designs)))
    rb0 = designs[0].rent
    write_title(ws, "Rent or buy, like for like: the run's share of owning against renting its hours")
    horizon = ("each design's training run" if rb0.horizon == "training run" else "the TCO years")
    note(ws, 2, f"Hours: {horizon}. Own = the run's share of the economic life plus the energy of its hours; "
                "break-even against the cheapest committed offer. Yellow cells are editable.")
    _inputs(ws, designs[0], last_col)
    header_row(ws, DESIGN_HEADER_ROW, ["Per design"] + [f"#{d.rank}" for d in designs],
            right=range(2, 2 + len(designs)), height=20)
    rows = summary_row_numbers()
    for key in ROWS:
        put(ws, ROW[key], 1, LABELS[key]).font = BOLD
    for d in designs:
        _design_column(ws, 2 + len([e for e in designs if e.rank < d.rank]),
                       d, col_letter(2 + result.designs.index(d)), rows)
    r = ROW[ROWS[-1]] + 1
    for text in (INCLUDES, LEAVES_OUT):
        put(ws, r, 1, text)
        ws.merge_cells(f"A{r}:{last_col}{r}")
        wrap(ws, r, 1, 34 + DESIGN_WIDTH * (ord(last_col) - ord("A")))
        r += 1
    ws.print_area = f"A1:{last_col}{r - 1}"  # one page: the inputs and the comparison; sources follow below
    sources = dict(designs[0].rent.owning.sources)
    r = _input_sources(ws, r + 2, sources, last_col)
    _offers(ws, r + 2, designs, last_col)
    set_widths(ws, {"A": 34, **{col_letter(c): DESIGN_WIDTH for c in range(2, 2 + max(5, len(designs)))}})
    ws.freeze_panes = "B5"
    print_setup(ws, pages_wide=1, pages_tall=1, fit=True)
    return True
