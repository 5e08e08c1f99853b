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


# The most loaded measured runs of each kind: the largest load, as this model computes it on the run's
# published layout and network, among the published runs the model is checked against (dense:
# tests/perf/calibration_rows.py; MoE: tests/data/moe-calibration.csv and moe-heldout.csv);
# tests/perf/test_network_load.py recomputes both. Fire-Flyer 2 (one 200G NIC per 8 A100, [F2]/[O5]), the
# run the issue names, is far below them: its load is low because its A100s are slow, not its network fast.
MEASURED: dict[str, MeasuredRun] = {
    "dense": MeasuredRun(0.68, "fms-fsdp, Llama-2 13B on 96 H100, FSDP, 800 Gb/s per 8 GPUs",
                         "docs/sources.md [D6]; load 0.681 rounded down (issue 41d refit; physics v3 0.676, issue 41n 0.670)"),
    "moe": MeasuredRun(1.17, "GPT-OSS-120B on 64 H100 (NeMo AutoModel, FSDP2 + EP), one 400G NIC per GPU",
                       "docs/sources.md [M22]; load 1.174 rounded down (issue 41d refit; 41n 1.165, 41p 1.160)"),
}
FEW_NIC_RUNS = ("Fire-Flyer 2: one 200G NIC per 8 PCIe A100 (arXiv:2408.14158, docs/sources.md [F2][O5]); BLOOM-176B: "
                "4 × 100G per 8 A100; fms-fsdp: 400 Gb/s per 8 A100 [D6]")


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
    value = report["value"]  # as many digits as it takes to differ from the bound ("0.684 … beyond … 0.68")
    shown = f"{value:.2f}" if f"{value:.2f}" != f"{report['measured_max']:.2f}" else f"{value:.3f}"
    return (f"network load {shown} (scale-out busy {report['scaleout_busy_s']:.3g} s ÷ compute "
            f"{report['compute_s']:.3g} s) is beyond the most loaded measured {report['kind']} run "
            f"({report['measured_max']:.2f}, {report['measured_run']}): step time rests on unmeasured overlap")
