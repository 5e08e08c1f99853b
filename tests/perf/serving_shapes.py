"""Published serving model shapes (config.json of each model card, docs/sources.md [S14]) and a context
builder shared by the serving tests."""
from __future__ import annotations

from solver.inputs.catalog import load_catalog
from solver.inputs.schema import TransformerShape
from solver.perf.serving import ServingModelContext

from .moe_shapes import MIXTRAL_8X7B, deepseek_v3

LLAMA31_8B = {"layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "attention_heads": 32, "kv_heads": 8,
              "vocab_size": 128256, "seq_len": 131072}
LLAMA31_70B = {"layers": 80, "hidden_size": 8192, "ffn_hidden_size": 28672, "attention_heads": 64, "kv_heads": 8,
               "vocab_size": 128256, "seq_len": 131072}
LLAMA31_405B = {"layers": 126, "hidden_size": 16384, "ffn_hidden_size": 53248, "attention_heads": 128, "kv_heads": 8,
                "vocab_size": 128256, "seq_len": 131072}
GPT_OSS_120B = {"layers": 36, "hidden_size": 2880, "ffn_hidden_size": 2880, "attention_heads": 64, "kv_heads": 8,
                "head_dim": 64, "vocab_size": 201088, "seq_len": 131072,
                "sliding_window": {"tokens": 128, "layers": 18},
                "moe": {"experts": 128, "top_k": 4, "expert_ffn_hidden_size": 2880}}
MIXTRAL_8X22B = {"layers": 56, "hidden_size": 6144, "ffn_hidden_size": 16384, "attention_heads": 48, "kv_heads": 8,
                 "vocab_size": 32768, "seq_len": 65536, "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden_size": 16384}}
DEEPSEEK_R1 = deepseek_v3(seq=131072)

MODELS = {"llama3.1-8b": LLAMA31_8B, "llama3.1-70b": LLAMA31_70B, "llama3.1-405b": LLAMA31_405B,
          "gpt-oss-120b": GPT_OSS_120B, "mixtral-8x7b": MIXTRAL_8X7B, "mixtral-8x22b": MIXTRAL_8X22B,
          "deepseek-r1": DEEPSEEK_R1}

_CATALOG = None


def catalog():
    global _CATALOG
    if _CATALOG is None:
        _CATALOG = load_catalog()
    return _CATALOG


def shape(name: str) -> TransformerShape:
    return TransformerShape.model_validate(MODELS[name])


def context(model: str, platform: str, stack: str = "trtllm", precision: str = "fp8", kv: str | None = None,
            scaleout_gbyte_s: float = 50.0, cat=None) -> ServingModelContext:
    cat = cat or catalog()
    p = cat.by_id("platforms")[platform]
    return ServingModelContext(model=shape(model), gpu=cat.by_id("gpus")[p.gpu], platform=p,
                               scaleout_gbyte_s_per_gpu=scaleout_gbyte_s, stack=cat.by_id("stacks")[stack],
                               precision=precision, kv_cache_dtype=kv or ("bf16" if precision == "bf16" else "fp8"))
