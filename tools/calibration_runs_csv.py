"""Write examples/calibration-runs.csv: published training runs as `fabricplan calibrate` input.

    PYTHONPATH=. python tools/calibration_runs_csv.py            # rewrite examples/calibration-runs.csv
    PYTHONPATH=. python tools/calibration_runs_csv.py --check    # exit 1 when the file is out of date

Each row is one published run: its columns are scenario field paths (workload.*, pin.*), the
software stack (`workload.stack`), `overlap.tp = 0` where a run with TP > 1 did not overlap TP
communication (A100-era Megatron, MT-NLG; elsewhere the stack's ψ applies), the measured throughput
`measured_tokens_per_s_per_gpu`, and the `source` (docs/sources.md entry) and `note` (the row's id in
tests/perf/calibration_rows.py and its assumptions) columns that `calibrate` keeps as provenance and does
not fit on.

Rows come from two places:
- tests/perf/calibration_rows.py, whose rows already carry the published layouts; rows on systems
  the shipped catalog does not carry (Grand Teton H100 at 500 W, A100 40GB), NVFP4 rows, Meta's
  internal Llama 3 stack, the llm-foundry rows outside the fit ([D4]) and the FSDP runs that offload
  activations to the CPU (not modelled) are left out;
- NEW_ROWS below: Megatron-Bridge's 25.09 and 26.02 tables (docs/sources.md [R1]) and the
  Megatron-Turing NLG 530B iteration times (Megatron-DeepSpeed, [R2]).

Throughputs published as a step time or as TFLOP/s per GPU are converted to tokens/s/GPU: a step time
exactly (B·s / (step · GPUs)); TFLOP/s with the FLOP count the source uses (SPEC §4.1 model FLOPs
for Megatron-LM's weak-scaling table, Narayanan et al. eq. 3 hardware FLOPs with full recompute for
the 2021 table), computed by the model's own FLOP counter (tools/calibrate.py `tokens_per_s`).
"""
from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests" / "perf"), str(ROOT / "tests"), str(ROOT / "tools")]

import calibration_rows as cr  # noqa: E402
from calibrate import tokens_per_s  # noqa: E402

OUT = ROOT / "examples" / "calibration-runs.csv"
MEASURED = "measured_tokens_per_s_per_gpu"
MODEL_KEYS = ("layers", "hidden_size", "ffn_hidden_size", "ffn_type", "attention_heads", "kv_heads", "vocab_size",
              "seq_len", "tied_embeddings")
WORKLOAD_KEYS = ("grad_reduce_dtype", "flash_attention", "fp8_param_gather", "fsdp_reshard_after_forward",
                 "pipeline_split")
COLUMNS = (["workload.stack"] + [f"workload.model.{k}" for k in MODEL_KEYS]
           + ["workload.global_batch_size", "workload.precision", "workload.activation_recompute", "workload.optimizer"]
           + [f"workload.{k}" for k in WORKLOAD_KEYS]
           + ["pin.platform", "pin.nic", "pin.rails_per_node", "pin.gpus_per_domain_used", "pin.tp", "pin.cp", "pin.pp",
              "pin.vp", "pin.dp", "pin.microbatch_size", "overlap.tp", MEASURED, "source", "note"])

# source -> software stack (SPEC §4.8 ids)
STACKS = {"[C1]": "megatron", "[C3]": "megatron", "[C4]": "fsdp", "[D1]": "megatron",
          "[D2]": "megatron", "[D3]": "megatron", "[D5]": "torchtitan", "[D6]": "fsdp", "[D8]": "megatron",
          "[D9]": "fsdp", "[R1]": "megatron", "[R2]": "deepspeed", "[R3]": "megatron"}
LEFT_OUT_SOURCES = {"[D4]", "[D7]"}  # llm-foundry rows outside the fit (reserved); Meta's own stack
LEFT_OUT_SYSTEMS = {"grand-teton", "a100-40gb-roce"}  # not in the shipped catalog

MB10 = "[R1]"
MB_NOTE = "Megatron-Bridge perf recipe: bf16 grad reduce, TP comm overlap on with TP > 1"


def _mb(release: str, system: str, name: str, shape: dict, batch: int, lay: tuple, tok: float, *, fsdp: bool = False,
        recompute: str = "selective", balanced: bool = False, note: str = "") -> cr.Row:
    g_u = min(64, lay[0] * lay[1] * lay[2] * lay[4]) if system.startswith("gb") else 8
    workload = {**cr.BF16_GRADS, **(cr.BALANCED if balanced else {})}
    return cr.Row(f"Megatron-Bridge {release} DGX-{system.upper()} {name}", MB10, "new", system, "fp8", shape, batch,
                  recompute, "fsdp" if fsdp else "distributed", lay, g_u, "tok", tok, workload,
                  note="; ".join(x for x in (MB_NOTE, note) if x))


L405 = cr.LLAMA31_405B
NEW_ROWS = [
    # 25.09 NeMo container (FP8-CS; MXFP8 in parentheses); recompute as the 25.11 rows of [C3]
    _mb("25.09", "gb200", "LLAMA3_8B FP8-CS", cr.LLAMA3_8B, 128, (1, 1, 1, 1, 8, 2), 31357),
    _mb("25.09", "gb200", "LLAMA3_8B FP8-MX", cr.LLAMA3_8B, 128, (1, 1, 1, 1, 8, 2), 29925),
    _mb("25.09", "b200", "LLAMA3_8B FP8-CS", cr.LLAMA3_8B, 128, (1, 1, 1, 1, 8, 2), 29994),
    _mb("25.09", "b200", "LLAMA3_8B FP8-MX", cr.LLAMA3_8B, 128, (1, 1, 1, 1, 8, 2), 29388),
    _mb("25.09", "h100", "LLAMA3_8B FP8-CS", cr.LLAMA3_8B, 128, (1, 1, 1, 1, 8, 1), 14079, fsdp=True),
    _mb("25.09", "h100", "LLAMA3_70B FP8-CS", cr.LLAMA3_70B, 128, (4, 1, 8, 5, 2, 1), 1619),
    _mb("25.09", "gb200", "LLAMA3_70B FP8-MX", cr.LLAMA3_70B, 128, (2, 1, 4, 5, 8, 1), 3546,
        note="the table's MBS 2 with GA 16 at dp 8 would be 256 sequences: MBS 1 (GA 16 × dp 8 = 128) taken"),
    _mb("25.09", "h100", "LLAMA3.1_405B FP8-CS", L405, 512, (8, 2, 8, 8, 8, 1), 302, recompute="none", balanced=True,
        note="recompute none and balanced split as the 405B recipes of [D3]"),
    _mb("25.09", "b200", "LLAMA3.1_405B FP8-CS", L405, 64, (4, 2, 8, 8, 2, 1), 664, recompute="none", balanced=True,
        note="as the H100 405B row"),
    _mb("25.09", "b200", "LLAMA3.1_405B FP8-MX", L405, 64, (4, 2, 8, 8, 2, 1), 622, recompute="none", balanced=True,
        note="as the H100 405B row"),
    _mb("25.09", "gb200", "LLAMA3.1_405B FP8-MX", L405, 64, (4, 2, 8, 8, 2, 1), 578, recompute="none", balanced=True,
        note="as the H100 405B row"),
    # 26.02 NeMo container
    _mb("26.02", "gb300", "LLAMA3_70B MXFP8", cr.LLAMA3_70B, 256, (1, 1, 4, 5, 16, 1), 4596, recompute="none",
        note="recompute none as the 26.04.01 70B rows of [D3]"),
    _mb("26.02", "gb200", "LLAMA3_70B MXFP8", cr.LLAMA3_70B, 256, (2, 1, 4, 5, 8, 1), 3613, recompute="none",
        note="recompute none as the 26.04.01 70B rows of [D3]"),
    _mb("26.02", "h100", "LLAMA3_70B FP8", cr.LLAMA3_70B, 256, (4, 1, 8, 5, 2, 1), 1621, recompute="none",
        note="recompute none as the 26.04.01 70B rows of [D3]"),
    _mb("26.02", "gb300", "LLAMA3.1_405B MXFP8", L405, 1536, (2, 2, 8, 4, 8, 1), 931, recompute="none", balanced=True),
    _mb("26.02", "gb300", "LLAMA3.1_405B FP8", L405, 1536, (4, 1, 8, 4, 8, 1), 988, recompute="none", balanced=True),
    _mb("26.02", "gb200", "LLAMA3.1_405B MXFP8", L405, 1536, (4, 1, 16, 8, 4, 1), 786, recompute="none", balanced=True),
    _mb("26.02", "gb200", "LLAMA3.1_405B FP8", L405, 1536, (4, 1, 16, 4, 4, 1), 793, recompute="none", balanced=True),
    _mb("26.02", "h100", "LLAMA3.1_405B FP8", L405, 1536, (8, 2, 8, 8, 8, 1), 311, recompute="none", balanced=True),
]


MTNLG_NOTE = ("Megatron-DeepSpeed, Selene DGX A100 80GB 8 × HDR; TP 8, PP 35, batch 1920 (paper §2.4); assumed: mbs 1, "
              "no interleaving, full activation checkpointing, ZeRO-1 (distributed optimizer), fp32 grad reduce, "
              "no FlashAttention (2021), vocabulary padded to 51,200")
NEW_ROWS += [
    cr.Row(f"MT-NLG 530B {nodes * 8:,} GPUs", "[R2]", "new", "a100", "bf16", cr.gpt(105, 20480, 128), 1920, "full",
           "distributed", (8, 1, 35, 1, nodes // 35, 1), 8, "iter_s", step, cr.NO_FA, note=MTNLG_NOTE)
    for nodes, step in ((280, 60.1), (350, 50.2), (420, 44.4))
]


def wanted(row: cr.Row) -> bool:
    """Scored rows on shipped systems; not the runs whose recipe offloads activations to the CPU (the model
    has no offload, so their error says nothing about the parameters calibrate fits)."""
    return (row.group in cr.SCORED + ("new",) and row.source not in LEFT_OUT_SOURCES
            and row.system not in LEFT_OUT_SYSTEMS and "offload" not in row.note)


def record(row: cr.Row, catalog) -> dict:
    platform, nic, rails = cr.SYSTEMS[row.system]
    t, c, p, v, d, b = row.layout
    out: dict = {"workload.stack": STACKS[row.source]}
    out.update({f"workload.model.{k}": row.model[k] for k in MODEL_KEYS if k in row.model})
    out.update({"workload.global_batch_size": row.batch, "workload.precision": row.precision,
                "workload.activation_recompute": row.recompute, "workload.optimizer": row.optimizer})
    out.update({f"workload.{k}": row.workload[k] for k in WORKLOAD_KEYS if k in row.workload})
    out.update({"pin.platform": platform, "pin.nic": nic, "pin.rails_per_node": rails, "pin.gpus_per_domain_used": row.g_u,
                "pin.tp": t, "pin.cp": c, "pin.pp": p, "pin.vp": v, "pin.dp": d, "pin.microbatch_size": b})
    if t > 1 and not row.tp_overlap:
        out["overlap.tp"] = 0.0  # the run did not overlap TP communication (else the stack's ψ applies)
    if row.metric == "tok":
        tok = row.published
    else:
        perf, _ = cr.evaluate(row, catalog)
        tok = float(f"{tokens_per_s(row, row.published, perf):.5g}")
    out[MEASURED] = tok
    converted = f" (converted from {row.metric} = {row.published:g})" if row.metric != "tok" else ""
    out["source"] = f"docs/sources.md {row.source}"
    out["note"] = f"{row.id}{converted}{'; ' + row.note if row.note else ''}"
    return out


def text() -> str:
    catalog = cr.calibration_catalog()
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    new_ids = {r.id for r in NEW_ROWS}  # calibration_rows.py may carry them too (physics v3): written once, as here
    for row in [r for r in cr.ROWS if wanted(r) and r.id not in new_ids] + NEW_ROWS:
        rec = record(row, catalog)
        writer.writerow({k: ("true" if v is True else "false" if v is False else v) for k, v in rec.items()})
    return buf.getvalue()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="exit 1 when examples/calibration-runs.csv is out of date")
    args = ap.parse_args()
    new = text()
    if args.check:
        return 0 if OUT.is_file() and OUT.read_text(encoding="utf-8") == new else 1
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(new, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}: {new.count(chr(10)) - 1} runs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
