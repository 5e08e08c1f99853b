"""Stacks, serving profiles and reliability inputs share `schema_base.Strict` (issue clean, item 1): before, each
of solver/inputs/stacks.py, serving_stacks.py and reliability.py had its own copy of Strict's configuration without
its strict scalars, so `true` where a number goes read as 1, a quoted number as a number and `1` as a yes."""
from __future__ import annotations

import pytest
from conftest import GPT3_1_3B

import solver
from solver.errors import InputError

STACK = """stacks:
  - id: test-stack
    name: a test stack
    tp_overlap: {tp}
    gpus:
      - {{gpus: [any], gemm_factor: {{bf16: 1.0}}}}
    source: test
"""
SERVING = """stacks:
  - id: test-serve
    kind: inference
    name: a test serving stack
    serving:
      step_overhead_ms: {ovh}
      gpus:
        - {{gpus: [any], prefill_efficiency: 0.5, decode_efficiency: 0.4, hbm_efficiency: 0.6}}
    source: test
"""


def _catalog_problems(tmp_path, text: str) -> str:
    (tmp_path / "o.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        solver.load_catalog([solver.inputs.default_catalog_path(), tmp_path / "o.yaml"])
    return str(err.value).replace(str(tmp_path / "o.yaml"), "o.yaml")


def test_a_stacks_boolean_share_is_a_located_error(tmp_path):
    # line 4 of the overlay, column 17: the value after "    tp_overlap: "
    text = _catalog_problems(tmp_path, STACK.format(tp="true"))
    assert "o.yaml:4:" in text and "stacks[0].tp_overlap: must be a number, not the boolean true" in text


def test_a_serving_profiles_quoted_number_is_a_located_error(tmp_path):
    text = _catalog_problems(tmp_path, SERVING.format(ovh="'2.5'"))
    assert "o.yaml:6:" in text and "stacks[0].serving.step_overhead_ms: must be a number, not the text '2.5'" in text


def test_the_overlays_load_with_plain_values(tmp_path):
    (tmp_path / "o.yaml").write_text(STACK.format(tp="0.5") + SERVING.format(ovh="2.5").replace("stacks:\n", ""),
                                     encoding="utf-8")
    cat = solver.load_catalog([solver.inputs.default_catalog_path(), tmp_path / "o.yaml"])
    stacks = cat.by_id("stacks")
    assert stacks["test-stack"].tp_overlap == 0.5 and stacks["test-serve"].serving.step_overhead_ms == 2.5


def test_a_reliability_yes_no_given_as_a_number_is_a_located_error():
    doc = {"name": "r", "workload": {"model": dict(GPT3_1_3B), "global_batch_size": 8},
           "target": {"step_time_s": 1.0}, "reliability": {"spares": 1}}
    with pytest.raises(InputError) as err:
        solver.load_scenario(doc)
    assert "reliability.spares: must be true or false, not 1" in str(err.value)
