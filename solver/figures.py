"""A design's figures, one registry (issue 26 item 6): what each figure is called in a workbook and in a terminal
table, its unit, and how it is read off the design's JSON (`results.Design.to_dict`: the form the JSON output, the
sweep's workers and every report share). The sweep's rows, the sweep and comparison workbooks, the sweep and
comparison tables, the solve table and `SolveResult.table()` pick their figures from it by key, so a figure is named,
read and formatted in one place.

A unit gives both the workbook's number format and the terminal's text:

| unit | workbook format | terminal text |
|---|---|---|
| count | #,##0 | 1,234 |
| usd | "$"#,##0 | $1,234 |
| usd_cents | "$"#,##0.00 | $1.23 |
| s | 0.000 | 1.23 |
| fraction | 0.0% | 12.3% |
| kw | #,##0 | 1,234 |
| days | #,##0.0 | 12.3 |
| ratio | 0.00 | 0.61 |
| text | (none) | as it is |
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .fabrics import family_vocabulary

# unit → the workbook's number format (reports/xlsx.py's NUMBER, USD, … are these)
NUMBER_FORMATS: dict[str, str] = {"count": "#,##0", "usd": '"$"#,##0', "usd_cents": '"$"#,##0.00', "s": "0.000",
                                  "fraction": "0.0%", "kw": "#,##0", "days": "#,##0.0", "ratio": "0.00"}
UNITS: dict[str, tuple[str | None, Callable[[Any], str]]] = {  # unit → (number format, terminal text)
    "count": (NUMBER_FORMATS["count"], lambda v: f"{v:,}"),
    "usd": (NUMBER_FORMATS["usd"], lambda v: f"${v:,.0f}"),
    "usd_cents": (NUMBER_FORMATS["usd_cents"], lambda v: f"${v:,.2f}"),
    "s": (NUMBER_FORMATS["s"], lambda v: f"{v:.2f}"),
    "fraction": (NUMBER_FORMATS["fraction"], lambda v: f"{v:.1%}"),
    "kw": (NUMBER_FORMATS["kw"], lambda v: f"{v:,.0f}"),
    "days": (NUMBER_FORMATS["days"], lambda v: f"{v:,.1f}"),
    "ratio": (NUMBER_FORMATS["ratio"], lambda v: f"{v:.2f}"),
    "text": (None, str),
}


@dataclass(frozen=True)
class Figure:
    """One figure of a design. `read` takes the design's JSON (a sweep's own figure, `sweep.summary.TCO_PER_MTOK`,
    its point's row); None where the design has no such figure (a scenario without a failure model has no goodput,
    one without train_tokens no training days). `drop` is the solve table's rank; another table may give its own."""

    key: str  # its name in the sweep's rows, `SolveResult.table()` and the comparison
    label: str  # a workbook's row or column header (with its unit)
    header: str  # a terminal table's column header
    unit: str  # a key of UNITS
    read: Callable[[dict], Any]
    drop: int = 0  # a terminal table drops the highest rank first when it is too narrow (0: always shown)

    @property
    def number_format(self) -> str | None:
        return UNITS[self.unit][0]

    def format(self, value: Any) -> str:
        """A value's text in a terminal table ("" for none)."""
        return "" if value is None else UNITS[self.unit][1](value)

    def text(self, design: dict) -> str:
        """The terminal's text of this figure of a design ("" when the design has no such figure)."""
        return self.format(self.read(design))


def _key(name: str) -> Callable[[dict], Any]:
    return lambda d: d.get(name)


def _switches(d: dict) -> int:
    """Σ `<role>_switches` over the switch roles of the design's fabric family."""
    fabric = d["fabric"]
    return sum(fabric[f"{role}_switches"] for role in family_vocabulary(fabric["family"]).switch_roles)


def _target(d: dict) -> float | None:
    target = d["target_step_time_s"]
    return None if target == float("inf") else target


def _network_load(d: dict) -> float | None:
    return d["network_load"]["value"] if d.get("network_load") else None


def _capex_per_pflop_s(d: dict) -> float:
    """capex / (model FLOPs per step / step time / 1e15): $ per sustained model PFLOP/s."""
    return d["capex_usd"] / (d["flops_per_step"]["model"] / d["step_time_s"] / 1e15)


FIGURES: dict[str, Figure] = {f.key: f for f in (
    Figure("architecture", "Architecture", "architecture", "text", _key("architecture")),
    Figure("fabric", "Fabric family", "fabric", "text", lambda d: d["fabric"]["family"], drop=8),
    Figure("platform", "Platform", "platform", "text", _key("platform")),
    Figure("gpus", "GPUs", "GPUs", "count", _key("gpus")),
    Figure("nodes", "Nodes", "nodes", "count", _key("nodes"), drop=4),
    Figure("racks", "Racks", "racks", "count", _key("racks"), drop=7),
    Figure("switches", "Switches", "switches", "count", _switches),
    Figure("step_time_s", "Step time (s)", "step s", "s", _key("step_time_s")),
    Figure("target_step_time_s", "Target step time (s)", "target s", "s", _target),
    Figure("train_days", "Training days", "train days", "days", _key("train_days"), drop=2),
    Figure("mfu", "MFU", "MFU", "fraction", _key("mfu"), drop=5),
    Figure("goodput", "Goodput", "goodput", "fraction", _key("goodput"), drop=4),
    Figure("facility_power_kw", "Facility power (kW)", "facility kW", "kw", lambda d: d["power_kw"]["facility"], drop=6),
    Figure("capex_usd", "Capex (USD)", "capex", "usd", _key("capex_usd")),
    Figure("tco_usd", "TCO (USD)", "TCO", "usd", _key("tco_usd")),
    Figure("cost_per_gpu_usd", "Capex per GPU (USD)", "capex per GPU", "usd", _key("cost_per_gpu_usd")),
    Figure("capex_usd_per_pflop_s", "Capex per PFLOP/s (USD)", "$/PFLOP/s", "usd", _capex_per_pflop_s, drop=5),
    Figure("network_load", "Network load (scale-out busy ÷ compute)", "network load", "ratio", _network_load),
)}


def figure(key: str) -> Figure:
    return FIGURES[key]


def figures_of(design: dict, keys: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """{key: value} of the named figures of one design's JSON."""
    return {key: FIGURES[key].read(design) for key in keys}
