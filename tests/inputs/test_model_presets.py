"""Model presets and shapes from a parameter count (issue 45 item 1; solver/inputs/model_presets.py).

Each shipped preset reproduces its model's published total parameter count (model cards and papers, named per
row, docs/sources.md [H1]-[H12]); `{params: N}` expands to a Llama-3-like shape whose count is N within the
rounding of one layer, and 405e9 gives Llama 3.1 405B's own L, h and f (worked by hand in the test); a
mistyped name is a located error naming the nearest presets.
"""
from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest
import yaml
from conftest import REPO

from solver.inputs import load_scenario
from solver.inputs.model_presets import MODELS_DIR, load_model_preset, preset_names
from solver.inputs.schema import TransformerShape
from solver.perf.totals import parameter_count

# published totals, in billions, and where each is stated
PUBLISHED_B = {
    "llama3.1-8b": (8.03, "Llama 3.1 8B model card: 8.03B"),
    "llama3.1-70b": (70.6, "Llama 3.1 70B model card: 70.6B"),
    "llama3.1-405b": (405.0, "Llama 3 paper: 405B"),
    "deepseek-v3": (671.0, "DeepSeek-V3 report [M1] §4.2: 671B total (the MTP module's 14B aside)"),
    "deepseek-r1": (671.0, "DeepSeek-R1 model card: 671B total"),
    "qwen3-235b-a22b": (235.0, "Qwen3 model card [M24]: 235B total"),
    "qwen3-32b": (32.8, "Qwen3-32B model card: 32.8B"),
    "gpt-oss-120b": (116.8, "gpt-oss model card [M28] Table 1: 116.83B total"),
    "gpt-oss-20b": (20.9, "gpt-oss model card [M28] Table 1: 20.91B total"),
    "mixtral-8x7b": (46.7, "Mixtral paper [M26]: 47B (46.7B)"),
    "mixtral-8x22b": (141.0, "Mixtral 8x22B model card: 141B total"),
    "nemotron-4-340b": (340.0, "Nemotron-4 340B report: 340B"),
}


def test_the_issue_names_every_family_and_each_preset_names_its_source():
    names = preset_names()
    assert set(names) == set(PUBLISHED_B)
    for path in MODELS_DIR.glob("*.yaml"):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert doc["name"] == path.stem
        assert "docs/sources.md [H" in doc["source"]  # every preset cites its config source


@pytest.mark.parametrize("name", sorted(PUBLISHED_B))
def test_each_preset_has_its_published_parameter_count(name):
    published, where = PUBLISHED_B[name]
    shape = TransformerShape.model_validate(load_model_preset(name))
    assert parameter_count(shape) / 1e9 == pytest.approx(published, rel=0.01), where
    assert shape.origin.startswith(f"preset {name}:")


def test_params_405e9_is_llama_31_405b_by_hand():
    # per layer: h(h + 2·8·128) + h² + 3·h·3.25h + 2h at h = 16384 = 3,188,228,096; embeddings 2·h·128,256 =
    # 4,202,692,608; (405e9 − 4.2027e9) / 3.1882e9 = 125.7 → 126 layers; f = 3.25·16384 = 53,248: Llama 3.1 405B
    shape = TransformerShape.model_validate({"params": 405e9})
    assert (shape.layers, shape.hidden_size, shape.ffn_hidden_size) == (126, 16384, 53248)
    assert (shape.attention_heads, shape.kv_heads, shape.vocab_size, shape.seq_len) == (128, 8, 128256, 8192)


@pytest.mark.parametrize("params", [8e9, 70e9, 400e9, 1e12])
def test_params_expand_to_that_many_parameters_and_say_so(params):
    shape = TransformerShape.model_validate({"params": params})
    # a whole number of layers: within half a layer (≤ 1/(2L) of the total, 2 % at 34 layers)
    assert parameter_count(shape) == pytest.approx(params, rel=0.02)
    assert 95 <= shape.hidden_size / shape.layers <= 165  # Llama 3: 102 (70B) … 130 (405B)
    assert "Llama-3-like" in shape.origin and f"{shape.layers} layers" in shape.origin


def test_fields_beside_a_preset_or_params_win_and_are_named():
    shape = TransformerShape.model_validate({"preset": "llama3.1-70b", "seq_len": 4096})
    assert shape.seq_len == 4096 and shape.layers == 80 and "given: seq_len" in shape.origin
    shape = TransformerShape.model_validate({"params": 400e9, "seq_len": 4096})
    assert shape.seq_len == 4096


def test_a_preset_scenario_is_the_shipped_hand_written_shape():
    doc = yaml.safe_load((REPO / "scenarios" / "llama3-70b.yaml").read_text(encoding="utf-8"))
    by_hand = load_scenario(doc).scenario.workload.model
    doc["workload"]["model"] = "llama3.1-70b"
    named = load_scenario(doc).scenario
    assert named.workload.model.model_dump(exclude={"origin"}) == by_hand.model_dump(exclude={"origin"})
    assert named.workload.global_batch_size == 1024  # given: no default batch assumed
    assert len(named.workload.assumptions) == 1


def test_a_left_out_batch_is_16m_tokens_and_an_assumption():
    sc = load_scenario({"name": "x", "workload": {"model": "deepseek-v3"}, "target": {"step_time_s": 5}}).scenario
    assert sc.workload.global_batch_size == 4096  # 16,777,216 / 4,096-token sequences
    assert any("16,777,216 tokens per step" in a for a in sc.workload.assumptions)


def _run(args, cwd):
    return subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "COLUMNS": "200"})


def test_a_mistyped_preset_is_a_located_error_with_the_nearest_names(tmp_path):
    (tmp_path / "s.yaml").write_text("name: s\nworkload:\n  model: llama3.1-450b\n  global_batch_size: 8\n"
                                     "target: {step_time_s: 1}\n", encoding="utf-8")
    proc = _run(["validate", "s.yaml"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "s.yaml:3:" in proc.stderr and "workload.model" in proc.stderr
    assert "unknown model preset 'llama3.1-450b'" in proc.stderr and "'llama3.1-405b'" in proc.stderr


def test_a_mistyped_preset_without_a_batch_is_one_problem(tmp_path):
    """A named model gives the batch when it is left out, so a mistyped name is the only problem reported (not also
    a missing global_batch_size the user was told they may leave out)."""
    (tmp_path / "s.yaml").write_text("name: s\nworkload:\n  model: llama3.1-450b\n"
                                     "target: {step_time_s: 1}\n", encoding="utf-8")
    proc = _run(["validate", "s.yaml"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "unknown model preset 'llama3.1-450b'" in proc.stderr
    assert "global_batch_size" not in proc.stderr and "1 problem(s) found" in proc.stderr


def test_the_presets_ship_in_the_wheel():
    setup = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "solver.inputs" in setup["packages"]
    assert "models/*.yaml" in setup["package-data"]["solver.inputs"]
    assert MODELS_DIR == REPO / "solver" / "inputs" / "models"
