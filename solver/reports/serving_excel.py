"""The serving fleet's workbook (SPEC §4.9, §8.4): a Serving sheet (the ranked fleets side by side, each fleet's
pools with latencies, intervals and USD per million tokens), one BOM sheet per fleet (every pool's lines, extended
= quantity × unit price and the totals as live formulas, an editable contingency cell) and an Assumptions sheet
(traffic, SLOs, stack, the formulas the figures rest on)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openpyxl import Workbook

from ..perf.serving import kv_cache_dtype_of
from .bom_sheet import BomCells, write_bom_sheet
from .xlsx import (
    BOLD,
    NUMBER,
    USD,
    formula,
    header_row,
    put,
    save_workbook,
    set_widths,
    sheet_ref,
    write_file,
    write_title,
)

FLEET_ROWS = (
    ("mode", lambda d, s: d.mode, None),
    ("capex (USD)", lambda d, s: d.capex_usd, USD),
    ("TCO (USD)", lambda d, s: d.tco_usd, USD),
    ("GPUs", lambda d, s: d.gpus, NUMBER),
    ("facility power (kW)", lambda d, s: d.power_kw, "#,##0.0"),
    ("TTFT p90 (s)", lambda d, s: s["ttft_p90_s"], "0.000"),
    ("TTFT p90 p10–p90 interval (s)", lambda d, s: "{:.3f}–{:.3f}".format(*s["ttft_p90_s_interval"]), None),
    ("TPOT p90 (ms)", lambda d, s: s["tpot_p90_ms"], "0.00"),
    ("tokens/s per user", lambda d, s: s["tokens_per_s_per_user"], "0.0"),
    ("tokens/s per user, p10–p90", lambda d, s: "{:.1f}–{:.1f}".format(*s["tokens_per_s_per_user_interval"]), None),
    ("output tokens/s per GPU (replica)", lambda d, s: s["output_tokens_per_s_per_gpu"], "#,##0"),
    ("input tokens/s per GPU (replica)", lambda d, s: s["input_tokens_per_s_per_gpu"], "#,##0"),
    ("capacity (requests/s)", lambda d, s: s["requests_per_s_capacity"], "0.00"),
    ("peak traffic (requests/s)", lambda d, s: s["peak_requests_per_s"], "0.00"),
    ("KV cache per GPU (GB)", lambda d, s: s["kv_cache_gb_per_gpu"], "0.0"),
    ("KV transfer (GB/s)", lambda d, s: s["kv_transfer_gbyte_s"], "0.00"),
    ("USD per million output tokens", lambda d, s: s["usd_per_million_output_tokens"], "0.0000"),
    ("USD per million input tokens", lambda d, s: s["usd_per_million_input_tokens"], "0.0000"),
)
POOL_KEYS = ("role", "platform", "tp", "pp", "ep", "dp_attention", "concurrency", "replicas", "gpus", "nodes", "nic",
             "rails_per_node", "switch", "tiers", "ttft_p90_s", "tpot_ms", "requests_per_s_capacity",
             "memory_gb_per_gpu", "kv_cache_gb_per_gpu", "capex_usd")


def serving_sheet(wb: Workbook, result: Any) -> None:
    ws = wb.create_sheet("Serving", 0)
    write_title(ws, f"{result.scenario}: serving fleets ({result.objective})")
    header_row(ws, 3, ["figure"] + [f"fleet #{d.rank}" for d in result.designs])
    dicts = [d.serving_dict() for d in result.designs]
    for i, (label, get, fmt) in enumerate(FLEET_ROWS):
        put(ws, 4 + i, 1, label)
        for j, (d, s) in enumerate(zip(result.designs, dicts)):
            put(ws, 4 + i, 2 + j, get(d, s), fmt)
    row = 8 + len(FLEET_ROWS)
    for d in result.designs:
        put(ws, row, 1, f"fleet #{d.rank}: pools").font = BOLD
        header_row(ws, row + 1, list(POOL_KEYS))
        for k, p in enumerate(d.pools):
            data = p.to_dict()
            for c, key in enumerate(POOL_KEYS):
                v = data[key]
                put(ws, row + 2 + k, 1 + c, "" if v is None else v)
        row += 3 + len(d.pools)
    flags = sorted({f for s in dicts for f in s["flags"]})
    for f in flags:
        put(ws, row, 1, f"flag: {f}")
        row += 1
    set_widths(ws, {"A": 34, **{chr(66 + j): 18 for j in range(max(len(result.designs), 20))}})
    ws.freeze_panes = "B4"


@dataclass
class _PoolDesign:
    """What the shared BOM sheet (reports/bom_sheet.py) reads of a design: its costed bill, rank and label."""

    cost: Any
    rank: int
    label: str


def pool_bom_sheets(wb: Workbook, d: Any, first_index: int, contingency_fraction: float) -> list[BomCells]:
    """One BOM sheet per pool of the fleet, written by the training workbook's BOM sheet (live totals, editable
    quantities, prices, discount and contingency)."""
    cells = []
    for k, p in enumerate(d.pools):
        label = f"fleet #{d.rank} {p.role} pool ({p.option.machine.platform}, {p.replicas} replicas)"
        cells.append(write_bom_sheet(wb, first_index + k, _PoolDesign(p.cost, d.rank, label), contingency_fraction))
    return cells


def fleet_totals(wb: Workbook, cells: list[list[BomCells]]) -> None:
    """The Serving sheet's live capex row: Σ of each fleet's pool BOM grand totals."""
    ws = wb["Serving"]
    row = 4 + len(FLEET_ROWS)
    put(ws, row, 1, "capex, live (Σ pool BOM sheets)").font = BOLD
    for j, pools in enumerate(cells):
        expr = "=" + "+".join(sheet_ref(c.title, c.total) for c in pools)
        formula(ws, row, 2 + j, expr, USD, sum((c.values or {}).get("total", 0.0) for c in pools))
    for j, pools in enumerate(cells):
        put(ws, row + 1, 2 + j, ", ".join(c.title for c in pools))
    put(ws, row + 1, 1, "BOM sheets (prefill/aggregated first)")


def assumptions_sheet(wb: Workbook, sc: Any) -> None:
    ws = wb.create_sheet("Assumptions")
    write_title(ws, "assumptions")
    s = sc.serving
    rows = [("workload kind", sc.workload.kind), ("stack", sc.workload.stack), ("precision", sc.workload.precision),
            ("KV cache dtype", kv_cache_dtype_of(sc.workload) + ("" if sc.workload.kv_cache_dtype else " (default)")),
            ("peak requests/s", s.traffic.peak_requests_per_s()), ("mean requests/s", s.traffic.mean_requests_per_s()),
            ("input tokens (mean)", s.traffic.input_tokens), ("output tokens (mean)", s.traffic.output_tokens),
            ("prefix cache hit", s.traffic.prefix_cache_hit), ("TTFT p90 target (s)", s.slo.ttft_p90_s),
            ("TPOT target (ms)", s.slo.tpot_max_s() * 1000 if s.slo.tpot_max_s() != float("inf") else "none"),
            ("utilisation max", s.slo.utilisation_max), ("disaggregation", s.disaggregation),
            ("TCO years", sc.tco.years),
            ("USD per million tokens", "TCO / (mean requests/s · tokens per request · 86,400 · 365 · years) · 10^6"),
            ("TTFT p90", "prefill time + the p90 wait at the prefill servers (M/D/c approximation, docs/model.md)")]
    for i, (k, v) in enumerate(rows):
        put(ws, 3 + i, 1, k)
        put(ws, 3 + i, 2, v)
    set_widths(ws, {"A": 30, "B": 80})


SWEEP_COLUMNS = (("fleet", "mode"), ("platforms", "platform"), ("GPUs", "gpus"), ("capex (USD)", "capex_usd"),
                 ("peak requests/s", "peak_requests_per_s"), ("tokens/s per user", "tokens_per_s_per_user"),
                 ("USD per million output tokens", "usd_per_million_output_tokens"), ("status", "status"),
                 ("flags (no measurement, approximations)", "flags"))


def write_sweep_workbook(report: dict, path: str | Path) -> Path:
    """A serving sweep: one row per point (the swept values, the best fleet, GPUs, capex, USD per million tokens)."""
    wb = Workbook()
    ws = wb.active
    assert ws is not None
    ws.title = "Sweep"
    write_title(ws, f"{report['scenario']}: serving sweep")
    points = report["points"]
    names = list(points[0]["values"]) if points else []
    header_row(ws, 3, names + [label for label, _ in SWEEP_COLUMNS])
    for i, row in enumerate(points):
        for c, n in enumerate(names):
            put(ws, 4 + i, 1 + c, row["values"][n])
        for c, (_, key) in enumerate(SWEEP_COLUMNS):
            v = row.get(key)
            v = "; ".join(v) if isinstance(v, list) else v
            put(ws, 4 + i, 1 + len(names) + c, "" if v is None else v)
    set_widths(ws, {chr(65 + c): 22 for c in range(len(names) + len(SWEEP_COLUMNS))})
    ws.freeze_panes = "A4"
    return save_workbook(wb, path)


def write_fleet_workbook(result: Any, sc: Any, path: str | Path) -> Path:
    """Serving, BOM per fleet, Assumptions (none for a comparison, `sc` None); saved atomically with the formulas'
    cached values."""
    return save_workbook(build_fleet_workbook(result, sc), path)


def write_fleet_workbook_file(inputs: tuple, file: Path, run_id: str | None) -> None:
    """The workbook of `write_fleet_workbook` for `inputs` = (result, scenario), written to `file` as it is, with
    `run_id` (what the process of `reports/side_process.py` writes into the caller's temporary file; the caller
    renames it into place)."""
    result, sc = inputs
    write_file(build_fleet_workbook(result, sc), file, run_id)


def build_fleet_workbook(result: Any, sc: Any) -> Workbook:
    """The fleet workbook of `write_fleet_workbook`, not yet saved."""
    wb = Workbook()
    default = wb.active
    serving_sheet(wb, result)
    cells, index = [], 1
    for d in result.designs:
        # without a scenario (a comparison) the BOM's own contingency line gives the fraction (split_contingency)
        cells.append(pool_bom_sheets(wb, d, index, sc.constraints.contingency_fraction if sc is not None else 0.0))
        index += len(d.pools)
    fleet_totals(wb, cells)
    if getattr(result, "site", None) is not None:  # a power-first site (optimize/serving_site.py)
        from .site_sheet import site_sheet

        site_sheet(wb, result.site)
    if sc is not None:
        assumptions_sheet(wb, sc)
    if default is not None:
        wb.remove(default)
    return wb
