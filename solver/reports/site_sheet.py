"""A power-first site in a workbook (issue 43s): the site's JSON block (`SiteAnswer.to_dict`, optimize/site.py) as a
Site sheet — the same lines the terminal prints (reports/site_terminal.py): every cooling × power-profile variant's
best, the choice, provisioned MW, throughput per provisioned MW, the rule of thumb, and the flags."""
from __future__ import annotations

from openpyxl import Workbook

from .xlsx import NUMBER, USD, header_row, put, set_widths, write_title

CHOICE = (
    ("site power (MW)", "power_mw", "0.000"),
    ("peak ÷ average (headroom)", "peak_to_average", "0.00"),
    ("cooling chosen", "cooling", None),
    ("GPU", "gpu", None),
    ("power profile (null: rated power)", "power_profile", None),
    ("sustained power fraction", "sustained_power_fraction", "0.00"),
    ("nameplate facility MW", "nameplate_facility_mw", "0.000"),
    ("average facility MW", "facility_mw", "0.000"),
    ("provisioned MW (≤ site power)", "provisioned_mw", "0.000"),
    ("GPUs", "gpus", NUMBER),
    ("tokens/s (serving: output tokens/s at the peak)", "tokens_per_s", "#,##0"),
    ("tokens/s per provisioned MW", "tokens_per_s_per_provisioned_mw", "#,##0"),
    ("rule of thumb GPUs (MW ÷ all-in kW per GPU)", "rule_of_thumb_gpus", NUMBER),
)


def site_sheet(wb: Workbook, data: dict) -> None:
    """The Site sheet: the choice (figure, value), then one row per variant."""
    ws = wb.create_sheet("Site")
    write_title(ws, f"site: {data['power_mw']:g} MW, each cooling × GPU power profile solved exactly ({data['status']})")
    row = 3
    for label, key, fmt in CHOICE:
        if key in data:
            put(ws, row, 1, label)
            put(ws, row, 2, "" if data[key] is None else data[key], fmt)
            row += 1
    speed = "tpot_p90_s" if any("tpot_p90_s" in v for v in data["variants"]) else "step_time_s"
    header_row(ws, row + 1, ["variant", "status", "GPUs", speed, "avg facility kW", "nameplate facility kW", "cost USD"])
    for i, v in enumerate(data["variants"]):
        r = row + 2 + i
        for c, (key, fmt) in enumerate((("variant", None), ("status", None), ("gpus", NUMBER), (speed, "0.0000"),
                                        ("facility_kw", "#,##0.0"), ("nameplate_facility_kw", "#,##0.0"),
                                        ("cost_usd", USD))):
            put(ws, r, 1 + c, v.get(key, ""), fmt)
    row += 3 + len(data["variants"])
    for flag in data.get("flags", []):
        put(ws, row, 1, f"flag: {flag}")
        row += 1
    set_widths(ws, {"A": 46, "B": 20, "C": 12, "D": 14, "E": 18, "F": 22, "G": 16})
