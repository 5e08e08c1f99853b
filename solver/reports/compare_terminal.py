"""The `compare` command in the terminal: the best design of each scenario side by side."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from ..figures import figure
from .tables import design_layout, step_text
from .text import safe

if TYPE_CHECKING:  # annotations only: `catalog` and `validate` load no design space (numpy)
    from ..results import Design, SolveResult

LAYOUT, STEP = "layout tp·cp·pp·vp·dp·mbs", "step s"
# the rows: the design's figures (`figures.FIGURES`, by their table headers) and the layout, the step against its target,
# the status and the caveats
FIRST, THEN = ("gpus", "nodes"), ("train_days", "mfu", "facility_power_kw", "racks", "capex_usd", "tco_usd",
                                  "cost_per_gpu_usd", "network_load")
COMPARE_ROWS = ["architecture", "status", *(figure(k).header for k in FIRST), LAYOUT, STEP,
                *(figure(k).header for k in THEN), "caveats"]


def compare_table(results: list[SolveResult], files: list[str], width: int | None = None, wide: bool = False) -> Table:
    """The best design of each scenario side by side: one column per scenario, one row per figure."""
    return compare_tables(results, files, width, wide)[0]


def compare_tables(results: list[SolveResult], files: list[str], width: int | None = None,
                   wide: bool = False) -> list[Table]:
    """As many side-by-side tables as the width needs: every scenario column is as wide as its longest
    number (money is never split across lines), and scenarios that do not fit go to the next table."""
    values = [_compare_cells(r.designs[0]) if r.designs else {"architecture": "infeasible"} for r in results]
    for r, v in zip(results, values):
        if r.status in ("feasible", "time_limit"):  # the row shows only when a design may not be optimal
            v["status"] = f"[yellow]{r.status}[/] (may not be optimal)"
    label_w = max(len(row) for row in COMPARE_ROWS)
    need = [max([len(v.get(row, "")) for row in COMPARE_ROWS if row not in ("architecture", "status", "caveats")] + [14])
            for v in values]
    groups: list[list[int]] = [[]]
    used = label_w + 4
    for i, w in enumerate(need):
        if groups[-1] and width is not None and not wide and used + w + 3 > width:
            groups.append([])
            used = label_w + 4
        groups[-1].append(i)
        used += w + 3
    tables = []
    for n, group in enumerate(groups):
        title = "best design per scenario" + (f" ({n + 1} of {len(groups)})" if len(groups) > 1 else "")
        t = Table(title=title, title_justify="left")
        t.add_column("", justify="left", no_wrap=True)
        for i in group:
            t.add_column(f"{safe(results[i].scenario)}\n({safe(files[i])})", justify="right", overflow="fold",
                         min_width=need[i])
        for row in COMPARE_ROWS:
            cells = [values[i].get(row, "") for i in group]
            if any(cells):
                t.add_row(row, *cells)
        tables.append(t)
    return tables


def _compare_cells(d: Design) -> dict[str, str]:
    js = d.to_dict()
    cells = {figure(k).header: figure(k).text(js) for k in (*FIRST, *THEN)}
    if d.network_load and d.network_load["beyond_measured"]:
        cells[figure("network_load").header] += " ⚠"
    return {**cells, "architecture": safe(d.label), LAYOUT: design_layout(d), STEP: step_text(d),
            "caveats": safe(_flags_text(d))}


def _flags_text(design) -> str:
    """The design's flags as its confidence statement words them (lazy: `catalog` and `validate` load no numpy)."""
    from ..confidence import confidence

    return confidence(design).flags_text()
