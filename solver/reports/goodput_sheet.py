"""The goodput rows of the workbook (SPEC §6.2): Summary rows and a Performance-sheet table per design."""
from __future__ import annotations

import math

from .xlsx import BOLD, NUMBER, NUMBER_2, PERCENT, header_row, put

SUMMARY_GOODPUT_KEYS = ("goodput", "interruptions_per_day", "job_mtbf_h", "checkpoint_interval_min", "spare_units",
                        "goodput_assumptions")


def _finite(value: float):
    return value if math.isfinite(value) else "∞"


def summary_goodput_rows(design) -> list:
    """(key, label, value, number format) of the Summary's goodput rows; "—" without failure data."""
    r = design.reliability
    if r is None:
        return [("goodput", "Goodput (target.goodput)", design.goodput, PERCENT)] + [
            (key, label, "—", None) for key, label in zip(SUMMARY_GOODPUT_KEYS[1:], _LABELS[1:])]
    return [
        ("goodput", _LABELS[0], design.goodput, PERCENT),
        ("interruptions_per_day", _LABELS[1], r.interruptions_per_day, NUMBER_2),
        ("job_mtbf_h", _LABELS[2], _finite(r.job_mtbf_h), NUMBER_2),
        ("checkpoint_interval_min", _LABELS[3], _finite(r.checkpoint_interval_min), NUMBER_2),
        ("spare_units", _LABELS[4], r.spare_units, NUMBER),
        ("goodput_assumptions", _LABELS[5], r.assumptions, None),
    ]


_LABELS = ("Goodput (useful fraction of time)", "Job interruptions per day", "Job MTBF (h)",
           "Checkpoint interval (min, Young/Daly)", "Hot-spare units (BOM spares)", "Goodput rests on")


def write_goodput_table(ws, row: int, designs) -> None:
    """Per design: goodput, interruptions per day, job MTBF, checkpoint write time and interval, restart, spare
    units and the idle GPUs inside its domains, effective step time (the JSON has the interruptions by part kind)."""
    put(ws, row - 1, 1, "Goodput: failures, checkpoints and spares (docs/model.md \"Goodput\")").font = BOLD
    labels = ["Design", "Goodput", "Interruptions per day", "Job MTBF (h)", "Checkpoint write (s)",
              "Checkpoint interval (min)", "Restart (min)", "Spare units", "Idle GPUs in domains",
              "Effective step (s)"]
    header_row(ws, row, labels, right=range(2, len(labels) + 1), height=48)
    for i, d in enumerate(designs):
        r, rel = row + 1 + i, d.reliability
        put(ws, r, 1, f"#{d.rank}")
        put(ws, r, 2, d.goodput, PERCENT)
        if rel is None:
            put(ws, r, 3, "no failure data in the catalog")
            continue
        values = (rel.interruptions_per_day, _finite(rel.job_mtbf_h), rel.checkpoint_write_s,
                  _finite(rel.checkpoint_interval_min), rel.restart_min, rel.spare_units, rel.spare_gpus_in_domains,
                  d.perf.step_time_s / d.goodput if d.goodput > 0 else "∞")
        for j, v in enumerate(values):
            put(ws, r, 3 + j, v, NUMBER if j in (5, 6) else NUMBER_2)
