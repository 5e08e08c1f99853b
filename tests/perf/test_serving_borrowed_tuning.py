"""A serving profile's efficiencies borrowed from another precision (or GPU) are flagged (issue clean, item 4).

`ServingProfile.tuning` falls back, when no entry names the GPU (or `any`) at the asked precision, to an entry of
the GPU at another precision and then to the first entry. The numbers stay the borrowed entry's (a fallback is
better than no answer), but every output now says so, as for other regimes without a published measurement."""
from __future__ import annotations

import pytest
import yaml
from serving_shapes import context

from solver.inputs.catalog import default_catalog_path, load_catalog
from solver.inputs.stacks import Stack
from solver.perf.serving import ReplicaLayout, ServingModelContext, TrafficShape, replica_performance
from solver.perf.serving_step import hardware_of

HOPPER_FP8 = {"gpus": ["h100-sxm", "h200"], "precisions": ["fp8"], "prefill_efficiency": 0.6,
              "decode_efficiency": 0.4, "hbm_efficiency": 0.7}
ANY_FP4 = {"gpus": ["any"], "precisions": ["fp4"], "prefill_efficiency": 0.3, "decode_efficiency": 0.2,
           "hbm_efficiency": 0.5}
STACK = {"id": "narrow", "name": "tuned for Hopper FP8 and FP4 only", "kind": "inference", "source": "test",
         "serving": {"gpus": [HOPPER_FP8, ANY_FP4], "measured": ["h100-sxm:fp8:dense"]}}


def _profile():
    return Stack.model_validate(STACK).serving


@pytest.mark.parametrize("gpu, precision, entry, own", [
    ("h100-sxm", "fp8", 0, True),  # an entry names the GPU at the precision
    ("b200", "fp4", 1, True),  # the `any` entry at the precision
    ("h100-sxm", "bf16", 0, False),  # no bf16 entry: the GPU's own fp8 entry, borrowed
    ("b200", "bf16", 0, False),  # nothing for b200 at bf16: the first entry, borrowed
])
def test_which_entry_and_whether_it_is_borrowed(gpu, precision, entry, own):
    profile = _profile()
    hit, made_for_it = profile.tuning_match(gpu, precision)
    assert hit is profile.gpus[entry] and made_for_it is own
    assert profile.tuning(gpu, precision) is hit


def _ctx(precision: str) -> ServingModelContext:
    ctx = context("llama3.1-8b", "hgx-h100", precision=precision)
    return ServingModelContext(model=ctx.model, gpu=ctx.gpu, platform=ctx.platform, scaleout_gbyte_s_per_gpu=50.0,
                               stack=Stack.model_validate(STACK), precision=precision,
                               kv_cache_dtype=ctx.kv_cache_dtype)


def test_a_borrowed_precision_keeps_its_numbers_and_is_flagged():
    bf16, fp8 = _ctx("bf16"), _ctx("fp8")
    hw = hardware_of(bf16)
    assert (hw.prefill_efficiency, hw.decode_efficiency) == (0.6, 0.4)  # HOPPER_FP8's, as before the flag
    assert hw.hbm_byte_s == pytest.approx(3.35e12 * 0.7)  # H100 SXM 3.35 TB/s × the fp8 entry's η_hbm
    flags = replica_performance(bf16, ReplicaLayout(1, 1, 1, 32), TrafficShape(1000, 200)).flags
    borrowed = [f for f in flags if "borrowed" in f]
    assert borrowed == ["narrow has no bf16 tuning for h100-sxm: η_pf, η_dc, η_hbm and the overheads are borrowed "
                        "from its entry for h100-sxm, h200 at fp8"]
    assert not [f for f in replica_performance(fp8, ReplicaLayout(1, 1, 1, 32), TrafficShape(1000, 200)).flags
                if "borrowed" in f]


def test_the_fleets_json_carries_the_flag(tmp_path):
    """A Llama 3.1 8B bf16 fleet on HGX H100 under the narrow stack: every design says its efficiencies are
    borrowed."""
    from solver.optimize.serving_solve import solve_fleet

    (tmp_path / "o.yaml").write_text(yaml.safe_dump({"stacks": [STACK]}), encoding="utf-8")
    cat = load_catalog([default_catalog_path(), tmp_path / "o.yaml"])
    model = {"layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "ffn_type": "swiglu", "attention_heads": 32,
             "kv_heads": 8, "vocab_size": 128256, "seq_len": 8192}
    doc = {"name": "borrowed", "workload": {"kind": "inference", "model": model, "stack": "narrow", "precision": "bf16"},
           "serving": {"traffic": {"requests_per_s": 5.0, "input_tokens": 1000, "output_tokens": 200},
                       "slo": {"ttft_p90_s": 2.0, "tokens_per_s_per_user": 20.0}, "disaggregation": "off",
                       "concurrency": [16, 64]},
           "constraints": {"platforms": ["hgx-h100"]}, "parallelism": {"tp": [1, 2], "pp": 1}, "top_k": 1}
    designs = solve_fleet(doc, cat).designs
    assert designs and all(any("narrow has no bf16 tuning for h100-sxm" in f for f in d.to_dict()["serving"]["flags"])
                           for d in designs)
