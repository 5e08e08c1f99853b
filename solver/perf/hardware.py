"""What the step time needs to know about one machine: peaks, the compute model, link bandwidths
and latencies, oversubscription.

`hardware_for` reads one catalog choice (platform, NIC, rails, oversubscription) with the
scenario's efficiency overrides applied; `transfer_s` turns a traffic class's bytes and collective
steps into seconds on it.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..inputs.precisions import resolved, value_at
from ..inputs.schema import Catalog, Scenario
from .compute import ComputeParams
from .stacks import profile, tp_overlap_share, tuned_compute

GB = 1e9
US = 1e-6
# NVIDIA states HBM capacity in binary gigabytes: an "80 GB" H100 reports 81,559 MiB and a "180 GB" B200
# 183,359 MiB (docs/sources.md §conventions); the model counts memory in 10^9 bytes.
GIB_PER_GB = 2**30 / 1e9
# NCCL's tuning model, Ring / Simple protocol (docs/sources.md [N1]): a launch costs 8.4 µs, a step over
# NVLink 3.4 µs; a step over the network is the NIC's `latency_per_step_us` (14.0 µs in NCCL).
LAUNCH_LATENCY_S = 8.4 * US
NVLINK_STEP_LATENCY_S = 3.4 * US


@dataclass(frozen=True, kw_only=True)
class Hardware:
    """What the step time needs to know about the machine; efficiencies are fractions of peak.

    `compute` is the GEMM-shape compute model (SPEC §4.2); when it is None, `compute_efficiency` is one
    flat fraction of the peak for the whole step (v1, or a scenario override)."""

    gpu_id: str
    peak_tflops: float  # dense peak at the workload's precision (MFU is reported against it)
    compute_efficiency: float | None = None
    compute: ComputeParams | None = None
    hbm_usable_gb: float
    nvlink_gbyte_s: float
    nvlink_efficiency: float
    gpus_per_node: int
    rails_per_node: int
    nic_speed_gbps: float
    nic_efficiency: float
    oversubscription: float
    nic_fabric: str = "infiniband"
    nic_step_latency_s: float = 14.0 * US
    hbm_tbyte_s: float = 0.0
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
    # Mixture-of-Experts (SPEC 4.7): None = the collective efficiencies above / moe.py's default
    expert_efficiency: float | None = None  # ε: routed-expert GEMMs run at ε × the GEMM efficiency of their shape
    alltoall_nvlink_efficiency: float | None = None  # η_a2a,nvl, of nvlink_gbyte_s
    alltoall_flat_efficiency: float | None = None  # η_a2a,so of the NIC line rate, flat all-to-all
    alltoall_hierarchical_efficiency: float | None = None  # η_a2a,so, hierarchical dispatch
    # Software stack (SPEC 4.8, perf/stacks.py): its id and ψ, the share of the linear-GEMM time hiding TP comm
    stack: str = ""
    tp_overlap: float = 0.0
    # The scale-up path (catalog `scaleup_fabric`): NVLink, Infinity Fabric or PCIe; nvlink_gbyte_s and nvlink_efficiency
    # above are that path's, and its ring step costs `scaleup_step_latency_s` (NCCL: NVLink 3.4 µs, PCIe 5.7 µs)
    scaleup_fabric: str = "nvlink"
    scaleup_step_latency_s: float = NVLINK_STEP_LATENCY_S

    @property
    def nvlink_effective_gbyte_s(self) -> float:
        """bw_nvl = nvlink_gbyte_s · η_nvlink, per GPU per direction."""
        return self.nvlink_gbyte_s * self.nvlink_efficiency

    @property
    def scaleout_effective_gbyte_s(self) -> float:
        """bw_so = rails · speed_gbps / 8 / gpus_per_node · η_nic, per GPU per direction (oversubscription is
        applied per class by `oversubscription_slowdown`)."""
        return scaleout_gbyte_s_per_gpu(self.rails_per_node, self.nic_speed_gbps, self.gpus_per_node, self.nic_efficiency)

    @property
    def nics_per_gpu(self) -> float:
        return self.rails_per_node / self.gpus_per_node


def scaleout_gbyte_s_per_gpu(rails: int, nic_speed_gbps: float, gpus_per_node: int, nic_efficiency: float) -> float:
    """bw_so = rails · speed_gbps / 8 / gpus_per_node · η_nic: a node's scale-out bandwidth per GPU per direction
    (Hardware.scaleout_effective_gbyte_s; the serving fleet's machines read it too)."""
    return rails * nic_speed_gbps / 8 / gpus_per_node * nic_efficiency


def oversubscription_slowdown(chi: float, oversubscription: float) -> float:
    """1 + χ·(o − 1): how much longer scale-out traffic takes when the share χ of it crosses the leaf layer's
    uplinks, oversubscribed o:1 (SPEC §4.4). χ is the class's (traffic.py): 0 for rings laid out
    node-contiguously (a ring crosses a leaf boundary with one flow, far below the leaf's uplinks), 1 for
    pipeline sends, whose peers sit d nodes apart. Conservatively applied at any fabric size."""
    return 1.0 + chi * (oversubscription - 1.0)


def above_pod_slowdown(chi_pod: float, above_pod_oversubscription: float) -> float:
    """1 + χ_pod·(o_pod − 1): how much longer scale-out traffic takes when its groups cross the tier above
    the pods, oversubscribed o_pod:1 (χ_pod of the class: perf/crossing.py). Multiplies the leaf's
    `oversubscription_slowdown`: the two tiers are crossed in series."""
    return 1.0 + chi_pod * (above_pod_oversubscription - 1.0)


def scaleout_slowdown(chi: float, chi_pod: float, hw: Hardware) -> float:
    """(1 + χ(o − 1))·(1 + χ_pod(o_pod − 1)): the leaf's and the tier above the pods' oversubscription."""
    return oversubscription_slowdown(chi, hw.oversubscription) * above_pod_slowdown(chi_pod, hw.above_pod_oversubscription)


def collective_link_s(nvlink_bytes: float, scaleout_bytes: float, hw: Hardware, *, chi: float = 0.0,
                      chi_pod: float = 0.0) -> tuple[float, float]:
    """(NVLink s, scale-out s) of a collective's bytes: B_nvl/bw_nvl and B_so/bw_so·(1 + χ(o − 1))·(1 + χ_pod(o_pod − 1))."""
    return (nvlink_bytes / (hw.nvlink_effective_gbyte_s * GB),
            scaleout_bytes / (hw.scaleout_effective_gbyte_s * GB) * scaleout_slowdown(chi, chi_pod, hw))


def latency_s(hw: Hardware, launches: float = 0.0, nvlink_steps: float = 0.0, scaleout_steps: float = 0.0) -> float:
    """launches·α_launch + nvlink_steps·α_nvl + scaleout_steps·α_net (NCCL ring latency, docs/sources.md [N1]); α_nvl is
    the platform's scale-up step (NVLink 3.4 µs; PCIe 5.7 µs, docs/sources.md [P3])."""
    return launches * LAUNCH_LATENCY_S + nvlink_steps * hw.scaleup_step_latency_s + scaleout_steps * hw.nic_step_latency_s


def transfer_s(nvlink_bytes: float, scaleout_bytes: float, hw: Hardware, *, chi: float = 0.0, chi_pod: float = 0.0,
               launches: float = 0.0, nvlink_steps: float = 0.0, scaleout_steps: float = 0.0) -> float:
    """T_k = B_nvl/bw_nvl + B_so/bw_so·(1 + χ(o − 1))·(1 + χ_pod(o_pod − 1)) + launches·α_launch
    + nvlink_steps·α_nvl + scaleout_steps·α_net: a collective's NVLink and scale-out phases run one after the other."""
    nvl, so = collective_link_s(nvlink_bytes, scaleout_bytes, hw, chi=chi, chi_pod=chi_pod)
    return nvl + so + latency_s(hw, launches, nvlink_steps, scaleout_steps)


def alltoall_bandwidths_gbyte_s(hw: Hardware, dispatcher: str) -> tuple[float, float]:
    """(NVLink, scale-out) GB/s per GPU of the expert-parallel all-to-all (SPEC 4.7):
    nvlink_gbyte_s·η_a2a,nvl and rails·speed_gbps/8/gpus_per_node·η_a2a,so, with η_a2a,so of the dispatcher
    (`flat` or `hierarchical`); the collective efficiencies stand in for any the catalog does not give.
    Oversubscription is applied per class with its χ (`alltoall_link_s`)."""
    nvl_eff = hw.alltoall_nvlink_efficiency or hw.nvlink_efficiency
    so_eff = hw.alltoall_flat_efficiency if dispatcher == "flat" else hw.alltoall_hierarchical_efficiency
    line_gbyte_s = hw.rails_per_node * hw.nic_speed_gbps / 8 / hw.gpus_per_node
    return hw.nvlink_gbyte_s * nvl_eff, line_gbyte_s * (so_eff or hw.nic_efficiency)


def alltoall_link_s(nvlink_bytes: float, scaleout_bytes: float, hw: Hardware, dispatcher: str, *, chi: float = 0.0,
                    chi_pod: float = 0.0) -> tuple[float, float]:
    """(NVLink s, scale-out s) of an all-to-all's bytes at the all-to-all bandwidths, the scale-out part slowed by
    (1 + χ(o − 1))·(1 + χ_pod(o_pod − 1)) as a collective's."""
    nvl_bw, so_bw = alltoall_bandwidths_gbyte_s(hw, dispatcher)
    return nvlink_bytes / (nvl_bw * GB), scaleout_bytes / (so_bw * GB) * scaleout_slowdown(chi, chi_pod, hw)


def alltoall_s(nvlink_bytes: float, scaleout_bytes: float, hw: Hardware, dispatcher: str, *, chi: float = 0.0,
               chi_pod: float = 0.0) -> float:
    """T_ep = max(V_nvl / bw_nvl,a2a, V_so / bw_so,a2a): the NVLink and scale-out parts of an
    all-to-all move at the same time and the slower one sets its time (docs/sources.md [M14]: "the
    portion that's going through the network will determine the global time"; [M1] §3.2.2)."""
    return max(alltoall_link_s(nvlink_bytes, scaleout_bytes, hw, dispatcher, chi=chi, chi_pod=chi_pod))


def compute_params(gpu) -> ComputeParams | None:
    """The catalog GPU's compute model, or None when it has only a flat compute_efficiency. Its peaks and GEMM
    efficiencies are resolved here, once, for every registered precision (stand-ins filled in: inputs/precisions.py)."""
    cm = gpu.compute_model
    if cm is None:
        return None
    return ComputeParams(tflops=resolved(gpu.dense_tflops), hbm_tbyte_s=gpu.hbm_tbyte_s,
                         gemm_efficiency=resolved(cm.gemm_efficiency),
                         attention_efficiency=cm.attention_efficiency, gemm_overhead_s=cm.gemm_overhead_us * US)


def hardware_for(scenario: Scenario, catalog: Catalog, platform_id: str, nic_id: str, rails_per_node: int,
                 oversubscription: float) -> Hardware:
    """The Hardware of one catalog choice, with the scenario's efficiency overrides applied.

    hbm_usable_gb = gpu.hbm_gb · 2^30/10^9 − platform.hbm_reserve_gb (CUDA context, NCCL buffers,
    fragmentation). A scenario `efficiency.compute_efficiency` replaces the compute model by one flat
    fraction of the peak. The workload's stack tunes the compute model and sets ψ (`perf/stacks.py`).
    """
    platform = catalog.by_id("platforms")[platform_id]
    gpu = catalog.by_id("gpus")[platform.gpu]
    nic = catalog.by_id("nics")[nic_id]
    precision = scenario.workload.precision
    eff = scenario.efficiency
    stack = profile(catalog, scenario.workload.stack)
    model = None if eff.compute_efficiency else compute_params(gpu)
    model = tuned_compute(model, stack, gpu.id) if model is not None else None
    flat = eff.compute_efficiency or (None if model else value_at(gpu.compute_efficiency, precision))
    a2a = nic.alltoall_efficiency
    return Hardware(
        gpu_id=gpu.id,
        peak_tflops=gpu.peak_tflops(precision),
        compute_efficiency=flat,
        compute=model,
        hbm_usable_gb=gpu.hbm_gb * GIB_PER_GB - platform.hbm_reserve_gb,
        nvlink_gbyte_s=platform.nvlink_gbyte_s,
        nvlink_efficiency=eff.nvlink_efficiency or platform.nvlink_efficiency,
        gpus_per_node=platform.gpus_per_node,
        rails_per_node=rails_per_node,
        nic_speed_gbps=nic.speed_gbps,
        nic_efficiency=eff.nic_efficiency or nic.efficiency,
        oversubscription=oversubscription,
        nic_fabric=nic.fabric,
        nic_step_latency_s=nic.latency_per_step_us * US,
        hbm_tbyte_s=gpu.hbm_tbyte_s,
        expert_efficiency=value_at(gpu.expert_efficiency, precision) if gpu.expert_efficiency else None,
        alltoall_nvlink_efficiency=platform.alltoall_efficiency,
        alltoall_flat_efficiency=a2a.flat if a2a else None,
        alltoall_hierarchical_efficiency=a2a.hierarchical if a2a else None,
        stack=stack.id,
        tp_overlap=tp_overlap_share(stack, gpu.id, scenario.overlap.tp),
        scaleup_fabric=platform.scaleup_fabric,
        scaleup_step_latency_s=(NVLINK_STEP_LATENCY_S if platform.scaleup_latency_us is None
                                else platform.scaleup_latency_us * US),
    )
