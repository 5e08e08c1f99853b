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

The sheets are written by their own modules (prices_sheet, bom_sheet, summary_sheet, cables_sheet,
rent_excel, performance_sheet, assumptions_sheet, frontier_sheet); this module assembles them (import a
sheet's names from its own module).
"""
from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook

from ..inputs import LoadedScenario
from ..inputs.schema import Catalog
from . import cables_sheet, rent_excel
from .assumptions_sheet import write_assumptions_sheet
from .bom_sheet import write_bom_sheet
from .performance_sheet import write_performance_sheet
from .prices_sheet import PRICES, write_prices_sheet
from .summary_sheet import write_summary_sheet
from .xlsx import save_workbook, write_file


def build_workbook(result, scenario: LoadedScenario, catalog: Catalog) -> Workbook:
    """The whole workbook in memory (no I/O)."""
    wb = Workbook()
    wb.active.title = "Summary"
    contingency = scenario.scenario.constraints.contingency_fraction
    prices = write_prices_sheet(wb, result.designs)
    bom_cells = [write_bom_sheet(wb, i + 1, d, contingency, prices) for i, d in enumerate(result.designs)]
    write_summary_sheet(wb, result, bom_cells)
    cables = [cables_sheet.SHEET] if cables_sheet.write_cables_sheet(wb, result, catalog) else []
    rent = [rent_excel.SHEET] if rent_excel.write_rent_sheet(wb, result) else []
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


def write_workbook_file(inputs: tuple, file: Path, run_id: str | None) -> None:
    """The workbook of `write_workbook` for `inputs` = (result, loaded scenario, catalog), written to `file` as it
    is, with `run_id` (what the process of `reports/side_process.py` writes into the caller's temporary file; the
    caller renames it into place)."""
    result, scenario, catalog = inputs
    write_file(build_workbook(result, scenario, catalog), file, run_id)
