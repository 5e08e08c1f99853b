"""Where the serving model has published measurements, finer than the profile's `measured` regimes (SPEC §4.9:
"where the model has no public measurement for a regime, every output says so"; docs/model.md "Serving: what the
measurements cover").

A regime (stack, GPU, precision, dense/MoE) the profile lists as measured is still measured only over the batches and
contexts its rows ran at. `MEASURED_RANGE` holds, per regime, the smallest batch per attention rank a published row ran
(its stated concurrency, or for a saturated run the batch the KV room allows, `max_throughput_concurrency`) and the
longest context (input + output tokens), from every scorable row of tests/data/serving-runs.csv and
serving-runs-amd-pcie.csv, fit and held out alike (a held-out row is a measurement the model was checked against).
tests/perf/test_serving_coverage.py re-derives the table from the two files. A replica below that batch (small-batch
decode, where the per-step overheads decide the time per token) or beyond that context is flagged, and so is a
disaggregated prefill pool: no published run times a prefill pool's TTFT (TTFT is never fitted).
"""
from __future__ import annotations

from typing import Any

MEASURED_RANGE: dict[tuple[str, str, str, str], tuple[float, float]] = {
    # (stack, gpu, precision, dense|moe): (smallest batch per attention rank, longest context in tokens)
    ("sglang", "gb200", "fp4", "moe"): (1024.0, 2100.0),
    ("sglang", "gb200", "fp8", "moe"): (1024.0, 2100.0),
    ("sglang", "h100-sxm", "fp8", "moe"): (371.0, 2100.0),
    ("trtllm", "b200", "fp4", "dense"): (26.0, 33792.0),
    ("trtllm", "b200", "fp4", "moe"): (46.0, 33792.0),
    ("trtllm", "gb200", "fp4", "dense"): (27.0, 33792.0),
    ("trtllm", "gb200", "fp4", "moe"): (48.0, 33792.0),
    ("trtllm", "h100-sxm", "fp4", "moe"): (51.0, 33792.0),
    ("trtllm", "h100-sxm", "fp8", "dense"): (1.0, 22000.0),
    ("trtllm", "h100-sxm", "fp8", "moe"): (24.0, 22000.0),
    ("trtllm", "h200", "fp4", "moe"): (65.0, 33792.0),
    ("trtllm", "h200", "fp8", "dense"): (21.0, 33792.0),
    ("trtllm", "h200", "fp8", "moe"): (25.0, 33792.0),
    ("trtllm", "rtx-pro-6000-se", "fp4", "dense"): (28.0, 33792.0),
    ("trtllm", "rtx-pro-6000-se", "fp4", "moe"): (19.0, 33792.0),
    ("vllm", "mi300x", "fp8", "dense"): (1.0, 4224.0),
}
PREFILL_POOL_FLAG = ("prefill pool: no published run times a disaggregated prefill pool, and TTFT is never fitted "
                     "(one NIM one-user prefill checks it within 25 %): its TTFT is the model's alone")


def regime_key(ctx: Any) -> tuple[str, str, str, str]:
    """(stack, GPU, precision, dense|moe) of a serving context: the key of `MEASURED_RANGE`."""
    return (ctx.stack.id, ctx.gpu.id, ctx.precision, "moe" if ctx.model.moe is not None else "dense")


def coverage_flags(ctx: Any, layout: Any, context_tokens: float) -> tuple[str, ...]:
    """Flags of a measured regime run outside its rows: batch per attention rank b/dp below the smallest published
    one (decode and aggregated replicas), context I + O beyond the longest published one, and a prefill pool. An
    unmeasured regime is flagged by `serving.regime_flags` already and gets no more here."""
    flags: list[str] = []
    if layout.role == "prefill":
        flags.append(PREFILL_POOL_FLAG)
    span = MEASURED_RANGE.get(regime_key(ctx))
    if span is None:
        return tuple(flags)
    least, longest = span
    per_rank = layout.concurrency / layout.dp_attention
    name = f"{ctx.gpu.id} {ctx.stack.id} {ctx.precision} {'MoE' if ctx.model.moe is not None else 'dense'}"
    if layout.role != "prefill" and per_rank < least:
        flags.append(f"decode at {per_rank:g} sequences per attention rank: the published {name} runs start at "
                     f"{least:g}; the small-batch step (per-step overheads, weight streaming) is extrapolated")
    if context_tokens > longest:
        flags.append(f"context of {context_tokens:,.0f} tokens: the published {name} runs reach {longest:,.0f}; "
                     "KV reads and attention at this length are extrapolated")
    return tuple(flags)
