"""Software-stack profiles (SPEC §4.8, issue #23): the catalog's `stacks:` list, `workload.stack`, the
profile's defaults under the scenario's own fields, and located errors for unknown ids."""
from __future__ import annotations

import pytest

import solver
from solver.errors import InputError
from solver.inputs import check_against_catalog
from solver.perf.hardware import hardware_for

HEAD = """name: st
workload:
  model: {layers: 2, hidden_size: 64, ffn_hidden_size: 256, attention_heads: 4, vocab_size: 1000, seq_len: 128}
  global_batch_size: 8
"""
TAIL = "target: {step_time_s: 1}\n"
CALIBRATED = {"megatron", "torchtitan", "deepspeed", "fsdp"}  # and SPEC §4.8's JAX/XLA profile, an estimate


def _resolved(tmp_path, workload_extra: str = "", rest: str = "", catalog=None):
    path = tmp_path / "s.yaml"
    path.write_text(HEAD + workload_extra + TAIL + rest, encoding="utf-8")
    ls = solver.load_scenario(path)
    check_against_catalog(ls, catalog or solver.load_catalog())
    return ls.scenario


def test_the_shipped_catalog_has_the_five_stacks_and_megatron_is_the_default(default_catalog, tmp_path):
    stacks = {s.id for s in default_catalog.stacks if s.kind == "training"}
    assert CALIBRATED <= stacks and len(stacks) == 5
    assert _resolved(tmp_path, catalog=default_catalog).workload.stack == "megatron"


def test_an_unknown_stack_is_a_located_error(tmp_path, default_catalog):
    with pytest.raises(InputError) as err:
        _resolved(tmp_path, "  stack: torchtitn\n", catalog=default_catalog)
    text = str(err.value.problems[0]).replace(str(tmp_path / "s.yaml"), "s.yaml")
    # line 5 = the stack line after the four HEAD lines; column 3 = the key (the loader locates keys)
    assert text.startswith("s.yaml:5:3: workload.stack: no stack with this id in the catalog: did you mean 'torchtitan'?")


def test_profile_defaults_fill_only_what_the_scenario_leaves_out(tmp_path, default_catalog):
    # fsdp: optimizer fsdp and no pipeline parallelism by default (catalog stacks block)
    sc = _resolved(tmp_path, "  stack: fsdp\n", catalog=default_catalog)
    assert sc.workload.optimizer == "fsdp" and sc.parallelism.pp == 1
    # the scenario's own optimizer and pp allow-list win over the profile
    sc = _resolved(tmp_path, "  stack: fsdp\n  optimizer: distributed\n", "parallelism: {pp: [1, 2]}\n",
                   catalog=default_catalog)
    assert sc.workload.optimizer == "distributed" and sc.parallelism.pp == [1, 2]
    # deepspeed: a 1F1B pipeline (vp = 1) unless the scenario pins vp
    assert _resolved(tmp_path, "  stack: deepspeed\n", catalog=default_catalog).parallelism.vp == 1
    assert _resolved(tmp_path, "  stack: deepspeed\n", "pin: {vp: 2}\n", catalog=default_catalog).parallelism.vp is None


def test_resolution_is_idempotent(tmp_path, default_catalog):
    from solver.inputs.stacks import resolve_stack

    sc = _resolved(tmp_path, "  stack: torchtitan\n", catalog=default_catalog)
    assert resolve_stack(sc, default_catalog) == sc


OVERLAY = """stacks:
  - id: test-stack
    name: a test stack
    tp_overlap: 0.25
    gpus:
      - {gpus: [h100-sxm], gemm_factor: {bf16: 1.5}, attention_factor: 0.5, tp_overlap: 0.75}
      - {gpus: [any], gemm_factor: {bf16: 3.0}}
    source: test
"""


def test_stack_factors_and_tp_overlap_reach_the_hardware(tmp_path):
    (tmp_path / "o.yaml").write_text(OVERLAY, encoding="utf-8")
    cat = solver.load_catalog([solver.inputs.default_catalog_path(), tmp_path / "o.yaml"])
    base = solver.load_catalog()
    sc = _resolved(tmp_path, "  stack: test-stack\n", catalog=cat)
    plain = _resolved(tmp_path, catalog=base)
    h100 = base.by_id("gpus")["h100-sxm"].compute_model
    hw = hardware_for(sc, cat, "dgx-h100", "cx7-ndr", 8, 1.0)
    # h100-sxm entry: 1.5 × the GPU's η_gemm,bf16; 0.5 × η_attn; ψ = 0.75 from the entry
    assert hw.compute.gemm_efficiency["bf16"] == pytest.approx(1.5 * h100.gemm_efficiency["bf16"])
    assert hw.compute.attention_efficiency == pytest.approx(0.5 * h100.attention_efficiency)
    assert hw.compute.gemm_efficiency["fp8"] == pytest.approx(h100.gemm_efficiency["fp8"])
    assert hw.tp_overlap == 0.75 and hw.stack == "test-stack"
    # b200 falls to the `any` entry: 3 × 0.52 = 1.56, capped at 1; ψ = the stack's 0.25
    hw_b = hardware_for(sc, cat, "dgx-b200", "cx7-ndr", 8, 1.0)
    assert hw_b.compute.gemm_efficiency["bf16"] == 1.0 and hw_b.tp_overlap == 0.25
    # the scenario's overlap.tp wins over the stack
    sc_tp = _resolved(tmp_path, "  stack: test-stack\n", "overlap: {tp: 0.1}\n", catalog=cat)
    assert hardware_for(sc_tp, cat, "dgx-h100", "cx7-ndr", 8, 1.0).tp_overlap == 0.1
    assert hardware_for(plain, base, "dgx-h100", "cx7-ndr", 8, 1.0).stack == "megatron"


def test_a_stack_naming_an_unknown_gpu_is_a_located_catalog_error(tmp_path):
    (tmp_path / "o.yaml").write_text(OVERLAY.replace("[h100-sxm]", "[h100-sx]"), encoding="utf-8")
    with pytest.raises(InputError) as err:
        solver.load_catalog([solver.inputs.default_catalog_path(), tmp_path / "o.yaml"])
    text = str(err.value.problems[0]).replace(str(tmp_path / "o.yaml"), "o.yaml")
    # line 6 of the overlay; column 17 = the id inside "      - {gpus: [h100-sx" (6 + 2 + 1 + 7 spaces/chars before it)
    assert text.startswith("o.yaml:6:17: stacks[0].gpus[0].gpus[0]: no GPU with this id in the catalog")
