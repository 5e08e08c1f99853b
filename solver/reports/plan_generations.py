"""The plan workbook's "Generations" sheet (issue 43b): the generations side by side — per period, the platforms
it can order (catalog lifecycle windows), what it runs and on which cluster, and what is resold at the end of it
(plan.resale_fraction; solver/plan/resale.py), with the discounted total net of resale as a live formula over
the Plan sheet's total and discount factors."""
from __future__ import annotations

from typing import Any

from openpyxl.styles import Alignment, Font
from openpyxl.utils import get_column_letter

from .xlsx import formula, put, write_title

SHEET = "Generations"
USD = '"$"#,##0'
ROWS = ("label", "orderable", "runs", "cluster", "gpus", "resale", "discounted_resale")
LABELS = {"label": "Period", "orderable": "Platforms it can order", "runs": "Architecture running the job",
          "cluster": "Cluster", "gpus": "GPUs running the job",
          "resale": "Resold at the end of the period (USD)", "discounted_resale": "Discounted resale (USD)"}
HEAD = 3


def add_generations_sheet(wb: Any, report: dict, plan_sheet: str, discount_row: int, total_cell: str) -> None:
    """Append the sheet; `discount_row` is the Plan sheet's discount-factor row, `total_cell` its discounted total
    (gross of resale)."""
    ws = wb.create_sheet(SHEET)
    write_title(ws, f"Generations side by side: {report['scenario']}")
    periods = report["periods"]
    row = {key: HEAD + i for i, key in enumerate(ROWS)}
    for key, r in row.items():
        put(ws, r, 1, LABELS[key]).font = Font(bold=True)
    for p, period in enumerate(periods):
        col = 2 + p
        letter = get_column_letter(col)
        put(ws, row["label"], col, str(period["label"])).font = Font(bold=True)
        put(ws, row["orderable"], col, ", ".join(period.get("orderable_platforms", [])) or "none")
        put(ws, row["runs"], col, period["architecture"])
        put(ws, row["cluster"], col, period["cluster"])
        put(ws, row["gpus"], col, period["gpus"]).number_format = "#,##0"
        put(ws, row["resale"], col, period.get("resale_usd", 0.0)).number_format = USD
        formula(ws, row["discounted_resale"], col, f"={letter}{row['resale']}*'{plan_sheet}'!{letter}{discount_row}",
                USD, value=period.get("resale_usd", 0.0) * period["discount_factor"])
        ws.column_dimensions[letter].width = 30
        for key in ("orderable", "runs"):
            ws.cell(row[key], col).alignment = Alignment(wrap_text=True, vertical="top")
    last = get_column_letter(1 + len(periods))
    total = row["discounted_resale"] + 2
    put(ws, total, 1, "Discounted total, net of resale (USD)").font = Font(bold=True)
    formula(ws, total, 2, f"='{plan_sheet}'!{total_cell}-SUM(B{row['discounted_resale']}:{last}{row['discounted_resale']})",
            USD, value=report["totals"]["discounted_usd"])
    ws.column_dimensions["A"].width = 40
    ws.page_setup.orientation = "landscape"
    ws.sheet_properties.pageSetUpPr.fitToPage = False  # printed like the Plan sheet: 90 %, labels repeated
    ws.page_setup.scale = 90
    ws.print_title_cols = "A:A"
