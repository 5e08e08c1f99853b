"""Issue 46: the serving replica never assumes NVLink. A decode step's TP all-reduce inside a PCIe server is timed
on the PCIe path (the platform's nvlink_gbyte_s × nvlink_efficiency, NCCL ring steps of scaleup_latency_us), inside
an Infinity Fabric node at its measured efficiency with one-shot kernels, and only on NVLink at the stack's fitted
η_ar with the one-shot α_up. Every expected number below is worked by hand from the catalog's stated figures."""
from __future__ import annotations

import pytest
from serving_shapes import catalog, context

from solver.perf.serving import ReplicaLayout, TrafficShape, replica_performance
from solver.perf.serving_step import hardware_of, tp_allreduce

# Llama 3.1 8B (h = 4,096, 32 layers) decoding 32 sequences at tp 4: 2 all-reduces per layer → 64 per step, each
# 2(tp−1)/tp · n · h · 2 B = 1.5 · 32 · 4,096 · 2 = 393,216 B per GPU.
BYTES = 393_216
OPS = 64


def test_decode_allreduce_over_pcie_by_hand():
    # pcie-l40s-8: PCIe Gen4 x16 32 GB/s per direction × 0.61 = 19.52 GB/s; ring α = 2(tp−1) · 5.7 µs = 34.2 µs.
    # per all-reduce 34.2 µs + 393,216 / 19.52e9 = 34.2 + 20.14426 µs = 54.34426 µs; × 64 = 3.478033 ms.
    hw = hardware_of(context("llama3.1-8b", "pcie-l40s-8"))
    t = tp_allreduce(hw, 4, 32, 4096, OPS)
    assert t.seconds == pytest.approx(3.478033e-3, rel=1e-6)
    assert t.scaleout_gbyte == 0.0  # inside the server: nothing on the NICs


def test_decode_allreduce_over_nvlink_by_hand():
    # hgx-h100: NVLink 450 GB/s × trtllm's fitted η_ar 0.729 = 328.05 GB/s; one-shot α_up 8 µs.
    # per all-reduce 8 + 393,216 / 328.05e9 = 8 + 1.198647 µs; × 64 = 0.5887134 ms: PCIe is 5.91 × slower.
    t = tp_allreduce(hardware_of(context("llama3.1-8b", "hgx-h100")), 4, 32, 4096, OPS)
    assert t.seconds == pytest.approx(5.887134e-4, rel=1e-6)


def test_decode_allreduce_over_infinity_fabric_by_hand():
    # amd-mi300x-8: 448 GB/s × 0.67 (the platform's measured fraction, not NVLink's η_ar) = 300.16 GB/s, α_up 8 µs:
    # (8 + 393,216 / 300.16e9 = 8 + 1.310021 µs) × 64 = 0.5958413 ms.
    t = tp_allreduce(hardware_of(context("llama3.1-8b", "amd-mi300x-8", stack="vllm")), 4, 32, 4096, OPS)
    assert t.seconds == pytest.approx(5.958413e-4, rel=1e-6)


def test_replica_tpot_carries_the_pcie_allreduce():
    # The same L40S replica with its path replaced by an NVLink one (450 GB/s, η_ar 0.729, α_up 8 µs): the decode
    # step differs by exactly the two all-reduce times, 3.478033 − 0.5887134 = 2.889320 ms (nothing else moves).
    cat = catalog()
    pcie = cat.by_id("platforms")["pcie-l40s-8"]
    nvl = pcie.model_copy(update={"scaleup_fabric": "nvlink", "nvlink_gbyte_s": 450.0, "scaleup_latency_us": None})
    layout, traffic = ReplicaLayout(4, 1, 1, 32, "decode"), TrafficShape(1000, 250)
    slow = replica_performance(context("llama3.1-8b", "pcie-l40s-8"), layout, traffic)
    ctx_fast = context("llama3.1-8b", "pcie-l40s-8")
    fast = replica_performance(type(ctx_fast)(**{**ctx_fast.__dict__, "platform": nvl}), layout, traffic)
    assert slow.tpot_s - fast.tpot_s == pytest.approx(2.889320e-3, rel=1e-5)
