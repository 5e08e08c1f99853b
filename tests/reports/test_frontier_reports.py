"""`fabricplan solve --frontier` end to end (issue 24 item 5): the JSON frontier list, the workbook's
Frontier sheet (recalculated by LibreOffice), the PNG, the next faster line and the cost per million
tokens; the terminal at 80 and 120 columns in a real pseudo-terminal.

The toy front is the hand-worked one of tests/optimize/test_frontier.py (four points:
cheap-box 32 $161,000, cheap-box 64 $321,000, fast-box 32 $961,000, fast-box 64 $1,921,000, step
F_hw/(32, 64, 128, 256 TFLOP/s) with F_hw = 103,079,215,104 FLOPs).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import openpyxl
import pytest
import yaml
from office import needs_soffice, profile, recalc

ROOT = Path(__file__).resolve().parents[2]
TOY_CATALOG = ROOT / "tests" / "data" / "toy-catalog.yaml"
F_HW = 103_079_215_104
TOY = dict(name="toy-front", workload=dict(model=dict(layers=1, hidden_size=256, ffn_hidden_size=256, ffn_type="gelu",
                                                      attention_heads=1, vocab_size=2048, seq_len=256),
                                           global_batch_size=64, activation_recompute="none", grad_reduce_dtype="bf16"),
           target=dict(step_time_s=0.004), overlap=dict(tp=1, cp=1, pp=1, dp=1),
           parallelism=dict(tp=1, cp=1, pp=1, vp=1, microbatch_size=1), top_k=2)
HAND = [(161_000.0, F_HW / 32e12, 32), (321_000.0, F_HW / 64e12, 64), (961_000.0, F_HW / 128e12, 32),
        (1_921_000.0, F_HW / 256e12, 64)]  # (capex, step time, GPUs)
SECONDS_PER_YEAR = 8760 * 3600


def run_cli(args: list, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("frontier")
    (work / "toy.yaml").write_text(yaml.safe_dump(TOY), encoding="utf-8")
    proc = run_cli(["solve", "toy.yaml", "--no-default-catalog", "--catalog", TOY_CATALOG, "--frontier",
                    "--json", "r.json", "--xlsx", "r.xlsx", "--plot", "f.png"], work)
    assert proc.returncode == 0, proc.stderr
    return work, proc.stdout, json.loads((work / "r.json").read_text(encoding="utf-8"))


def test_cli_frontier_json_is_the_hand_worked_front(toy_run):
    _, _, js = toy_run
    front = js["frontier"]
    assert [(p["capex_usd"], p["gpus"]) for p in front] == [(c, g) for c, _, g in HAND]
    assert [p["step_time_s"] for p in front] == pytest.approx([t for _, t, _ in HAND], rel=1e-12)
    assert [p["point"] for p in front] == [1, 2, 3, 4]
    assert all(p["design_id"] and p["architecture"] for p in front)
    # cost per million tokens: capex / (16,384 tokens / step · 5 years · 31,536,000 s) · 1e6
    for p, (capex, step, _) in zip(front, HAND):
        assert p["cost_per_million_tokens_usd"] == pytest.approx(capex / (16_384 / step * 5 * SECONDS_PER_YEAR) * 1e6)
    search = js["frontier_search"]
    assert search["status"] == "optimal" and search["complete"] and search["ended"] == "no faster design within the caps"


def test_cli_next_faster_line_and_cost_per_million_tokens(toy_run):
    """#1 cheap-box 32 ($161,000); the next faster is frontier point 2 ($321,000): +99.4 % capex, −50.0 % step."""
    _, screen, js = toy_run
    nf = js["next_faster"]
    assert nf["found"] and nf["capex_usd"] == 321_000.0
    assert "the next faster design: +99.4 % capex, −50.0 % step time" in screen
    assert "cost per million tokens (capex over 5 years): #1 $0.000201" in screen  # 161,000 / 8.0200e14 · 1e6
    assert js["designs"][0]["cost_per_million_tokens_usd"] == pytest.approx(161_000 / (16_384 / HAND[0][1] * 5 *
                                                                                       SECONDS_PER_YEAR) * 1e6)


def test_cli_writes_the_png(toy_run):
    work, _, _ = toy_run
    data = (work / "f.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_frontier_sheet_has_a_scatter_chart_of_its_columns(toy_run):
    work, _, js = toy_run
    wb = openpyxl.load_workbook(work / "r.xlsx")
    assert wb.sheetnames[-1] == "Frontier"
    ws = wb["Frontier"]
    assert ws["J6"].value.startswith("=E6/(H6/G6*I6*TCO_years*")  # live: capex over the TCO years
    with zipfile.ZipFile(work / "r.xlsx") as z:
        charts = [z.read(n).decode() for n in z.namelist() if n.startswith("xl/charts/chart")]
    scatter = [c for c in charts if "scatterChart" in c]
    assert len(scatter) == 1
    assert "'Frontier'!$G$6:$G$9" in scatter[0] and "'Frontier'!$M$6:$M$9" in scatter[0]


@pytest.mark.libreoffice
@needs_soffice
def test_libreoffice_recalculates_the_frontier_and_summary(toy_run):
    """Recalculated values equal the JSON: the cost per million tokens and changes against point 1 on the
    Frontier sheet (capex +99.4 %, step −50 % for point 2), the Summary's cost per million tokens per design."""
    work, _, js = toy_run
    book = recalc(work / "r.xlsx", profile(work / "lo"))
    ws = book["Frontier"]
    for i, p in enumerate(js["frontier"]):
        row = 6 + i
        assert ws[f"E{row}"].value == p["capex_usd"]
        assert ws[f"J{row}"].value == pytest.approx(p["cost_per_million_tokens_usd"], rel=1e-9)
        assert ws[f"K{row}"].value == pytest.approx(p["capex_usd"] / HAND[0][0] - 1, rel=1e-9, abs=1e-12)
        assert ws[f"L{row}"].value == pytest.approx(p["step_time_s"] / HAND[0][1] - 1, rel=1e-9, abs=1e-12)
        assert ws[f"M{row}"].value == pytest.approx(p["capex_usd"] / 1e6, rel=1e-12)
    assert ws["K7"].value == pytest.approx(321_000 / 161_000 - 1) and ws["L7"].value == pytest.approx(-0.5)
    s = book["Summary"]
    label = [c.row for c in s["A"] if isinstance(c.value, str) and c.value.startswith("Cost per million tokens")]
    assert len(label) == 1
    for i, d in enumerate(js["designs"]):
        assert s.cell(row=label[0], column=2 + i).value == pytest.approx(d["cost_per_million_tokens_usd"], rel=1e-9)
    assert any(isinstance(c.value, str) and c.value.startswith("the next faster design: +99.4 % capex")
               for c in s["A"])


def test_frontier_without_points_flag_is_a_usage_error(tmp_path):
    (tmp_path / "toy.yaml").write_text(yaml.safe_dump(TOY), encoding="utf-8")
    proc = run_cli(["solve", "toy.yaml", "--no-default-catalog", "--catalog", TOY_CATALOG, "--frontier", "0",
                    "--json", "r.json", "--no-xlsx"], tmp_path)
    assert proc.returncode == 2 and "--frontier N must be between 1 and 100" in proc.stderr
    assert not (tmp_path / "r.json").exists()


# ------------------------------------------------------------------------------ the terminal


def run_in_pty(args: list, columns: int, cwd: Path, timeout: float = 300) -> str:
    """The command on a real pseudo-terminal of `columns` columns (tests/test_planner_cli.py's helper)."""
    from test_planner_cli import run_in_pty as run

    return run(args, columns, cwd, timeout)


@pytest.mark.parametrize("columns", [80, 120])
def test_frontier_table_fits_the_terminal(columns, tmp_path):
    """llama3-70b, three frontier points: every cost and step time printed whole (from the JSON of the
    same run), no table line wider than the terminal, no cell cut, the next faster line present."""
    scenario = ROOT / "scenarios" / "llama3-70b.yaml"
    screen = run_in_pty(["solve", scenario, "--frontier", "3", "--json", "r.json", "--no-xlsx", "--plot", "f.png"],
                        columns, tmp_path)
    js = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert len(js["frontier"]) == 3
    flat = " ".join(screen.split())
    for p in js["frontier"]:
        assert f"${p['capex_usd']:,.0f}" in screen
        assert f"{p['step_time_s']:.4g}" in screen
    table = [line for line in screen.splitlines() if line[:1] in "│┃┏┡└"]
    assert not any("…" in line for line in table)
    assert all(len(line) <= columns for line in table)
    assert "cost–speed frontier, 3 point(s)" in flat
    nf = js["next_faster"]
    assert nf["found"]
    pct = re.escape(f"{abs(nf['cost_change']) * 100:.1f} % capex")
    assert re.search(rf"the next faster design: [+−]{pct}, −{abs(nf['step_time_change']) * 100:.1f} % step time", flat)


def test_plot_labels_every_point_of_a_short_front_and_the_changes_of_a_long_one():
    from solver.reports.frontier import labelled

    short = [{"point": i, "gpus": 8, "platform": "a"} for i in range(1, 5)]
    assert labelled(short) == short
    # 14 points: GPUs 8, 8, 16, 16, …: a label where the GPU count (or platform) changes, 7 of 14
    long = [{"point": i + 1, "gpus": 8 * (1 + i // 2), "platform": "a"} for i in range(14)]
    assert [p["point"] for p in labelled(long)] == [1, 3, 5, 7, 9, 11, 13]
