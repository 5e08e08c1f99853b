"""Network load (SPEC §5.2): how busy a design keeps its scale-out NICs against its compute,

    load = scale-out busy time ÷ compute time = Σ_k scale-out time of class k ÷ compute_s,

compared with the most loaded measured run of its kind. It replaces the old count of NICs per GPU:
published runs train on fewer NICs than GPUs (DeepSeek's Fire-Flyer 2: one 200G NIC per 8 PCIe A100,
docs/sources.md [F2]; BLOOM: 4 × 100G per 8 A100), so what is outside the evidence is not a NIC count but
a network kept busier, relative to compute, than any measured run kept its own.
"""
from __future__ import annotations

from dataclasses import dataclass

from .step import Performance


@dataclass(frozen=True)
class MeasuredRun:
    """The most loaded measured run of a kind of workload: its network load and where it is published."""

    load: float
    run: str
    source: str


# The most loaded measured runs. Fire-Flyer 2 (An et al., SC'24, arXiv:2408.14158 §V-B2, Fig. 9; one 200G
# CX6 per node of 8 PCIe A100): LLaMA-13B at 512 GPUs (PP 4, DP 128) and DeepSeekMoE-16B at 640 GPUs
# (PP 10, DP 64), both scaling at 76–92 % efficiency. Load 0.15: the issue #24 figure for the LLaMA-13B run
# (scale-out busy ÷ compute of that layout); the MoE run on the same cluster is taken at the same bound
# (estimate: its load is not worked out separately). Other measured runs with fewer NICs than GPUs
# (bandwidth-sensitivity: BLOOM-176B on 4 × 100G, fms-fsdp on 2 × 200G per 8 A100) are less loaded.
FIRE_FLYER_2 = "Fire-Flyer 2 (arXiv:2408.14158 §V-B2; docs/sources.md [F2])"
MEASURED: dict[str, MeasuredRun] = {
    "dense": MeasuredRun(0.15, "Fire-Flyer 2, LLaMA-13B on 512 A100, one 200G NIC per 8 GPUs", FIRE_FLYER_2),
    "moe": MeasuredRun(0.15, "Fire-Flyer 2, DeepSeekMoE-16B on 640 A100, one 200G NIC per 8 GPUs (E: the "
                             "dense run's bound)", FIRE_FLYER_2),
}


def network_load(perf: Performance) -> float:
    """load = scale-out busy time ÷ compute time (0 when nothing crosses the scale-out network)."""
    if perf.scaleout_busy_s <= 0 or perf.compute_s <= 0:
        return 0.0
    return perf.scaleout_busy_s / perf.compute_s


def load_report(perf: Performance, moe: bool) -> dict:
    """The JSON `network_load` of a design: value, the measured bound of its kind, and whether it is beyond."""
    kind = "moe" if moe else "dense"
    ref = MEASURED[kind]
    load = network_load(perf)
    return {"value": load, "scaleout_busy_s": perf.scaleout_busy_s, "compute_s": perf.compute_s, "kind": kind,
            "measured_max": ref.load, "measured_run": ref.run, "source": ref.source,
            "beyond_measured": load > ref.load * (1 + 1e-9)}


def load_flag(report: dict) -> str | None:
    """The caveat of a design whose network load is beyond the most loaded measured run of its kind."""
    if not report["beyond_measured"]:
        return None
    return (f"network load {report['value']:.2f} (scale-out busy {report['scaleout_busy_s']:.3g} s ÷ compute "
            f"{report['compute_s']:.3g} s) is beyond the most loaded measured {report['kind']} run "
            f"({report['measured_max']:.2f}, {report['measured_run']}): step time rests on unmeasured overlap")
