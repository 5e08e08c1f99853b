"""Published model shapes the serving calibration rows name (config.json of each model card; docs/sources.md
[S14]). Llama 3.3 70B has Llama 3.1 70B's shape; DeepSeek-R1 has DeepSeek-V3's."""
from __future__ import annotations

from typing import Any

from ..inputs.schema import TransformerShape

_MLA = {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}

SERVING_MODELS: dict[str, dict[str, Any]] = {
    "llama3.1-8b": {"layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "attention_heads": 32, "kv_heads": 8,
                    "vocab_size": 128256, "seq_len": 131072},
    "llama3.1-70b": {"layers": 80, "hidden_size": 8192, "ffn_hidden_size": 28672, "attention_heads": 64, "kv_heads": 8,
                     "vocab_size": 128256, "seq_len": 131072},
    "llama3.1-405b": {"layers": 126, "hidden_size": 16384, "ffn_hidden_size": 53248, "attention_heads": 128,
                      "kv_heads": 8, "vocab_size": 128256, "seq_len": 131072},
    "gpt-oss-120b": {"layers": 36, "hidden_size": 2880, "ffn_hidden_size": 2880, "attention_heads": 64, "kv_heads": 8,
                     "head_dim": 64, "vocab_size": 201088, "seq_len": 131072,
                     "sliding_window": {"tokens": 128, "layers": 18},
                     "moe": {"experts": 128, "top_k": 4, "expert_ffn_hidden_size": 2880}},
    "mixtral-8x7b": {"layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "attention_heads": 32, "kv_heads": 8,
                     "vocab_size": 32000, "seq_len": 32768,
                     "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden_size": 14336}},
    "mixtral-8x22b": {"layers": 56, "hidden_size": 6144, "ffn_hidden_size": 16384, "attention_heads": 48,
                      "kv_heads": 8, "vocab_size": 32768, "seq_len": 65536,
                      "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden_size": 16384}},
    "qwen3-235b-a22b": {"layers": 94, "hidden_size": 4096, "ffn_hidden_size": 12288, "attention_heads": 64,
                        "kv_heads": 4, "head_dim": 128, "vocab_size": 151936, "seq_len": 40960,
                        "moe": {"experts": 128, "top_k": 8, "expert_ffn_hidden_size": 1536}},
    "qwen3-30b-a3b": {"layers": 48, "hidden_size": 2048, "ffn_hidden_size": 6144, "attention_heads": 32, "kv_heads": 4,
                      "head_dim": 128, "vocab_size": 151936, "seq_len": 40960,
                      "moe": {"experts": 128, "top_k": 8, "expert_ffn_hidden_size": 768}},
    "deepseek-r1": {"layers": 61, "hidden_size": 7168, "ffn_hidden_size": 18432, "attention_heads": 128,
                    "vocab_size": 129280, "seq_len": 163840, "attention": "mla", "mla": _MLA,
                    "moe": {"experts": 256, "top_k": 8, "expert_ffn_hidden_size": 2048, "shared_experts": 1,
                            "dense_layers": 3}},
}
SERVING_MODELS["deepseek-v3"] = SERVING_MODELS["deepseek-r1"]
SERVING_MODELS["llama3.3-70b"] = SERVING_MODELS["llama3.1-70b"]

_SHAPES: dict[str, TransformerShape] = {}


def serving_shape(name: str) -> TransformerShape:
    """The parsed shape of a model the calibration rows name (one object per name: the perf memos key on identity)."""
    if name not in _SHAPES:
        _SHAPES[name] = TransformerShape.model_validate(SERVING_MODELS[name])
    return _SHAPES[name]
