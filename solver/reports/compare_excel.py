"""`fabricplan compare --xlsx FILE`: the best design of each scenario side by side (sheet Compare,
one column per scenario, one row per figure; values as solved), then every warning of every
scenario (its plausibility warnings and the solve's), so the comparison finance prints carries them.
Capex per GPU is a live formula (capex / GPUs). Written atomically.
"""
from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook

from ..confidence import confidence
from ..figures import figure, figures_of
from .xlsx import (
    BOLD,
    RIGHT,
    col_letter,
    formula,
    header_row,
    note,
    print_setup,
    put,
    save_workbook,
    wrap,
    write_title,
)

SHEET = "Compare"
HEADER_ROW = 3
# the figures compared, one row each (`figures.FIGURES`: label, number format, value); capex per GPU is a formula
ROWS = tuple(figure(key) for key in ("architecture", "gpus", "nodes", "step_time_s", "target_step_time_s", "train_days",
                                     "mfu", "facility_power_kw", "racks", "capex_usd", "tco_usd", "cost_per_gpu_usd"))
ROW = {f.key: HEADER_ROW + 1 + i for i, f in enumerate(ROWS)}
COL_WIDTH = 26


def _values(r) -> dict:
    if not r.designs:
        return {"architecture": f"infeasible: {r.explanation or ''}"}
    return figures_of(r.designs[0].to_dict(), [f.key for f in ROWS])


def build_compare_workbook(results: list, files: list[str]) -> Workbook:
    wb = Workbook()
    ws = wb.active
    ws.title = SHEET
    write_title(ws, "fabricplan comparison: the best design of each scenario")
    note(ws, 2, "Values as solved; capex per GPU is a formula. Warnings below the table.")
    header_row(ws, HEADER_ROW, ["Figure"] + [f"{r.scenario} ({f})" for r, f in zip(results, files)],
            right=range(2, 2 + len(results)), height=48)
    for f in ROWS:
        put(ws, ROW[f.key], 1, f.label).font = BOLD
    for i, r in enumerate(results):
        col, values = 2 + i, _values(r)
        for f in ROWS:
            if f.key == "cost_per_gpu_usd" and r.designs:
                c = col_letter(col)
                cell = formula(ws, ROW[f.key], col, f"={c}{ROW['capex_usd']}/{c}{ROW['gpus']}", f.number_format,
                               values["capex_usd"] / max(1, values["gpus"]))
            elif values.get(f.key) is not None:
                cell = put(ws, ROW[f.key], col, values[f.key], f.number_format)
            else:
                continue
            cell.alignment = RIGHT
        wrap(ws, ROW["architecture"], col, COL_WIDTH)
        ws.column_dimensions[col_letter(col)].width = COL_WIDTH
    ws.column_dimensions["A"].width = 24
    row = max(ROW.values()) + 2
    put(ws, row, 1, "Warnings").font = BOLD
    warnings = [(file, w) for r, file in zip(results, files) for w in list(r.input_warnings) + list(r.warnings)]
    for r, file in zip(results, files):  # each best design's confidence statement and flags (solver/confidence.py)
        if r.designs:
            conf = confidence(r.designs[0])
            warnings += [(file, f"#1 confidence: {conf.statement()}")] + [(file, f"#1 ⚠ {f}") for f in conf.flags]
    for file, w in warnings or [("", "none")]:
        row += 1
        put(ws, row, 1, f"{file}: {w}" if file else w)
        ws.merge_cells(start_row=row, start_column=1, end_row=row, end_column=1 + max(1, len(results)))
        wrap(ws, row, 1, 24 + COL_WIDTH * max(1, len(results)))
    ws.freeze_panes = f"B{HEADER_ROW + 1}"
    print_setup(ws, pages_wide=-(-len(results) // 4), title_cols="A:A")
    wb.calculation.fullCalcOnLoad = True
    return wb


def write_compare_workbook(results: list, files: list[str], path: str | Path) -> Path:
    return save_workbook(build_compare_workbook(results, files), path)
