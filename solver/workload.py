"""Performance model of one synchronous training step (SPEC §4).

Pure functions of plain floats: FLOPs, bytes per GPU per traffic class (split NVLink / scale-out),
memory per GPU and the step-time breakdown of one parallel layout on one machine. Used by both
`evaluate` and the optimisation model, so no I/O and nothing slow in `performance`.

Notation (SPEC §4): L layers, h hidden, f ffn hidden, a heads, a_kv kv heads, h_kv = h·a_kv/a,
V vocab, s sequence, B global batch, b microbatch, t/c/p/v/d tensor/context/pipeline/virtual/data
parallel degrees, N = t·c·p·d GPUs, m = B/(d·b) microbatches, β = 2 bytes per activation.
"""
from __future__ import annotations

from dataclasses import dataclass

from solver.schema import Catalog, Scenario, TransformerShape, Workload

ACTIVATION_BYTES = 2  # β: activations are communicated and stored in bf16, also for fp8 GEMMs
WEIGHT_BYTES = 2  # bf16 weights
GRAD_BYTES = 2  # β_grad: bf16 gradients
OPTIMIZER_BYTES = 12  # fp32 master weights + two Adam moments
TP_ALLREDUCES_PER_LAYER = 4  # n_tp with sequence parallelism: 2 forward + 2 backward
TP_ALLREDUCES_FULL_RECOMPUTE = 2  # the recomputed forward repeats its 2
ACTIVATION_BYTES_PER_LAYER_COEF = 34  # Korthikanti et al. eq. 2: 34·s·b·h bytes per layer
ATTENTION_MATRIX_COEF = 5  # Korthikanti et al.: 5·a·s²·b bytes of softmax and dropout
FULL_RECOMPUTE_ACTIVATION_COEF = 2  # only each layer's input (bf16) is kept
GB = 1e9
DOMINANT_SHARE = 0.10  # a term is "dominant" from this share of the step time


# ----------------------------------------------------------------------------------- types


@dataclass(frozen=True)
class Layout:
    """One parallel layout. Ranks are ordered tp fastest, then cp, dp, pp (Megatron's order)."""

    tp: int
    cp: int
    pp: int
    vp: int
    dp: int
    microbatch_size: int
    gpus_per_domain_used: int  # G_u: GPUs of the job placed in each NVLink domain

    @property
    def gpus(self) -> int:
        return self.tp * self.cp * self.pp * self.dp

    @property
    def domains(self) -> int:
        """NVLink domains the job occupies: N / G_u (placement makes it whole), at least one."""
        return max(1, -(-self.gpus // self.gpus_per_domain_used))


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class OverlapFractions:
    """φ_k: share of T_comp behind which class k's communication can hide (SPEC §4.5)."""

    tp: float
    cp: float
    pp: float
    dp: float


# Calibrated against reference/calibration.md (tests/test_calibration.py; docs/model.md has the fit).
# tp = 0: Korthikanti Table 5 (A100, TP=8, no DP) and NeMo 24.07 TP=2..8 rows fit best with TP fully
#     exposed: the sequence-parallel all-gather/reduce-scatter sit on the critical path of each GEMM.
# cp = 0: NeMo 24.07 LLAMA3-8B/70B (CP=2) fit best with the K/V exchange exposed (conservative).
# pp = 0.5: P2P sends run on their own stream beside the next microbatch; no row is sensitive to it
#     (NeMo GPT3-175B, LLAMA2-70B, Nemotron-340B, Megatron-Bridge H100 LLAMA3-70B fit for any 0.25..0.75).
# dp = 0.8: gradient reduce-scatter/all-gather hide behind backward (Megatron --overlap-grad-reduce,
#     FSDP prefetch); NeMo GPT3-5B (DP=64 over IB) and MosaicML FSDP rows fit for any 0.5..1.0.
DEFAULT_OVERLAP = OverlapFractions(tp=0.0, cp=0.0, pp=0.5, dp=0.8)

TERMS = ("compute", "bubble", "tp", "cp", "pp", "dp")
CLASSES = ("tp", "cp", "pp", "dp")


@dataclass(frozen=True)
class Performance:
    """Every term of one step (SPEC §4, §8.3). Times in s, bytes per GPU per step, memory in GB."""

    params: int
    flops_model: float
    flops_hardware: float
    gpus: int
    microbatches: int
    compute_s: float
    bubble_s: float
    tp_s: float
    cp_s: float
    pp_s: float
    dp_s: float
    tp_exposed_s: float
    cp_exposed_s: float
    pp_exposed_s: float
    dp_exposed_s: float
    exposed_comm_s: float
    step_time_s: float
    tp_nvlink_bytes: float
    tp_scaleout_bytes: float
    cp_nvlink_bytes: float
    cp_scaleout_bytes: float
    pp_nvlink_bytes: float
    pp_scaleout_bytes: float
    dp_nvlink_bytes: float
    dp_scaleout_bytes: float
    nvlink_bytes: float
    scaleout_bytes: float
    memory_states_gb: float
    memory_activations_gb: float
    memory_per_gpu_gb: float
    hbm_usable_gb: float
    fits_memory: bool
    mfu: float
    hardware_tflops_per_gpu: float
    dominant_terms: tuple[str, ...]

    def breakdown_s(self) -> dict[str, float]:
        """compute + bubble + tp + cp + pp + dp (exposed) = step_time_s."""
        return {
            "compute": self.compute_s,
            "bubble": self.bubble_s,
            "tp": self.tp_exposed_s,
            "cp": self.cp_exposed_s,
            "pp": self.pp_exposed_s,
            "dp": self.dp_exposed_s,
            "exposed_comm": self.exposed_comm_s,
        }

    def to_dict(self) -> dict:
        """The performance pieces of a design in the JSON result (SPEC §8.3)."""
        per_class = {
            k: {"nvlink": getattr(self, f"{k}_nvlink_bytes"), "scaleout": getattr(self, f"{k}_scaleout_bytes")}
            for k in CLASSES
        }
        return {
            "step_time_s": self.step_time_s,
            "breakdown_s": self.breakdown_s(),
            "comm_s": {k: getattr(self, f"{k}_s") for k in CLASSES},
            "bytes_per_gpu": {"nvlink": self.nvlink_bytes, "scaleout": self.scaleout_bytes, **per_class},
            "flops_per_step": {"model": self.flops_model, "hardware": self.flops_hardware},
            "mfu": self.mfu,
            "hardware_tflops_per_gpu": self.hardware_tflops_per_gpu,
            "memory_per_gpu_gb": self.memory_per_gpu_gb,
            "memory_gb": {
                "states": self.memory_states_gb,
                "activations": self.memory_activations_gb,
                "usable_hbm": self.hbm_usable_gb,
                "fits": self.fits_memory,
            },
            "params": self.params,
            "gpus": self.gpus,
            "microbatches": self.microbatches,
            "dominant_terms": list(self.dominant_terms),
        }


# ----------------------------------------------------------------------------------- model size


def kv_hidden_size(model: TransformerShape) -> float:
    """h_kv = h · a_kv / a (the width of K and V under grouped-query attention)."""
    kv_heads = model.kv_heads or model.attention_heads
    return model.hidden_size * kv_heads / model.attention_heads


def matmul_params_per_layer(model: TransformerShape) -> float:
    """P_mm = h·(h + 2·h_kv) + h·h + k_ff·h·f, k_ff = 3 (swiglu) or 2 (gelu). SPEC 4.1."""
    h = model.hidden_size
    k_ff = 3 if model.ffn_type == "swiglu" else 2
    return h * (h + 2 * kv_hidden_size(model)) + h * h + k_ff * h * model.ffn_hidden_size


def parameter_count(model: TransformerShape) -> int:
    """P = L·(P_mm + 2·h) + h + V·h·(1 if tied else 2).

    Two norm weight vectors per layer plus the final norm; biases and learned position
    embeddings are left out (under 0.1 % of any model here).
    """
    h = model.hidden_size
    embeddings = model.vocab_size * h * (1 if model.tied_embeddings else 2)
    return int(round(model.layers * (matmul_params_per_layer(model) + 2 * h) + h + embeddings))


# ----------------------------------------------------------------------------------- FLOPs


def flops_per_step(workload: Workload) -> tuple[float, float]:
    """(F_model, F_hardware) per step. SPEC 4.1.

    F_model = 3·B·s·(L·(2·P_mm + 4·s·h) + 2·h·V)
    F_hw    = F_model + B·s·L·(2·P_mm + 4·s·h)   (full recompute: one more forward of every layer)
            = F_model + B·s·L·4·s·h              (selective: the attention core again)
    """
    m = workload.model
    h, s, L = m.hidden_size, m.seq_len, m.layers
    tokens = workload.global_batch_size * s
    layer_forward = 2 * matmul_params_per_layer(m) + 4 * s * h
    model_flops = 3 * tokens * (L * layer_forward + 2 * h * m.vocab_size)
    if workload.activation_recompute == "full":
        extra = tokens * L * layer_forward
    elif workload.activation_recompute == "selective":
        extra = tokens * L * 4 * s * h
    else:
        extra = 0.0
    return float(model_flops), float(model_flops + extra)


# ----------------------------------------------------------------------------------- placement


def ranks_in_domain(group_size: int, stride: int, gpus_per_domain_used: int) -> float:
    """n_in: ranks of a group (size n, rank stride S) that share one NVLink domain of G_u GPUs.

    n_in = n if S·n ≤ G_u; 1 if S ≥ G_u; else G_u / S.
    """
    if stride * group_size <= gpus_per_domain_used:
        return group_size
    if stride >= gpus_per_domain_used:
        return 1
    return gpus_per_domain_used / stride


def group_strides(layout: Layout) -> dict[str, int]:
    """Rank strides with tp fastest, then cp, dp, pp: S_tp=1, S_cp=t, S_dp=t·c, S_pp=t·c·d."""
    t, c, d = layout.tp, layout.cp, layout.dp
    return {"tp": 1, "cp": t, "dp": t * c, "pp": t * c * d}


def _alignment_problem(name: str, size: int, stride: int, g_u: int, job_in_one_domain: bool) -> str | None:
    """Groups must tile the domains evenly; see `placement_problem`."""
    if size == 1 or job_in_one_domain:
        return None
    if stride * size <= g_u:
        if g_u % (stride * size):
            return f"{name} group spans {stride * size} GPUs, which does not divide {g_u} GPUs per domain"
        return None
    if stride % g_u == 0:
        return None
    if g_u % stride == 0 and size % (g_u // stride) == 0:
        return None
    return f"{name} group (size {size}, stride {stride}) straddles NVLink domains of {g_u} GPUs unevenly"


def _shape_problem(layout: Layout, workload: Workload) -> str | None:
    """Divisibility rules of the model shape and the batch."""
    m = workload.model
    t, c, p, v, d, b = layout.tp, layout.cp, layout.pp, layout.vp, layout.dp, layout.microbatch_size
    if min(t, c, p, v, d, b) < 1:
        return "every parallel degree and the microbatch size must be at least 1"
    if workload.global_batch_size % (d * b):
        return f"global batch {workload.global_batch_size} is not a multiple of dp·microbatch = {d * b}"
    if p * v > m.layers:
        return f"pp·vp = {p * v} exceeds the {m.layers} layers"
    if v > 1 and p == 1:
        return "virtual pipeline stages need pp > 1"
    if m.attention_heads % t or (m.kv_heads or m.attention_heads) % t:
        return f"tp = {t} must divide the attention heads and the kv heads"
    if m.seq_len % c:
        return f"cp = {c} must divide the sequence length {m.seq_len}"
    return None


def placement_problem(layout: Layout, workload: Workload, gpus_per_domain: int) -> str | None:
    """None when the layout can be placed on domains of `gpus_per_domain` GPUs, else why not.

    The job uses G_u GPUs per domain; TP lives inside a domain (t | G_u); N is a multiple of G_u
    (or the whole job sits in one domain and N | G_u); each group tiles the domains evenly.
    """
    problem = _shape_problem(layout, workload)
    if problem:
        return problem
    g_u, n = layout.gpus_per_domain_used, layout.gpus
    if not 1 <= g_u <= gpus_per_domain:
        return f"gpus_per_domain_used = {g_u} must be between 1 and the domain size {gpus_per_domain}"
    if g_u % layout.tp:
        return f"tp = {layout.tp} must divide the {g_u} GPUs used per NVLink domain"
    job_in_one_domain = n < g_u
    if job_in_one_domain and g_u % n:
        return f"a job of {n} GPUs inside one domain must divide the {g_u} GPUs used per domain"
    if not job_in_one_domain and n % g_u:
        return f"{n} GPUs is not a whole number of domains of {g_u} GPUs"
    sizes = {"tp": layout.tp, "cp": layout.cp, "dp": layout.dp, "pp": layout.pp}
    for name, stride in group_strides(layout).items():
        problem = _alignment_problem(name, sizes[name], stride, g_u, job_in_one_domain)
        if problem:
            return problem
    return None


# ----------------------------------------------------------------------------------- bytes


def collective_bytes(volume_factor: float, size: int, n_in: float, message_bytes: float) -> tuple[float, float]:
    """(NVLink, scale-out) bytes per GPU of a hierarchical collective. SPEC 4.4.

    nvlink   = κ·(n_in − 1)/n_in · M
    scaleout = κ·(n_out − 1)/n_out · M / n_in,   n_out = n / n_in
    κ = 2 for all-reduce, 1 for all-gather or reduce-scatter.
    """
    if size <= 1:
        return 0.0, 0.0
    n_out = size / n_in
    nvlink = volume_factor * (n_in - 1) / n_in * message_bytes
    scaleout = volume_factor * (n_out - 1) / n_out * message_bytes / n_in
    return nvlink, scaleout


def tp_bytes(workload: Workload, layout: Layout, microbatches: int) -> tuple[float, float]:
    """TP: m·(L/p)·n_tp·2·(t−1)/t·b·(s/c)·h·β per GPU, all over NVLink (t | G_u). SPEC 4.3.

    n_tp = 4 all-reduce equivalents per layer and microbatch (+2 with full recompute).
    """
    m = workload.model
    n_tp = TP_ALLREDUCES_PER_LAYER
    if workload.activation_recompute == "full":
        n_tp += TP_ALLREDUCES_FULL_RECOMPUTE
    message = layout.microbatch_size * m.seq_len / layout.cp * m.hidden_size * ACTIVATION_BYTES
    per_layer = collective_bytes(2 * n_tp, layout.tp, layout.tp, message)
    layers = microbatches * m.layers / layout.pp
    return per_layer[0] * layers, per_layer[1] * layers


def cp_bytes(workload: Workload, layout: Layout, microbatches: int) -> tuple[float, float]:
    """CP: m·(L/p)·3·(c−1)/c·M, M = 2·b·s·(h_kv/t)·β (K and V gathered fwd and bwd, dK/dV
    reduce-scattered), split hierarchically over the cp group's domains. SPEC 4.3."""
    m = workload.model
    message = 2 * layout.microbatch_size * m.seq_len * kv_hidden_size(m) / layout.tp * ACTIVATION_BYTES
    n_in = ranks_in_domain(layout.cp, layout.tp, layout.gpus_per_domain_used)
    per_layer = collective_bytes(3, layout.cp, n_in, message)
    layers = microbatches * m.layers / layout.pp
    return per_layer[0] * layers, per_layer[1] * layers


def pp_bytes(workload: Workload, layout: Layout, microbatches: int) -> tuple[float, float]:
    """PP: 2·m·v·b·(s/c)·h·β/t per GPU (activations forward, gradients backward). SPEC 4.3.

    Over NVLink only when all p stages share a domain; otherwise over the scale-out fabric, since
    the slowest stage boundary sets the pace of the whole pipeline.
    """
    if layout.pp == 1:
        return 0.0, 0.0
    m = workload.model
    volume = (
        2 * microbatches * layout.vp * layout.microbatch_size * m.seq_len / layout.cp
        * m.hidden_size * ACTIVATION_BYTES / layout.tp
    )
    stride = layout.tp * layout.cp * layout.dp
    if ranks_in_domain(layout.pp, stride, layout.gpus_per_domain_used) == layout.pp:
        return volume, 0.0
    return 0.0, volume


def dp_bytes(workload: Workload, layout: Layout, params: int) -> tuple[float, float]:
    """DP: κ·(d−1)/d·M with M = P/(t·p)·β_grad, κ = 2 (all-reduce, or reduce-scatter + all-gather
    of the distributed optimizer), κ = 3 for fsdp (one more parameter all-gather). SPEC 4.3."""
    kappa = 3 if workload.optimizer == "fsdp" else 2
    message = params / (layout.tp * layout.pp) * GRAD_BYTES
    stride = layout.tp * layout.cp
    n_in = ranks_in_domain(layout.dp, stride, layout.gpus_per_domain_used)
    return collective_bytes(kappa, layout.dp, n_in, message)


# ----------------------------------------------------------------------------------- memory


def memory_states_gb(workload: Workload, layout: Layout, params: int) -> float:
    """P/(t·p)·(2 + β_grad + 12) bytes; the 12 ÷ d for `distributed`, everything ÷ d for `fsdp`. SPEC 4.6."""
    shard = params / (layout.tp * layout.pp)
    d = layout.dp
    if workload.optimizer == "fsdp":
        per_param = (WEIGHT_BYTES + GRAD_BYTES + OPTIMIZER_BYTES) / d
    elif workload.optimizer == "distributed":
        per_param = WEIGHT_BYTES + GRAD_BYTES + OPTIMIZER_BYTES / d
    else:
        per_param = WEIGHT_BYTES + GRAD_BYTES + OPTIMIZER_BYTES
    return shard * per_param / GB


def memory_activations_gb(workload: Workload, layout: Layout) -> float:
    """Korthikanti et al. activations with sequence parallelism, per GPU. SPEC 4.6.

    per layer and microbatch: s·b·h·(34/t + 5·a·s/(h·t))/c   (none; FlashAttention drops 5·a·s/h)
                              34·s·b·h/(t·c)                  (selective)
                              2·s·b·h/c                       (full)
    × L/p layers × p in-flight microbatches (1F1B, first stage) = × L.
    """
    m = workload.model
    t, c = layout.tp, layout.cp
    sbh = m.seq_len * layout.microbatch_size * m.hidden_size
    if workload.activation_recompute == "full":
        per_layer = FULL_RECOMPUTE_ACTIVATION_COEF * sbh / c
    else:
        coef = ACTIVATION_BYTES_PER_LAYER_COEF / t
        if workload.activation_recompute == "none" and not workload.flash_attention:
            coef += ATTENTION_MATRIX_COEF * m.attention_heads * m.seq_len / (m.hidden_size * t)
        per_layer = sbh * coef / c
    return per_layer * m.layers / GB


# ----------------------------------------------------------------------------------- time


def transfer_s(nvlink_bytes: float, scaleout_bytes: float, hw: Hardware) -> float:
    """T_k = nvlink_bytes/(nvlink_gbyte_s·1e9·η_nvlink) + scaleout_bytes/(bw_so·1e9)."""
    return nvlink_bytes / (hw.nvlink_effective_gbyte_s * GB) + scaleout_bytes / (hw.scaleout_effective_gbyte_s * GB)


def compute_s(flops_hardware: float, gpus: int, hw: Hardware) -> float:
    """T_comp = F_hw / (N · peak · 1e12 · η_compute). SPEC 4.2."""
    return flops_hardware / (gpus * hw.peak_tflops * 1e12 * hw.compute_efficiency)


def bubble_s(compute: float, layout: Layout, microbatches: int) -> float:
    """1F1B bubble (interleaved when v > 1): T_comp · (p − 1)/(v · m). SPEC 4.2."""
    return compute * (layout.pp - 1) / (layout.vp * microbatches)


def exposed_s(comm: float, overlap: float, compute: float) -> float:
    """Exposed_k = max(0, T_k − φ_k · T_comp). SPEC 4.5."""
    return max(0.0, comm - overlap * compute)


def _dominant(terms: dict[str, float], step: float) -> tuple[str, ...]:
    """Terms from DOMINANT_SHARE of the step upward, largest first (always at least one)."""
    ranked = sorted(terms, key=terms.get, reverse=True)
    big = tuple(k for k in ranked if terms[k] >= DOMINANT_SHARE * step)
    return big or (ranked[0],)


def performance(workload: Workload, layout: Layout, hw: Hardware, overlap: OverlapFractions) -> Performance:
    """Step time and every term of it. SPEC 4.2–4.6.

    step = T_comp + bubble + Σ_k max(0, T_k − φ_k·T_comp); MFU = F_model/(step·N·peak·1e12).
    The layout is assumed placeable (see `placement_problem`); m = B/(d·b) is then an integer.
    Stages may hold a fractional number of layers: L/p is used as a real number.
    """
    params = parameter_count(workload.model)
    flops_model, flops_hw = flops_per_step(workload)
    n = layout.gpus
    micro = workload.global_batch_size // (layout.dp * layout.microbatch_size)
    comp = compute_s(flops_hw, n, hw)
    bubble = bubble_s(comp, layout, micro)
    split = {
        "tp": tp_bytes(workload, layout, micro),
        "cp": cp_bytes(workload, layout, micro),
        "pp": pp_bytes(workload, layout, micro),
        "dp": dp_bytes(workload, layout, params),
    }
    comm = {k: transfer_s(nv, so, hw) for k, (nv, so) in split.items()}
    phi = {"tp": overlap.tp, "cp": overlap.cp, "pp": overlap.pp, "dp": overlap.dp}
    exposed = {k: exposed_s(comm[k], phi[k], comp) for k in CLASSES}
    exposed_comm = exposed["tp"] + exposed["cp"] + exposed["pp"] + exposed["dp"]
    step = comp + bubble + exposed_comm
    states = memory_states_gb(workload, layout, params)
    activations = memory_activations_gb(workload, layout)
    terms = {"compute": comp, "bubble": bubble, **exposed}
    return Performance(
        params=params,
        flops_model=flops_model,
        flops_hardware=flops_hw,
        gpus=n,
        microbatches=micro,
        compute_s=comp,
        bubble_s=bubble,
        tp_s=comm["tp"],
        cp_s=comm["cp"],
        pp_s=comm["pp"],
        dp_s=comm["dp"],
        tp_exposed_s=exposed["tp"],
        cp_exposed_s=exposed["cp"],
        pp_exposed_s=exposed["pp"],
        dp_exposed_s=exposed["dp"],
        exposed_comm_s=exposed_comm,
        step_time_s=step,
        tp_nvlink_bytes=split["tp"][0],
        tp_scaleout_bytes=split["tp"][1],
        cp_nvlink_bytes=split["cp"][0],
        cp_scaleout_bytes=split["cp"][1],
        pp_nvlink_bytes=split["pp"][0],
        pp_scaleout_bytes=split["pp"][1],
        dp_nvlink_bytes=split["dp"][0],
        dp_scaleout_bytes=split["dp"][1],
        nvlink_bytes=sum(v[0] for v in split.values()),
        scaleout_bytes=sum(v[1] for v in split.values()),
        memory_states_gb=states,
        memory_activations_gb=activations,
        memory_per_gpu_gb=states + activations,
        hbm_usable_gb=hw.hbm_usable_gb,
        fits_memory=states + activations <= hw.hbm_usable_gb,
        mfu=flops_model / (step * n * hw.peak_tflops * 1e12),
        hardware_tflops_per_gpu=flops_hw / (step * n) / 1e12,
        dominant_terms=_dominant(terms, step),
    )


def tokens_per_s_per_gpu(workload: Workload, perf: Performance) -> float:
    """Throughput B·s / (step · N), the unit NeMo and Megatron-Bridge publish."""
    return workload.global_batch_size * workload.model.seq_len / (perf.step_time_s * perf.gpus)


# ----------------------------------------------------------------------------------- inputs


def hardware_for(
    scenario: Scenario,
    catalog: Catalog,
    platform_id: str,
    nic_id: str,
    rails_per_node: int,
    oversubscription: float,
) -> Hardware:
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


def overlap_for(scenario: Scenario) -> OverlapFractions:
    """DEFAULT_OVERLAP with the scenario's `overlap:` values (0 is a valid override) applied."""
    values = {}
    for name in CLASSES:
        override = getattr(scenario.overlap, name)
        values[name] = getattr(DEFAULT_OVERLAP, name) if override is None else override
    return OverlapFractions(**values)
