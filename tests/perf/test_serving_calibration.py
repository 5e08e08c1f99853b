"""The serving stack profiles against the published serving measurements (tests/data/serving-runs.csv; docs/model.md
"Serving calibration"): the shipped catalog's values reproduce the fit rows and predict the held-out rows within the
stated tolerances; the data set itself keeps its rules (sources cited, held-out part chosen by source, nothing from
the sources reserved for judging)."""
from __future__ import annotations

import re
import statistics
from pathlib import Path

import pytest

from solver.calibration.serving_fit import RUN_FILES, known, layout_of, predict, read_runs
from solver.calibration.serving_models import serving_shape
from solver.inputs.catalog import load_catalog
from solver.perf.serving import ServingModelContext, TrafficShape, replica_performance

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "tests" / "data" / "serving-runs.csv"
COLUMNS = ("source,stack,gpu,platform,model,precision,tp,pp,ep,concurrency,input_tokens,output_tokens,"
           "measured_output_tokens_per_s_per_gpu,measured_tokens_per_s_per_user,measured_ttft_s,split,note")
RESERVED = re.compile(r"inferencemax|inferencex|semianalysis|mlperf[^,]*v?5\.[1-9]|mlperf[^,]*v?[6-9]\.|open-infra|day.?6",
                      re.IGNORECASE)


@pytest.fixture(scope="module")
def catalog():
    return load_catalog()


@pytest.fixture(scope="module")
def results(catalog):
    runs = [r for r in read_runs([CSV]) if known(r, catalog)]
    out = []
    for r in runs:
        p = predict(r, catalog)
        out.append((r, p.tput_per_gpu / r.tput_per_gpu - 1, p.per_user / r.per_user - 1 if r.per_user else None,
                    r.tput_per_gpu / p.tput_per_gpu))
    return out


def test_the_csv_has_the_contract_columns_and_every_row_is_modelled(catalog):
    assert CSV.read_text(encoding="utf-8").splitlines()[0] == COLUMNS
    runs = read_runs([CSV])
    assert len(runs) >= 300 and all(known(r, catalog) for r in runs)
    assert RUN_FILES[1].name == "serving-runs-amd-pcie.csv"  # issue 46's AMD/PCIe rows, read when present


def test_sources_are_cited_held_out_by_source_and_none_is_reserved():
    sources_md = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    runs = read_runs([CSV])
    for source in {r.source for r in runs}:
        assert f"**[{source}]**" in sources_md
    splits = {}
    for r in runs:
        splits.setdefault(r.source, set()).add(r.split)
    assert all(len(s) == 1 for s in splits.values()), "a source is either fitted on or held out, never both"
    held = sum(r.split == "heldout" for r in runs)
    assert held >= 0.2 * len(runs)
    assert not RESERVED.search(CSV.read_text(encoding="utf-8"))


def test_fit_rows_within_the_stated_tolerance(results):
    # docs/model.md: fit rows median |error| ≤ 15 %, worst ≤ 105 % (gpt-oss-120b W4A16 on H200 at 1024/1024, +100 %
    # since the issue 40 follow-up refit, and the saturated Qwen3-30B 2048/128 rows, +95 %; before it, ≤ 100 %);
    # tokens/s per user median ≤ 20 %, worst ≤ 35 %
    errs = [abs(t) for r, t, _, _ in results if r.split == "fit"]
    user = [abs(u) for r, _, u, _ in results if r.split == "fit" and u is not None]
    assert statistics.median(errs) <= 0.15 and max(errs) <= 1.05
    assert statistics.median(user) <= 0.20 and max(user) <= 0.35


def test_held_out_rows_within_the_stated_tolerance_and_the_interval_covers_them(results, catalog):
    # docs/model.md: TensorRT-LLM held-out rows median |error| ≤ 15 %, worst ≤ 35 % (issue 40's bar, met since the
    # follow-up's two-roofline decode step; before it, ≤ 50 %); the shipped p10–p90 interval holds ≥ 80 % of all
    # held-out rows (each stack's own interval)
    errs = [abs(t) for r, t, _, _ in results if r.split == "heldout" and r.stack == "trtllm"]
    assert statistics.median(errs) <= 0.15 and max(errs) <= 0.35
    stacks = catalog.by_id("stacks")
    held = [(stacks[r.stack].serving, ratio) for r, _, _, ratio in results if r.split == "heldout"]
    inside = sum(p.interval_p10 <= x <= p.interval_p90 for p, x in held) / len(held)
    assert inside >= 0.8


def test_wide_ep_decode_rows_are_the_known_weakness(results):
    # docs/model.md: SGLang's disaggregated wide-EP decode pools (no SGLang row in the fit; TensorRT-LLM's values as
    # estimates): 9 × HGX H100 EP72 under-predicted by about a quarter, GB200 NVL72 EP48 from +1 % to −31 %. Stated
    # bound: every such row within −50 %…+10 %.
    wide = {(r.source, r.precision): t for r, t, _, _ in results if r.source in ("S16", "S17", "S18")}
    assert len(wide) == 4 and all(-0.5 <= t <= 0.1 for t in wide.values())


@pytest.mark.parametrize("stack", ["trtllm", "vllm"])
def test_measured_regimes_are_the_fit_rows_regimes(catalog, stack):
    # both data files (issue 46 adds tests/data/serving-runs-amd-pcie.csv: trtllm on RTX PRO 6000, vllm on MI300X)
    runs = [r for r in read_runs([CSV, CSV.parent / "serving-runs-amd-pcie.csv"]) if r.split == "fit" and r.stack == stack]
    regimes = {f"{r.gpu}:{r.precision}:{'moe' if serving_shape(r.model).moe is not None else 'dense'}" for r in runs}
    assert regimes == set(catalog.by_id("stacks")[stack].serving.measured)


def test_prefill_time_against_the_one_user_ttft_never_fitted(catalog):
    # NIM's sweep [S13] at concurrency 1 has no queue: TTFT = the 5,000-token prefill (406.77 ms measured; TTFT is
    # never fitted). Stated tolerance 25 % (the model: 348 ms, −14 %).
    run = next(r for r in read_runs([CSV]) if r.source == "S13" and r.concurrency == 1)
    platform = catalog.by_id("platforms")[run.platform]
    ctx = ServingModelContext(model=serving_shape(run.model), gpu=catalog.by_id("gpus")[run.gpu], platform=platform,
                              scaleout_gbyte_s_per_gpu=50.0, stack=catalog.by_id("stacks")[run.stack],
                              precision=run.precision, kv_cache_dtype=run.kv_dtype)
    perf = replica_performance(ctx, layout_of(run, 1), TrafficShape(run.input_tokens, run.output_tokens))
    assert run.ttft_s == pytest.approx(0.40677)
    assert perf.prefill_s == pytest.approx(run.ttft_s, rel=0.25)
