"""Reliability round 4 (issue 44 item 7, outside `calibrate`): a goodput of ≈ 0 explained as goodput, and the
run id in every file of a solve's output set (the frontier PNG and the BOM CSV too). docs/reliability.md, round 4
(R4); `calibrate`'s items are in tests/test_calibrate_hardening.py, the equal-cost layouts in
tests/test_equal_cost_layouts.py. Every test here failed on the code before its fix (f57bdd1)."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import yaml
from reliability_helpers import tiny_scenario

import solver
from solver.api import solve

REPO = Path(__file__).resolve().parent.parent
# Llama 3 8B (Meta, "The Llama 3 Herd of Models", 2024, Table 3)
LLAMA3_8B = dict(layers=32, hidden_size=4096, ffn_hidden_size=14336, ffn_type="swiglu", attention_heads=32, kv_heads=8,
                 vocab_size=128256, seq_len=8192)


def test_goodput_near_zero_is_explained_as_goodput(default_catalog):
    """Checkpoint writes of 10⁻⁹ GB/s: a checkpoint of Llama 3 8B (8.03e9 parameters × 14 bytes = 112 GB) takes
    ≈ 1.1e11 s, so the goodput is ≈ 0 and no design meets a target of 11.3 s per step ÷ goodput, though 64 B200s
    run a step in well under a second. Before: "the batch is the limit … raise global_batch_size"; now the
    explanation names the goodput and what raises it."""
    steps = 1_000_000
    doc = dict(name="goodput-zero",
               workload=dict(model=LLAMA3_8B, global_batch_size=32, activation_recompute="selective",
                             optimizer="distributed"),
               target=dict(train_tokens=32 * 8192 * steps, train_days=11.3 * steps / 86_400),
               reliability=dict(availability=0.99, repair_h=72, restart_min=15, checkpoint_write_gbyte_s=1e-9),
               constraints=dict(platforms=["hgx-b200"], max_gpus=64),
               parallelism=dict(tp=[1, 2, 4, 8], cp=1, pp=[1, 2, 4], vp=1, microbatch_size=[1, 2]))
    result = solve(solver.load_scenario(doc), default_catalog, top_k=1)
    assert result.status == "infeasible"
    text = result.explanation
    assert "the goodput is the limit" in text and "within the 11.3 s target" in text
    assert "goodput is 0.0%" in text and "reliability.checkpoint_write_gbyte_s" in text
    assert "raise global_batch_size" not in text


def test_frontier_png_and_bom_csv_carry_the_run_id(tmp_path):
    """`solve --frontier 3 --plot f.png --bom-csv b.csv --json r.json`: the PNG's text chunk "fabricplan run id" and
    the CSV's run_id column hold the JSON's run id (before: neither file carried one, so a mixed set showed only in
    the journal). The CSV's header is still its first row."""
    from PIL import Image

    from solver.reports.bom_csv import HEADER

    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump(tiny_scenario(target={"step_time_s": 100.0})), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "solver", "solve", scenario, "--frontier", "3", "--plot", "f.png",
                           "--bom-csv", "b.csv", "--json", "r.json", "--no-xlsx"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    run_id = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["run_id"]
    assert run_id
    with Image.open(tmp_path / "f.png") as png:
        assert png.text["fabricplan run id"] == run_id
    with open(tmp_path / "b.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == HEADER and HEADER[-1] == "run_id"
    assert len(rows) > 1 and all(r[-1] == run_id for r in rows[1:])


def test_every_file_a_solve_writes_loads_again(tmp_path):
    """Item 2's rule for every writer: text with line ends, YAML and CSV syntax, an ESC and a bidi override in the
    scenario's description and a quote's price source; the JSON, the workbook, the BOM CSV and the frontier PNG
    each load again with their readers (json, openpyxl, csv with every row as wide as the header, PIL), and the
    quoted price is the one in the files. (`calibrate`'s overlay: tests/test_calibrate_hardening.py.)"""
    import openpyxl
    from PIL import Image

    from solver.reports.bom_csv import HEADER

    hostile = 'two lines\nplatforms: [{id: hgx-h100, unit_price_usd: 1}]\n# "quoted", a,b\x1b[31m \u202e end'
    scenario = tmp_path / "tiny.yaml"
    scenario.write_text(yaml.safe_dump(tiny_scenario(target={"step_time_s": 100.0}, description=hostile),
                                       allow_unicode=True), encoding="utf-8")
    quote = tmp_path / "quote.yaml"
    quote.write_text(yaml.safe_dump({"name": "quote", "nics": [{"id": "cx7-ndr", "unit_price_usd": 1234.0,
                                                                "price_source": hostile, "price_date": "2026-01-01"}]},
                                    allow_unicode=True), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "solver", "solve", scenario, "--catalog", quote, "--frontier", "3",
                           "--plot", "f.png", "--bom-csv", "b.csv", "--json", "r.json", "--xlsx", "r.xlsx"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["designs"]
    openpyxl.load_workbook(tmp_path / "r.xlsx")
    with open(tmp_path / "b.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert tuple(rows[0]) == HEADER and all(len(r) == len(HEADER) for r in rows)
    nic = next(r for r in rows[1:] if r[1] == "cx7-ndr")
    assert float(nic[4]) == 1234.0 and nic[6] == hostile
    with Image.open(tmp_path / "f.png") as png:
        png.verify()
