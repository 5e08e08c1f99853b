"""Published Mixture-of-Experts training runs as inputs of the performance model (SPEC §4.7).

Two CSV files in tests/data, one row per published metric (a run publishes 1–3 metrics), with the
source of every row in its `source` column:

- moe-calibration.csv: the only rows the MoE parameters were fitted on (docs/sources.md [M7][M8][M18]
  [M19][M22][M3]: Qwen3-30B-A3B, GPT-OSS-120B and one Mixtral-8x7B run on H100/B200/B300/GB200/GB300);
- moe-heldout.csv: 106 published runs of other models (DeepSeek-V3, Qwen3-235B-A22B, Kimi-K2), never
  used to choose a parameter: validation only (docs/sources.md [M2][M7][M8][M13][M18][M19][M27]).

`run_inputs(row)` maps a row to (workload, layout, hardware); `published_tokens(row)` gives the
row's throughput in tokens/s/GPU (a TFLOP/s row is divided by the publisher's own FLOPs per token,
`implied_flops_per_token`, so two accountings never mix); `predicted_tokens(row)` runs the model.
What the CSV does not say is filled with stated defaults (see `_recompute`, `_dispatch`).
"""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import yaml

from solver.inputs.schema import Catalog, Scenario
from solver.perf.hardware import Hardware, hardware_for
from solver.perf.layout import Layout, placement_problem
from solver.perf.step import Performance, performance, tokens_per_s_per_gpu
from solver.perf.traffic import DEFAULT_OVERLAP

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
CALIBRATION_CSV = DATA / "moe-calibration.csv"
HELDOUT_CSV = DATA / "moe-heldout.csv"

# platform, NIC, rails per node of the published systems (catalogs/default.yaml). H800 = DGX H100 with its
# NVLink cut to 400 GB/s bidirectional, 200 per direction (docs/sources.md [M2] §4.1).
SYSTEMS = {
    "H100": ("dgx-h100", "cx7-ndr", 8), "H800": ("dgx-h100", "cx7-ndr", 8), "B200": ("dgx-b200", "cx7-ndr", 8),
    "B300": ("dgx-b300", "cx8-xdr", 8), "GB200": ("gb200-nvl72", "cx7-ndr", 4), "GB300": ("gb300-nvl72", "cx8-xdr", 4),
}
H800_NVLINK_GBYTE_S = 200.0
# NVL72 jobs in these recipes place 64 GPUs per rack (NUM_OF_HYBRID_EP_RANKS_PER_NVLINK_DOMAIN=64, [M7] recipes)
GPUS_PER_DOMAIN_USED = {8: 8, 72: 64}

# What the CSV columns do not carry, per model, from the model providers and configs:
MODEL_EXTRAS = {
    # 18 of 36 layers use a 128-token sliding window (GPT-OSS model card [M28]; reproduces the CSV's
    # flops_per_token_megatron 32.6 G at s = 4096 and 34.4 G at 8192)
    "GPT-OSS-120B": {"sliding_window": {"tokens": 128, "layers": 18}},
    # group-limited routing: 8 groups, top-4 (DeepSeek-V3 config n_group 8, topk_group 4; [M1] §4.2 M = 4)
    "DeepSeek-V3": {"router": {"router_groups": 8, "router_group_top_k": 4}},
}


@lru_cache(maxsize=1)
def catalog() -> Catalog:
    return Catalog.model_validate(yaml.safe_load((REPO / "catalogs" / "default.yaml").read_text()))


def load_rows(path: Path) -> list[dict]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _int(text: str, default: int = 1) -> int:
    return int(float(text)) if text and text.strip() not in ("", "-") else default


# ----------------------------------------------------------------------------------- model


def _attention(row: dict) -> dict:
    text = row["kv_heads_or_mla"]
    if text.startswith("MLA"):
        dims = dict(re.findall(r"(q_lora|kv_lora|qk_nope|qk_rope|v) (\d+)", text))
        return {"attention": "mla", "mla": {
            "q_lora_rank": int(dims["q_lora"]), "kv_lora_rank": int(dims["kv_lora"]),
            "qk_nope_head_dim": int(dims["qk_nope"]), "qk_rope_head_dim": int(dims["qk_rope"]),
            "v_head_dim": int(dims["v"])}}
    match = re.match(r"(\d+) \(head_dim (\d+)\)", text)
    assert match, text
    return {"kv_heads": int(match.group(1)), "head_dim": int(match.group(2))}


def model_of(row: dict) -> dict:
    extras = MODEL_EXTRAS.get(row["model"], {})
    moe = {"experts": int(row["experts"]), "top_k": int(row["topk"]), "expert_ffn_hidden_size": int(row["moe_ffn"]),
           "shared_experts": _int(row["shared_experts"], 0), "dense_layers": _int(row["dense_layers"], 0),
           "mtp_layers": _int(row.get("mtp_layers", ""), 0), **extras.get("router", {})}
    if moe["shared_experts"]:
        moe["shared_expert_ffn_hidden_size"] = _int(row.get("shared_ffn", ""), moe["expert_ffn_hidden_size"])
    routing = row["routing"].lower()
    if routing.startswith("token-drop"):
        moe.update(capacity_factor=1.0, pad_to_capacity=True)
    model = {"layers": int(row["layers"]), "hidden_size": int(row["hidden"]), "ffn_hidden_size": int(row["dense_ffn"]),
             "attention_heads": int(row["heads"]), "vocab_size": int(row["vocab"]), "seq_len": int(row["seq"]),
             "moe": moe, **_attention(row)}
    if "sliding_window" in extras:
        model["sliding_window"] = extras["sliding_window"]
    return model


# ----------------------------------------------------------------------------------- software


# Recompute modules of calibration runs whose CSV row does not carry them, from the recipe presets
# ([M7] @c0b9a0003, preset B200_BF16_V2 for GPT-OSS-120B on DGX-B200: recompute layernorm + moe_act;
# assumed for the same platform's rows of releases 26.02 … 26.04.01, which kept the preset family).
CALIBRATION_RECOMPUTE = {("GPT-OSS-120B", "B200", r): "layernorm+moe_act" for r in ("26.02", "26.02.01", "26.04", "26.04.01")}


def _recompute(row: dict) -> tuple[str, list[str]]:
    """(activation_recompute, recompute_modules) from the row's `recompute` column (the calibration
    file has none: its notes say "activation checkpointing" for full recompute; the table above adds
    what the presets say). Default: selective (the attention core, which FlashAttention recomputes
    anyway) and no module."""
    text = (row.get("recompute", "") + " " + row.get("dispatcher_or_notes", "") + " "
            + CALIBRATION_RECOMPUTE.get((row["model"], row["gpu"], release(row)), "")).lower()
    if "full" in text or "activation checkpointing" in text or "AutoModel" in row["name"]:
        # NeMo AutoModel's benchmark configs checkpoint every layer (activation_checkpointing: true, [M12][M22]);
        # without it its Qwen3-30B-A3B 8-GPU mbs-4 run would need 166 GB of an H100's 74 usable
        return "full", []
    text = text.replace("mla up-projection", "mla_up_proj").replace("rmsnorm", "layernorm")
    words = set(re.split(r"[^a-z_]+", text))
    return "selective", sorted(words & {"mla_up_proj", "moe_act", "layernorm", "mlp", "moe"})


# Dispatchers of the calibration runs whose EP group spans domains, from the recipe presets at each
# release ([M7] @c0b9a0003: GPT-OSS B200/B300 26.02 have no flex backend → NCCL all-to-all;
# Qwen3-30B H100 EP16 26.04 … 26.06 use HybridEP).
CALIBRATION_DISPATCH = {("GPT-OSS-120B", "26.02"): "flat", ("Qwen3-30B-A3B", "26.04"): "hierarchical",
                        ("Qwen3-30B-A3B", "26.04.01"): "hierarchical", ("Qwen3-30B-A3B", "26.06"): "hierarchical"}


def release(row: dict) -> str:
    match = re.search(r"NeMo (\d\d\.\d\d(?:\.\d\d)?)\)", row["name"])
    return match.group(1) if match else ""


def _dispatch(row: dict) -> dict:
    """dispatcher (DeepEP, HybridEP, flex, DeepSeek's → hierarchical; NCCL alltoall/A2A → flat; not stated →
    the calibration table above, else flat, Megatron's default), FP8 dispatch for DeepSeek's own run,
    and the overlap (1F1B all-to-all overlap or DualPipe → batch_overlap)."""
    text = (row.get("dispatcher", "") or row.get("dispatcher_or_notes", "")).lower()
    if any(w in text for w in ("deepep", "hybridep", "flex", "hierarchical")):
        dispatcher = "hierarchical"
    elif "alltoall" in text or "a2a" in text or "all-to-all" in text:
        dispatcher = "flat"
    else:
        dispatcher = CALIBRATION_DISPATCH.get((row["model"], release(row)), "flat")
    overlap = "batch_overlap" if row.get("ep_a2a_overlap", "").lower().startswith("yes") else "none"
    fp8_dispatch = "deepseek recipe" in row.get("precision", "").lower()
    return {"dispatcher": dispatcher, "overlap": overlap, "dispatch_dtype": "fp8" if fp8_dispatch else "bf16"}


# ----------------------------------------------------------------------------------- a run


@dataclass(frozen=True)
class RunInputs:
    scenario: Scenario
    layout: Layout
    hw: Hardware
    gpus_per_domain: int


def run_inputs(row: dict) -> RunInputs:
    gpus = int(row["gpus"])
    t, c, p = _int(row["tp"]), _int(row["cp"]), _int(row["pp"])
    v = _int(row["vp"]) if p > 1 else 1
    recompute, modules = _recompute(row)
    precision = "bf16" if row["precision"].upper().startswith("BF16") else "fp8"
    optimizer = "fsdp" if row["fsdp"] not in ("", "ZeRO-1 DP") else "distributed"
    # L layers over p·v model chunks that do not divide them: only possible with the embedding and the loss
    # counted as layers (Megatron-Bridge's account_for_*_in_pipeline_split or a pipeline layout), so the split
    # is balanced (the rule of the dense calibration rows, tests/perf/calibration_rows.py `_mb405`).
    split = "balanced" if p > 1 and int(row["layers"]) % (p * v) else "uniform"
    scenario = Scenario.model_validate({
        "name": "moe-run",
        "workload": {"model": model_of(row), "global_batch_size": int(float(row["global_batch"])),
                     "precision": precision, "activation_recompute": recompute, "recompute_modules": modules,
                     "optimizer": optimizer, "expert_dispatch": _dispatch(row),
                     # the NeMo / Megatron-Bridge performance recipes reduce gradients in bf16 (physics v2's
                     # `grad_reduce_dtype`, docs/model.md; the MoE fit assumed 2-byte gradients throughout)
                     "grad_reduce_dtype": "bf16", "pipeline_split": split},
        "target": {"step_time_s": 1.0},
        # TP exposed, as the MoE fit assumed (physics v3's stack ψ is not applied to the MoE runs: issue 23 item 7)
        "overlap": {"tp": 0.0},
    })
    platform, nic, rails = SYSTEMS[row["gpu"]]
    hw = hardware_for(scenario, catalog(), platform, nic, rails, 1.0)
    if row["gpu"] == "H800":
        hw = replace(hw, nvlink_gbyte_s=H800_NVLINK_GBYTE_S)
    domain = int(row["gpus_per_domain"])
    layout = Layout(tp=t, cp=c, pp=p, vp=v, dp=gpus // (t * c * p), microbatch_size=_int(row["micro_batch"]),
                    gpus_per_domain_used=GPUS_PER_DOMAIN_USED[domain], ep=_int(row["ep"]), etp=_int(row["etp"]))
    return RunInputs(scenario, layout, hw, domain)


def predict(row: dict) -> Performance:
    run = run_inputs(row)
    problem = placement_problem(run.layout, run.scenario.workload, run.gpus_per_domain)
    assert problem is None, f"{row['name']}: {problem}"
    return performance(run.scenario.workload, run.layout, run.hw, DEFAULT_OVERLAP)


def published_tokens(row: dict) -> float:
    """tokens/s/GPU of the row's metric: as published; B·s/(N·step) from a step time; TFLOP/s ÷ the
    publisher's own FLOPs per token (`implied_flops_per_token`, else Megatron's)."""
    value, metric = float(row["value"]), row["metric"]
    if metric.startswith("tokens_per_s_per_gpu"):
        return value
    if metric == "step_time_s":
        return int(float(row["global_batch"])) * int(row["seq"]) / (int(row["gpus"]) * value)
    if metric == "model_tflops_per_gpu":
        flops = float(row["implied_flops_per_token"] or row["flops_per_token_megatron"])
        return value * 1e12 / (flops * 1e9)
    raise ValueError(f"metric {metric} is not a throughput in Megatron's accounting")


def is_throughput(row: dict) -> bool:
    return row["metric"] in ("tokens_per_s_per_gpu", "tokens_per_s_per_gpu_derived_from_tokens_per_day", "step_time_s",
                             "model_tflops_per_gpu")


def error(row: dict) -> float:
    """Predicted / published tokens/s/GPU − 1."""
    run = run_inputs(row)
    return tokens_per_s_per_gpu(run.scenario.workload, predict(row)) / published_tokens(row) - 1


# ----------------------------------------------------------------------------------- runs

METRIC_PREFERENCE = ("tokens_per_s_per_gpu", "tokens_per_s_per_gpu_derived_from_tokens_per_day", "step_time_s",
                     "model_tflops_per_gpu")


@dataclass
class Run:
    """One published run: its metric rows (1–3), the one whose throughput it is compared on (tokens/s first)."""

    rows: list[dict]
    label: str = ""  # the name, with the notes when two runs of a file share a name

    @property
    def row(self) -> dict:
        return min((r for r in self.rows if is_throughput(r)), key=lambda r: METRIC_PREFERENCE.index(r["metric"]))

    @property
    def name(self) -> str:
        return self.label or self.row["name"]

    def placeable(self) -> bool:
        run = run_inputs(self.row)
        return placement_problem(run.layout, run.scenario.workload, run.gpus_per_domain) is None

    def error(self) -> float:
        return error(self.row)


def runs(path: Path) -> list[Run]:
    """The runs of a CSV, in file order: metric rows grouped by name, source, notes, layout and batch."""
    groups: dict[tuple, list[dict]] = {}
    for r in load_rows(path):
        key = (r["name"], r["source"], r.get("notes", ""), r["dispatcher_or_notes"], r["global_batch"],
               r["micro_batch"], r["precision"], r["tp"], r["pp"], r["ep"], r["seq"], r["vp"])
        groups.setdefault(key, []).append(r)
    out = [Run(rows) for rows in groups.values() if any(is_throughput(r) for r in rows)]
    names = [run.row["name"] for run in out]
    for run in out:
        if names.count(run.row["name"]) > 1:
            run.label = f"{run.row['name']} [{run.row['dispatcher_or_notes']}]"
    return out


def residual_table(path: Path) -> str:
    """docs/model.md's residual table of one CSV: run, system, layout, published and predicted tokens/s/GPU, error."""
    lines = ["| Run (source in the CSV) | GPUs | TP/PP/EP, dispatcher | published | predicted | error |", "|---|---|---|---|---|---|"]
    for run in runs(path):
        r = run.row
        if not run.placeable():
            lines.append(f"| {run.name} | {r['gpus']} × {r['gpu']} | {r['tp']}/{r['pp']}/{r['ep']} | "
                         f"{published_tokens(r):,.0f} | not placeable | — |")
            continue
        inputs = run_inputs(r)
        predicted = tokens_per_s_per_gpu(inputs.scenario.workload, predict(r))
        lay = inputs.layout
        lines.append(f"| {run.name} | {r['gpus']} × {r['gpu']} | {lay.tp}/{lay.pp}/{lay.ep}, "
                     f"{inputs.scenario.workload.expert_dispatch.dispatcher} | {published_tokens(r):,.0f} | "
                     f"{predicted:,.0f} | {predicted / published_tokens(r) - 1:+.1%} |")
    return "\n".join(lines)


if __name__ == "__main__":  # regenerate docs/model.md's tables: python tests/perf/moe_runs.py calibration|heldout
    import sys

    print(residual_table(CALIBRATION_CSV if sys.argv[1:] == ["calibration"] else HELDOUT_CSV))
