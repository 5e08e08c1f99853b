"""Compute time from GEMM shapes (SPEC §4.2): what one GPU's math takes per microbatch and per step.

The step's math is timed per matmul family from the GEMM dimensions one GPU actually runs, not
as "FLOPs / (peak · one efficiency)": a wider model, a larger microbatch or a smaller tensor-parallel
degree gives larger GEMMs, which run closer to the peak; FP8 speeds up only the linear layers.

Per layer and microbatch, with T = b·s/c tokens on the GPU (sequence parallelism gathers the
sequence for the GEMMs), h_q = h + 2·h_kv, k_up = 2 for SwiGLU (gate and up fused), 1 for GeLU:

    family      forward GEMM (M, N, K)      backward: dgrad (M, K, N) and wgrad (N, K, M)
    qkv         (T, h_q/t, h)
    attn_out    (T, h, h/t)
    ffn_up      (T, k_up·f/t, h)
    ffn_down    (T, h, f/t)
    logits      (T, V/t, h)                 once per microbatch, on the last pipeline stage

    gemm_s(M, N, K) = max(2MNK / (peak · η_gemm · S), bytes / hbm) + t_0       (`gemm_s`)
    S = Π_{d ∈ M, N, K} d / (d + κ · peak)                                      (`shape_efficiency`)

with bytes = operand bytes · (MK + KN) + 2·MN, η_gemm and t_0 fitted per GPU (catalog
`compute_model`); the attention core (FlashAttention, causal: half of the counted 4·s·h FLOPs per
token are executed) at the BF16 peak · η_attn, backward 2.5 × forward (FlashAttention's five
matmuls against two); memory-bound element-wise work (norms, residual adds, RoPE, activation,
dropout, FP8 casts) at hbm_tbyte_s · η_hbm, counted per token; full recompute repeats the forward.
The optimizer step streams its shard of the model states once at hbm_tbyte_s · η_hbm.

The pipeline runs at the pace of its slowest stage (`pacing_stage`): with a uniform split every
stage holds L/p layers and the last one also the logits; a balanced split counts the embedding and
the loss as one layer each ((L + 2)/p slots, one layer fewer on the first and last stages).

`gemm_s` is the one GEMM-timing function: expert (MoE) GEMMs can use it too. Dense and MoE models share one
compute path: a builder describes a microbatch as a `ComputePlan` (GEMM groups from `gemm_part`, the attention
core, memory-bound work, sums of them per average layer, the last stage's tail) and `time_plan` times it
(`dense_plan` here, `moe.moe_plan` for Mixture-of-Experts models).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..inputs.schema import TransformerShape, Workload
from .layout import Layout
from .model import kv_hidden_size

TFLOP = 1e12
TBYTE = 1e12
BF16_BYTES = 2
FP8_BYTES = 1
# FlashAttention executes half of the counted (unhalved, SPEC §4.1) attention FLOPs under a causal mask.
CAUSAL_SHARE = 0.5
# FlashAttention's backward runs five matmuls to the forward's two (Dao 2023, FlashAttention-2 §3.1.2).
ATTENTION_BACKWARD_OVER_FORWARD = 2.5
# Unfused attention (no FlashAttention): scale + mask + softmax read and write 2 B per score, dropout reads and
# writes 2 B and a 1 B mask (Korthikanti et al. 2022 §4.1 count the same tensors).
SOFTMAX_BYTES_PER_SCORE = 9
# Memory-bound kernels reach about this share of HBM bandwidth (estimate; docs/model.md "Compute").
ELEMENTWISE_HBM_EFFICIENCY = 0.8
# Backward element-wise work reads the saved input and the incoming gradient and writes a gradient:
# about twice the forward's bytes.
ELEMENTWISE_BACKWARD_OVER_FORWARD = 2.0
# Adam step per parameter of the optimizer shard: read fp32 master, two moments and the fp32 main grad
# (16 B), write master and moments (12 B), write the bf16 weight (2 B), zero the main grad (4 B).
OPTIMIZER_BYTES_PER_PARAM = 34
# An FP8 GEMM input is read in bf16 and written in fp8 twice (row- and column-major for the wgrad GEMM).
FP8_CAST_BYTES = BF16_BYTES + 2 * FP8_BYTES
# Shape-aware GEMM efficiency (`shape_efficiency`, issue 41 item 3): a GEMM dimension d reaches d/(d + d½) of the
# rate a large one reaches, d½ = κ · the peak of the precision the GEMM runs at (TFLOP/s): the faster the tensor cores,
# the more work a tile and a wave need to hide operand loads, so FP8 and Blackwell saturate later than BF16 and
# Hopper. κ fitted jointly with the GEMM and expert efficiencies (docs/model.md "Shape-aware GEMM efficiency").
GEMM_HALF_SIZE_PER_TFLOP = 0.2


@dataclass(frozen=True, kw_only=True)
class ComputeParams:
    """What the compute model needs of one GPU: peaks, HBM bandwidth and the catalog's fitted
    `compute_model` parameters (SPEC §4.2)."""

    tflops: dict[str, float]  # dense peak by precision name (every registered one: inputs/precisions.py)
    hbm_tbyte_s: float
    gemm_efficiency: dict[str, float]  # η_gemm by precision name (every registered one)
    attention_efficiency: float
    gemm_overhead_s: float


@dataclass(frozen=True)
class Gemm:
    """One linear layer's forward GEMM on one GPU: output M × N, inner dimension K, `count` per layer."""

    family: str
    m: float
    n: float
    k: float
    fp8: bool  # runs at the FP8 rate when the workload's precision is fp8


@dataclass(frozen=True)
class MicrobatchCompute:
    """Seconds one GPU spends on one microbatch (all its L/p layers, its share of the logits), by family
    and pass; `forward_s` + `backward_s` = the microbatch's compute τ."""

    forward_s: float
    backward_s: float
    by_family_s: dict[str, float]  # qkv, attn_out, ffn_up, ffn_down, logits, attention, elementwise (fwd + bwd)
    gemm_s: float  # linear GEMMs of all passes (the window TP comm overlap could use)
    attention_s: float  # attention core of all passes (the window CP overlaps with)

    @property
    def total_s(self) -> float:
        return self.forward_s + self.backward_s


def shape_efficiency(m: float, n: float, k: float, tflops: float) -> float:
    """S(M, N, K) = M/(M + d½) · N/(N + d½) · K/(K + d½), d½ = κ · peak (`GEMM_HALF_SIZE_PER_TFLOP`): the share
    of η_gemm a GEMM of this shape reaches at this peak (small dimensions fill fewer tiles and waves)."""
    half = GEMM_HALF_SIZE_PER_TFLOP * tflops
    return m / (m + half) * n / (n + half) * k / (k + half)


def gemm_s(m: float, n: float, k: float, *, tflops: float, efficiency: float, hbm_tbyte_s: float,
           overhead_s: float, operand_bytes: float) -> float:
    """One GEMM (output M × N, inner K): max(2MNK/(peak·η·S), bytes/hbm) + t_0, bytes = operand·(MK + KN) + 2·MN,
    S = `shape_efficiency`(M, N, K, peak)."""
    flops_s = 2 * m * n * k / (tflops * TFLOP * efficiency * shape_efficiency(m, n, k, tflops))
    bytes_moved = operand_bytes * (m * k + k * n) + BF16_BYTES * m * n
    return max(flops_s, bytes_moved / (hbm_tbyte_s * TBYTE)) + overhead_s


def layer_gemms(model: TransformerShape, layout: Layout) -> list[Gemm]:
    """The four linear GEMMs of one layer on one GPU (table in the module docstring)."""
    h, f, t = model.hidden_size, model.ffn_hidden_size, layout.tp
    tokens = layout.microbatch_size * model.seq_len / layout.cp
    k_up = 2 if model.ffn_type == "swiglu" else 1
    return [
        Gemm("qkv", tokens, (h + 2 * kv_hidden_size(model)) / t, h, True),
        Gemm("attn_out", tokens, h, h / t, True),
        Gemm("ffn_up", tokens, k_up * f / t, h, True),
        Gemm("ffn_down", tokens, h, f / t, True),
    ]


def logits_gemm(model: TransformerShape, layout: Layout) -> Gemm:
    """The output layer (logits stay in BF16, SPEC §4.2)."""
    tokens = layout.microbatch_size * model.seq_len / layout.cp
    return Gemm("logits", tokens, model.vocab_size / layout.tp, model.hidden_size, False)


def flash_attention_s(executed_flops: float, params: ComputeParams, again: float) -> tuple[float, float]:
    """(forward, backward) of a FlashAttention core executing `executed_flops` per pass: at the BF16 peak · η_attn,
    backward 2.5 × forward, + `again` (1 with full recompute, else 0) forwards."""
    fwd = executed_flops / (params.tflops["bf16"] * TFLOP * params.attention_efficiency)
    return fwd, ATTENTION_BACKWARD_OVER_FORWARD * fwd + again * fwd


def attention_s(workload: Workload, layout: Layout, params: ComputeParams) -> tuple[float, float]:
    """(forward, backward) of one layer's attention core per microbatch, recompute included.

    FlashAttention: 4·s·h/t counted FLOPs per token, half executed (causal), at the BF16 peak · η_attn;
    backward 2.5 × forward (it recomputes the scores itself); full recompute adds a forward. Without
    FlashAttention (Megatron before 2023): the two batched GEMMs execute all counted FLOPs at η_gemm, and
    the softmax, mask and dropout stream (a/t)·b·(s/c)·s scores of SOFTMAX_BYTES_PER_SCORE each way
    (backward twice); selective or full recompute runs that forward again. With CP each GPU holds s/c
    queries against all s keys.
    """
    model = workload.model
    tokens = layout.microbatch_size * model.seq_len / layout.cp
    counted = 4 * model.seq_len * model.hidden_size / layout.tp * tokens
    again = 1.0 if workload.activation_recompute == "full" else 0.0
    if workload.flash_attention:
        return flash_attention_s(counted * CAUSAL_SHARE, params, again)
    bmm = counted / (params.tflops["bf16"] * TFLOP * params.gemm_efficiency["bf16"])
    scores = model.attention_heads / layout.tp * tokens * model.seq_len
    softmax = scores * SOFTMAX_BYTES_PER_SCORE / (params.hbm_tbyte_s * TBYTE * ELEMENTWISE_HBM_EFFICIENCY)
    fwd = bmm + softmax
    again = 1.0 if workload.activation_recompute in ("full", "selective") else 0.0
    return fwd, 2 * fwd + again * fwd


def elementwise_forward_bytes(model: TransformerShape, layout: Layout, fp8: bool) -> float:
    """Bytes the memory-bound forward work of one layer and microbatch moves on one GPU.

    Per token, in elements (SP shards the hidden-sized tensors, TP the MLP): two norms (read + write h
    each, 4h), two residual adds (6h), RoPE on q and k (2·(h + h_kv)), the activation (SwiGLU reads
    gate and up and writes f: 3f; GeLU 2f), GPT-style dropout on the two block outputs (GeLU models,
    read + write + mask ≈ 5h); all ÷ t, 2 bytes each. FP8 adds the casts of the four GEMM inputs
    (h, h, h, f: read 2 B, write 1 B).
    """
    h, f, t = model.hidden_size, model.ffn_hidden_size, layout.tp
    tokens = layout.microbatch_size * model.seq_len / layout.cp
    act = 3 * f if model.ffn_type == "swiglu" else 2 * f + 5 * h
    elements = 4 * h + 6 * h + 2 * (h + kv_hidden_size(model)) + act
    total = elements * BF16_BYTES
    if fp8:
        total += (3 * h + f) * FP8_CAST_BYTES
    return total / t * tokens


def pacing_stage(workload: Workload, layout: Layout, layer_s: float, logits_s: float) -> tuple[float, bool]:
    """(transformer layers, runs the logits) of the stage that sets the pipeline's pace.

    uniform: the last stage, L/p layers and the logits; balanced (p > 1): (L + 2)/p slots per stage,
    the busier of a middle stage ((L + 2)/p layers) and the last ((L + 2)/p − 1 layers and the logits).
    """
    L, p = workload.model.layers, layout.pp
    if p == 1 or workload.pipeline_split == "uniform":
        return L / p, True
    slots = (L + 2) / p
    if (slots - 1) * layer_s + logits_s >= slots * layer_s:
        return slots - 1, True
    return slots, False


# ----------------------------------------------------------------------------------- one compute path
# A microbatch's compute is a plan: parts added in a fixed order (the order fixes the floating-point sums, so a
# plan reproduces its model's numbers to the last digit). Dense and MoE models differ only in their plans
# (`dense_plan` here, `moe.moe_plan`); `time_plan` times any plan.


@dataclass(slots=True)
class Part:
    """A timed part of a layer: a leaf (`forward_s`, `backward_s`: a GEMM group from `gemm_part`, the attention core,
    memory-bound work) or, with `parts`, their sum in order × `share` (how many per average layer, e.g. the MoE
    layers' share L_m/L). `family`: the `by_family_s` key it counts under."""

    forward_s: float = 0.0
    backward_s: float = 0.0
    family: str | None = None
    parts: tuple[Part, ...] | None = None
    share: float = 1.0


def gemm_part(g: Gemm, params: ComputeParams, fp8: bool, family: str | None = None, *, factor: float = 1.0,
              group: float = 1.0, grouped: bool = False, again: bool = False, again_share: float = 0.0) -> Part:
    """A GEMM group as a plan part: forward (M, N, K); backward dgrad (M, K, N) + wgrad (N, K, M), each `gemm_s` at
    η_gemm × `factor` (ε for routed experts). One GEMM counts t₀ inside each `gemm_s`; a grouped GEMM (`grouped`) of
    `group` equal GEMMs launched once counts t₀ once per pass: group · Σ gemm_s(t₀ = 0) + t₀ per GEMM of the pass.
    `again`: its forward runs again in the backward (recompute); `again_share`: that share of its forward does (a
    recomputed piece of it, e.g. MLA's up-projections in qkv)."""
    low = fp8 and g.fp8
    precision = "fp8" if low else "bf16"
    t0 = params.gemm_overhead_s
    kw = dict(tflops=params.tflops[precision], efficiency=params.gemm_efficiency[precision] * factor,
              hbm_tbyte_s=params.hbm_tbyte_s, overhead_s=0.0 if grouped else t0,
              operand_bytes=FP8_BYTES if low else BF16_BYTES)
    fwd = gemm_s(g.m, g.n, g.k, **kw)
    bwd = gemm_s(g.m, g.k, g.n, **kw) + gemm_s(g.n, g.k, g.m, **kw)
    if grouped:
        fwd, bwd = group * fwd + t0, group * bwd + 2 * t0
    if again:
        bwd = bwd + fwd
    if again_share:
        bwd += again_share * fwd
    return Part(fwd, bwd, family)


@dataclass(slots=True)
class ComputePlan:
    """One microbatch's compute as parts: `layer` one average layer, `tail` what the last stage runs more (the logits,
    MTP layers), `families` the keys of `by_family_s` in order (`logits` = the tail). The GEMM window (what TP comm
    overlap uses) is the sum of the `gemm_families`, or with `gemm_parts`: layers × those parts + the tail. Recompute
    is a part's own (in its backward), or, for the `repeat` parts, the sum of their forwards added once at the end
    of the layer's backward (their families count the forward twice)."""

    layer: tuple[Part, ...]
    tail: tuple[Part, ...]
    families: tuple[str, ...]
    gemm_families: tuple[str, ...] = ()
    gemm_parts: tuple[Part, ...] | None = None
    repeat: tuple[Part, ...] = ()


Families = dict[str, tuple[float, float, float]]


def fold(parts: tuple[Part, ...], share: float = 1.0, families: Families | None = None) -> tuple[float, float]:
    """(forward, backward) of parts added in order, a group's sum × its share; `families` collects each family's
    (share of a layer, forward, backward)."""
    fwd = bwd = 0.0
    for part in parts:
        if part.parts is None:
            f, b = part.forward_s, part.backward_s
            inner = share
        else:
            inner = share * part.share
            f, b = fold(part.parts, inner, families)
        if families is not None and part.family is not None:
            families[part.family] = (inner, f, b)
        if part.parts is not None:
            f, b = part.share * f, part.share * b
        fwd, bwd = fwd + f, bwd + b
    return fwd, bwd


def time_plan(plan: ComputePlan, workload: Workload, layout: Layout) -> MicrobatchCompute:
    """Time a plan on the pacing stage (`pacing_stage`): forward = layers · Σ layer forwards + tail forward when the
    pacing stage is the last one, likewise backward; each family layers · share · (f + b), `logits` the tail's."""
    recorded: Families = {}
    layer_f, layer_b = fold(plan.layer, 1.0, recorded)
    if plan.repeat:
        layer_b = layer_b + fold(plan.repeat)[0]
    tail_f, tail_b = fold(plan.tail)
    layers, logits = pacing_stage(workload, layout, layer_f + layer_b, tail_f + tail_b)
    on_last = 1.0 if logits else 0.0
    repeated = {part.family for part in plan.repeat}
    scaled = {name: layers * share * (fwd * 2.0 + bwd if name in repeated else fwd + bwd)
              for name, (share, fwd, bwd) in recorded.items()}
    scaled["logits"] = on_last * (tail_f + tail_b)
    fams = {name: scaled[name] for name in plan.families}
    if plan.gemm_parts is None:
        gemm_total = sum(fams[g] for g in plan.gemm_families)
    else:
        gemm_f, gemm_b = fold(plan.gemm_parts)
        gemm_total = layers * (gemm_f + gemm_b) + on_last * (tail_f + tail_b)
    return MicrobatchCompute(layers * layer_f + on_last * tail_f, layers * layer_b + on_last * tail_b, fams,
                             gemm_total, fams["attention"])


DENSE_FAMILIES = ("qkv", "attn_out", "ffn_up", "ffn_down", "attention", "elementwise", "logits")


def dense_plan(workload: Workload, layout: Layout, params: ComputeParams) -> ComputePlan:
    """A dense layer's plan (`ComputePlan`): the four linear GEMMs (t₀ in each), the attention core
    (`attention_s`), the element-wise work (`elementwise_forward_bytes` at hbm · η_hbm, backward 2×); full recompute
    repeats every forward; the logits on the last stage; the GEMM window is the sum of the GEMM families."""
    model, fp8 = workload.model, workload.precision == "fp8"
    gemms = [gemm_part(g, params, fp8, g.family) for g in layer_gemms(model, layout)]
    att_f, att_b = attention_s(workload, layout, params)
    ew_f = elementwise_forward_bytes(model, layout, fp8) / (params.hbm_tbyte_s * TBYTE * ELEMENTWISE_HBM_EFFICIENCY)
    elementwise = Part(ew_f, ELEMENTWISE_BACKWARD_OVER_FORWARD * ew_f, "elementwise")
    layer = (*gemms, Part(att_f, att_b, "attention"), elementwise)
    return ComputePlan(layer, (gemm_part(logits_gemm(model, layout), params, fp8),), DENSE_FAMILIES,
                       gemm_families=("qkv", "attn_out", "ffn_up", "ffn_down", "logits"),
                       repeat=(*gemms, elementwise) if workload.activation_recompute == "full" else ())


def microbatch_compute(workload: Workload, layout: Layout, params: ComputeParams) -> MicrobatchCompute:
    """Compute of one microbatch on the pacing stage: its layers (forward, backward, and the forward again
    with full recompute) and, on the last stage, the logits (`dense_plan` timed by `time_plan`). SPEC §4.2."""
    return time_plan(dense_plan(workload, layout, params), workload, layout)


def optimizer_step_s(params_in_shard: float, params: ComputeParams) -> float:
    """Adam over the GPU's optimizer shard: OPTIMIZER_BYTES_PER_PARAM per parameter at hbm_tbyte_s · η_hbm."""
    return params_in_shard * OPTIMIZER_BYTES_PER_PARAM / (params.hbm_tbyte_s * TBYTE * ELEMENTWISE_HBM_EFFICIENCY)
