"""`fabricplan compare --xlsx FILE`: the best design of each scenario side by side (sheet Compare,
one column per scenario, one row per figure; values as solved), then every warning of every
scenario (its plausibility warnings and the solve's), so the comparison finance prints carries them.
Capex per GPU is a live formula (capex / GPUs). Written atomically.
"""
from __future__ import annotations

from pathlib import Path

from openpyxl import Workbook

from .xlsx import (
    BOLD,
    NUMBER,
    PERCENT,
    RIGHT,
    SECONDS,
    USD,
    _header,
    _title,
    col_letter,
    formula,
    note,
    print_setup,
    put,
    save_workbook,
    wrap,
)

SHEET = "Compare"
HEADER_ROW = 3
ROWS = (("architecture", "Architecture", None), ("gpus", "GPUs", NUMBER), ("nodes", "Nodes", NUMBER),
        ("step", "Step time (s)", SECONDS), ("target", "Target step time (s)", SECONDS),
        ("train_days", "Training days", "#,##0.0"), ("mfu", "MFU", PERCENT),
        ("facility_kw", "Facility power (kW)", NUMBER), ("racks", "Racks", NUMBER), ("capex", "Capex (USD)", USD),
        ("tco", "TCO (USD)", USD), ("per_gpu", "Capex per GPU (USD)", USD))
ROW = {key: HEADER_ROW + 1 + i for i, (key, _, _) in enumerate(ROWS)}
COL_WIDTH = 26


def _values(r) -> dict:
    if not r.designs:
        return {"architecture": f"infeasible: {r.explanation or ''}"}
    d = r.designs[0]
    target = d.target_step_time_s
    return {"architecture": d.label, "gpus": d.cost.gpus, "nodes": d.cost.nodes, "step": d.perf.step_time_s,
            "target": target if target != float("inf") else None, "train_days": d.train_days, "mfu": d.perf.mfu,
            "facility_kw": d.cost.facility_power_kw, "racks": d.cost.racks, "capex": d.cost.capex_usd,
            "tco": d.cost.tco_usd}


def build_compare_workbook(results: list, files: list[str]) -> Workbook:
    wb = Workbook()
    ws = wb.active
    ws.title = SHEET
    _title(ws, "fabricplan comparison: the best design of each scenario")
    note(ws, 2, "Values as solved; capex per GPU is a formula. Warnings below the table.")
    _header(ws, HEADER_ROW, ["Figure"] + [f"{r.scenario} ({f})" for r, f in zip(results, files)],
            right=range(2, 2 + len(results)), height=48)
    for key, label, _ in ROWS:
        put(ws, ROW[key], 1, label).font = BOLD
    for i, r in enumerate(results):
        col, values = 2 + i, _values(r)
        for key, _, fmt in ROWS:
            if key == "per_gpu" and r.designs:
                c = col_letter(col)
                cell = formula(ws, ROW[key], col, f"={c}{ROW['capex']}/{c}{ROW['gpus']}", fmt,
                               values["capex"] / max(1, values["gpus"]))
            elif values.get(key) is not None:
                cell = put(ws, ROW[key], col, values[key], fmt)
            else:
                continue
            cell.alignment = RIGHT
        wrap(ws, ROW["architecture"], col, COL_WIDTH)
        ws.column_dimensions[col_letter(col)].width = COL_WIDTH
    ws.column_dimensions["A"].width = 24
    row = max(ROW.values()) + 2
    put(ws, row, 1, "Warnings").font = BOLD
    warnings = [(f, w) for r, f in zip(results, files) for w in list(r.input_warnings) + list(r.warnings)]
    for f, w in warnings or [("", "none")]:
        row += 1
        put(ws, row, 1, f"{f}: {w}" if f else w)
        ws.merge_cells(start_row=row, start_column=1, end_row=row, end_column=1 + max(1, len(results)))
        wrap(ws, row, 1, 24 + COL_WIDTH * max(1, len(results)))
    ws.freeze_panes = f"B{HEADER_ROW + 1}"
    print_setup(ws, pages_wide=-(-len(results) // 4), title_cols="A:A")
    wb.calculation.fullCalcOnLoad = True
    return wb


def write_compare_workbook(results: list, files: list[str], path: str | Path) -> Path:
    return save_workbook(build_compare_workbook(results, files), path)
