"""The `compare` command in the terminal: the best design of each scenario side by side."""
from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from .tables import _layout, _step, _usd
from .text import safe

if TYPE_CHECKING:  # annotations only: `catalog` and `validate` load no design space (numpy)
    from ..results import Design, SolveResult

COMPARE_ROWS = ["architecture", "status", "GPUs", "nodes", "layout tp·cp·pp·vp·dp·mbs", "step s", "train days", "MFU",
                "facility kW", "racks", "capex", "TCO", "capex per GPU", "network load", "caveats"]


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
    return {"architecture": safe(d.label), "GPUs": f"{d.cost.gpus:,}", "nodes": f"{d.cost.nodes:,}",
            "layout tp·cp·pp·vp·dp·mbs": _layout(d), "step s": _step(d),
            "train days": "" if d.train_days is None else f"{d.train_days:,.1f}", "MFU": f"{d.perf.mfu:.1%}",
            "facility kW": f"{d.cost.facility_power_kw:,.0f}", "racks": f"{d.cost.racks:,}",
            "capex": _usd(d.cost.capex_usd), "TCO": _usd(d.cost.tco_usd),
            "capex per GPU": _usd(d.cost.capex_usd / max(1, d.cost.gpus)),
            "network load": f"{d.network_load['value']:.2f}" + (" ⚠" if d.network_load["beyond_measured"] else "")
            if d.network_load else "",
            "caveats": safe("; ".join(d.caveats)) if d.caveats else "none"}
