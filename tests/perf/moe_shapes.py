"""Published Mixture-of-Experts model shapes and a workload builder shared by the MoE tests (docs/sources.md
[M1][M23]–[M26]: the model providers, configs and papers)."""
from __future__ import annotations

from solver.inputs.schema import Scenario, TransformerShape

MLA = {"q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128}


def deepseek_v3(mtp=0, seq=4096, **moe_extra):
    """DeepSeek-V3 (config.json of deepseek-ai/DeepSeek-V3, docs/sources.md [M1]): 61 layers, 3 dense."""
    return {"layers": 61, "hidden_size": 7168, "ffn_hidden_size": 18432, "attention_heads": 128, "vocab_size": 129280,
            "seq_len": seq, "attention": "mla", "mla": MLA,
            "moe": {"experts": 256, "top_k": 8, "expert_ffn_hidden_size": 2048, "shared_experts": 1, "dense_layers": 3,
                    "mtp_layers": mtp, **moe_extra}}


KIMI_K2 = {"layers": 61, "hidden_size": 7168, "ffn_hidden_size": 18432, "attention_heads": 64, "vocab_size": 163840,
           "seq_len": 4096, "attention": "mla", "mla": MLA,
           "moe": {"experts": 384, "top_k": 8, "expert_ffn_hidden_size": 2048, "shared_experts": 1, "dense_layers": 1}}
QWEN3_235B = {"layers": 94, "hidden_size": 4096, "ffn_hidden_size": 12288, "attention_heads": 64, "kv_heads": 4,
              "head_dim": 128, "vocab_size": 151936, "seq_len": 4096,
              "moe": {"experts": 128, "top_k": 8, "expert_ffn_hidden_size": 1536}}
QWEN3_30B = {"layers": 48, "hidden_size": 2048, "ffn_hidden_size": 6144, "attention_heads": 32, "kv_heads": 4,
             "head_dim": 128, "vocab_size": 151936, "seq_len": 4096,
             "moe": {"experts": 128, "top_k": 8, "expert_ffn_hidden_size": 768}}
MIXTRAL_8X7B = {"layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "attention_heads": 32, "kv_heads": 8,
                "vocab_size": 32000, "seq_len": 4096, "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden_size": 14336}}


def shape(model: dict) -> TransformerShape:
    return TransformerShape.model_validate(model)


def workload(model: dict, batch: int = 1, **extra):
    return Scenario.model_validate({"name": "moe", "workload": {"model": model, "global_batch_size": batch, **extra},
                                    "target": {"step_time_s": 1.0}}).workload
