"""Parallel layouts and where their ranks sit (SPEC §4.4): the only vocabulary for parallel degrees.

A `LayoutShape` is (tp, cp, pp, vp, microbatch, ep, etp); a `Layout` adds the data-parallel degree dp
and G_u, the GPUs of the job placed in each NVLink domain. Both are keyword-only, so adding a degree
can never shift an argument silently. `layout_shapes` is the one generator of the shapes a scenario
allows; the design space and the exhaustive enumeration both use it.

Ranks are ordered tp fastest, then cp, dp, pp (Megatron's order). A group whose ranks all sit in one
NVLink domain communicates over NVLink only. Mixture-of-Experts layers (SPEC §4.7) re-group the
t·c·d ranks of one pipeline stage as etp fastest, then ep, then edp = t·c·d/(ep·etp) (Megatron's
expert rank order, docs/sources.md [M4]): experts are carved out of the data-parallel ranks.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from ..inputs.schema import Scenario, Workload, as_list
from ..integers import divisors

DEFAULT_TP = [1, 2, 4, 8]
DEFAULT_PP = [1, 2, 4, 8, 16, 32]
DEFAULT_VP = [1, 2, 4]
DEFAULT_MICROBATCH = [1, 2, 4]
DEFAULT_EP = [1, 2, 4, 8, 16, 32, 64]  # those that divide the experts
DEFAULT_ETP = [1]  # every published recipe read uses ETP = 1 (docs/sources.md [M9])


@dataclass(frozen=True, kw_only=True, order=True)
class LayoutShape:
    """A layout without its data-parallel degree and placement: (tp, cp, pp, vp, microbatch, ep, etp)."""

    tp: int
    cp: int
    pp: int
    vp: int
    microbatch_size: int
    ep: int = 1
    etp: int = 1

    def layout(self, *, dp: int, gpus_per_domain_used: int) -> Layout:
        return Layout(tp=self.tp, cp=self.cp, pp=self.pp, vp=self.vp, dp=dp, microbatch_size=self.microbatch_size,
                      gpus_per_domain_used=gpus_per_domain_used, ep=self.ep, etp=self.etp)

    def describe(self) -> str:
        return f"tp={self.tp} cp={self.cp} pp={self.pp} vp={self.vp} mbs={self.microbatch_size}" + expert_text(self)


class _ExpertDegrees(Protocol):
    @property
    def ep(self) -> int: ...

    @property
    def etp(self) -> int: ...


def expert_text(shape: _ExpertDegrees) -> str:
    """" ep=… etp=…" for an expert-parallel layout, "" otherwise (dense layouts read as before)."""
    if shape.ep == 1 and shape.etp == 1:
        return ""
    return f" ep={shape.ep}" + (f" etp={shape.etp}" if shape.etp > 1 else "")


@dataclass(frozen=True, kw_only=True)
class Layout:
    """One parallel layout. Ranks are ordered tp fastest, then cp, dp, pp (Megatron's order)."""

    tp: int
    cp: int
    pp: int
    vp: int
    dp: int
    microbatch_size: int
    gpus_per_domain_used: int  # G_u: GPUs of the job placed in each NVLink domain
    ep: int = 1  # expert parallelism (Mixture-of-Experts layers)
    etp: int = 1  # expert tensor parallelism

    @property
    def gpus(self) -> int:
        return self.tp * self.cp * self.pp * self.dp

    @property
    def edp(self) -> int:
        """Expert data parallelism: edp = t·c·d / (ep·etp) (an integer for a placeable layout)."""
        return self.tp * self.cp * self.dp // (self.ep * self.etp)

    @property
    def domains(self) -> int:
        """NVLink domains the job occupies: N / G_u (placement makes it whole), at least one."""
        return max(1, -(-self.gpus // self.gpus_per_domain_used))

    @property
    def shape(self) -> LayoutShape:
        return LayoutShape(tp=self.tp, cp=self.cp, pp=self.pp, vp=self.vp, microbatch_size=self.microbatch_size,
                           ep=self.ep, etp=self.etp)

    def with_dp(self, dp: int) -> Layout:
        return replace(self, dp=dp)

    def microbatches(self, global_batch_size: int) -> int:
        """m = B / (d·b) (an integer for a placeable layout)."""
        return global_batch_size // (self.dp * self.microbatch_size)

    def describe(self) -> str:
        return (f"tp={self.tp} cp={self.cp} pp={self.pp} vp={self.vp} dp={self.dp} mbs={self.microbatch_size}"
                + expert_text(self))


# ----------------------------------------------------------------------------------- allowed shapes


def _allowed(values: list | None, pinned, default: list) -> list:
    if pinned is not None:
        return [pinned]
    return list(values) if values is not None else list(default)


def allowed_parallelism(scenario: Scenario) -> dict[str, list[int]]:
    """Allowed values per degree: the scenario's `parallelism` lists, pins, else the defaults
    (cp up to 8 from 32k tokens; pp ≤ L; ep and etp 1 for dense models, ep ∈ {1, 2, … 64} dividing
    the experts and etp = 1 for Mixture-of-Experts models)."""
    par, pin, model = scenario.parallelism, scenario.pin, scenario.workload.model
    cp_default = [1, 2, 4, 8] if model.seq_len >= 32768 else [1, 2]
    experts = model.moe.experts if model.moe is not None else 1
    return {
        "tp": _allowed(as_list(par.tp), pin.tp, DEFAULT_TP),
        "cp": _allowed(as_list(par.cp), pin.cp, cp_default),
        "pp": [p for p in _allowed(as_list(par.pp), pin.pp, DEFAULT_PP) if p <= model.layers],
        "vp": _allowed(as_list(par.vp), pin.vp, DEFAULT_VP),
        "microbatch_size": _allowed(as_list(par.microbatch_size), pin.microbatch_size, DEFAULT_MICROBATCH),
        "ep": _allowed(as_list(par.ep), pin.ep, [e for e in DEFAULT_EP if experts % e == 0]),
        "etp": _allowed(as_list(par.etp), pin.etp, DEFAULT_ETP),
    }


def layout_shapes(scenario: Scenario) -> list[LayoutShape]:
    """Every allowed (t, c, p, v, b, ep, etp); interleaving only with pipelining; b divides the batch."""
    par, wl = allowed_parallelism(scenario), scenario.workload
    return [LayoutShape(tp=t, cp=c, pp=p, vp=v, microbatch_size=b, ep=e, etp=et)
            for t in par["tp"] for c in par["cp"] for p in par["pp"] for v in par["vp"]
            for b in par["microbatch_size"] for e in par["ep"] for et in par["etp"]
            if not (v > 1 and p == 1) and wl.global_batch_size % b == 0]


def dp_candidates(scenario: Scenario, shape: LayoutShape) -> list[int]:
    """Data-parallel degrees to try: the pinned one, else every d with d·b dividing B."""
    wl, pin_dp = scenario.workload, scenario.pin.dp
    candidates = [pin_dp] if pin_dp is not None else divisors(wl.global_batch_size // shape.microbatch_size)
    return [d for d in candidates if wl.global_batch_size % (d * shape.microbatch_size) == 0]


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
    """Rank strides with tp fastest, then cp, dp, pp: S_tp=1, S_cp=t, S_dp=t·c, S_pp=t·c·d; the
    expert groups of a stage: S_etp=1, S_ep=etp, S_edp=etp·ep."""
    t, c, d = layout.tp, layout.cp, layout.dp
    return {"tp": 1, "cp": t, "dp": t * c, "pp": t * c * d, "etp": 1, "ep": layout.etp, "edp": layout.etp * layout.ep}


def group_sizes(layout: Layout) -> dict[str, int]:
    return {"tp": layout.tp, "cp": layout.cp, "dp": layout.dp, "pp": layout.pp, "etp": layout.etp, "ep": layout.ep,
            "edp": layout.edp}


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
    slots = m.layers + (2 if workload.pipeline_split == "balanced" and p > 1 else 0)
    if p * v > slots:
        return f"pp·vp = {p * v} exceeds the {slots} layers" + (" (with the embedding and the loss)" if slots > m.layers else "")
    if v > 1 and p == 1:
        return "virtual pipeline stages need pp > 1"
    if m.attention_heads % t or (m.kv_heads or m.attention_heads) % t:
        return f"tp = {t} must divide the attention heads and the kv heads"
    if m.seq_len % c:
        return f"cp = {c} must divide the sequence length {m.seq_len}"
    return _expert_problem(layout, workload)


def _expert_problem(layout: Layout, workload: Workload) -> str | None:
    """Expert parallelism: only for MoE models; ep divides the experts, etp the expert width, and
    ep·etp the t·c·d ranks of a pipeline stage (experts are carved out of the data-parallel ranks)."""
    ep, etp, moe = layout.ep, layout.etp, workload.model.moe
    if min(ep, etp) < 1:
        return "ep and etp must be at least 1"
    if moe is None:
        return None if ep == etp == 1 else "ep and etp need a Mixture-of-Experts model (workload.model.moe)"
    if moe.experts % ep:
        return f"ep = {ep} must divide the {moe.experts} experts"
    if moe.expert_ffn_hidden_size % etp:
        return f"etp = {etp} must divide the expert width {moe.expert_ffn_hidden_size}"
    stage = layout.tp * layout.cp * layout.dp
    if stage % (ep * etp):
        return f"ep·etp = {ep * etp} must divide the tp·cp·dp = {stage} ranks of a pipeline stage"
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
    if g_u % layout.etp:
        return f"etp = {layout.etp} must divide the {g_u} GPUs used per NVLink domain"
    job_in_one_domain = n < g_u
    if job_in_one_domain and g_u % n:
        return f"a job of {n} GPUs inside one domain must divide the {g_u} GPUs used per domain"
    if not job_in_one_domain and n % g_u:
        return f"{n} GPUs is not a whole number of domains of {g_u} GPUs"
    sizes = group_sizes(layout)
    for name, stride in group_strides(layout).items():
        problem = _alignment_problem(name, sizes[name], stride, g_u, job_in_one_domain)
        if problem:
            return problem
    return None
