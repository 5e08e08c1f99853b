"""Typed inputs: the catalog and the scenario (SPEC §3).

Every model forbids unknown keys and carries its unit in each field name. Validation that needs
several entities at once (a platform's GPU exists, a pin is allowed) lives in `loading.py`, where
the YAML line of the offending value is known.
"""
from __future__ import annotations

import math
from typing import Annotated, Any, Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from .nic_configs import CapexScope, NicConfigChoice, NicConfiguration, SiteLine
from .reliability import CatalogReliability, ScenarioReliability
from .schema_base import Date, Identifier, PosInt, Strict
from .stacks import DEFAULT_STACK, Stack

Fraction = Annotated[float, Field(gt=0, le=1)]
Positive = Annotated[float, Field(gt=0)]
NonNegative = Annotated[float, Field(ge=0)]

PRECISIONS = ("bf16", "fp8")
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


# ----------------------------------------------------------------------------------- catalog


class ComputeEfficiency(Strict):
    bf16: Fraction
    fp8: Fraction


class ComputeModel(Strict):
    """Parameters of the GEMM-shape compute model of one GPU (SPEC §4.2; docs/model.md "Compute").

    The step's math is timed per matmul family from its per-GPU GEMM dimensions: a roofline at the
    dense peak × `gemm_efficiency_*` and at `hbm_tbyte_s`, plus `gemm_overhead_us` per GEMM (the
    saturating, size-dependent part); the attention core at the BF16 peak × `attention_efficiency`.
    """

    gemm_efficiency_bf16: Fraction
    """Fraction of the dense BF16 peak a large BF16 GEMM reaches (fitted; docs/model.md)."""
    gemm_efficiency_fp8: Fraction
    """Fraction of the dense FP8 peak a large FP8 GEMM reaches (fitted; the BF16 value where the GPU has no FP8)."""
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
    bf16_dense_tflops: Annotated[float, Field(gt=0, le=1e6)]
    fp8_dense_tflops: Annotated[float, Field(gt=0, le=1e6)]
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
        return self.fp8_dense_tflops if precision == "fp8" else self.bf16_dense_tflops


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
    scaleout_nics_per_node: list[Annotated[int, Field(ge=1, le=64)]] = Field(min_length=1)
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
    hbm_reserve_gb: Annotated[float, Field(ge=0, le=1e4)] = 6.0
    """HBM kept free for the CUDA context, NCCL buffers and fragmentation, GB."""
    alltoall_efficiency: Fraction | None = None
    """Effective fraction of nvlink_gbyte_s that the expert-parallel all-to-all reaches inside the NVLink
    domain (measured dispatch bandwidth, docs/sources.md [M15][M16]); null = nvlink_efficiency."""
    alltoall_efficiency_source: str | None = None
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
                f" must equal gpus_per_domain = {self.gpus_per_domain}"
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


from .rentals import Rental  # noqa: E402 - rentals.py builds on Strict and the field types above


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


# ----------------------------------------------------------------------------------- scenario


class MlaShape(Strict):
    """Multi-head latent attention (DeepSeek-V2/V3, Kimi-K2); Megatron-LM argument names in comments."""

    q_lora_rank: Annotated[int, Field(ge=1, le=1_000_000)] | None  # q_r, --q-lora-rank
    """q_r, rank of the query down-projection; null = queries projected directly from h."""
    kv_lora_rank: Annotated[int, Field(ge=1, le=1_000_000)]  # kv_r, --kv-lora-rank
    """kv_r, rank of the key/value down-projection."""
    qk_nope_head_dim: Annotated[int, Field(ge=1, le=100_000)]  # d_n, --qk-head-dim
    """d_n, per-head query/key width without rotary position embedding."""
    qk_rope_head_dim: Annotated[int, Field(ge=0, le=100_000)]  # d_r, --qk-pos-emb-head-dim
    """d_r, per-head query/key width carrying the rotary position embedding."""
    v_head_dim: Annotated[int, Field(ge=1, le=100_000)]  # d_v, --v-head-dim
    """d_v, per-head value width."""


RecomputeModule = Literal["mla_up_proj", "moe_act", "layernorm", "mlp", "moe"]


class MoeShape(Strict):
    """Mixture-of-Experts layers (SPEC §4.7; Megatron-LM argument names in comments, docs/sources.md [M3])."""

    experts: Annotated[int, Field(ge=1, le=1_000_000)]  # E, --num-experts
    """E, routed experts per MoE layer."""
    top_k: Annotated[int, Field(ge=1, le=1_000)]  # k, --moe-router-topk
    """k, routed experts each token is sent to."""
    expert_ffn_hidden_size: Annotated[int, Field(ge=1, le=10_000_000)]  # f_e, --moe-ffn-hidden-size
    """f_e, the MLP width of one routed expert."""
    shared_experts: Annotated[int, Field(ge=0, le=1_000)] = 0  # n_s
    """n_s, always-active shared experts per MoE layer."""
    shared_expert_ffn_hidden_size: Annotated[int, Field(ge=1, le=10_000_000)] | None = None  # f_s
    """f_s, the MLP width of one shared expert; null = expert_ffn_hidden_size."""
    dense_layers: Annotated[int, Field(ge=0, le=10_000)] = 0  # L_d, --moe-layer-freq [0]*L_d + [1]*L_m
    """L_d, the first layers are dense (MLP width ffn_hidden_size), the rest are MoE."""
    layer_pattern: tuple[Literal[0, 1], ...] | None = Field(default=None, max_length=10_000)
    """Which layers are MoE (1) or dense (0), one entry per layer; replaces dense_layers when given."""
    router_groups: Annotated[int, Field(ge=1, le=100_000)] | None = None  # --moe-router-num-groups
    """Group-limited routing: the experts are split into this many groups (null = no groups)."""
    router_group_top_k: Annotated[int, Field(ge=1, le=100_000)] | None = None  # --moe-router-group-topk
    """Group-limited routing: a token's experts come from at most this many groups."""
    node_limit: Annotated[int, Field(ge=1, le=100_000)] | None = None  # M (DeepSeek node-limited routing)
    """M, the most NVLink domains one token is sent to (node-limited routing); null = no limit."""
    capacity_factor: Annotated[float, Field(gt=0, le=1_000)] | None = None  # c_f, --moe-expert-capacity-factor
    """c_f, tokens an expert takes as a multiple of the mean; null = dropless."""
    pad_to_capacity: bool = False  # --moe-pad-expert-input-to-capacity
    """Pad every expert's input to its capacity (padded rows are sent and multiplied)."""
    load_imbalance: Annotated[float, Field(ge=1, le=1_000)] = 1.0  # u
    """u, tokens of the busiest expert-parallel rank over the mean (1 = force-balanced, as in every
    published benchmark table; real routing measured 1.1–1.25, docs/model.md §MoE)."""
    mtp_layers: Annotated[int, Field(ge=0, le=100)] = 0  # n_mtp, --mtp-num-layers
    """n_mtp, multi-token-prediction layers (each one more transformer layer and logits)."""

    @model_validator(mode="after")
    def _routing(self) -> MoeShape:
        if self.top_k > self.experts:
            raise ValueError(f"top_k {self.top_k} exceeds the {self.experts} experts")
        if (self.router_groups is None) != (self.router_group_top_k is None):
            raise ValueError("give router_groups and router_group_top_k together (or neither)")
        if self.router_groups is not None and self.router_group_top_k is not None:
            if self.experts % self.router_groups:
                raise ValueError(f"router_groups {self.router_groups} must divide the {self.experts} experts")
            if self.router_group_top_k > self.router_groups:
                raise ValueError(f"router_group_top_k {self.router_group_top_k} exceeds router_groups {self.router_groups}")
        if self.layer_pattern is not None and self.dense_layers:
            raise ValueError("give dense_layers or layer_pattern, not both")
        return self


class SlidingWindow(Strict):
    """Layers whose attention sees only the last `tokens` positions (GPT-OSS alternates them)."""

    tokens: Annotated[int, Field(ge=1, le=100_000_000)]
    """W, the window: each query attends to at most W keys."""
    layers: Annotated[int, Field(ge=0, le=10_000)]
    """How many of the layers use the window (the others attend to the whole sequence)."""


class TransformerShape(Strict):
    """A decoder-only transformer, dense or Mixture-of-Experts (SPEC §4 notation in comments)."""

    layers: Annotated[int, Field(ge=1, le=10_000)]  # L
    """L, transformer layers."""
    hidden_size: Annotated[int, Field(ge=1, le=1_000_000)]  # h
    """h, the model width."""
    ffn_hidden_size: Annotated[int, Field(ge=1, le=10_000_000)]  # f
    """f, the MLP width."""
    ffn_type: Literal["swiglu", "gelu"] = "swiglu"
    """`swiglu` (3 matrices) or `gelu` (2 matrices)."""
    attention_heads: Annotated[int, Field(ge=1, le=100_000)]  # a
    """a, attention heads."""
    kv_heads: Annotated[int, Field(ge=1, le=100000)] | None = None  # a_kv (None = a)
    """a_kv, key/value heads (grouped-query attention); null = attention_heads."""
    vocab_size: Annotated[int, Field(ge=1, le=100_000_000)]  # V
    """V, vocabulary size."""
    seq_len: Annotated[int, Field(ge=1, le=100_000_000)]  # s
    """s, tokens per sequence."""
    tied_embeddings: bool = False
    """True when input and output embeddings share one matrix."""
    head_dim: Annotated[int, Field(ge=1, le=100_000)] | None = None  # d_h, --kv-channels
    """d_h, the width of one attention head; null = hidden_size / attention_heads."""
    attention: Literal["gqa", "mla"] = "gqa"
    """`gqa` (grouped-query / multi-head attention) or `mla` (multi-head latent attention, needs `mla`)."""
    mla: MlaShape | None = None
    """The dimensions of multi-head latent attention (with attention: mla)."""
    sliding_window: SlidingWindow | None = None
    """Sliding-window attention layers (null = every layer attends to the whole sequence)."""
    moe: MoeShape | None = None
    """Mixture-of-Experts layers (null = a dense model)."""

    @model_validator(mode="after")
    def _heads(self) -> TransformerShape:
        kv = self.kv_heads or self.attention_heads
        if self.head_dim is None and self.attention == "gqa" and self.hidden_size % self.attention_heads:
            raise ValueError(
                f"hidden_size {self.hidden_size} must be a multiple of attention_heads {self.attention_heads}"
                " (or give head_dim)"
            )
        if self.attention_heads % kv:
            raise ValueError(f"attention_heads {self.attention_heads} must be a multiple of kv_heads {kv}")
        if (self.attention == "mla") != (self.mla is not None):
            raise ValueError("attention: mla needs the `mla` dimensions, and `mla` needs attention: mla")
        if self.sliding_window is not None and self.sliding_window.layers > self.layers:
            raise ValueError(f"sliding_window.layers {self.sliding_window.layers} exceeds the {self.layers} layers")
        self._moe_layers()
        return self

    def _moe_layers(self) -> None:
        moe = self.moe
        if moe is None:
            return
        if moe.layer_pattern is not None and len(moe.layer_pattern) != self.layers:
            raise ValueError(f"moe.layer_pattern has {len(moe.layer_pattern)} entries for {self.layers} layers")
        if moe.dense_layers >= self.layers:
            raise ValueError(f"moe.dense_layers {moe.dense_layers} leaves no MoE layer of the {self.layers}")


class ExpertDispatch(Strict):
    """The expert-parallel token exchange of a Mixture-of-Experts model (SPEC §4.7)."""

    dispatcher: Literal["flat", "hierarchical"] = "flat"
    """`flat`: NCCL all-to-all, each token copy travels on its own (Megatron's default `alltoall`);
    `hierarchical`: one copy per destination NVLink domain, fanned out over NVLink (DeepEP, HybridEP)."""
    dispatch_dtype: Literal["bf16", "fp8"] = "bf16"
    """Bytes of a dispatched token: bf16 (2) or fp8 with a 1×128 fp32 scale (1 + 4/128); combine is bf16."""
    overlap: Literal["none", "shared_expert", "batch_overlap"] = "none"
    """What hides the all-to-all: nothing; the shared experts' compute (--moe-shared-expert-overlap); or
    the compute of another microbatch (1F1B all-to-all overlap, DualPipe), which holds SMs."""
    overlap_sm_fraction: Annotated[float, Field(ge=0, lt=1)] = 0.15
    """With batch_overlap: the share of the GPU's SMs the dispatcher holds, slowing compute by
    1/(1 − share); DeepSeek-V3 reserved 20 of 132 SMs (docs/sources.md [M1] §3.5.1)."""


class Workload(Strict):
    model: TransformerShape
    stack: Identifier = DEFAULT_STACK
    """The software stack (an id of the catalog's `stacks:`, SPEC §4.8): its profile sets the GEMM and attention
    efficiency factors, the TP-overlap share and the defaults of the fields below that the scenario leaves out."""
    global_batch_size: Annotated[int, Field(ge=1, le=100_000_000)]  # B, sequences per step
    """B, sequences per optimizer step."""
    precision: Literal["bf16", "fp8"] = "bf16"
    """GEMM precision: `bf16` or `fp8` (activations are communicated in bf16)."""
    activation_recompute: Literal["none", "selective", "full"] = "selective"
    """`none`, `selective` (attention core) or `full` (every layer's forward again)."""
    optimizer: Literal["replicated", "distributed", "fsdp"] = "distributed"
    """`replicated`, `distributed` (ZeRO-1 style) or `fsdp` (ZeRO-3 style)."""
    flash_attention: bool = True
    """FlashAttention never stores the s×s attention matrix."""
    grad_reduce_dtype: Literal["fp32", "bf16"] = "fp32"
    """Gradient reduce-scatter / all-reduce wire type and main-grad type: `fp32` (Megatron-LM's default) or
    `bf16` (the NeMo/Megatron-Bridge performance recipes)."""
    fp8_param_gather: bool = False
    """All-gather parameters in FP8 (1 byte) instead of BF16; only with `precision: fp8`."""
    fsdp_reshard_after_forward: bool = True
    """fsdp only: reshard parameters after the forward (gathered again for the backward, ZeRO-3); false keeps
    the stage's parameters gathered until the backward (one gather per microbatch, +2 B per parameter)."""
    pipeline_split: Literal["uniform", "balanced"] = "uniform"
    """How layers are split over pipeline stages: `uniform` (L/p each, the last stage also runs the logits;
    Megatron's default) or `balanced` (the embedding and the loss count as one layer each, so the first and
    last stages hold one transformer layer fewer: Megatron-Bridge's account_for_*_in_pipeline_split, Llama 3)."""

    recompute_modules: tuple[RecomputeModule, ...] = Field(default=(), max_length=5)
    """Mixture-of-Experts models: Megatron's fine-grained recompute modules besides the attention core
    (`mla_up_proj`, `moe_act`, `layernorm`, `mlp`, `moe`), docs/sources.md [M3]."""
    expert_dispatch: ExpertDispatch = ExpertDispatch()
    """Mixture-of-Experts models: how tokens reach their experts, and what hides the all-to-all."""


    @model_validator(mode="after")
    def _fp8_gather(self) -> Workload:
        if self.fp8_param_gather and self.precision != "fp8":
            raise ValueError("fp8_param_gather needs precision: fp8")
        return self

    @model_validator(mode="after")
    def _moe_options(self) -> Workload:
        if self.recompute_modules and self.model.moe is None:
            raise ValueError("recompute_modules apply to Mixture-of-Experts models (workload.model.moe); "
                             "dense models use activation_recompute")
        if "mla_up_proj" in self.recompute_modules and self.model.attention != "mla":
            raise ValueError("recompute_modules: mla_up_proj needs attention: mla")
        return self


class Target(Strict):
    step_time_s: Annotated[float, Field(gt=0, le=10000000.0)] | None = None
    """The step time to meet, s."""
    train_tokens: Annotated[float, Field(gt=0, le=1e+18)] | None = None
    """Tokens to train on: with train_days instead of step_time_s, or alone to show each design's training days."""
    train_days: Annotated[float, Field(gt=0, le=100000.0)] | None = None
    """Days to train train_tokens in."""
    goodput: Annotated[float, Field(gt=0, le=1)] | None = None
    """Fraction of wall-clock time spent on training steps (restarts, failures and checkpoints take the rest), given
    by hand: the step-time target is train_days·86,400·goodput / steps, and training days = steps·step_time /
    (goodput·86,400). Null = computed per design from the catalog's failure data (docs/model.md "Goodput"), or 1
    without it."""

    @model_validator(mode="after")
    def _one_way(self) -> Target:
        by_time = self.step_time_s is not None
        if by_time and self.train_days is not None:
            raise ValueError("give either step_time_s, or train_tokens with train_days, not both")
        if self.train_days is not None and self.train_tokens is None:
            raise ValueError("train_days needs train_tokens (the tokens to train on in that time)")
        if self.goodput is not None and self.goodput != 1.0 and self.train_tokens is None:
            raise ValueError("goodput needs train_tokens: it scales the training days of train_tokens")
        return self

    @property
    def given(self) -> bool:
        """A step time follows from the target (step_time_s, or train_tokens with train_days)."""
        return self.step_time_s is not None or self.train_days is not None


CAPS = ("budget_usd", "facility_power_kw", "max_gpus", "max_racks")
# an allow-list is a value or a non-empty list (an empty one used to mean "all": leave the key out for that)
IntChoice = PosInt | Annotated[list[PosInt], Field(min_length=1)] | None
Ratio = Annotated[float, Field(ge=1, le=64)]
FloatChoice = Ratio | Annotated[list[Ratio], Field(min_length=1)] | None
IdChoice = Identifier | Annotated[list[Identifier], Field(min_length=1)] | None


class Constraints(Strict):
    max_gpus: Annotated[int, Field(ge=1, le=100000000)] | None = None
    """At most this many GPUs bought."""
    budget_usd: Annotated[float, Field(gt=0, le=100000000000000.0)] | None = None
    """Capex at most this, USD."""
    facility_power_kw: Annotated[float, Field(gt=0, le=1000000000.0)] | None = None
    """Facility power (IT × PUE) at most this, kW."""
    max_racks: Annotated[int, Field(ge=1, le=10000000)] | None = None
    """At most this many racks."""
    platforms: IdChoice = None
    gpus: IdChoice = None
    nics: IdChoice = None
    switches: IdChoice = None
    rails_per_node: IntChoice = None
    """Allowed scale-out NICs per node."""
    oversubscription: FloatChoice = None
    """Allowed leaf down:up ratios (1 = non-blocking)."""
    above_pod_oversubscription: FloatChoice = None
    """Allowed down:up ratios of the tier above the pods (the spine's uplinks in 3-tier fabrics;
    Llama 3's 1:7 is 7). Designs of 1 or 2 tiers have no such tier. Null = [1]."""
    fabrics: FabricFamilyName | Annotated[list[FabricFamilyName], Field(min_length=1)] | None = None
    """Allowed fabric families: fat-tree, multi-plane, rail-only. Null = the deployed ones (fat-tree,
    multi-plane); rail-only only when named here (SPEC §5.2)."""
    nic_configurations: NicConfigChoice = None
    """NIC configurations (catalog nic_configurations) besides the reference ones: `any`, or a list of
    configuration ids. Null = reference configurations only."""
    spare_nodes_fraction: Annotated[float, Field(ge=0, le=1)] = 0.0
    """Spare compute units bought and cabled, as a fraction of the job's units."""
    contingency_fraction: Annotated[float, Field(ge=0, le=1)] = 0.0
    """Contingency added to capex, as a fraction."""


class Parallelism(Strict):
    """Allowed values of each layout dimension: a scalar pins it, a list allows, null = defaults."""

    tp: IntChoice = None
    cp: IntChoice = None
    pp: IntChoice = None
    vp: IntChoice = None
    microbatch_size: IntChoice = None
    ep: IntChoice = None
    """Expert parallelism (Mixture-of-Experts only); null = 1, 2, 4, … 64 that divide the experts."""
    etp: IntChoice = None
    """Expert tensor parallelism (Mixture-of-Experts only); null = 1."""


class EfficiencyOverrides(Strict):
    compute_efficiency: Fraction | None = None
    nvlink_efficiency: Fraction | None = None
    nic_efficiency: Fraction | None = None


class Overlap(Strict):
    """Share φ_k of each class's schedule window (SPEC §4.5) its communication can hide behind: 1 = the
    whole window, 0 = exposed. null = the default (docs/model.md "Overlap windows")."""

    tp: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of the layer's GEMM time that hides TP (TP comm overlap; default 0, exposed)."""
    cp: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of the layer's attention core that hides the CP exchange (default 1; 0 for all-gather CP)."""
    pp: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of the next chunk's compute that hides an interleaved pipeline's sends (default 1; 1F1B blocks)."""
    dp: Annotated[float, Field(ge=0, le=1)] | None = None
    """Sets dp_rs and dp_ag together (each may be given on its own)."""
    dp_rs: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of the last microbatch's backward (fsdp: every backward) that hides the gradient reduce-scatter."""
    dp_ag: Annotated[float, Field(ge=0, le=1)] | None = None
    """Share of the first microbatch's forward (fsdp: every pass) that hides the parameter all-gather."""


class Robustness(Strict):
    """Margins a design must keep (SPEC §4.5): it must still meet the target with compute this much slower,
    and (separately) with scale-out bandwidth this much lower."""

    compute_slowdown: Annotated[float, Field(ge=0, le=10)] = 0.0
    """Uniform compute slowdown to survive, as a fraction (0.1 = compute takes 10 % longer)."""
    bandwidth_derate: Annotated[float, Field(ge=0, lt=1)] = 0.0
    """Uniform loss of scale-out bandwidth to survive, as a fraction (0.2 = 80 % of the bandwidth left)."""
    quantile: Annotated[float, Field(ge=0.5, le=0.95)] | None = None
    """Meet the target at this quantile of the step time (0.9 = p90): each design's step time × (1 + the quantile
    of the calibration residuals of its regime; solver/perf/uncertainty.py). null = the nominal step time."""


class Tco(Strict):
    years: Annotated[float, Field(gt=0, le=50)] = 5.0
    usd_per_kwh: Annotated[float, Field(ge=0, le=10)] | None = None
    pue: Annotated[float, Field(ge=1, le=5)] | None = None


class Pin(Strict):
    platform: Identifier | None = None
    nic: Identifier | None = None
    rails_per_node: PosInt | None = None
    switch: Identifier | None = None
    tiers: Annotated[int, Field(ge=1, le=3)] | None = None
    oversubscription: Annotated[float, Field(ge=1, le=64)] | None = None
    above_pod_oversubscription: Annotated[float, Field(ge=1, le=64)] | None = None
    """Down:up of the tier above the pods (3-tier designs only)."""
    fabric: FabricFamilyName | None = None
    """Fabric family: fat-tree, multi-plane or rail-only."""
    tp: PosInt | None = None
    cp: PosInt | None = None
    pp: PosInt | None = None
    vp: PosInt | None = None
    dp: PosInt | None = None
    microbatch_size: PosInt | None = None
    gpus_per_domain_used: PosInt | None = None
    nodes: PosInt | None = None
    ep: PosInt | None = None
    """Expert parallelism (Mixture-of-Experts only)."""
    etp: PosInt | None = None
    """Expert tensor parallelism (Mixture-of-Experts only)."""


class SweepRange(Strict):
    start: float
    stop: float
    step: Annotated[float, Field(gt=0)]


class SweepGrowth(Strict):
    factor: Annotated[float, Field(gt=0, le=1000)]
    steps: Annotated[int, Field(ge=1, le=1000)]
    per: str = Field(default="year", min_length=1, max_length=40)
    """What one step of growth stands for (the value grows `factor`× per year, quarter, generation…);
    the sweep workbook and plot number the points 0, 1, … `steps` on an axis named after it."""


class SweepParameter(Strict):
    path: str = Field(min_length=1)
    values: list[float | str] | None = Field(default=None, min_length=1, max_length=10_000)
    """The values, one per point: numbers, or words for a word field (precision, a platform id)."""
    range: SweepRange | None = None
    growth: SweepGrowth | None = None
    round_to_int: bool | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> SweepParameter:
        given = [k for k in ("values", "range", "growth") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of values, range or growth (got {given or 'none'})")
        return self


class NamedModel(Strict):
    name: str = Field(min_length=1)
    model: TransformerShape
    global_batch_size: PosInt | None = None
    step_time_s: Positive | None = None


class Sweep(Strict):
    combine: Literal["product", "zip"] = "product"
    parameters: list[SweepParameter] = []
    models: list[NamedModel] = []


# ----------------------------------------------------------------------------------- owned hardware, extra costs, plans


PRICE_CATEGORIES = ("compute", "nic", "switch", "link", "rack", "extra")
"""Bill-of-materials categories a plan's price factors apply to (spares follow compute)."""
PriceCategory = Literal["compute", "nic", "switch", "link", "rack", "extra"]
Year = Annotated[int, Field(ge=1950, le=2200)]


class OwnedPart(Strict):
    """Hardware the buyer already owns, with the year it was bought."""

    count: Annotated[int, Field(ge=0, le=100_000_000)]
    """How many: nodes (or whole domains for a platform bought per domain, e.g. NVL72 racks), NICs,
    switches, complete links (cable and the modules at both ends) or racks."""
    purchase_year: Year | None = None
    """Calendar year it was bought: with plan.start_year it gives the part's age and straight-line
    book value over tco.years in the plan's report (reports only; owned parts cost nothing to reuse)."""

    @model_validator(mode="before")
    @classmethod
    def _bare_count(cls, data: Any) -> Any:
        """`dgx-h100: 64` is short for `dgx-h100: {count: 64}`."""
        if isinstance(data, int) and not isinstance(data, bool):
            return {"count": data}
        return data


class ExtraCost(Strict):
    """A cost line by rule that makes capex complete for finance (storage, front-end network, support,
    installation): exactly one of per_node_usd, per_gpu_usd or fraction_of_hardware."""

    name: Identifier
    """Short name, shown as the BOM line's part (e.g. storage, front-end-network, support)."""
    description: str = ""
    per_node_usd: Annotated[float, Field(ge=0, le=1e9)] | None = None
    """USD per node bought (spares included); owned nodes of the design's platform bring their own."""
    per_gpu_usd: Annotated[float, Field(ge=0, le=1e9)] | None = None
    """USD per GPU bought (spares included); owned GPUs of the design's platform bring their own."""
    fraction_of_hardware: Annotated[float, Field(ge=0, le=10)] | None = None
    """Fraction of the hardware lines bought (compute, spares, NICs, switches, links, racks, and the site's
    storage fabric, management switches and cooling plant; not installation), e.g. a support contract at
    0.08 of the hardware price."""
    price_source: str = Field(min_length=1)
    """Where the rule comes from (docs/sources.md [n], a quote) or how it was estimated."""
    price_date: Date
    """Date of the figure: YYYY, YYYY-MM or YYYY-MM-DD."""
    price_is_estimate: bool = False
    """True when the figure is an estimate."""

    @model_validator(mode="after")
    def _one_rule(self) -> ExtraCost:
        given = [k for k in ("per_node_usd", "per_gpu_usd", "fraction_of_hardware") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of per_node_usd, per_gpu_usd or fraction_of_hardware (got {given or 'none'})")
        return self


class PlanGrowth(Strict):
    """A growth rule for one numeric scenario field: value in period p = the scenario's value · factor^p."""

    path: str = Field(min_length=1)
    """Dotted path of a numeric scenario field, e.g. workload.global_batch_size."""
    factor: Annotated[float, Field(gt=0, le=1000)]
    """Growth per period (1.5 = +50 % a period)."""
    round_to_int: bool | None = None
    """Round to whole numbers (default: integer fields are rounded half up, like the sweep's)."""


class PlanPeriod(Strict):
    """One period of a plan given explicitly: field values and price factors that hold in it."""

    label: Annotated[str, Field(min_length=1, max_length=200)] | None = None
    """Name in reports, at most 200 characters (default: the year, or "period p")."""
    set: dict[str, float] = {}
    """Dotted numeric scenario field → value in this period (after the growth rules), e.g.
    {workload.global_batch_size: 3072, target.step_time_s: 8}."""
    price_factors: dict[PriceCategory, Annotated[float, Field(gt=0, le=100)]] = {}
    """Category → multiplier on the catalog's unit prices for what is bought in this period
    (overrides price_change_per_year for that category)."""


class Plan(Strict):
    """A multi-period purchase plan (SPEC §6.1): one MILP over all periods, hardware carried forward."""

    periods: Annotated[int, Field(ge=1, le=20)] | Annotated[list[PlanPeriod], Field(min_length=1, max_length=20)]
    """The number of periods, or one block per period."""
    start_year: Year | None = None
    """Calendar year of the first period (labels; the age of owned parts)."""
    period_years: Annotated[float, Field(gt=0, le=50)] = 1.0
    """Length of a period in years: discounting, price trends and (TCO) the energy paid per period."""
    growth: list[PlanGrowth] = []
    """Growth rules applied to every period (explicit `set` values override them)."""
    price_change_per_year: dict[PriceCategory, Annotated[float, Field(gt=-1, le=10)]] = {}
    """Category → yearly price change, compounding: factor = (1 + change)^(p · period_years); −0.2 = −20 %/year."""
    discount_rate: Annotated[float, Field(ge=0, le=1)] = 0.0
    """Yearly discount rate: spend in period p is weighed by (1 + rate)^−(p · period_years)."""
    architectures: Literal["keep_one", "allow_second"] = "keep_one"
    """keep_one: every period's job runs on one architecture that grows; allow_second: the jobs may move
    once to a second, newly built architecture (the first cluster stays, available for other work)."""

    @property
    def count(self) -> int:
        """Number of periods."""
        return self.periods if isinstance(self.periods, int) else len(self.periods)


class Scenario(Strict):
    name: Identifier
    description: str = ""
    catalog: list[str] = []
    workload: Workload
    target: Target = Target()
    """The step time to meet; only `objective: fastest` may leave it out."""
    constraints: Constraints = Constraints()
    parallelism: Parallelism = Parallelism()
    efficiency: EfficiencyOverrides = EfficiencyOverrides()
    overlap: Overlap = Overlap()
    robustness: Robustness = Robustness()
    """Margins the MILP enforces: compute_slowdown and bandwidth_derate (SPEC §4.5)."""
    objective: Literal["capex", "tco", "fastest", "rent_or_buy"] = "capex"
    """`capex` or `tco`: the cheapest design meeting the target; `fastest`: the shortest step time within the
    caps (budget_usd, facility_power_kw, max_gpus, max_racks), then the cheapest (SPEC §7); `rent_or_buy`:
    the designs of `tco`, then owning and renting each (catalog rentals) ranked together (solver/rentals.py)."""
    tco: Tco = Tco()
    top_k: Annotated[int, Field(ge=1, le=100)] = 5
    pin: Pin = Pin()
    sweep: Sweep = Sweep()
    inventory: dict[Identifier, OwnedPart] = {}
    """Hardware already owned: catalog id → count (or {count, purchase_year}). The optimiser reuses
    owned parts at no capex (they still draw power) and buys only the difference."""
    extra_costs: list[ExtraCost] = []
    """Cost lines by rule (storage, front-end network, support, installation): the BOM's `extra` category."""
    capex_scope: CapexScope = "complete"
    """`complete`: capex includes the catalog's site lines (storage fabric, management networks, cooling
    plant, installation); `compute_fabric_only`: leaves them out, for comparisons with earlier answers."""
    plan: Plan | None = None
    """A multi-period purchase plan (`fabricplan plan`); solve and sweep ignore it."""
    reliability: ScenarioReliability = ScenarioReliability()
    """Checkpoints, restarts and hot spares (goodput, SPEC §6.2)."""

    @field_validator("catalog", mode="before")
    @classmethod
    def _catalog_list(cls, value):
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _target_or_fastest(self) -> Scenario:
        if not self.target.given and self.objective != "fastest":
            raise ValueError("target: give step_time_s, or train_tokens with train_days (only objective: fastest "
                             "may leave the target out)")
        if self.objective == "fastest" and not any(getattr(self.constraints, cap) is not None for cap in CAPS):
            raise ValueError("objective: fastest needs a cap to stay within: set constraints.budget_usd, "
                             "facility_power_kw, max_gpus or max_racks")
        return self

    def train_steps(self) -> int | None:
        """Optimizer steps to train target.train_tokens: ⌈train_tokens / (B·s)⌉ (None without train_tokens)."""
        if self.target.train_tokens is None:
            return None
        tokens_per_step = self.workload.global_batch_size * self.workload.model.seq_len
        return math.ceil(self.target.train_tokens / tokens_per_step)

    def owned_counts(self) -> dict[str, int]:
        """Catalog id → owned count (parts owned 0 times are left out)."""
        return {ident: item.count for ident, item in self.inventory.items() if item.count > 0}

    def target_step_time_s(self) -> float:
        """The step-time target: step_time_s, or train_days·86,400·goodput / ⌈train_tokens / (B·s)⌉;
        infinite for `objective: fastest` without a target (the caps bound the design instead)."""
        t = self.target
        if t.step_time_s is not None:
            return t.step_time_s
        steps = self.train_steps()
        if t.train_days is None or steps is None:
            return math.inf  # objective: fastest without a target (_target_or_fastest)
        return t.train_days * 86_400.0 * (t.goodput if t.goodput is not None else 1.0) / steps


def as_list(choice) -> list | None:
    """A scalar-or-list allow-list as a list (None stays None = everything allowed)."""
    if choice is None:
        return None
    return list(choice) if isinstance(choice, list) else [choice]
