"""What a finished sweep says: per-point summaries, switch points, increments, the report dict."""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..figures import Figure, figures_of
from ..units import SECONDS_PER_YEAR

if TYPE_CHECKING:  # annotations only: the plot process imports this module without the input schema
    from .plan import SweepPlan

SCHEMA = "fabricplan.sweep/1"
# the design's figures in each point's row (`figures.FIGURES`: capex_usd_per_pflop_s = capex / (F_model / T_step / 1e15))
ROW_FIGURES = ("architecture", "platform", "gpus", "nodes", "racks", "switches", "step_time_s", "target_step_time_s",
               "mfu", "capex_usd", "tco_usd", "capex_usd_per_pflop_s", "network_load")
# the sweep's own figure, of its rows (it needs the scenario's tokens per step and TCO years: `point_summary`)
TCO_PER_MTOK = Figure("tco_usd_per_million_tokens", "TCO per M tokens (USD)", "TCO $/Mtok", "usd_cents",
                      lambda row: row.get("tco_usd_per_million_tokens"))


def point_summary(design: dict, scenario: dict) -> dict:
    """The per-point numbers the sweep reports, including the cost per unit of work.

    tokens_per_step  = B · s
    throughput       = tokens_per_step / T_step                      (tokens/s at the achieved step time)
    capex_usd_per_pflop_s      = capex / (F_model / T_step / 1e15)   ($ per sustained model PFLOP/s)
    tco_usd_per_million_tokens = TCO / (throughput · years · 365 · 86400 / 1e6)
                                 (every hour of the TCO period spent training)
    """
    wl = scenario["workload"]
    tokens_per_step = wl["global_batch_size"] * wl["model"]["seq_len"]
    years = scenario.get("tco", {}).get("years", 5.0)
    tokens_per_s = tokens_per_step / design["step_time_s"]
    return {
        **figures_of(design, ROW_FIGURES),
        **{key: design.get(key) for key in GOODPUT_KEYS},
        "tokens_per_step": tokens_per_step,
        "model_flops_per_step": design["flops_per_step"]["model"],
        "tco_usd_per_million_tokens": design["tco_usd"] / (tokens_per_s * years * SECONDS_PER_YEAR / 1e6),
        "caveats": list(design.get("confidence", {}).get("flags", design.get("caveats", []))),
        "confidence": design.get("confidence", {}).get("statement", ""),
        "design": design,
    }



# ---------------------------------------------------------------------------------- results


GOODPUT_KEYS = ("goodput", "interruptions_per_day", "job_mtbf_h", "checkpoint_interval_min", "spare_units")


def switch_points(rows: list[dict]) -> list[dict]:
    """Consecutive solved points (in point order) whose best architecture differs."""
    solved = [r for r in rows if r.get("architecture")]
    return [{"index": b["index"], "labels": b["labels"], "from": a["architecture"], "to": b["architecture"],
             "after_index": a["index"]}
            for a, b in zip(solved, solved[1:]) if a["architecture"] != b["architecture"]]


def increments(rows: list[dict]) -> list[dict]:
    """What to add between consecutive solved points that keep the same architecture.

    added_x = x_i − x_(i−1) for GPUs, nodes, switches and racks; capex_delta_usd likewise.
    """
    out = []
    for a, b in zip(rows, rows[1:]):
        if not (a.get("architecture") and b.get("architecture")) or a["architecture"] != b["architecture"]:
            continue
        out.append({"from_index": a["index"], "to_index": b["index"], "labels": b["labels"],
                    "architecture": b["architecture"],
                    "added_gpus": b["gpus"] - a["gpus"], "added_nodes": b["nodes"] - a["nodes"],
                    "added_switches": b["switches"] - a["switches"], "added_racks": b["racks"] - a["racks"],
                    "capex_delta_usd": b["capex_usd"] - a["capex_usd"]})
    return out


def sweep_report(plan: SweepPlan, rows: list[dict]) -> dict:
    """The sweep's JSON document (`"schema": "fabricplan.sweep/1"`)."""
    counts = {s: sum(1 for r in rows if r["status"] == s) for s in ("optimal", "feasible", "time_limit", "infeasible", "error")}
    return {
        "schema": SCHEMA,
        "scenario": plan.scenario_name,
        "sweep_hash": plan.sweep_hash,
        "combine": plan.combine,
        "axes": [{"name": a.name, "kind": a.kind, "values": [a.label(v) if a.kind == "model" else v for v in a.values],
                  "rounded_to_int": a.rounded, "growth": a.growth.model_dump() if a.growth else None}
                 for a in plan.axes],
        "notes": plan.notes,
        "status_counts": counts,
        "cost_per_unit_definitions": {
            "capex_usd_per_pflop_s": "capex / (model FLOPs per step / achieved step time / 1e15)",
            "tco_usd_per_million_tokens": "TCO / (tokens per second · tco.years · 365 · 86400 / 1e6), training all the time",
        },
        "independent": ("each point is solved on its own, as if bought from scratch (earlier points' purchases are not "
                        "owned); `fabricplan plan` carries purchases forward (docs/plan.md)"),
        "points": rows,
        "switch_points": switch_points(rows),
        "increments": increments(rows) if plan.one_dimensional else [],
    }


def point_label(row: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in row["labels"].items())



def x_axis(report: dict) -> dict:
    """What a sweep's points are drawn against (the workbook's charts and the PNG plot).

    - one-dimensional growth (one axis, or zip with a growth axis): the step k = 0 … steps, named
      after the growth's `per` ("year"), since value_k = v0 · factor^k;
    - one numeric axis: the swept value, named by its field path;
    - otherwise the point's values ("1, 2", the axis named "a, b"), in point order.

    Returns {"kind": "step" | "value" | "label", "title", "values" (one per point), "numeric", "description"}.
    """
    axes, points = report["axes"], report["points"]
    one_dimensional = len(axes) == 1 or report.get("combine") == "zip"
    growing = next((a for a in axes if a.get("growth")), None)
    if one_dimensional and growing is not None:
        g = growing["growth"]
        start = growing["values"][0]
        start_text = f"{start:,}" if isinstance(start, int) else f"{start:,g}"
        return {"kind": "step", "title": g["per"], "values": [p["index"] for p in points], "numeric": True,
                "description": f"{g['per']} k: {growing['name']} = {start_text} · {g['factor']:g}^k"}
    if len(axes) == 1 and axes[0]["kind"] not in ("model", "text"):
        name = axes[0]["name"]
        return {"kind": "value", "title": name, "values": [p["values"][name] for p in points], "numeric": True,
                "description": name}
    short = ", ".join(a["name"].split(".")[-1] for a in axes)
    return {"kind": "label", "title": short, "values": [", ".join(str(v) for v in p["labels"].values()) for p in points],
            "numeric": False, "description": " × ".join(a["name"] for a in axes)}
