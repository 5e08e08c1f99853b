"""Fit of the serving stack profiles (SPEC §4.9; docs/model.md "Serving calibration") on published serving
measurements: tests/data/serving-runs.csv (and, when present, tests/data/serving-runs-amd-pcie.csv, same columns).

Each row is one published measurement (source, stack, GPU, platform, model, precision, tp/pp/ep, concurrency, input
and output tokens, measured output tokens/s per GPU and, where given, tokens/s per user). A row without concurrency is a
saturated (max-throughput) run: the replica runs `max_throughput_concurrency`. A row whose concurrency exceeds what the
KV room holds runs at that room (the rest wait). ep > tp·pp means attention data parallelism over ep/(tp·pp) ranks.

The fit minimises the squared log errors of every `fit` row (throughput per GPU, and tokens/s per user where measured)
over, per profile entry (GPU family × precision) with fit rows, η_pf, η_dc, η_hbm and the per-sequence overhead, and
per profile the expert-parallel slowdown u_ep and the TP all-reduce efficiency η_ar (10 parameters). Out-of-sample residuals come from leaving one group (source × model) out at a time; their
p10/p90 give the throughput interval.

    python -m solver.calibration.serving_report [runs.csv ...]  # prints the fitted values and every row's residual
"""
from __future__ import annotations

import csv
import math
import re
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..perf.serving import (
    ReplicaLayout,
    ServingModelContext,
    TrafficShape,
    max_throughput_concurrency,
    replica_performance,
)
from .serving_models import SERVING_MODELS, serving_shape

ROOT = Path(__file__).resolve().parents[2]
RUN_FILES = (ROOT / "tests" / "data" / "serving-runs.csv", ROOT / "tests" / "data" / "serving-runs-amd-pcie.csv")
FIELDS = ("prefill_efficiency", "decode_efficiency", "hbm_efficiency", "seq_overhead_us")
"""Fitted per profile entry (GPU family × precision). The per-step constant stays at the profile's value (it fitted to
0 when free), and so does the per-layer constant, 0 since the decode step times the GEMMs and the attention kernel
at their own rooflines (issue 40 follow-up: the stacks replay decode as CUDA graphs, and NIM's one-user row leaves no
room for a per-layer launch cost; fitted, it carried the KV reads the single roofline hid). Sharing the overheads
across families was tried and rejected: held-out median 9 % → 12 %, worst 36 % → 51 % (docs/model.md "Serving
calibration")."""
SHARED: tuple[str, ...] = ()
"""Fitted once per profile, the entries' own values cleared (none at present)."""
# η_hbm ≥ 0.6 is a prior, not a fit: streaming weights through a GEMV reaches at least 60 % of the HBM datasheet
# bandwidth on every GPU here (NIM's one-user Llama 3.3 70B row [S13] implies ≈ 0.6); unbounded, the saturated tables
# pull it to 0.47 and small-batch decode comes out too slow (docs/model.md "Serving calibration").
BOUNDS = {"prefill_efficiency": (0.05, 1.0), "decode_efficiency": (0.05, 1.0), "hbm_efficiency": (0.6, 1.0),
          "seq_overhead_us": (0.0, 200.0), "layer_overhead_us": (0.0, 500.0), "ep_imbalance": (1.0, 5.0),
          "allreduce_efficiency": (0.1, 1.0)}
SCALEOUT_GBYTE_S = 50.0  # one 400G NIC per GPU at ≈ 100 % (the rows' systems: DGX/HGX with 8 × CX-7)


@dataclass(frozen=True)
class ServingRun:
    source: str
    stack: str
    gpu: str
    platform: str
    model: str
    precision: str
    tp: int
    pp: int
    ep: int
    concurrency: int | None
    input_tokens: float
    output_tokens: float
    tput_per_gpu: float | None
    per_user: float | None
    ttft_s: float | None
    split: str
    note: str

    @property
    def kv_dtype(self) -> str:
        if "kv=bf16" in self.note or self.precision == "bf16":
            return "bf16"
        return "fp8"

    @property
    def role(self) -> str:
        """`role=decode` / `role=prefill` in the note (a disaggregated pool measured alone), else aggregated."""
        m = re.search(r"role=(decode|prefill)", self.note)
        return m.group(1) if m else "aggregated"

    @property
    def group(self) -> str:
        return f"{self.source}:{self.model}"


def _num(text: str) -> float | None:
    text = (text or "").strip()
    return float(text) if text else None


def read_runs(paths: tuple[Path, ...] | list[Path] = RUN_FILES) -> list[ServingRun]:
    """Every row of the given CSV files that exist (the AMD/PCIe file is optional)."""
    runs: list[ServingRun] = []
    for path in paths:
        if not Path(path).exists():
            continue
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if not (r["input_tokens"] or "").strip() or not (r["output_tokens"] or "").strip():
                    continue  # lengths unstated ([P17]): the model cannot place the row (listed apart, never fitted)
                conc = _num(r["concurrency"])
                runs.append(ServingRun(
                    source=r["source"], stack=r["stack"], gpu=r["gpu"], platform=r["platform"], model=r["model"],
                    precision=r["precision"], tp=int(r["tp"]), pp=int(r["pp"] or 1), ep=int(r["ep"] or 1),
                    concurrency=int(conc) if conc else None, input_tokens=float(r["input_tokens"]),
                    output_tokens=float(r["output_tokens"]), tput_per_gpu=_num(r["measured_output_tokens_per_s_per_gpu"]),
                    per_user=_num(r["measured_tokens_per_s_per_user"]), ttft_s=_num(r["measured_ttft_s"]),
                    split=r["split"].strip(), note=r.get("note", "")))
    return runs


def known(run: ServingRun, catalog: Any) -> bool:
    """The run's GPU, platform, stack and model are in the catalog and the shape table (an AMD/PCIe row waits for its
    platform's catalog entry)."""
    return (run.gpu in catalog.by_id("gpus") and run.platform in catalog.by_id("platforms")
            and run.stack in catalog.by_id("stacks") and run.model in SERVING_MODELS)


def layout_of(run: ServingRun, concurrency: int = 1) -> ReplicaLayout:
    """tp, pp, ep as given; ep > tp·pp = attention data parallelism over ep/(tp·pp) ranks."""
    dp = max(1, run.ep // (run.tp * run.pp))
    return ReplicaLayout(tp=run.tp, pp=run.pp, ep=run.ep, concurrency=concurrency, role=run.role, dp_attention=dp)


@dataclass(frozen=True)
class Prediction:
    tput_per_gpu: float
    per_user: float
    concurrency: int
    flags: tuple[str, ...]


def predict(run: ServingRun, catalog: Any, stack: Any | None = None) -> Prediction:
    """The replica model's output tokens/s per GPU and tokens/s per user at the run's concurrency (saturated runs:
    `max_throughput_concurrency`; a concurrency beyond the KV room runs at the room)."""
    platform = catalog.by_id("platforms")[run.platform]
    ctx = ServingModelContext(model=serving_shape(run.model), gpu=catalog.by_id("gpus")[run.gpu], platform=platform,
                              scaleout_gbyte_s_per_gpu=SCALEOUT_GBYTE_S,
                              stack=stack or catalog.by_id("stacks")[run.stack], precision=run.precision,
                              kv_cache_dtype=run.kv_dtype)
    traffic = TrafficShape(run.input_tokens, run.output_tokens)
    most = max_throughput_concurrency(ctx, layout_of(run), traffic)
    b = most if run.concurrency is None else min(run.concurrency, most)
    perf = replica_performance(ctx, layout_of(run, b), traffic)
    return Prediction(perf.output_tokens_per_s_per_gpu, perf.tokens_per_s_per_user, b, perf.flags)


def log_errors(run: ServingRun, pred: Prediction) -> list[float]:
    """ln(predicted/measured) of throughput per GPU and, where measured, tokens/s per user."""
    out = []
    if run.tput_per_gpu:
        out.append(math.log(pred.tput_per_gpu / run.tput_per_gpu))
    if run.per_user:
        out.append(math.log(pred.per_user / run.per_user))
    return out


# ------------------------------------------------------------------------------------------------ the fit


@dataclass(frozen=True)
class FreeParameter:
    entry: int  # index into stack.serving.gpus; −1 = the profile's moe_efficiency
    field: str


def free_parameters(stack: Any, runs: list[ServingRun]) -> list[FreeParameter]:
    """η_pf, η_dc, η_hbm and the per-sequence overhead of every profile entry some run is tuned by;
    u_ep if a run is expert-parallel MoE; η_ar if a run has TP."""
    profile = stack.serving
    entries = sorted({profile.gpus.index(profile.tuning(r.gpu, r.precision)) for r in runs})
    params = [FreeParameter(i, f) for i in entries for f in FIELDS] + [FreeParameter(-1, f) for f in SHARED]
    if any(serving_shape(r.model).moe is not None and r.ep > 1 for r in runs):
        params.append(FreeParameter(-1, "ep_imbalance"))
    if any(r.tp > 1 for r in runs):
        params.append(FreeParameter(-1, "allreduce_efficiency"))
    return params


def current_values(stack: Any, params: list[FreeParameter]) -> list[float]:
    profile = stack.serving
    values = []
    for p in params:
        if p.entry < 0:
            values.append(getattr(profile, p.field) or 0.9)
        else:
            entry = profile.gpus[p.entry]
            v = getattr(entry, p.field)
            values.append(getattr(profile, p.field) if v is None else v)
    return values


def stack_with(stack: Any, params: list[FreeParameter], values: list[float]) -> Any:
    """The stack with these parameter values (copies; the catalog's objects are untouched)."""
    profile = stack.serving
    gpus = list(profile.gpus)
    top: dict[str, float] = {}
    for p, v in zip(params, values):
        if p.entry < 0:
            top[p.field] = float(v)
            if p.field in SHARED:
                gpus = [g.model_copy(update={p.field: None}) for g in gpus]
        else:
            gpus[p.entry] = gpus[p.entry].model_copy(update={p.field: float(v)})
    return stack.model_copy(update={"serving": profile.model_copy(update={"gpus": gpus, **top})})


def residuals(runs: list[ServingRun], catalog: Any, stack: Any) -> list[float]:
    """Log errors weighted 1/√n_group: every group (source × model × GPU) weighs the same in the sum of squares, so a
    large max-throughput table does not drown a concurrency sweep."""
    sizes: dict[str, int] = {}
    for run in runs:
        sizes[run.group + run.gpu] = sizes.get(run.group + run.gpu, 0) + 1
    out: list[float] = []
    for run in runs:
        w = 1.0 / math.sqrt(sizes[run.group + run.gpu])
        out.extend(w * e for e in log_errors(run, predict(run, catalog, stack)))
    return out


def bounded_fit(stack: Any, params: list[FreeParameter], residuals_of, max_nfev: int
                ) -> tuple[Any, list[FreeParameter], list[float]]:
    """Least squares of `residuals_of(stack with the parameters' values)` over `params`, each inside its BOUNDS,
    from the stack's current values (scipy's bounded trust-region reflective solver)."""
    from scipy.optimize import least_squares

    x0 = current_values(stack, params)
    lo = [BOUNDS[p.field][0] for p in params]
    hi = [BOUNDS[p.field][1] for p in params]
    x0 = [min(max(v, a + 1e-6), b - 1e-6) for v, a, b in zip(x0, lo, hi)]
    result = least_squares(lambda x: residuals_of(stack_with(stack, params, list(x))), x0, bounds=(lo, hi),
                           x_scale="jac", max_nfev=max_nfev)
    values = [float(v) for v in result.x]
    return stack_with(stack, params, values), params, values


def fit_stack(runs: list[ServingRun], catalog: Any, stack: Any) -> tuple[Any, list[FreeParameter], list[float]]:
    """Least squares on the log errors of `runs` (`bounded_fit` over `free_parameters`)."""
    return bounded_fit(stack, free_parameters(stack, runs), lambda st: residuals(runs, catalog, st), max_nfev=400)


@dataclass(frozen=True)
class RowResult:
    run: ServingRun
    predicted: Prediction
    out_of_sample: Prediction | None  # leave-one-group-out (fit rows only)

    @property
    def tput_error(self) -> float:
        assert self.run.tput_per_gpu
        return self.predicted.tput_per_gpu / self.run.tput_per_gpu - 1.0

    @property
    def user_error(self) -> float | None:
        return self.predicted.per_user / self.run.per_user - 1.0 if self.run.per_user else None


def leave_one_group_out(runs: list[ServingRun], catalog: Any, stack: Any) -> dict[int, Prediction]:
    """For each fit group (source × model), refit without it and predict its rows: out-of-sample predictions."""
    fit_rows = [i for i, r in enumerate(runs) if r.split == "fit"]
    out: dict[int, Prediction] = {}
    for group in sorted({runs[i].group for i in fit_rows}):
        train = [runs[i] for i in fit_rows if runs[i].group != group]
        fitted, _, _ = fit_stack(train, catalog, stack)
        for i in fit_rows:
            if runs[i].group == group:
                out[i] = predict(runs[i], catalog, fitted)
    return out


def interval_factors(ratios: list[float], coverage: float = 0.8) -> tuple[float, float]:
    """(p10, p90) of measured/predicted throughput ratios (the multiplicative interval on a prediction)."""
    qs = statistics.quantiles(sorted(ratios), n=10, method="inclusive")
    lo, hi = qs[0], qs[-1]
    return min(lo, 1.0), max(hi, 1.0)


def summary(errors: list[float]) -> tuple[float, float]:
    """(median, worst) |error|."""
    a = sorted(abs(e) for e in errors)
    return (statistics.median(a), a[-1]) if a else (float("nan"), float("nan"))
