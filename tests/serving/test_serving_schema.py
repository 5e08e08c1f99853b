"""The serving inputs (SPEC §4.9): `workload.kind: inference`, the `serving:` block and the serving pins — strict,
with file:line errors; the peak request rate worked by hand."""
from __future__ import annotations

import subprocess
import sys

import pytest

import solver
from solver.errors import InputError

from .fleet_scenarios import scenario


def _problems(data: dict) -> str:
    with pytest.raises(InputError) as info:
        solver.load_scenario(data)
    return str(info.value)


def test_peak_from_tokens_per_day_and_peak_to_mean():
    """2e9 tokens/day of 2,000 + 500-token requests at 2.5 × the mean: 2e9 / 86,400 / 2,500 · 2.5 = 23.148 requests/s."""
    sc = solver.load_scenario(scenario(**{"serving.traffic": {"tokens_per_day": 2e9, "peak_to_mean": 2.5,
                                                              "input_tokens": 2000, "output_tokens": 500}})).scenario
    assert sc.serving.traffic.peak_requests_per_s() == pytest.approx(23.148148, rel=1e-6)
    assert sc.serving.traffic.mean_requests_per_s() == pytest.approx(9.259259, rel=1e-6)


def test_peak_from_a_diurnal_profile():
    """Hours at load 1 except four at 3: mean = (20 + 12) / 24 = 4/3, peak factor = 3 / (4/3) = 2.25."""
    profile = [1.0] * 20 + [3.0] * 4
    sc = solver.load_scenario(scenario(**{"serving.traffic": {"tokens_per_day": 8.64e8, "diurnal": profile,
                                                              "input_tokens": 900, "output_tokens": 100}})).scenario
    t = sc.serving.traffic
    assert t.peak_factor() == pytest.approx(2.25)
    assert t.peak_requests_per_s() == pytest.approx(8.64e8 / 86_400 / 1000 * 2.25)


def test_slo_tpot_from_tokens_per_s_per_user():
    sc = solver.load_scenario(scenario()).scenario
    assert sc.serving.slo.tpot_max_s() == pytest.approx(0.05)
    assert sc.serving.slo.utilisation_max == 0.8  # the default headroom


@pytest.mark.parametrize("changes, words", [
    ({"serving.traffic.tokens_per_day": 1e9}, "either requests_per_s"),
    ({"serving.traffic.requests_per_s": None, "serving.traffic.tokens_per_day": 1e9}, "exactly one of peak_to_mean"),
    ({"serving.traffic.requests_per_s": None, "serving.traffic.tokens_per_day": 1e9,
      "serving.traffic.diurnal": [1.0] * 23}, "24"),
    ({"serving.slo.tpot_p90_ms": 50.0}, "not both"),
    ({"serving.slo.utilisation_max": 1.5}, "utilisation_max"),
    ({"serving.disaggregation": "maybe"}, "disaggregation"),
    ({"serving.slo.ttft_s": 1.0}, "ttft_s"),
    ({"serving": None}, "needs the `serving:` block"),
    ({"workload.kind": "training", "workload.global_batch_size": 8, "workload.precision": "bf16",
      "workload.stack": "megatron", "target": {"step_time_s": 1.0}}, "`serving:` needs workload.kind: inference"),
    ({"pin": {"platform": "hgx-h100", "prefill": {"tp": 2}}}, "not both"),
    ({"target": {"step_time_s": 1.0}}, "leave `target:` out"),
    ({"serving.disaggregation": "on", "pin": {"tp": 2}}, "pin prefill: and decode: instead"),
    ({"serving.disaggregation": "off", "pin": {"decode": {"tp": 2}}}, "disaggregation is off"),
    ({"workload.kind": None}, "`serving:` needs workload.kind: inference (add `kind: inference` under workload:)"),
    ({"site": {"power": [{"energised": "2027", "power_mw": 1}, {"energised": "2026", "power_mw": 2}],
               "cooling": [{"type": "air", "pue": 1.3, "rack_kw_max": 40, "source": "test"}]}},
     "power phases must be in date order"),  # a serving fleet reads the site since issue 43s: its errors are located
    ({"site": {"power": [{"energised": "2026", "power_mw": 1}],
               "cooling": [{"type": "air", "pue": 0.9, "rack_kw_max": 40, "source": "test"}]}}, "pue"),
])
def test_bad_serving_input_is_located(changes, words):
    assert words in _problems(scenario(**changes))


def test_fp4_and_kv_cache_dtype_are_serving_only():
    data = scenario(**{"workload.kind": "training", "workload.global_batch_size": 8, "workload.stack": "megatron",
                       "serving": None, "target": {"step_time_s": 1.0}, "workload.precision": "fp4"})
    assert "serving" in _problems(data)


def test_serving_pins_load():
    sc = solver.load_scenario(scenario(pin={"prefill": {"platform": "hgx-h100", "tp": 1},
                                            "decode": {"platform": "hgx-b200", "tp": 4, "concurrency": 64,
                                                       "replicas": 3}})).scenario
    assert sc.pin.decode.replicas == 3 and sc.pin.prefill.tp == 1


def test_cli_error_names_file_line_and_field(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nworkload:\n  kind: inference\n  model: {layers: 2, hidden_size: 64, ffn_hidden_size: "
                    "128, attention_heads: 4, vocab_size: 100, seq_len: 1024}\nserving:\n  traffic: {requests_per_s: 1,"
                    " input_tokens: 10, output_tokens: 10}\n  slo: {ttft_p90_s: -1}\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "solver", "validate", str(path)], capture_output=True, text=True)
    assert run.returncode == 2
    assert f"{path}:7:" in run.stderr + run.stdout and "ttft_p90_s" in run.stderr + run.stdout
    assert "Traceback" not in run.stderr


def test_inference_defaults_to_a_serving_stack():
    data = scenario()
    del data["workload"]["stack"]
    assert solver.load_scenario(data).scenario.workload.stack == "trtllm"


def test_a_training_stack_cannot_serve():
    from solver.optimize.serving_solve import solve_fleet

    with pytest.raises(InputError) as info:
        solve_fleet(scenario(**{"workload.stack": "megatron"}))
    assert "is a training stack but workload.kind is inference" in str(info.value)


def test_an_unknown_pool_pin_is_located():
    from solver.optimize.serving_solve import solve_fleet

    with pytest.raises(InputError) as info:
        solve_fleet(scenario(pin={"prefill": {"platform": "hgx-h999"}, "decode": {"platform": "hgx-h100"}}))
    assert "pin.prefill.platform" in str(info.value) and "no platform with this id" in str(info.value)
