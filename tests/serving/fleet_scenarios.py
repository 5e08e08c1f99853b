"""Small serving scenarios for the fleet tests (dicts, so each test states what it varies)."""
from __future__ import annotations

import copy

LLAMA_70B = {"layers": 80, "hidden_size": 8192, "ffn_hidden_size": 28672, "ffn_type": "swiglu",
             "attention_heads": 64, "kv_heads": 8, "vocab_size": 128256, "seq_len": 131072}

BASE = {
    "name": "fleet-test",
    "workload": {"kind": "inference", "model": LLAMA_70B, "stack": "trtllm", "precision": "fp8"},
    "serving": {"traffic": {"requests_per_s": 20.0, "input_tokens": 2000, "output_tokens": 500},
                "slo": {"ttft_p90_s": 2.0, "tokens_per_s_per_user": 20.0},
                "disaggregation": "auto", "concurrency": [16, 64, 128]},
    "constraints": {"platforms": ["hgx-h100", "hgx-b200"]},
    "parallelism": {"tp": [1, 2, 4, 8], "pp": 1},
    "objective": "capex",
    "top_k": 3,
}


def scenario(**changes) -> dict:
    """BASE with dotted-path changes: scenario(**{"serving.disaggregation": "on"})."""
    out = copy.deepcopy(BASE)
    for path, value in changes.items():
        node = out
        keys = path.split(".")
        for key in keys[:-1]:
            node = node.setdefault(key, {})
        if value is None:
            node.pop(keys[-1], None)
        else:
            node[keys[-1]] = value
    return out
