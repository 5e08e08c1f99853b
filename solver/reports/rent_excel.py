"""The workbook's "Rent or buy" sheet (solver/rentals.py): every rental offer of every design, with
live formulas tied to the Summary (capex, facility power, TCO) and the TCO inputs on Assumptions:

    rent             = GPUs · $/GPU-h · MAX(hours, commitment hours)
    energy per month = Summary facility kW · 730 h · TCO_usd_per_kWh
    own              = capex + energy per month · hours / 730
    rent per month   = GPUs · $/GPU-h · 730
    break-even month = ROUNDUP(capex / (rent per month − energy per month), 0); −1 ("never") when ≤ 0
    cheaper, by      = own − rent                 (shown as "rent, by $…" when positive, "buy, by $…")

The hours and the price per GPU-hour are editable (yellow): a quote for another price, or another
run length, updates the rent, the break-even month and which choice is cheaper.
"""
from __future__ import annotations

import math

from .summary_sheet import _summary_row_numbers
from .xlsx import (
    BOLD,
    INPUT_FILL,
    NUMBER,
    NUMBER_2,
    PRINTABLE_PT,
    USD,
    Live,
    _header,
    _title,
    _widths,
    _write,
    col_letter,
    note,
    print_setup,
    put,
    sheet_size_pt,
    wrap,
)

SHEET = "Rent or buy"
HEADER_ROW = 4
HOURS_PER_MONTH = 730
HEADERS = ("Design", "Offer", "Term", "GPUs rented", "Hours of the run", "Commitment (h)", "USD per GPU-hour",
           "Rent (USD)", "Capex (USD)", "Energy per month (USD)", "Own for the hours (USD)", "TCO (USD)",
           "Rent per month (USD)", "Break-even month", "Cheaper, by (own − rent, USD)")
WIDTHS = {"A": 9, "B": 24, "C": 17, "D": 9, "E": 10, "F": 11, "G": 10, "H": 13, "I": 13, "J": 12, "K": 14, "L": 13,
          "M": 13, "N": 10, "O": 17}
SOURCE_COLS = ("C", "L")  # the offers' price sources, below the table: merged C:L
SOURCE_WIDTH = sum(WIDTHS[chr(c)] for c in range(ord("C"), ord("L") + 1))
MONTH = '#,##0;"never";0'  # the break-even month; −1 = never
CHEAPER = '"rent, by "$#,##0;"buy, by "$#,##0;"equal"'  # own − rent: positive when renting is cheaper


def _row(ws, r: int, design, quote, col: str, rows: dict) -> None:
    """One offer of one design; `col` is the design's column on the Summary."""
    rb = design.rent
    summary = f"Summary!{col}"
    commitment_h = quote.paid_hours if quote.paid_hours > quote.hours else 0.0
    rent_month = quote.gpus * quote.usd_per_gpu_hour * HOURS_PER_MONTH
    saving = rent_month - rb.energy_usd_per_month
    month = math.ceil(rb.capex_usd / saving - 1e-9) if saving > 0 else "never"
    own = rb.capex_usd + rb.energy_usd_per_month * quote.hours / HOURS_PER_MONTH
    values = [
        (f"#{design.rank}", None),
        (quote.offer_id, None),
        (quote.term + (" (est.)" if quote.price_is_estimate else ""), None),
        (quote.gpus, NUMBER),
        (quote.hours, NUMBER),
        (commitment_h, NUMBER),
        (quote.usd_per_gpu_hour, NUMBER_2),
        (Live(f"=D{r}*G{r}*MAX(E{r},F{r})", quote.rent_usd), USD),
        (Live(f"={summary}{rows['capex']}", rb.capex_usd), USD),
        (Live(f"={summary}{rows['facility_kw']}*{HOURS_PER_MONTH}*TCO_usd_per_kWh", rb.energy_usd_per_month), USD),
        (Live(f"=I{r}+J{r}*E{r}/{HOURS_PER_MONTH}", own), USD),
        (Live(f"={summary}{rows['tco']}", rb.tco_usd), USD),
        (Live(f"=D{r}*G{r}*{HOURS_PER_MONTH}", rent_month), USD),
        # numbers only (every formula carries a cached number): −1 shows as "never", the sign of
        # own − rent says which is cheaper
        (Live(f"=IF(M{r}>J{r},ROUNDUP(I{r}/(M{r}-J{r}),0),-1)", month if isinstance(month, int) else -1), MONTH),
        (Live(f"=K{r}-H{r}", own - quote.rent_usd), CHEAPER),
    ]
    for c, (value, fmt) in enumerate(values, start=1):
        cell = _write(ws, r, c, value, fmt)
        if c in (5, 7):
            cell.fill = INPUT_FILL


def _sources(ws, row: int, quotes: list) -> None:
    """Each offer once, with its price source and date (merged C:L, wrapped)."""
    _header(ws, row, ["", "Offer", "Price source and date"], height=20)
    seen: set[str] = set()
    for q in quotes:
        if q.offer_id in seen:
            continue
        seen.add(q.offer_id)
        row += 1
        put(ws, row, 2, q.offer_id)
        put(ws, row, 3, f"{q.price_source} ({q.price_date})")
        ws.merge_cells(f"{SOURCE_COLS[0]}{row}:{SOURCE_COLS[1]}{row}")
        wrap(ws, row, 3, SOURCE_WIDTH)


def write_rent_sheet(wb, result) -> bool:
    """The sheet, when a design has a rental offer (False: no sheet written)."""
    designs = [d for d in result.designs if d.rent is not None]
    if not designs:
        return False
    ws = wb.create_sheet(SHEET)
    rb0 = designs[0].rent
    _title(ws, "Rent or buy: renting the same GPU-hours against owning")
    horizon = ("each design's training run (train_tokens at its step time)" if rb0.horizon == "training run"
               else "the TCO years")
    note(ws, 2, f"Hours: {horizon}. Own = capex + energy for those hours; break-even = the month from which "
                "owning has cost less than renting. Yellow cells are editable.")
    _header(ws, HEADER_ROW, HEADERS, right=range(4, 16), height=48)
    rows = _summary_row_numbers()
    r = HEADER_ROW + 1
    for d in designs:
        col = col_letter(2 + result.designs.index(d))  # the Summary's design columns start at B
        for i, quote in enumerate(d.rent.quotes):
            _row(ws, r, d, quote, col, rows)
            if i == 0:
                ws.cell(row=r, column=1).font = BOLD
            r += 1
    note(ws, r + 1, "The first row of each design is its cheapest offer with a network at least as fast as the "
                    "design's; est. = a price relayed by a third party (docs/sources.md).")
    _sources(ws, r + 3, [q for d in designs for q in d.rent.quotes])
    _widths(ws, WIDTHS)
    ws.freeze_panes = f"C{HEADER_ROW + 1}"
    width, _ = sheet_size_pt(ws)
    print_setup(ws, pages_wide=max(1, math.ceil(width / (PRINTABLE_PT[0] * 0.85))), title_rows=f"{HEADER_ROW}:{HEADER_ROW}",
                title_cols="A:B")
    return True
