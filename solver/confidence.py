"""One confidence statement per design (SPEC §4.8 v4, issue 41 item 4): the step time's p10–p90 interval, the
calibration regime and the published runs behind it, the buyer's calibrate overlay when one covers the design, and
every flag a buyer must read before ordering — the same words in the terminal, the JSON (`confidence`), the
Summary sheet, the compare outputs, the sweep and the plan.

`confidence(design)` reads a design's regime (perf/uncertainty.py), its coverage flags (perf/coverage.py), its
caveats (orderability, topology: whatever other modules append to `design.caveats` flows in here) and its overlay
note (`overlay_note`, computed once where the catalog is known).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .inputs.stacks import ANY_GPU
from .perf.uncertainty import Regime

OVERLAY_MARK = "fabricplan calibrate on "  # calibration/overlay.py writes it into every fitted entry's source


@dataclass(frozen=True)
class Confidence:
    """A design's step time with its interval, regime, runs, overlay and flags."""

    step_time_s: float
    interval_s: tuple[float, float]
    regime: Regime
    overlay: str  # "" without a buyer's overlay covering the design
    flags: tuple[str, ...]

    def statement(self) -> str:
        """"step time 2.45 s, p10–p90 2.21–2.82 s (-10%/+17%, 22 runs, 4 sources (dense·megatron·…))"."""
        lo, hi = self.interval_s
        text = f"step time {_s(self.step_time_s)} s, p10–p90 {_s(lo)}–{_s(hi)} s ({self.regime.text()})"
        return text + (f"; {self.overlay}" if self.overlay else "")

    def flags_text(self) -> str:
        return "; ".join(self.flags) if self.flags else "none"

    def to_dict(self) -> dict[str, Any]:
        reg = self.regime
        return {"statement": self.statement(), "step_time_interval_s": list(self.interval_s),
                "regime": reg.asked, "regime_used": reg.used, "borrowed": reg.borrowed or None, "runs": reg.rows,
                "sources": reg.sources, "overlay": self.overlay or None, "flags": list(self.flags)}


def _s(seconds: float) -> str:
    """Seconds as the terminal prints step times: 2 decimals below 100 s, 1 below 1,000, else whole seconds."""
    return f"{seconds:.2f}" if seconds < 100 else (f"{seconds:.1f}" if seconds < 1000 else f"{seconds:,.0f}")


def confidence(design: Any) -> Confidence:
    """The statement of one evaluated design (results.Design: regime, step_time_interval_s, uncalibrated, caveats,
    calibration_overlay)."""
    flags = tuple(dict.fromkeys([*design.uncalibrated, *design.caveats]))  # each once, in order
    return Confidence(design.perf.step_time_s, tuple(design.step_time_interval_s), design.regime,
                      getattr(design, "calibration_overlay", ""), flags)


def _overlay_entries(catalog: Any) -> list[tuple[str, str, str]]:
    """(file name, GPU id or "", stack id or "") of every catalog entry a calibrate overlay fitted."""
    from .inputs.catalog import provenance

    origin = provenance(catalog).origin
    out = []
    for gpu in catalog.gpus:
        if OVERLAY_MARK in (getattr(gpu, "compute_efficiency_source", "") or ""):
            doc = origin.get(("gpus", gpu.id))
            out.append((Path(doc[0].path).name if doc else "overlay", gpu.id, ""))
    for stack in catalog.stacks:
        doc = origin.get(("stacks", stack.id))
        for entry in stack.gpus:
            if OVERLAY_MARK in (entry.source or ""):
                out += [(Path(doc[0].path).name if doc else "overlay", g, stack.id) for g in entry.gpus]
    return out


def overlay_note(catalog: Any, gpu: str, stack: str) -> str:
    """What a buyer's calibrate overlay says about a design on `gpu` with `stack`: which overlay, what it covers,
    and whether this design is inside it ("" without an overlay)."""
    entries = _overlay_entries(catalog)
    if not entries:
        return ""
    files = sorted({f for f, _, _ in entries})
    gpus = sorted({g for _, g, _ in entries if g})
    stacks = sorted({s for _, _, s in entries if s})
    scope = f"GPUs {', '.join(gpus) or 'none'}; stacks {', '.join(stacks) or 'every stack (GPU-level fit)'}"
    covered = any(g in (gpu, ANY_GPU) and s in ("", stack) for _, g, s in entries)
    where = "covers this design" if covered else f"does not cover {gpu} · {stack}: the shipped calibration applies"
    return f"buyer's overlay {', '.join(files)} ({scope}) {where}; the interval is the shipped runs'"
