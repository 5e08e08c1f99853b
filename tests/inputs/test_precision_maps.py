"""Precision is a map keyed by name, one name for rails (issue 39 item 4).

The catalog writes `dense_tflops: {bf16: …, fp8: …}`, `compute_model.gemm_efficiency: {…}`, a stack's
`gemm_factor: {…}`; its keys are the names of one registry (solver/inputs/precisions.py PRECISIONS). An unknown name
is a located error (exit 2). Old suffixed keys and the old rail-count names load with a located deprecation warning.
Line and column numbers are counted by hand from the edited lines of tests/data/inputs/mini-catalog.yaml."""
from __future__ import annotations

import pytest
from test_loading import MINI_CATALOG, SHIPPED_SCENARIO, assert_rejected, run, variant

from solver.inputs import load_catalog, provenance
from solver.inputs.catalog_schema import Gpu
from solver.inputs.precisions import PRECISIONS, ByPrecision, resolved, value_at
from solver.perf.hardware import compute_params

GPU = {"id": "gpu-x", "name": "X", "vendor": "v", "hbm_gb": 80, "hbm_tbyte_s": 3, "tdp_w": 700,
       "compute_efficiency_source": "test", "source": "test"}


def _old_peaks(tmp_path):
    """The mini catalog with its peaks written the old way (lines 8 and 9, same line count)."""
    text = MINI_CATALOG.read_text(encoding="utf-8").splitlines(keepends=True)
    assert text[7].strip() == "dense_tflops: {bf16: 1000," and text[8].strip() == "fp8: 2000}"
    text[7], text[8] = "    bf16_dense_tflops: 1000\n", "    fp8_dense_tflops: 2000\n"
    out = tmp_path / "old-catalog.yaml"
    out.write_text("".join(text), encoding="utf-8")
    return out


def test_the_map_gives_each_precision_and_stand_ins_fill_the_rest():
    gpu = Gpu.model_validate({**GPU, "dense_tflops": {"bf16": 1000, "fp8": 2000, "fp4": 4000},
                              "compute_model": {"gemm_efficiency": {"bf16": 0.5, "fp8": 0.4}, "attention_efficiency": 0.3}})
    # given: bf16, fp8, fp4; mxfp8 runs on the FP8 cores (2000); fp4 given (4000)
    assert [gpu.peak_tflops(p) for p in ("bf16", "fp8", "mxfp8", "fp4")] == [1000, 2000, 2000, 4000]
    no_fp4 = Gpu.model_validate({**GPU, "dense_tflops": {"bf16": 1000, "fp8": 2000},
                                 "compute_efficiency": {"bf16": 0.5, "fp8": 0.4}})
    assert no_fp4.peak_tflops("fp4") == 1000  # W4A16 at the BF16 peak
    params = compute_params(gpu)
    assert dict(params.tflops) == {"bf16": 1000, "fp8": 2000, "mxfp8": 2000, "fp4": 4000}
    assert dict(params.gemm_efficiency) == {"bf16": 0.5, "fp8": 0.4, "mxfp8": 0.4, "fp4": 0.5}


def test_bf16_and_fp8_are_required():
    with pytest.raises(ValueError, match="give fp8"):
        Gpu.model_validate({**GPU, "dense_tflops": {"bf16": 1000}, "compute_efficiency": {"bf16": 0.5, "fp8": 0.4}})


def test_unknown_precision_is_located(tmp_path, monkeypatch, capsys):
    # line 9 "                   fp8: 2000, fp6: 3000}": 19 spaces, "fp8: 2000, " (11 characters), fp6 at column 31
    bad = variant(tmp_path, MINI_CATALOG, 9, "fp8: 2000}", "fp8: 2000, fp6: 3000}", "bad-catalog.yaml")
    assert_rejected(bad, "catalog", f"{bad}:9:31: gpus[0].dense_tflops.fp6",
                    "unknown precision 'fp6' (known: bf16, fp8, mxfp8, fp4", tmp_path, monkeypatch, capsys)


def test_adding_a_precision_is_one_registry_entry(tmp_path, monkeypatch):
    """fp6 (say, on the FP8 cores where a GPU gives no FP6 peak): one PRECISIONS entry, then catalog values."""
    monkeypatch.setitem(PRECISIONS, "fp6", "fp8")
    bad = variant(tmp_path, MINI_CATALOG, 9, "fp8: 2000}", "fp8: 2000, fp6: 3000}", "fp6-catalog.yaml")
    gpu = load_catalog([bad]).by_id("gpus")["gpu-a"]
    assert gpu.peak_tflops("fp6") == 3000
    assert load_catalog([MINI_CATALOG]).by_id("gpus")["gpu-a"].peak_tflops("fp6") == 2000  # the FP8 peak stands in
    x = Gpu.model_validate({**GPU, "dense_tflops": {"bf16": 1, "fp8": 2, "fp6": 3},
                            "compute_model": {"gemm_efficiency": {"bf16": 0.5, "fp8": 0.4, "fp6": 0.35},
                                              "attention_efficiency": 0.3}})
    params = compute_params(x)
    assert (params.tflops["fp6"], params.gemm_efficiency["fp6"]) == (3, 0.35)


def test_every_stand_in_chain_ends():
    for name in PRECISIONS:
        seen = [name]
        while PRECISIONS[seen[-1]] is not None:
            seen.append(PRECISIONS[seen[-1]])  # type: ignore[arg-type]
            assert len(seen) <= len(PRECISIONS), seen
    assert value_at({"bf16": 1.0}, "fp4") == 1.0 and value_at({"bf16": 1.0}, "mxfp8") is None


def test_a_resolved_map_is_hashable_and_read_only():
    a, b = resolved({"bf16": 1.0, "fp8": 2.0}), ByPrecision(bf16=1.0, fp8=2.0, mxfp8=2.0, fp4=1.0)
    assert a == b and hash(a) == hash(b)
    with pytest.raises(TypeError):
        a["bf16"] = 3.0


def test_old_peak_keys_load_with_a_located_warning(tmp_path, monkeypatch, capsys):
    old = _old_peaks(tmp_path)
    cat = load_catalog([old])
    assert cat.by_id("gpus")["gpu-a"].dense_tflops == {"bf16": 1000, "fp8": 2000}
    # line 8 "    bf16_dense_tflops: 1000", the first old key at column 5
    assert provenance(cat).deprecations == [
        f"{old}:8:5: gpus[0].bf16_dense_tflops: deprecated key: write `dense_tflops: {{bf16: 1000, fp8: 2000}}` "
        "(precision is a map keyed by name; bf16_dense_tflops, fp8_dense_tflops will be removed)"]
    code, out, err = run(["validate", old], tmp_path, monkeypatch, capsys)
    assert code == 0 and f"{old}:8:5: gpus[0].bf16_dense_tflops: deprecated key: write `dense_tflops:" in err


def test_validating_a_scenario_shows_its_catalog_overlays_deprecated_keys(tmp_path, monkeypatch, capsys):
    """`validate SCENARIO --catalog OLD.yaml` says what `solve` would say about the overlay's old keys (before: only
    `validate OLD.yaml` did)."""
    overlay = tmp_path / "old-overlay.yaml"
    overlay.write_text("gpus:\n  - id: h100-sxm\n    bf16_dense_tflops: 989.4\n    fp8_dense_tflops: 1978.9\n",
                       encoding="utf-8")
    code, out, err = run(["validate", SHIPPED_SCENARIO, "--catalog", overlay], tmp_path, monkeypatch, capsys)
    assert code == 0 and "valid scenario" in out
    # line 3 "    bf16_dense_tflops: 989.4", the first old key at column 5
    assert f"{overlay}:3:5: gpus[0].bf16_dense_tflops: deprecated key: write `dense_tflops:" in err


def test_old_and_new_peaks_together_are_refused(tmp_path, monkeypatch, capsys):
    # line 9 "                   fp8: 2000}" gets a second line "    fp8_dense_tflops: 2000" (line 10, column 5)
    text = MINI_CATALOG.read_text(encoding="utf-8").splitlines(keepends=True)
    text.insert(9, "    fp8_dense_tflops: 2000\n")
    bad = tmp_path / "bad-catalog.yaml"
    bad.write_text("".join(text), encoding="utf-8")
    assert_rejected(bad, "catalog", f"{bad}:10:5: gpus[0].fp8_dense_tflops",
                    "give `dense_tflops` once: this file also writes `dense_tflops:` (remove fp8_dense_tflops)",
                    tmp_path, monkeypatch, capsys)


def test_an_old_key_beside_its_new_one_is_one_problem_not_two(tmp_path, monkeypatch, capsys):
    """The conflict is said once; before, the old key was also reported as an unknown key (4 problems here)."""
    bad = tmp_path / "both.yaml"
    bad.write_text("gpus:\n  - id: h100-sxm\n    bf16_dense_tflops: 989.4\n    dense_tflops: {bf16: 989.4, fp8: 1978.9}\n"
                   "platforms:\n  - id: hgx-h100\n    scaleout_nics_per_node: [1, 2, 4, 8]\n"
                   "    rails_per_node_options: [1, 2, 4, 8]\n", encoding="utf-8")
    code, _, err = run(["validate", bad], tmp_path, monkeypatch, capsys)
    assert code == 2 and "2 problem(s) found" in err and "unknown key" not in err
    assert f"{bad}:3:5: gpus[0].bf16_dense_tflops: give `dense_tflops` once" in err  # line 3, column 5
    assert f"{bad}:7:5: platforms[0].scaleout_nics_per_node: give `rails_per_node_options` once" in err


def test_an_old_overlay_lays_one_peak_and_the_old_efficiency_names_over(tmp_path):
    overlay = tmp_path / "old-overlay.yaml"
    overlay.write_text(
        "name: old-overlay\n"
        "gpus:\n"
        "  - id: gpu-a\n"
        "    fp8_dense_tflops: 2500\n"  # line 4
        "    compute_model: {gemm_efficiency_bf16: 0.6, gemm_efficiency_fp8: 0.5, attention_efficiency: 0.4}\n"
        "    compute_efficiency_source: an overlay written before issue 39\n"
        "stacks:\n"
        "  - id: old-stack\n"
        "    name: Old\n"
        "    source: test\n"
        "    gpus:\n"
        "      - {gpus: [gpu-a], gemm_factor_bf16: 0.9, source: old}\n", encoding="utf-8")  # line 12
    cat = load_catalog([MINI_CATALOG, overlay])
    gpu = cat.by_id("gpus")["gpu-a"]
    assert gpu.dense_tflops == {"bf16": 1000, "fp8": 2500}  # one precision overrides one peak, as the old field did
    assert gpu.compute_model is not None and gpu.compute_model.gemm_efficiency == {"bf16": 0.6, "fp8": 0.5}
    assert cat.by_id("stacks")["old-stack"].gpus[0].gemm_factor == {"bf16": 0.9}
    where = [w.split(": deprecated key: ")[0] for w in provenance(cat).deprecations]
    # line 5 "    compute_model: {gemm_efficiency_bf16: …": the key at column 21; line 12: 6 spaces, "- {gpus: [gpu-a], " (18 characters)
    assert where == [f"{overlay}:4:5: gpus[0].fp8_dense_tflops",
                     f"{overlay}:5:21: gpus[0].compute_model.gemm_efficiency_bf16",
                     f"{overlay}:12:25: stacks[0].gpus[0].gemm_factor_bf16"]
    assert "write `gemm_factor: {bf16: 0.9}`" in provenance(cat).deprecations[2]


def test_old_rail_names_load_with_a_located_warning(tmp_path):
    old = variant(tmp_path, MINI_CATALOG, 25, "rails_per_node_options: [1, 2, 4, 8]",
                  "scaleout_nics_per_node: [1, 2, 4, 8]", "old-rails.yaml")
    cat = load_catalog([old])
    assert cat.by_id("platforms")["plat-a"].rails_per_node_options == [1, 2, 4, 8]
    assert provenance(cat).deprecations == [
        f"{old}:25:5: platforms[0].scaleout_nics_per_node: deprecated key: write `rails_per_node_options: [1, 2, 4, 8]` "
        "(one name for the scale-out NICs per node; `scaleout_nics_per_node` will be removed)"]


def test_the_shipped_catalogs_use_no_old_key():
    from solver.inputs.catalog import default_catalog_path

    default = default_catalog_path()
    for path in sorted(default.parent.glob("*.yaml")):
        assert provenance(load_catalog([default, path])).deprecations == [], path


def test_the_precisions_a_workload_runs_at_are_registered_names():
    """The workload's and the serving stacks' precision fields name the precisions the step models implement: a
    subset of the registry (a registered name no step model implements, mxfp8, is a catalog key only)."""
    from typing import get_args

    from solver.inputs.serving_stacks import ServingPrecision
    from solver.inputs.workload_schema import Workload

    training = set(get_args(Workload.model_fields["precision"].annotation))
    assert training <= set(PRECISIONS) and set(get_args(ServingPrecision)) <= set(PRECISIONS)


def test_a_new_form_overlay_lays_one_peak_over_as_the_old_field_did(tmp_path):
    # the mini catalog's gpu-a: dense_tflops {bf16: 1000, fp8: 2000}. An overlay that gives only the FP8 peak in the
    # new form changes that peak and keeps BF16 (before: refused, "give bf16"), with no deprecation warning.
    overlay = tmp_path / "new-overlay.yaml"
    overlay.write_text("name: new-overlay\ngpus:\n  - id: gpu-a\n    dense_tflops: {fp8: 2500}\n", encoding="utf-8")
    cat = load_catalog([MINI_CATALOG, overlay])
    assert cat.by_id("gpus")["gpu-a"].dense_tflops == {"bf16": 1000, "fp8": 2500}
    assert provenance(cat).deprecations == []
