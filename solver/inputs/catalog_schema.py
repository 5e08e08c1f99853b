"""Typed catalog inputs (SPEC §3): GPUs and their compute models, platforms, NICs, switches, links, racks,
the facility and the `Catalog` that holds them; the field types and registries the scenario models share.

Re-exported by `schema.py` (import from there). Every model forbids unknown keys and carries its unit in each
field name; a field's docstring is its description (`Strict`, schema_base.py).
"""
from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, PrivateAttr, field_validator, model_validator

from .lifecycle_schema import Lifecycle
from .nic_configs import NicConfiguration, SiteLine
from .precisions import PRECISIONS, PrecisionName, missing, value_at
from .reliability import CatalogReliability
from .rentals import Rental
from .schema_base import Date, Identifier, Strict
from .site_schema import PowerProfile
from .stacks import Stack

Fraction = Annotated[float, Field(gt=0, le=1)]
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]

TIERS = ("node_leaf", "leaf_spine", "spine_core")
FABRIC_FAMILIES = ("fat-tree", "multi-plane", "rail-only")  # the registry of solver/fabrics (tested equal)
FabricFamilyName = Literal["fat-tree", "multi-plane", "rail-only"]


class Priced(Strict):
    """Anything with a price carries where the price comes from."""

    unit_price_usd: Annotated[float, Field(ge=0, le=1e12)]
    """Price of one unit in US dollars (the unit the entry is bought in)."""
    price_source: str = Field(min_length=1)
    """Where the price comes from: a document a reader can open (docs/sources.md [n]) or a quote."""
    price_date: Date
    """Date of the price: YYYY, YYYY-MM or YYYY-MM-DD."""
    price_is_estimate: bool = False
    """True when the price is an estimate (analyst figure, conversion or own arithmetic)."""
    manufacturer_part_number: Annotated[str, Field(min_length=1, max_length=80)] | None = None
    """The manufacturer's orderable part number (OPN) as its source lists it (bill-of-materials CSV); null = not known."""
    part_number_source: Annotated[str, Field(min_length=1)] | None = None
    """Where the part number comes from (docs/sources.md [n]); give it with manufacturer_part_number."""
    lead_time_weeks: Annotated[float, Field(ge=0, le=520)] | None = None
    """Weeks from order to delivery, as quoted (shown in the BOM and the plan); null = not known."""


def _bf16_and_fp8(values: dict) -> dict:
    """A precision map of the catalog gives at least bf16 and fp8 (the two training precisions)."""
    lacking = missing(values)
    if lacking:
        raise ValueError(lacking)
    return values


ComputeEfficiency = Annotated[dict[PrecisionName, Fraction], AfterValidator(_bf16_and_fp8)]
"""Fractions by precision name (solver/inputs/precisions.py), e.g. `{bf16: 0.82, fp8: 0.22}`: bf16 and fp8 given."""
PeakTflops = Annotated[dict[PrecisionName, Annotated[float, Field(gt=0, le=1e6)]], AfterValidator(_bf16_and_fp8)]
"""Dense tensor peaks by precision name, TFLOPS: bf16 and fp8 given."""


class ComputeModel(Strict):
    """Parameters of the GEMM-shape compute model of one GPU (SPEC §4.2; docs/model.md "Compute").

    The step's math is timed per matmul family from its per-GPU GEMM dimensions: a roofline at the
    dense peak × `gemm_efficiency[precision]` and at `hbm_tbyte_s`, plus `gemm_overhead_us` per GEMM (the
    saturating, size-dependent part); the attention core at the BF16 peak × `attention_efficiency`.
    """

    gemm_efficiency: ComputeEfficiency
    """Fraction of the dense peak of a precision a large GEMM at that precision reaches, by precision name: bf16 and
    fp8 given (fitted, docs/model.md; fp8 = the BF16 value where the GPU has no FP8 cores); mxfp8 left out = fp8's,
    fp4 left out = bf16's (solver/inputs/precisions.py)."""
    attention_efficiency: Fraction
    """Fraction of the dense BF16 peak FlashAttention reaches on the FLOPs it executes (fitted)."""
    gemm_overhead_us: Annotated[float, Field(ge=0, le=1e4)] = 0.0
    """Fixed time per GEMM (launch, prologue, wave tail), µs: small GEMMs run further from the peak."""


class AlltoallEfficiency(Strict):
    """Effective fraction of a scale-out NIC's line rate that the expert-parallel all-to-all reaches."""

    flat: Fraction
    """NCCL all-to-all: every token copy crosses on its own (Megatron `alltoall` dispatcher)."""
    hierarchical: Fraction
    """One copy per destination NVLink domain, fanned out over NVLink there (DeepEP, HybridEP)."""


class Gpu(Strict):
    id: Identifier
    name: str
    vendor: str
    dense_tflops: PeakTflops
    """Dense tensor peak by precision name, TFLOPS, e.g. `{bf16: 989, fp8: 1979}`: bf16 and fp8 given (a GPU without
    FP8 cores repeats its BF16 peak); fp4 = the FP4 (NVFP4/MXFP4) tensor cores, left out = none (4-bit weights run
    weight-only, W4A16, at the BF16 peak); mxfp8 left out = the FP8 peak (solver/inputs/precisions.py)."""
    hbm_gb: Annotated[float, Field(gt=0, le=1e5)]
    """HBM capacity as NVIDIA states it (the shipping figure): binary gigabytes, so an "80 GB" H100 holds
    81,559 MiB = 85.5·10^9 bytes; the memory model converts it (docs/sources.md §conventions)."""
    hbm_tbyte_s: Annotated[float, Field(gt=0, le=1e4)]
    """HBM bandwidth, TB/s."""
    tdp_w: Annotated[float, Field(gt=0, le=1e5)]
    """Thermal design power, W."""
    compute_efficiency: ComputeEfficiency | None = None
    """One flat fraction of the dense peak for the whole step, per precision (v1 model); used only when
    the GPU has no `compute_model`."""
    compute_model: ComputeModel | None = None
    """The GEMM-shape compute model's parameters (SPEC §4.2); preferred over `compute_efficiency`."""
    compute_efficiency_source: str = Field(min_length=1)
    """Where the compute efficiency (flat or compute model) comes from."""
    expert_efficiency: ComputeEfficiency | None = None
    """Mixture-of-Experts: the speed of routed-expert (grouped GEMM) FLOPs relative to a dense GEMM of the same
    shape (compute_model, or the flat compute_efficiency), per precision (fitted on MoE runs, docs/model.md
    §MoE); null = solver/perf/moe.py's default."""
    expert_efficiency_source: str | None = None
    source: str = Field(min_length=1)

    @model_validator(mode="after")
    def _some_efficiency(self) -> Gpu:
        if self.compute_efficiency is None and self.compute_model is None:
            raise ValueError("give compute_model (preferred) or compute_efficiency")
        return self

    def peak_tflops(self, precision: str) -> float:
        """Dense tensor peak at a precision name (`dense_tflops`, the stand-in precision where it is not given:
        mxfp8 → fp8, fp4 → bf16, W4A16; solver/inputs/precisions.py)."""
        peak = value_at(self.dense_tflops, precision)
        if peak is None:
            raise KeyError(f"{self.id} has no dense peak at precision '{precision}' (known: {', '.join(PRECISIONS)})")
        return peak


class Platform(Priced):
    id: Identifier
    name: str
    gpu: Identifier
    """Id of the GPU the platform carries."""
    gpus_per_domain: Annotated[int, Field(ge=1, le=4096)]
    """GPUs per NVLink domain (8 for HGX/DGX, 72 for NVL72)."""
    gpus_per_node: Annotated[int, Field(ge=1, le=64)]
    """GPUs per node (one OS image): 8 for an HGX server, 4 for an NVL72 compute tray."""
    nodes_per_domain: Annotated[int, Field(ge=1, le=1024)]
    """Nodes per NVLink domain; gpus_per_node × nodes_per_domain = gpus_per_domain."""
    nvlink_gbyte_s: Annotated[float, Field(gt=0, le=1e5)]
    """NVLink bandwidth per GPU, per direction, GB/s."""
    nvlink_efficiency: Fraction
    """Effective fraction of nvlink_gbyte_s that collectives reach (measured)."""
    rails_per_node_options: list[Annotated[int, Field(ge=1, le=64)]] = Field(min_length=1)
    """Allowed scale-out NIC (rail) counts per node."""
    compatible_nics: list[Identifier] = Field(min_length=1)
    """Ids of the NICs the platform can carry."""
    unit: Literal["node", "domain"]
    """How it is bought and priced: per `node`, or per whole `domain` (an NVL72 rack)."""
    unit_power_kw: Annotated[float, Field(gt=0, le=1e4)]
    """Maximum power of one unit, kW."""
    unit_ru: Annotated[float, Field(gt=0, le=100)]
    """Rack units of one unit."""
    unit_is_rack: bool = False
    """True when one unit ships as its own rack (NVL72): no compute rack is bought for it."""
    includes_scaleout_nics: bool
    """True when the unit price includes its scale-out NICs."""
    hbm_reserve_gb: Annotated[float, Field(ge=0, le=1e4)] = 4.0
    """HBM kept free for the CUDA context, NCCL buffers and fragmentation, GB (estimate, issue 41: an 80 GB H100
    shows PyTorch 79.11 GiB of its 80 GiB, and 1.5–2 GiB of that is outside PyTorch's allocator; docs/model.md)."""
    alltoall_efficiency: Fraction | None = None
    """Effective fraction of nvlink_gbyte_s that the expert-parallel all-to-all reaches inside the NVLink
    domain (measured dispatch bandwidth, docs/sources.md [M15][M16]); null = nvlink_efficiency."""
    alltoall_efficiency_source: str | None = None
    scaleup_fabric: Literal["nvlink", "infinity_fabric", "pcie"] = "nvlink"
    """The path that joins the GPUs of one domain: `nvlink` (NVSwitch or NVLink bridges), `infinity_fabric` (AMD's
    xGMI mesh) or `pcie` (GPU to GPU through PCIe switches or the CPU). `nvlink_gbyte_s` and `nvlink_efficiency`
    are that path's per-GPU per-direction bandwidth and its measured fraction, whatever the fabric."""
    scaleup_latency_us: Annotated[float, Field(ge=0, le=1e4)] | None = None
    """α per ring step over the scale-up path, µs; null = NCCL's NVLink step (3.4 µs, docs/sources.md [N1])."""
    scaleup_source: str | None = None
    """Where the scale-up bandwidth, efficiency and latency come from (PCIe and Infinity Fabric platforms)."""
    sustained_power_fraction: Fraction | None = None
    """Average draw of one unit in sustained training ÷ unit_power_kw (a site's provisioned MW and power cap use
    it; racks and PDUs keep unit_power_kw); null = 1, provision at unit_power_kw (docs/site.md)."""
    sustained_power_source: str | None = None
    source: str = Field(min_length=1)

    def domain_sizes(self, pinned: int | None = None) -> list[int]:
        """G_u candidates, largest first: the whole domain and the largest power of two in it (72 → 64
        on NVL72, so power-of-two batches split evenly; the other GPUs are bought and idle)."""
        if pinned is not None:
            return [pinned]
        pow2 = 1 << (self.gpus_per_domain.bit_length() - 1)
        return sorted({self.gpus_per_domain, pow2}, reverse=True)

    @model_validator(mode="after")
    def _domain_shape(self) -> Platform:
        if self.gpus_per_node * self.nodes_per_domain != self.gpus_per_domain:
            raise ValueError(
                f"gpus_per_node × nodes_per_domain = {self.gpus_per_node} × {self.nodes_per_domain}"
                f" must equal gpus_per_domain = {self.gpus_per_domain} (a scale-up domain is whole nodes: a domain"
                " smaller than a node, e.g. NVLink-bridged pairs inside an 8-GPU PCIe server, is not modelled)"
            )
        return self


class Nic(Priced):
    id: Identifier
    name: str
    speed_gbps: Annotated[float, Field(gt=0, le=1e5)]
    """Line rate per port, Gb/s per direction."""
    fabric: Literal["infiniband", "ethernet"]
    """`infiniband` or `ethernet` (RoCE); a NIC is served only by a switch of the same fabric."""
    generation: Identifier
    """Link generation (HDR, NDR, XDR, 400gbe, …): picks the matching cables and optics."""
    power_w: Annotated[float, Field(ge=0, le=1e4)]
    """Power per NIC, W."""
    efficiency: Fraction
    """Effective fraction of the line rate NCCL collectives reach, for this NIC on its fabric (measured; docs/model.md)."""
    efficiency_source: str = Field(min_length=1)
    latency_per_step_us: Annotated[float, Field(ge=0, le=1e4)] = 14.0
    """α per inter-node step of a ring collective, µs (NCCL's network ring latency; docs/sources.md [N1])."""
    alltoall_efficiency: AlltoallEfficiency | None = None
    """Expert-parallel all-to-all over this NIC: effective fraction of the line rate per dispatcher
    (fitted on MoE runs, docs/model.md §MoE); null = efficiency for both."""
    alltoall_efficiency_source: str | None = None
    source: str = Field(min_length=1)


class Switch(Priced):
    id: Identifier
    name: str
    fabric: Literal["infiniband", "ethernet"]
    generation: Identifier
    radix: Annotated[int, Field(ge=2, le=4096)]
    """Ports at port_speed_gbps."""
    port_speed_gbps: Annotated[float, Field(gt=0, le=1e5)]
    """Speed of one port, Gb/s."""
    power_w: Annotated[float, Field(ge=0, le=1e6)]
    """Power of the switch without optics, W."""
    ru: Annotated[float, Field(gt=0, le=100)]
    """Rack units."""
    breakout: list[Annotated[int, Field(ge=2, le=16)]] = []
    """Documented port splits: 2 = each port usable as 2 ports at half the speed (radix × 2), e.g. an
    800G port as 2 × 400G. Empty = ports are used at port_speed_gbps only."""
    source: str = Field(min_length=1)

    def serves(self, nic: Nic) -> bool:
        """A switch serves a NIC of the same fabric whose speed is its port speed, natively or split by
        a listed breakout (the sizing of that port mode is fabrics/breakout.py's)."""
        return self.fabric == nic.fabric and any(
            math.isclose(self.port_speed_gbps / split, nic.speed_gbps) for split in [1, *self.breakout])

    @field_validator("breakout")
    @classmethod
    def _distinct_splits(cls, value: list[int]) -> list[int]:
        if len(set(value)) != len(value):
            raise ValueError(f"breakout lists a split twice: {value}")
        return value


class Link(Strict):
    """One way to build a link of a tier: a cable and the modules at its two ends.

    A twin-port module serves two links (`*_links_per_module: 2`); a passive copper cable has no
    modules (module prices 0). `max_reach_m` decides whether the option can span the tier's
    distance (facility `link_distance_m`).
    """

    id: Identifier
    description: str
    generation: Identifier
    tier: Literal["node_leaf", "leaf_spine", "spine_core"]
    """The fabric tier the option builds: node_leaf, leaf_spine or spine_core."""
    medium: Literal["copper", "optical"]
    max_reach_m: Annotated[float, Field(gt=0, le=1e5)]
    """Longest span the option reaches, m (compared with the facility's link_distance_m)."""
    cable_usd: Annotated[float, Field(ge=0, le=1e9)]
    """Price of the cable of one link, USD."""
    switch_end_module_usd: Annotated[float, Field(ge=0, le=1e9)] = 0.0
    switch_end_module_w: Annotated[float, Field(ge=0, le=1e4)] = 0.0
    switch_end_links_per_module: Annotated[int, Field(ge=1, le=8)] = 1
    far_end_module_usd: Annotated[float, Field(ge=0, le=1e9)] = 0.0
    far_end_module_w: Annotated[float, Field(ge=0, le=1e4)] = 0.0
    far_end_links_per_module: Annotated[int, Field(ge=1, le=8)] = 1
    breakout: Annotated[int, Field(ge=1, le=16)] = 1
    """The port split this option is made for: 1 = native ports; b = switch ports split b ways
    (a splitter cable, or twin-port modules with splitter fibres); see the switch's `breakout`."""
    price_source: str = Field(min_length=1)
    price_date: Date
    price_is_estimate: bool = False
    source: str = Field(min_length=1)
    cable_part_number: Annotated[str, Field(min_length=1, max_length=80)] | None = None
    """The cable's orderable part number (OPN; `xxx` = the length code the site's distances pick); null = not known."""
    switch_end_module_part_number: Annotated[str, Field(min_length=1, max_length=80)] | None = None
    """The switch-end module's orderable part number; null = not known or no module."""
    far_end_module_part_number: Annotated[str, Field(min_length=1, max_length=80)] | None = None
    """The far-end module's orderable part number; null = not known or no module."""
    part_number_source: Annotated[str, Field(min_length=1)] | None = None
    """Where the part numbers come from (docs/sources.md [n])."""
    lead_time_weeks: Annotated[float, Field(ge=0, le=520)] | None = None
    """Weeks from order to delivery, as quoted (shown in the BOM and the plan); null = not known."""

    @property
    def usd_per_link(self) -> float:
        return (
            self.cable_usd
            + self.switch_end_module_usd / self.switch_end_links_per_module
            + self.far_end_module_usd / self.far_end_links_per_module
        )

    @property
    def w_per_link(self) -> float:
        return (
            self.switch_end_module_w / self.switch_end_links_per_module
            + self.far_end_module_w / self.far_end_links_per_module
        )


class Rack(Priced):
    id: Identifier
    name: str
    usable_kw: Annotated[float, Field(gt=0, le=1e4)]
    """Power a rack can feed, kW."""
    usable_ru: Annotated[int, Field(ge=1, le=100)]
    """Rack units available for equipment."""
    source: str = Field(min_length=1)


class LinkDistance(Strict):
    node_leaf: Annotated[float, Field(gt=0, le=1e5)] = 10.0
    leaf_spine: Annotated[float, Field(gt=0, le=1e5)] = 30.0
    spine_core: Annotated[float, Field(gt=0, le=1e5)] = 60.0


class Facility(Strict):
    pue: Annotated[float, Field(ge=1, le=5)] = 1.25
    """Power usage effectiveness: facility power = IT power × PUE."""
    usd_per_kwh: Annotated[float, Field(ge=0, le=10)] = 0.08
    """Electricity price, USD per kWh."""
    compute_rack: Identifier = "rack-42u"
    network_rack: Identifier = "rack-42u"
    link_distance_m: LinkDistance = LinkDistance()
    """Typical span of each fabric tier, m: decides copper or optics."""
    source: str = Field(min_length=1)



class Catalog(Strict):
    name: str = "catalog"
    description: str = ""
    gpus: list[Gpu] = []
    platforms: list[Platform] = []
    nics: list[Nic] = []
    switches: list[Switch] = []
    links: list[Link] = []
    racks: list[Rack] = []
    nic_configurations: list[NicConfiguration] = []
    """The NIC configurations each platform is sold with (inputs/nic_configs.py; SPEC §5.2)."""
    site_lines: list[SiteLine] = []
    """Storage, management, cooling-plant and installation lines by reference architecture (SPEC §5.2)."""
    rentals: list[Rental] = []
    """Rental offers (cloud, colocation): renting the same GPU-hours next to owning (solver/rentals.py)."""
    lifecycle: list[Lifecycle] = []
    power_profiles: list[PowerProfile] = []
    """GPU power limits with the throughput they keep (a decision of `site:` scenarios, SPEC §6.3)."""
    """Orderable windows and price trends per part id or GPU id (solver/plan/lifecycle.py, SPEC §6.3)."""
    facility: Facility | None = None
    stacks: list[Stack] = []
    """Software-stack profiles (SPEC §4.8, solver/inputs/stacks.py); `workload.stack` names one."""
    reliability: CatalogReliability | None = None
    """Failure rates per part kind and the checkpoint-storage default (goodput, SPEC §6.2)."""
    _provenance: Any = PrivateAttr(default=None)
    _index: dict = PrivateAttr(default_factory=dict)

    @property
    def provenance(self) -> Any:
        """Where the entries came from (`inputs.catalog.CatalogProvenance`); None when built in code."""
        return self._provenance

    def by_id(self, kind: str) -> dict:
        """{id: entry} of one kind (gpus, platforms, nics, switches, links, racks, stacks)."""
        if kind not in self._index:
            self._index[kind] = {item.id: item for item in getattr(self, kind)}
        return self._index[kind]
