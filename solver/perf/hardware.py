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
    # The fabric's structure (set from the fabric family by design_space.hardware_of; read by
    # perf/crossing.py). The defaults are one fabric joining every rail and no oversubscribed tier
    # above the pods, i.e. the v1 fat tree.
    rail_planes: int = 1
    """Planes no switch joins (multi-plane: rails; rail-only: rails · nodes per domain); 1 = all joined."""
    planes_by_domain_position: bool = False
    """True when a plane is a GPU position of the NVLink domain (rail-only), else a NIC position of the node."""
    above_pod_oversubscription: float = 1.0
    """Down:up of the tier above the pods (3-tier designs); 1 = non-blocking."""
    pod_domains: int = 0
    """Whole NVLink domains in one pod (0 = unknown or not whole: every class is taken to cross pods)."""

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
    )
