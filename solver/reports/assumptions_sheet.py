"""The workbook's Assumptions sheet (docs/workbook.md): the scenario, the catalog, efficiencies and the run."""
from __future__ import annotations

import datetime as _dt
from typing import Any

from ..inputs import LoadedScenario, provenance
from ..inputs.schema import Catalog, Scenario
from ..perf import moe
from ..perf.hardware import hardware_for
from ..perf.traffic import BY_NAME, CLASS_NAMES, overlap_for
from ..version import __version__
from .summary_sheet import TCO_NAMES
from .xlsx import (
    INPUT_FILL,
    LEFT_TOP,
    PERCENT,
    TOP,
    define,
    header_row,
    print_setup,
    put,
    section_row,
    set_widths,
    wrap,
    write_title,
)


def flatten(data: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """Nested dicts/lists → (dotted.key, scalar) rows; a list of scalars stays one row, comma-joined."""
    if isinstance(data, dict):
        rows = []
        for key, value in data.items():
            rows += flatten(value, f"{prefix}.{key}" if prefix else str(key))
        return rows
    if isinstance(data, list):
        if all(not isinstance(v, (dict, list)) for v in data):
            return [(prefix, ", ".join(str(v) for v in data))]
        rows = []
        for i, value in enumerate(data):
            rows += flatten(value, f"{prefix}[{i}]")
        return rows
    if data is None or isinstance(data, (bool, int, float, str)):
        return [(prefix, data)]
    return [(prefix, str(data))]  # dates and anything else YAML may give


def efficiency_rows(scenario: Scenario, catalog: Catalog, design) -> list[tuple[str, float, str]]:
    """(what, value, source) of the efficiencies in force for one design."""
    cat, sc = catalog, scenario
    a = design.architecture
    hw = hardware_for(sc, cat, a.platform, a.nic, a.rails_per_node, a.oversubscription)
    platform = cat.by_id("platforms")[a.platform]
    gpu = cat.by_id("gpus")[platform.gpu]
    nic = cat.by_id("nics")[a.nic]
    eff = sc.efficiency
    rows = [
        (f"compute efficiency ({gpu.id}, {sc.workload.precision}; effective for this design's GEMM shapes)",
         design.perf.compute_efficiency,
         "scenario efficiency.compute_efficiency" if eff.compute_efficiency else gpu.compute_efficiency_source),
        (f"NVLink efficiency ({platform.id})", hw.nvlink_efficiency,
         "scenario efficiency.nvlink_efficiency" if eff.nvlink_efficiency else f"catalog platform {platform.id}: {platform.source}"),
        (f"NIC efficiency ({nic.id})", hw.nic_efficiency,
         "scenario efficiency.nic_efficiency" if eff.nic_efficiency else nic.efficiency_source),
    ]
    return rows + (moe_efficiency_rows(sc, design, hw, gpu, platform, nic) if sc.workload.model.moe else [])


def moe_efficiency_rows(sc: Scenario, design, hw, gpu, platform, nic) -> list[tuple[str, float, str]]:
    """The Mixture-of-Experts efficiencies in force (SPEC 4.7): expert GEMMs and the all-to-all."""
    dispatcher = sc.workload.expert_dispatch.dispatcher
    so_eff = hw.alltoall_flat_efficiency if dispatcher == "flat" else hw.alltoall_hierarchical_efficiency
    default = "no catalog value: the default in solver/perf/moe.py (docs/model.md §MoE)"
    return [
        (f"expert GEMM efficiency ({gpu.id}, {sc.workload.precision})",
         moe.expert_efficiency(hw), gpu.expert_efficiency_source or default),
        (f"all-to-all NVLink efficiency ({platform.id})", hw.alltoall_nvlink_efficiency or hw.nvlink_efficiency,
         platform.alltoall_efficiency_source or "no catalog value: the NVLink efficiency"),
        (f"all-to-all NIC efficiency ({nic.id}, {dispatcher})", so_eff or hw.nic_efficiency,
         nic.alltoall_efficiency_source or "no catalog value: the NIC efficiency"),
    ]


def overlap_rows(scenario: Scenario) -> list[tuple[str, float, str]]:
    """(what, value, source) of each traffic class's overlap fraction in force."""
    in_force = overlap_for(scenario)
    rows = []
    for name in CLASS_NAMES:
        given = getattr(scenario.overlap, name, None)
        source = (f"scenario overlap.{name}" if given is not None else
                  f"fabricplan default ({BY_NAME[name].overlap_source}; docs/model.md)")
        rows.append((f"overlap {name}", in_force[name], source))
    return rows


class Sections:
    """Writes titled sections one under another (the Assumptions sheets)."""

    def __init__(self, ws, row: int = 3, wrap_cols: dict | None = None):
        self.ws, self.row = ws, row
        self.wrap_cols = wrap_cols or {}

    def section(self, title: str, headers: list, right: tuple = ()) -> None:
        section_row(self.ws, self.row, title)
        header_row(self.ws, self.row + 1, headers, right=right)
        self.row += 2

    def line(self, *values, formats: tuple = (), left: bool = False) -> int:
        """One row; `left` aligns numbers left too (key / value lists read better that way)."""
        for i, value in enumerate(values):
            cell = put(self.ws, self.row, 1 + i, value, formats[i] if i < len(formats) else None)
            cell.alignment = LEFT_TOP if left else TOP
            if 1 + i in self.wrap_cols and isinstance(value, str):
                wrap(self.ws, self.row, 1 + i, self.wrap_cols[1 + i])
        self.row += 1
        return self.row - 1

    def gap(self) -> None:
        self.row += 1


def scenario_lines(out: Sections, scenario: LoadedScenario, title: str = "Scenario as given") -> None:
    out.section(title, ["Key", "Value"])
    for key, value in flatten(scenario.doc.data or {}):
        out.line(key, value, left=True)
    out.gap()


def confidence_lines(out: Sections, designs) -> None:
    """Each design's confidence statement and flags (solver/confidence.py), in the terminal's and the JSON's words;
    the Summary carries the same flags in "Caveats before ordering" and the p10/p90 in its step-time rows."""
    from ..confidence import confidence

    out.section("Confidence per design (step time)", ["Design", "Item", "", "Text"])
    for d in designs:
        conf = confidence(d)
        out.line(f"#{d.rank}", "statement", "", conf.statement(), left=True)
        for flag in conf.flags:
            out.line(f"#{d.rank}", "flag", "", flag, left=True)
    out.gap()


def catalog_lines(out: Sections, catalog: Catalog) -> None:
    out.section("Catalog files", ["Path", "sha256"])
    for path, digest in provenance(catalog).files:
        out.line(str(path), digest, left=True)
    out.gap()


def write_assumptions_sheet(wb, result, scenario: LoadedScenario, catalog: Catalog) -> None:
    ws = wb.create_sheet("Assumptions")
    write_title(ws, "Assumptions and provenance")
    out = Sections(ws, wrap_cols={2: 30, 4: 60})
    _tco_inputs(wb, out, result, scenario.scenario)
    scenario_lines(out, scenario)
    out.section("Efficiencies and overlaps in force", ["Design", "Parameter", "Value", "Source"], right=(3,))
    for d in result.designs:
        for what, value, source in efficiency_rows(scenario.scenario, catalog, d):
            out.line(f"#{d.rank}", what, value, source, formats=(None, None, PERCENT))
    for what, value, source in overlap_rows(scenario.scenario):
        out.line("all", what, value, source, formats=(None, None, PERCENT))
    out.gap()
    confidence_lines(out, result.designs)
    catalog_lines(out, catalog)
    out.section("Solver run", ["Item", "Value"])
    for label, value in _run_rows(result):
        fmt = "0.000" if isinstance(value, float) and label != "relative gap" else None
        out.line(label, "none" if value is None else value, formats=(None, fmt), left=True)
    ws.freeze_panes = "A3"
    set_widths(ws, {"A": 34, "B": 30, "C": 10, "D": 60})
    print_setup(ws)


def _tco_inputs(wb, out: Sections, result, sc: Scenario) -> None:
    out.section("TCO inputs (editable: the Summary's energy and TCO follow)", ["Input", "Value", "Defined name"],
                right=(2,))
    first = result.designs[0].cost if result.designs else None
    tco_values = (("years", first.tco_years if first else sc.tco.years, "0.0#"),
                  ("PUE", first.pue if first else (sc.tco.pue or 1.0), "0.00"),
                  ("electricity (USD per kWh)", first.usd_per_kwh if first else (sc.tco.usd_per_kwh or 0.0), "0.0000"))
    for name, (label, value, fmt) in zip(TCO_NAMES, tco_values):
        row = out.line(label, value, name, formats=(None, fmt))
        out.ws.cell(row=row, column=2).fill = INPUT_FILL
        define(wb, name, "Assumptions", f"B{row}")
    out.gap()


def _run_rows(result) -> list[tuple[str, Any]]:
    info = dict(result.solver or {})
    rows = [
        ("status", result.status),
        ("relative gap", result.gap),
        ("solve time (s)", result.solve_time_s),
        ("fabricplan version", __version__),
        ("solver", info.get("name", "HiGHS")),
        ("HiGHS version", info.get("version", highs_version())),
        ("interface", info.get("interface", "")),
        ("MIP relative gap requested", info.get("mip_rel_gap")),
        ("time limit (s)", info.get("time_limit_s")),
        ("written on", _dt.date.today().isoformat()),
    ]
    return rows + [("warning", w) for w in result.warnings]


def highs_version() -> str:
    try:
        from ..optimize.highs import HighsAdapter
        return HighsAdapter.version()
    except Exception:  # noqa: BLE001 - provenance only; the workbook must not fail on it
        return "unknown"
