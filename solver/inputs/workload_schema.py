"""Typed workload inputs (SPEC §4): the transformer's shape (dense or Mixture-of-Experts, MLA, sliding window),
the expert dispatch and the `Workload` a scenario trains.

Re-exported by `schema.py` (import from there); a field's docstring is its description (`Strict`, schema_base.py).
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from .model_presets import default_batch, expand_model
from .schema_base import Identifier, Strict
from .stacks import DEFAULT_STACK

DEFAULT_SERVING_STACK = "trtllm"
"""The stack a `kind: inference` workload runs on when it names none."""


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
    origin: str | None = None
    """Where the shape comes from when `model` named a preset or gave `params` (filled in by the loader,
    solver/inputs/model_presets.py; every output prints it); null when the fields were given."""

    @model_validator(mode="before")
    @classmethod
    def _preset_or_params(cls, data: Any) -> Any:
        """`model: llama3.1-405b`, `{preset: name, …}` or `{params: 400e9, …}` become the shape's fields."""
        return expand_model(data)

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
    kind: Literal["training", "inference"] = "training"
    """`training` (a step time to meet, SPEC §4) or `inference` (a serving fleet: the scenario's `serving:` block,
    SPEC §4.9; global_batch_size is then unused)."""
    model: TransformerShape
    stack: Identifier = DEFAULT_STACK
    """The software stack (an id of the catalog's `stacks:`, SPEC §4.8): its profile sets the GEMM and attention
    efficiency factors, the TP-overlap share and the defaults of the fields below that the scenario leaves out."""
    global_batch_size: Annotated[int, Field(ge=1, le=100_000_000)]  # B, sequences per step
    """B, sequences per optimizer step."""
    precision: Literal["bf16", "fp8", "fp4"] = "bf16"
    """GEMM precision: `bf16` or `fp8` (activations are communicated in bf16); `fp4` serves only (kind: inference)."""
    kv_cache_dtype: Literal["bf16", "fp8", "fp4"] | None = None
    """kind: inference only: the KV cache's element type (null = bf16 with bf16 weights, else fp8)."""
    activation_recompute: Literal["none", "selective", "full"] = "selective"
    """`none`, `selective` (attention core) or `full` (every layer's forward again)."""
    optimizer: Literal["replicated", "distributed", "fsdp"] = "distributed"
    """`replicated`, `distributed` (ZeRO-1 style) or `fsdp` (ZeRO-3 style)."""
    flash_attention: bool = True
    """FlashAttention never stores the s×s attention matrix."""
    grad_reduce_dtype: Literal["fp32", "bf16"] = "fp32"
    """Gradient reduce-scatter / all-reduce wire type and main-grad type: `fp32` (Megatron-LM's default) or
    `bf16` (the NeMo/Megatron-Bridge performance recipes)."""
    selective_policy: Literal["attention", "op"] = "attention"
    """What `selective` recompute keeps in a dense model: `attention` (Megatron: only the attention core is
    recomputed) or `op` (torchtitan's per-op selective checkpointing: the layer input, the attention output and
    every other matmul output kept, the rest recomputed); the stack's default when not given (issue 41)."""
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
    assumptions: tuple[str, ...] = Field(default=(), max_length=20)
    """What the loader assumed for a model named by preset or parameter count (its source or shape, a default
    global_batch_size); every output prints these. Filled in by the loader: leave it out."""

    @model_validator(mode="before")
    @classmethod
    def _named_model_defaults(cls, data: Any) -> Any:
        """A preset or `params` model: its shape expanded once, its origin and (when global_batch_size is left
        out) a 16M-token batch recorded as assumptions (model_presets.default_batch)."""
        if not isinstance(data, dict) or "assumptions" in data:
            return data
        raw = data.get("model")
        named = isinstance(raw, str) or (isinstance(raw, dict) and ("preset" in raw or "params" in raw))
        if not named:
            return data
        try:
            model = expand_model(raw)
        except ValueError:  # TransformerShape reports it at workload.model; a named model would have given the
            # batch, so a missing global_batch_size is not a second problem
            return data if "global_batch_size" in data else {**data, "global_batch_size": default_batch({})[0]}
        notes = [model["origin"]]
        out = {**data, "model": model}
        if "global_batch_size" not in data:
            out["global_batch_size"], note = default_batch(model)
            notes.append(note)
        out["assumptions"] = tuple(notes)
        return out


    @model_validator(mode="before")
    @classmethod
    def _serving_batch(cls, data):
        # a serving workload has no optimizer step: global_batch_size is unused and defaults to 1,
        # and its stack defaults to the serving stack trtllm (a training stack cannot serve)
        if isinstance(data, dict) and data.get("kind") == "inference":
            return {"global_batch_size": 1, "stack": DEFAULT_SERVING_STACK, **data}
        return data

    @model_validator(mode="after")
    def _serving_only(self) -> Workload:
        if self.kind == "training" and (self.precision == "fp4" or self.kv_cache_dtype is not None):
            raise ValueError("precision: fp4 and kv_cache_dtype apply to serving (workload.kind: inference)")
        return self

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
