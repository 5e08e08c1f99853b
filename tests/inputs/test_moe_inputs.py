"""Bad Mixture-of-Experts input gets a located error (SPEC §3, §4.7): each test changes one line of
tests/data/inputs/moe-scenario.yaml and expects exit code 2, the exact ``FILE:LINE:COL: field.path``, no
traceback and no output file (the helpers of test_loading.py). Lines and columns are counted by hand from
the edited line (shown in each comment); columns are 1-based.
"""
from __future__ import annotations

from conftest import DATA
from test_loading import assert_rejected, run, variant

MOE_SCENARIO = DATA / "inputs" / "moe-scenario.yaml"


def test_the_moe_scenario_is_valid(tmp_path, monkeypatch, capsys):
    code, out, err = run(["validate", MOE_SCENARIO], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert "valid scenario" in out


def test_more_experts_per_token_than_experts(tmp_path, monkeypatch, capsys):
    # line 16 "      top_k: 8": the error sits on the moe block (line 14 "    moe:", column 5)
    bad = variant(tmp_path, MOE_SCENARIO, 16, "top_k: 8", "top_k: 300")
    assert_rejected(bad, "scenario", f"{bad}:14:5: workload.model.moe", "top_k 300 exceeds the 128 experts",
                    tmp_path, monkeypatch, capsys)


def test_ep_that_does_not_divide_the_experts(tmp_path, monkeypatch, capsys):
    # line 28 "  ep: [8, 16]" -> "  ep: [8, 12]": the second item at column 11
    bad = variant(tmp_path, MOE_SCENARIO, 28, "ep: [8, 16]", "ep: [8, 12]")
    assert_rejected(bad, "scenario", f"{bad}:28:11: parallelism.ep[1]", "ep must divide the 128 experts",
                    tmp_path, monkeypatch, capsys)


def test_etp_that_does_not_divide_the_expert_width(tmp_path, monkeypatch, capsys):
    # line 31 "  etp: 1" -> "  etp: 5": key at column 3
    bad = variant(tmp_path, MOE_SCENARIO, 31, "etp: 1", "etp: 5")
    assert_rejected(bad, "scenario", f"{bad}:31:3: pin.etp", "etp must divide the expert width", tmp_path,
                    monkeypatch, capsys)


def test_unknown_dispatcher(tmp_path, monkeypatch, capsys):
    # line 21 "    dispatcher: hierarchical": key at column 5
    bad = variant(tmp_path, MOE_SCENARIO, 21, "dispatcher: hierarchical", "dispatcher: deepep")
    assert_rejected(bad, "scenario", f"{bad}:21:5: workload.expert_dispatch.dispatcher",
                    "Input should be 'flat' or 'hierarchical' (got 'deepep')", tmp_path, monkeypatch, capsys)


def test_zero_capacity_factor(tmp_path, monkeypatch, capsys):
    # line 18 "      capacity_factor: null": key at column 7
    bad = variant(tmp_path, MOE_SCENARIO, 18, "capacity_factor: null", "capacity_factor: 0")
    assert_rejected(bad, "scenario", f"{bad}:18:7: workload.model.moe.capacity_factor",
                    "Input should be greater than 0", tmp_path, monkeypatch, capsys)


def test_mla_without_its_dimensions(tmp_path, monkeypatch, capsys):
    # line 11 "    head_dim: 128" -> "    attention: mla": the error sits on the model (line 5 "  model:", column 3)
    bad = variant(tmp_path, MOE_SCENARIO, 11, "head_dim: 128", "attention: mla")
    assert_rejected(bad, "scenario", f"{bad}:5:3: workload.model", "attention: mla needs the `mla` dimensions",
                    tmp_path, monkeypatch, capsys)


def test_expert_parallelism_on_a_dense_model(tmp_path, monkeypatch, capsys):
    # the mini dense scenario with "  microbatch_size: [1, 2]" (line 23) -> "  ep: [1, 8]": the 8 at column 11
    dense = DATA / "inputs" / "mini-scenario.yaml"
    bad = variant(tmp_path, dense, 23, "microbatch_size: [1, 2]", "ep: [1, 8]")
    assert_rejected(bad, "scenario", f"{bad}:23:11: parallelism.ep[1]",
                    "ep > 1 needs a Mixture-of-Experts model (workload.model.moe)", tmp_path, monkeypatch, capsys)
