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
rent_excel, performance_sheet, assumptions_sheet, frontier_sheet); this module assembles them and
re-exports their names, so `from solver.reports.excel import …` keeps working.
"""
from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook

from ..inputs import LoadedScenario
from ..inputs.schema import Catalog
from . import cables_sheet, rent_excel
from .assumptions_sheet import (  # noqa: F401 - re-exported
    Sections,
    _run_rows,
    _tco_inputs,
    catalog_lines,
    efficiency_rows,
    flatten,
    highs_version,
    moe_efficiency_rows,
    overlap_rows,
    scenario_lines,
    write_assumptions_sheet,
)
from .bom_sheet import (  # noqa: F401 - re-exported
    BOM_DESCRIPTION_WIDTH,
    BOM_FIRST_ROW,
    BOM_HEADER_ROW,
    BOM_HEADERS,
    BOM_LABEL_COL,
    BOM_NUMBER_COLUMNS,
    NETWORK,
    BomCells,
    _bom_inputs,
    _bom_quantities,
    _bom_totals,
    _categories_of,
    _label,
    bom_sheet_title,
    contingency_name,
    discount_name,
    write_bom_sheet,
)
from .goodput_sheet import (  # noqa: F401 - re-exported
    SUMMARY_GOODPUT_KEYS,
    summary_goodput_rows,
    write_goodput_table,
)
from .performance_sheet import (  # noqa: F401 - re-exported
    TERMS,
    _breakdown_chart,
    _bytes_table,
    _memory_table,
    write_margins_table,
    write_performance_sheet,
)
from .prices_sheet import (  # noqa: F401 - re-exported
    _ROLE,
    CATEGORIES,
    PRICE_HEADER_ROW,
    PRICE_HEADERS,
    PRICE_WRAP,
    PRICES,
    PriceRow,
    _category_rank,
    price_description,
    price_key,
    spare_power_ratio,
    split_contingency,
    write_prices_sheet,
)
from .summary_sheet import (  # noqa: F401 - re-exported
    ADJUSTMENT,
    CATEGORY_COLOURS,
    CHART_CM,
    NETWORK_ROW,
    SUMMARY_COL_WIDTH,
    SUMMARY_HEADER_ROW,
    SUMMARY_KEYS,
    TCO_NAMES,
    WRAPPED_KEYS,
    _capex_by_category,
    _category_column,
    _category_rows,
    _layout_text,
    _per_mtok_row,
    _stacked_chart,
    _summary_row_numbers,
    _summary_rows,
    _uncertainty_rows,
    category_colour,
    design_name,
    orderable_rows,
    write_summary_sheet,
)
from .xlsx import (  # noqa: F401 - re-exported
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
    write_file,
)


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
