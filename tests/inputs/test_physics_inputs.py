"""Physics v2 inputs (issue 13): the new workload, robustness and catalog fields are validated with a clear
error (file, line, field; exit code 2; no output file)."""
import subprocess
import sys

from conftest import REPO

SCENARIO = """name: bad
workload:
  model: {layers: 2, hidden_size: 64, ffn_hidden_size: 256, attention_heads: 4, vocab_size: 1000, seq_len: 128}
  global_batch_size: 8
  fp8_param_gather: true
target: {step_time_s: 1.0}
"""


def _validate(tmp_path, text):
    path = tmp_path / "s.yaml"
    path.write_text(text, encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "solver", "validate", str(path)], capture_output=True, text=True,
                          cwd=REPO, timeout=60), path


def test_fp8_parameter_gather_needs_fp8(tmp_path):
    proc, path = _validate(tmp_path, SCENARIO)
    assert proc.returncode == 2
    assert f"{path}:2:1: workload" in proc.stderr and "fp8_param_gather needs precision: fp8" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_bandwidth_derate_below_one(tmp_path):
    text = SCENARIO.replace("  fp8_param_gather: true\n", "") + "robustness: {bandwidth_derate: 1.0}\n"
    proc, path = _validate(tmp_path, text)
    assert proc.returncode == 2
    assert f"{path}:6:" in proc.stderr and "robustness.bandwidth_derate" in proc.stderr


def test_grad_reduce_dtype_choices(tmp_path):
    text = SCENARIO.replace("fp8_param_gather: true", "grad_reduce_dtype: fp16")
    proc, path = _validate(tmp_path, text)
    assert proc.returncode == 2
    assert "workload.grad_reduce_dtype" in proc.stderr and "'fp32' or 'bf16'" in proc.stderr
