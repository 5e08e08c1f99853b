"""Which catalog fields `fabricplan calibrate` fits (SPEC §4.8; docs/model.md "Calibrating on your own runs").

- The runs' stack has a profile in the catalog's `stacks:` list: per GPU (generation) entry of that
  profile, the GEMM-efficiency factor κ_gemm of each precision the runs use and the TP-overlap share ψ.
  A GPU that only the profile's `any` entry covers, or an entry that also names GPUs without runs, gets its
  own entry (a copy of what covered it), so the fit changes the runs' GPUs alone. The overlay is a `stacks:` entry: other stacks and the GPUs are untouched.
- Otherwise (a catalog without a profile for the stack): the GPU's own GEMM efficiency per precision
  (`compute_model.gemm_efficiency.<precision>`, or the flat `compute_efficiency.<precision>`), written as `gpus:`
  entries in the precision-map form (`gemm_efficiency: {bf16: …, fp8: …}`, solver/inputs/precisions.py).

A parameter no run's prediction moves with (ψ without a TP > 1 run, a scenario overlap.tp given) is
dropped by the fit (fit.dependent_rows).
"""
from __future__ import annotations

from ..inputs.precisions import value_at
from ..inputs.schema import Catalog
from ..inputs.stacks import ANY_GPU, Stack
from .fit import Parameter, Prepared

LOW_EFFICIENCY, HIGH_EFFICIENCY = 0.2, 1.0  # fractions of the peak
LOW_FACTOR, HIGH_FACTOR = 0.3, 4.0  # κ (the schema's bound is 4; η·κ is capped at 1 by the physics)
FITS = ("gemm", "tp_overlap", "attention")  # what `--fit` may name
DEFAULT_FITS = ("gemm", "tp_overlap")


def _pairs(preps: list[Prepared], catalog: Catalog) -> list[tuple[str, str]]:
    platforms = catalog.by_id("platforms")
    return sorted({(platforms[p.perf_class.platform].gpu, p.run.scenario.workload.precision) for p in preps})


def _efficiency(gpu_id: str, path: tuple[str | int, ...], value: float) -> Parameter:
    name = ".".join(str(k) for k in path[1:]) if len(path) > 2 else str(path[-1])  # gemm_efficiency.bf16
    return Parameter(f"{gpu_id} {name}", "gpus", gpu_id, path, value, min(LOW_EFFICIENCY, value),
                     max(HIGH_EFFICIENCY, value))


def compute_parameters(preps: list[Prepared], catalog: Catalog, fits: tuple[str, ...] = DEFAULT_FITS) -> list[Parameter]:
    """The GEMM efficiency of each GPU and precision the runs use (and with `attention`, the GPU's attention
    efficiency); ψ belongs to a stack profile, so `tp_overlap` has nothing to fit here."""
    gpus = catalog.by_id("gpus")
    out = []
    pairs = _pairs(preps, catalog)
    for gpu_id, precision in pairs if "gemm" in fits else []:
        gpu = gpus[gpu_id]
        if gpu.compute_model is not None:
            eta = gpu.compute_model.gemm_efficiency
            out.append(_efficiency(gpu_id, ("compute_model", "gemm_efficiency", precision), eta[precision]))
        else:
            out.append(_efficiency(gpu_id, ("compute_efficiency", precision), gpu.compute_efficiency[precision]))
    for gpu_id in sorted({g for g, _ in pairs}) if "attention" in fits else []:
        cm = gpus[gpu_id].compute_model
        if cm is not None:
            out.append(_efficiency(gpu_id, ("compute_model", "attention_efficiency"), cm.attention_efficiency))
    return out


def expand_stack(catalog: Catalog, stack: Stack, gpu_ids: list[str]) -> Catalog:
    """The catalog with `stack` giving each of `gpu_ids` an entry of its own where `any`, nothing, or an entry that
    also covers GPUs without runs covers it (an H100-only fit must not set the H200 of an [h100-sxm, h200] entry,
    issue 41): a copy of what applies to it now, so predictions are unchanged."""
    entries = list(stack.gpus)
    new = []
    for gpu_id in gpu_ids:
        tuning = stack.tuning(gpu_id)
        if tuning is not None and ANY_GPU not in tuning.gpus and set(tuning.gpus) <= set(gpu_ids):
            continue  # an entry of the runs' GPUs only: fitted in place
        base = tuning.model_dump() if tuning is not None else {}
        new.append({**base, "gpus": [gpu_id], "source": base.get("source") or "split from the profile for calibrate"})
    if not new:
        return catalog
    data = stack.model_dump()
    data["gpus"] = new + [e.model_dump() for e in entries]
    stacks = [type(stack).model_validate(data) if s.id == stack.id else s for s in catalog.stacks]
    fields = {name: getattr(catalog, name) for name in type(catalog).model_fields}
    fields["stacks"] = stacks
    out = type(catalog).model_construct(**fields)
    out._provenance = catalog._provenance
    return out


def stack_parameters(preps: list[Prepared], catalog: Catalog, stack: Stack,
                     fits: tuple[str, ...] = DEFAULT_FITS) -> list[Parameter]:
    """κ_gemm per precision, ψ and (with `attention`) κ_attn of each profile entry covering the runs' GPUs
    (after `expand_stack`)."""
    gpus = catalog.by_id("gpus")
    pairs = _pairs(preps, catalog)
    out: list[Parameter] = []
    seen: set[int] = set()
    for gpu_id, _ in pairs:
        tuning = stack.tuning(gpu_id)
        assert tuning is not None  # expand_stack gave it one
        index = stack.gpus.index(tuning)
        if index in seen:
            continue
        seen.add(index)
        covered = [g for g, _ in pairs if stack.tuning(g) is tuning]
        label = f"{stack.id} {'/'.join(sorted(set(covered)))}"
        for precision in sorted({p for g, p in pairs if g in covered}) if "gemm" in fits else []:
            eta = max(value_at(gpus[g].compute_model.gemm_efficiency, precision) or 1.0 if gpus[g].compute_model
                      else 1.0 for g in covered)
            value = value_at(tuning.gemm_factor, precision) or 1.0
            out.append(Parameter(f"{label} gemm_factor.{precision}", "stacks", stack.id,
                                 ("gpus", index, "gemm_factor", precision), value,
                                 min(LOW_FACTOR, value), max(min(HIGH_FACTOR, 1.0 / eta), value)))
        if "tp_overlap" in fits:
            psi = tuning.tp_overlap if tuning.tp_overlap is not None else stack.tp_overlap
            out.append(Parameter(f"{label} tp_overlap (ψ)", "stacks", stack.id, ("gpus", index, "tp_overlap"), psi,
                                 0.0, 1.0))
        if "attention" in fits:
            value = tuning.attention_factor
            out.append(Parameter(f"{label} attention_factor", "stacks", stack.id, ("gpus", index, "attention_factor"),
                                 value, min(LOW_FACTOR, value), max(HIGH_FACTOR, value)))
    return out
