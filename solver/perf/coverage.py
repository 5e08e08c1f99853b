"""Where the performance model is calibrated, and where a design leaves that envelope (SPEC §10: "a design
whose feasibility rests on a regime no calibration row covers is flagged in the report").

The envelope is the set of published runs in tests/perf/calibration_rows.py that the model reproduces
(docs/model.md "Calibration"). Compute (physics v3): the design's regime (stack · GPU · precision · dominant
term, perf/uncertainty.py) must hold MIN_ROWS calibration runs; otherwise the flag says which coarser regime
the step-time interval comes from, quantitatively ("−6 %/+8 %, 33 runs (megatron·bf16; no 4+ runs in
megatron·b200·bf16·compute)"). The network: the lowest scale-out bandwidth per GPU, the largest job, no
oversubscribed leaf, and data-parallel traffic that the
schedule hid (the runs with much exposed DP traffic are the Megatron-LM weak-scaling rows at TP 4–8 without
pipelining, whose microbatch size is not published). Each check returns a sentence; an empty list means the
design sits where the model was validated.
How busy the network is against compute (fewer NICs than GPUs is no flag: published runs had fewer) is
`perf/network_load.py`, reported as a caveat of every design.
"""
from __future__ import annotations

from ..inputs.stacks import DEFAULT_STACK
from .hardware import Hardware
from .layout import Layout
from .step import Performance
from .uncertainty import design_regime

LOWEST_CALIBRATED_GBYTE_S = 6.25  # fms-fsdp A100 rows: 400 Gb/s per 8-GPU node
LARGEST_CALIBRATED_GPUS = 16_384  # Llama 3 405B (held out)
# The largest published run per non-NVLink scale-up fabric, where it is smaller: every AMD Instinct row is a ratio
# row of at most 4 nodes (tests/perf/amd_rows.py; docs/model.md "AMD compute models": MI355X/B200 Llama 3 70B FP8,
# 32 GPUs, Primus-Megatron, docs/sources.md [P12]), so a larger AMD job's scale-out collectives have no measurement.
LARGEST_BY_SCALEUP = {"infinity_fabric": (32, "MI355X Llama 3 70B FP8 on 4 nodes, Primus-Megatron, docs/sources.md "
                                              "[P12]")}
EXPOSED_DP_SHARE = 0.10  # exposed dp_rs + dp_ag above this share of the step rests on the DP windows
# Scale-up traffic off NVLink: timed with the path's measured collective bandwidth (docs/sources.md [P1][P2]), but no
# published training step on such a platform checks the per-class model there (docs/model.md "Beyond NVLink").
SCALEUP_FLAG = {
    "pcie": "scale-up over PCIe: TP/CP/PP/DP bytes inside a node are timed at the PCIe path's measured all-reduce "
            "bandwidth; no published training run on a PCIe server calibrates it",
    "infinity_fabric": "scale-up over Infinity Fabric: timed at the xGMI mesh's usable bandwidth (estimate); no "
                       "published training run with a stated layout calibrates it",
}


def uncalibrated(hw: Hardware, layout: Layout, perf: Performance, precision: str, moe: bool = False) -> list[str]:
    """Sentences naming each regime of this design that no calibration row covers, or where the model is biased."""
    reg = design_regime(hw.stack or DEFAULT_STACK, hw.gpu_id, precision, perf.compute_s + perf.bubble_s,
                        perf.step_time_s, moe)
    out = [f"compute: {flag}" for flag in reg.flags()]
    if hw.scaleup_fabric != "nvlink" and perf.nvlink_bytes > 0:
        out.append(SCALEUP_FLAG[hw.scaleup_fabric])
    if perf.scaleout_bytes > 0:
        out += _scaleout_flags(hw, perf)
    return out + _scale_flags(hw, layout)


def _scale_flags(hw: Hardware, layout: Layout) -> list[str]:
    """The job against the largest published run: any platform (Llama 3 405B, 16,384 GPUs), and the largest run on
    the platform's own scale-up fabric where that is smaller (`LARGEST_BY_SCALEUP`)."""
    if layout.gpus > LARGEST_CALIBRATED_GPUS:
        return [f"scale: {layout.gpus:,} GPUs is beyond the largest published run ({LARGEST_CALIBRATED_GPUS:,})"]
    largest = LARGEST_BY_SCALEUP.get(hw.scaleup_fabric)
    if largest is not None and layout.gpus > largest[0]:
        fabric = hw.scaleup_fabric.replace("_", " ").title()
        return [f"scale: {layout.gpus:,} GPUs is beyond the largest published run on {fabric} platforms "
                f"({largest[0]:,}: {largest[1]}); the scale-out collectives at this size are unmeasured there"]
    return []


def _scaleout_flags(hw: Hardware, perf: Performance) -> list[str]:
    out = []
    line_gbyte_s = hw.rails_per_node * hw.nic_speed_gbps / 8 / hw.gpus_per_node
    if line_gbyte_s < LOWEST_CALIBRATED_GBYTE_S:
        out.append(f"scale-out bandwidth {line_gbyte_s:.2f} GB/s per GPU is below the lowest calibrated "
                   f"({LOWEST_CALIBRATED_GBYTE_S:g} GB/s)")
    if hw.oversubscription > 1:
        out.append(f"oversubscribed leaf ({hw.oversubscription:g}:1): no published run had one; the χ rule is not "
                   "calibrated")
    dp = sum(t.exposed_s for k, t in perf.traffic.items() if k.startswith("dp"))
    if dp > EXPOSED_DP_SHARE * perf.step_time_s:
        out.append(f"exposed data-parallel traffic is {dp / perf.step_time_s:.0%} of the step: the result rests on "
                   "the DP overlap windows, which no run with a published layout validates at that share")
    return out
