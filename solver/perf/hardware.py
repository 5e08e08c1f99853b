"""What the step time needs to know about one machine: peaks, efficiencies, link bandwidths.

`hardware_for` reads one catalog choice (platform, NIC, rails, oversubscription) with the
scenario's efficiency overrides applied; `transfer_s` turns bytes into seconds on it.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..inputs.schema import Catalog, Scenario

GB = 1e9


@dataclass(frozen=True, kw_only=True)
class Hardware:
    """What the step time needs to know about the machine; efficiencies are fractions of peak."""

    gpu_id: str
    peak_tflops: float
    compute_efficiency: float
    hbm_usable_gb: float
    nvlink_gbyte_s: float
    nvlink_efficiency: float
    gpus_per_node: int
    rails_per_node: int
    nic_speed_gbps: float
    nic_efficiency: float
    oversubscription: float
    # Mixture-of-Experts (SPEC 4.7): None = the collective efficiencies above / moe.py's default
    expert_efficiency: float | None = None  # ε: routed-expert GEMM FLOPs run at ε·compute_efficiency
    hbm_tbyte_s: float | None = None  # HBM bandwidth: the memory-bound work of the MoE layers runs at it
    alltoall_nvlink_efficiency: float | None = None  # η_a2a,nvl, of nvlink_gbyte_s
    alltoall_flat_efficiency: float | None = None  # η_a2a,so of the NIC line rate, flat all-to-all
    alltoall_hierarchical_efficiency: float | None = None  # η_a2a,so, hierarchical dispatch

    @property
    def nvlink_effective_gbyte_s(self) -> float:
        """bw_nvl = nvlink_gbyte_s · η_nvlink, per GPU per direction."""
        return self.nvlink_gbyte_s * self.nvlink_efficiency

    @property
    def scaleout_effective_gbyte_s(self) -> float:
        """bw_so = rails · speed_gbps / 8 / gpus_per_node · η_nic / oversubscription, per GPU.

        Collectives are assumed to cross the leaf layer, so the oversubscription always applies.
        """
        line_gbyte_s = self.rails_per_node * self.nic_speed_gbps / 8 / self.gpus_per_node
        return line_gbyte_s * self.nic_efficiency / self.oversubscription


def alltoall_bandwidths_gbyte_s(hw: Hardware, dispatcher: str) -> tuple[float, float]:
    """(NVLink, scale-out) GB/s per GPU of the expert-parallel all-to-all (SPEC 4.7):
    nvlink_gbyte_s·η_a2a,nvl and rails·speed_gbps/8/gpus_per_node·η_a2a,so/oversubscription, with
    η_a2a,so of the dispatcher (`flat` or `hierarchical`); the collective efficiencies stand in for
    any the catalog does not give."""
    nvl_eff = hw.alltoall_nvlink_efficiency or hw.nvlink_efficiency
    so_eff = hw.alltoall_flat_efficiency if dispatcher == "flat" else hw.alltoall_hierarchical_efficiency
    line_gbyte_s = hw.rails_per_node * hw.nic_speed_gbps / 8 / hw.gpus_per_node
    return hw.nvlink_gbyte_s * nvl_eff, line_gbyte_s * (so_eff or hw.nic_efficiency) / hw.oversubscription


def alltoall_s(nvlink_bytes: float, scaleout_bytes: float, hw: Hardware, dispatcher: str) -> float:
    """T_ep = max(V_nvl / bw_nvl,a2a, V_so / bw_so,a2a): the NVLink and scale-out parts of an
    all-to-all move at the same time and the slower one sets its time (docs/sources.md [M14]: "the
    portion that's going through the network will determine the global time"; [M1] §3.2.2)."""
    nvl_bw, so_bw = alltoall_bandwidths_gbyte_s(hw, dispatcher)
    return max(nvlink_bytes / (nvl_bw * GB), scaleout_bytes / (so_bw * GB) if scaleout_bytes else 0.0)


def transfer_s(nvlink_bytes: float, scaleout_bytes: float, hw: Hardware) -> float:
    """T_k = nvlink_bytes/(nvlink_gbyte_s·1e9·η_nvlink) + scaleout_bytes/(bw_so·1e9)."""
    return nvlink_bytes / (hw.nvlink_effective_gbyte_s * GB) + scaleout_bytes / (hw.scaleout_effective_gbyte_s * GB)


def hardware_for(scenario: Scenario, catalog: Catalog, platform_id: str, nic_id: str, rails_per_node: int,
                 oversubscription: float) -> Hardware:
    """The Hardware of one catalog choice, with the scenario's efficiency overrides applied.

    hbm_usable_gb = gpu.hbm_gb − platform.hbm_reserve_gb (CUDA context, NCCL buffers, fragmentation).
    """
    platform = catalog.by_id("platforms")[platform_id]
    gpu = catalog.by_id("gpus")[platform.gpu]
    nic = catalog.by_id("nics")[nic_id]
    precision = scenario.workload.precision
    eff = scenario.efficiency
    compute_eff = eff.compute_efficiency or getattr(gpu.compute_efficiency, precision)
    a2a = nic.alltoall_efficiency
    return Hardware(
        gpu_id=gpu.id,
        peak_tflops=gpu.peak_tflops(precision),
        compute_efficiency=compute_eff,
        hbm_usable_gb=gpu.hbm_gb - platform.hbm_reserve_gb,
        nvlink_gbyte_s=platform.nvlink_gbyte_s,
        nvlink_efficiency=eff.nvlink_efficiency or platform.nvlink_efficiency,
        gpus_per_node=platform.gpus_per_node,
        rails_per_node=rails_per_node,
        nic_speed_gbps=nic.speed_gbps,
        nic_efficiency=eff.nic_efficiency or nic.efficiency,
        oversubscription=oversubscription,
        expert_efficiency=getattr(gpu.expert_efficiency, precision) if gpu.expert_efficiency else None,
        hbm_tbyte_s=gpu.hbm_tbyte_s,
        alltoall_nvlink_efficiency=platform.alltoall_efficiency,
        alltoall_flat_efficiency=a2a.flat if a2a else None,
        alltoall_hierarchical_efficiency=a2a.hierarchical if a2a else None,
    )
