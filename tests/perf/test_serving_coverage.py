"""Where the serving model has measurements (solver/perf/serving_coverage.py; docs/model.md "Serving: what the
measurements cover"): the table is the rows' own range, and a replica outside it says so."""
from __future__ import annotations

from serving_shapes import catalog, context

from solver.calibration.serving_fit import known, layout_of, predict, read_runs
from solver.calibration.serving_models import serving_shape
from solver.perf.serving import ReplicaLayout, TrafficShape, replica_performance
from solver.perf.serving_coverage import MEASURED_RANGE, PREFILL_POOL_FLAG


def test_the_table_is_the_published_rows_range():
    """Re-derived from tests/data/serving-runs*.csv: per regime the least batch per attention rank (stated
    concurrency, else the saturated batch the KV room allows) and the longest input + output."""
    cat = catalog()
    least: dict = {}
    longest: dict = {}
    for run in read_runs():
        if not known(run, cat):
            continue
        key = (run.stack, run.gpu, run.precision, "moe" if serving_shape(run.model).moe is not None else "dense")
        per_rank = predict(run, cat).concurrency / layout_of(run).dp_attention
        least[key] = min(least.get(key, per_rank), per_rank)
        longest[key] = max(longest.get(key, 0.0), run.input_tokens + run.output_tokens)
    assert {k: (least[k], longest[k]) for k in least} == MEASURED_RANGE


def test_hand_worked_entries():
    # NIM's sweep [S13] starts at one user on 2 × H100 (TP2, no attention DP): 1 sequence per rank; its 5,000/500
    # rows are shorter than TensorRT-LLM's 20,000/2,000 (22,000 tokens).
    assert MEASURED_RANGE[("trtllm", "h100-sxm", "fp8", "dense")] == (1.0, 22000.0)
    # B200 FP4 Llama 70B at 32,768/1,024 [S19]: usable 180·2^30/10^9 − 4 = 189.27 GB; weights 0.5625 B × 70.554e9 =
    # 39.69 GB; activations 8,192 × 8,192 × 16 B = 1.07 GB; room 148.51 GB; FP8 KV 80·2·8·128 B × 33,792 = 5.536 GB
    # per sequence → ⌊26.8⌋ = 26 sequences.
    assert MEASURED_RANGE[("trtllm", "b200", "fp4", "dense")] == (26.0, 33792.0)


def test_inside_the_range_no_flag_outside_a_flag_each():
    traffic = TrafficShape(1000, 1000)
    h100 = context("llama3.1-70b", "hgx-h100", "trtllm", "fp8")
    assert not replica_performance(h100, ReplicaLayout(2, 1, 1, 32), traffic).flags
    b200 = context("llama3.1-70b", "hgx-b200", "trtllm", "fp4")
    assert not replica_performance(b200, ReplicaLayout(1, 1, 1, 26), traffic).flags
    small = replica_performance(b200, ReplicaLayout(1, 1, 1, 8), traffic).flags
    assert len(small) == 1 and "decode at 8 sequences per attention rank" in small[0] and "start at 26" in small[0]
    long = replica_performance(b200, ReplicaLayout(1, 1, 1, 26), TrafficShape(40000, 1000)).flags
    assert len(long) == 1 and "context of 41,000 tokens" in long[0] and "reach 33,792" in long[0]


def test_a_prefill_pool_is_flagged_and_an_unmeasured_regime_only_once():
    traffic = TrafficShape(2000, 500)
    h100 = context("llama3.1-70b", "hgx-h100", "trtllm", "fp8")
    pre = replica_performance(h100, ReplicaLayout(1, 1, 1, 1, role="prefill"), traffic).flags
    assert pre == (PREFILL_POOL_FLAG,)
    bf16 = context("llama3.1-70b", "hgx-h100", "trtllm", "bf16")
    flags = replica_performance(bf16, ReplicaLayout(2, 1, 1, 1), traffic).flags
    assert len(flags) == 1 and "no published serving measurement" in flags[0]
