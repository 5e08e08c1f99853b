"""A training job on the fleet's off-peak GPUs (optimize/serving_night.py, the day/night stretch): the GPUs idle in at
least H hours train the job with its fastest layout; tokens per day = H · 3,600 / step · B · s."""
from __future__ import annotations

from pathlib import Path

import pytest

import solver
from solver.errors import InputError
from solver.optimize.serving_solve import solve_fleet

REPO = Path(__file__).resolve().parents[2]
TRAIN = """name: train-8b
workload:
  model: {layers: 32, hidden_size: 4096, ffn_hidden_size: 14336, attention_heads: 32, kv_heads: 8, vocab_size: 128256,
          seq_len: 8192}
  global_batch_size: 128
  precision: bf16
target: {step_time_s: 10.0}
parallelism: {tp: [1, 2, 4, 8], cp: 1, pp: [1, 2], vp: 1, microbatch_size: 1}
"""


def _serve(tmp_path: Path, hours: int) -> Path:
    (tmp_path / "train8b.yaml").write_text(TRAIN, encoding="utf-8")
    src = (REPO / "scenarios" / "serve-gpt-oss-120b-diurnal.yaml").read_text(encoding="utf-8")
    src = src.replace("  disaggregation: auto\n",
                      f"  disaggregation: auto\n  night_training: {{scenario: train8b.yaml, hours: {hours}}}\n")
    path = tmp_path / "serve.yaml"
    path.write_text(src, encoding="utf-8")
    return path


def test_night_job_on_idle_gpus(tmp_path):
    d = solve_fleet(solver.load_scenario(_serve(tmp_path, 8)), top_k=1).designs[0]
    night = d.serving_dict()["night_training"]
    sched = d.serving_dict()["schedule"]
    pool = d.back
    idle = sorted(((pool.replicas - h["replicas"][pool.role]) * pool.option.gpus_per_replica for h in sched["hours"]),
                  reverse=True)
    assert night["idle_gpus"] == idle[7] // 8 * 8  # idle in ≥ 8 hours, whole 8-GPU nodes
    assert night["status"] == "optimal" and 1 <= night["gpus_used"] <= night["idle_gpus"]
    assert night["training_tokens_per_day"] == pytest.approx(8 * 3600 / night["step_time_s"] * 128 * 8192)


def test_no_night_job_when_nothing_is_idle_that_long(tmp_path):
    d = solve_fleet(solver.load_scenario(_serve(tmp_path, 23)), top_k=1).designs[0]
    night = d.serving_dict()["night_training"]
    # the profile peaks (2.0) in two hours, 11 and 12, so the 23rd most idle hour is a peak hour: the fleet is bought
    # for the peak, so less than a whole node is idle then
    assert night["idle_gpus"] == 0
    assert night["status"] == "infeasible" and "idle 23 hours a day" in night["explanation"]


def test_night_training_needs_a_diurnal_profile():
    from .fleet_scenarios import scenario

    with pytest.raises(InputError, match="needs a 24-hour traffic.diurnal"):
        solver.load_scenario(scenario(**{"serving.night_training": {"scenario": "x.yaml"}}))


def test_a_missing_or_serving_night_scenario_is_a_located_input_error(tmp_path):
    """The night job's file is checked where the serving file names it (serving.night_training.scenario): a missing
    file or a serving scenario is an input error at that field, not a crash in the training solve."""
    path = _serve(tmp_path, 8)
    path.write_text(path.read_text(encoding="utf-8").replace("train8b.yaml", "nope.yaml"), encoding="utf-8")
    with pytest.raises(InputError, match=r"serving.night_training.scenario: no file .*nope.yaml"):
        solve_fleet(solver.load_scenario(path), top_k=1)
    path.write_text(path.read_text(encoding="utf-8").replace("nope.yaml", "serve.yaml"), encoding="utf-8")
    with pytest.raises(InputError, match=r"serving.night_training.scenario: serve.yaml is a serving scenario"):
        solve_fleet(solver.load_scenario(path), top_k=1)
