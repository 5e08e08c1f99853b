"""A serving profile's p10/p90 interval out of bounds is located at its own key (issue clean, item 3).

yaml_safe dropped every location key starting with `int` (meant for pydantic's union tags `int`, `constrained-int`,
…), so `interval_p10` and `interval_p90` errors were reported at the parent `serving:` line, and the second one was
lost (one problem per place). The order check `interval_p10 must not exceed interval_p90` could never fire (p10 ≤ 1
≤ p90 by the fields' bounds) and is gone: a swapped pair gets both values, each at its line."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from solver.inputs.yaml_safe import Document, _problem_from

REPO = Path(__file__).resolve().parents[2]
OVERLAY = """stacks:
  - id: test-serve
    kind: inference
    name: a test serving stack
    serving:
      interval_p10: 1.2
      interval_p90: 0.9
      gpus:
        - {gpus: [any], prefill_efficiency: 0.5, decode_efficiency: 0.4, hbm_efficiency: 0.6}
    source: test
"""


def test_a_swapped_interval_is_two_located_errors_through_the_cli(tmp_path):
    path = tmp_path / "o.yaml"
    path.write_text(OVERLAY, encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "solver", "validate", "scenarios/llama3-70b.yaml", "--catalog",
                          str(path)], capture_output=True, text=True, cwd=REPO)
    out = run.stdout + run.stderr
    assert run.returncode == 2 and "Traceback" not in out
    # lines 6 and 7, column 7: the key (after 6 spaces)
    assert f"{path}:6:7: stacks[0].serving.interval_p10: Input should be less than or equal to 1 (got 1.2)" in out
    assert f"{path}:7:7: stacks[0].serving.interval_p90: Input should be greater than or equal to 1 (got 0.9)" in out


def test_only_pydantics_union_tags_are_dropped_from_a_location():
    """`int`, `constrained-int` and `list[int]` are union tags; `interval_p10`, `strides`, `list_price` are keys."""
    doc = Document("x.yaml", {}, None)
    for key in ("interval_p10", "strides", "list_price", "integer", "floating", "tagged"):
        err = {"loc": ("a", key), "msg": "m", "type": "value_error", "input": 1}
        assert _problem_from(doc, type(None), err).path == f"a.{key}"
    for tag in ("int", "constrained-int", "list[int]", "str", "float", "function-after[f(), float]",
                "tagged-union[A,B]"):
        err = {"loc": ("a", tag, "b"), "msg": "m", "type": "value_error", "input": 1}
        assert _problem_from(doc, type(None), err).path == "a.b"
