"""The shipped serving examples end to end (SPEC §4.9, §8): the command line's terminal, JSON `serving` block with
the SPEC's names, the workbook (Serving, BOM, Assumptions sheets with live totals), evaluate with pins (the fabric
left open is optimised), compare and a sweep over traffic growth."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import solver
from solver.optimize.serving_solve import solve_fleet

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((REPO / "scenarios").glob("serve-*.yaml"))
SPEC_KEYS = {"pools", "ttft_p90_s", "tpot_p90_ms", "tokens_per_s_per_user", "output_tokens_per_s_per_gpu",
             "input_tokens_per_s_per_gpu", "requests_per_s_capacity", "kv_cache_gb_per_gpu", "kv_transfer_gbyte_s",
             "usd_per_million_output_tokens"}
POOL_KEYS = {"role", "platform", "tp", "pp", "ep", "concurrency", "replicas", "gpus"}


def _data(name: str) -> dict:
    """A shipped scenario as a dict, read by the project's YAML loader (2.0e9 is a number there, as in YAML 1.2)."""
    import copy

    from solver.inputs import read_yaml

    return copy.deepcopy(read_yaml(REPO / "scenarios" / name).data)


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver", *args], capture_output=True, text=True, cwd=REPO)


def test_three_serving_examples_ship():
    assert {p.name for p in EXAMPLES} >= {"serve-llama3-70b-chat.yaml", "serve-deepseek-r1.yaml",
                                          "serve-gpt-oss-120b-diurnal.yaml"}


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_solves_with_the_spec_json(path, tmp_path):
    out = tmp_path / "r.json"
    run = _run("solve", str(path), "--json", str(out), "--xlsx", str(tmp_path / "r.xlsx"))
    assert run.returncode == 0, run.stderr
    assert "per million output tokens" in run.stdout and "pools" in run.stdout
    data = json.loads(out.read_text())
    assert data["status"] == "optimal" and data["workload_kind"] == "inference"
    for d in data["designs"]:
        s = d["serving"]
        assert SPEC_KEYS <= set(s)
        for pool in s["pools"]:
            assert POOL_KEYS <= set(pool)
        # the fleet's capex is the sum of its pools' bills of materials (one costing table)
        assert d["capex_usd"] == pytest.approx(sum(line["extended_usd"] for line in d["bom"]), rel=1e-9)
        # tokens/s per user is 1000 / TPOT ms; the interval brackets it
        assert s["tokens_per_s_per_user"] == pytest.approx(1000 / s["tpot_p90_ms"])
        lo, hi = s["tokens_per_s_per_user_interval"]
        assert lo <= s["tokens_per_s_per_user"] <= hi
    ranked = [d["objective_usd"] for d in data["designs"]]
    assert ranked == sorted(ranked)
    assert (tmp_path / "r.xlsx").is_file()


def _workbook(tmp_path):
    from solver.reports.serving_excel import write_fleet_workbook

    ls = solver.load_scenario(REPO / "scenarios" / "serve-llama3-70b-chat.yaml")
    r = solve_fleet(ls, top_k=2)
    return r, write_fleet_workbook(r, ls.scenario, tmp_path / "w.xlsx")


def test_workbook_sheets_and_live_total(tmp_path):
    """Serving first, one shared-format BOM sheet per pool, Assumptions; the Serving sheet's capex row sums the pools'
    BOM grand totals live, and its cached value is the JSON's capex."""
    from openpyxl import load_workbook

    r, path = _workbook(tmp_path)
    wb = load_workbook(path)
    pools = sum(len(d.pools) for d in r.designs)
    assert wb.sheetnames == ["Serving", *[f"BOM {i}" for i in range(1, pools + 1)], "Assumptions"]
    ws = wb["Serving"]
    row = next(c.row for c in ws["A"] if c.value == "capex, live (Σ pool BOM sheets)")
    assert str(ws.cell(row, 2).value).startswith("='BOM 1'!")
    cached = load_workbook(path, data_only=True)["Serving"]
    for j, d in enumerate(r.designs):
        assert cached.cell(row, 2 + j).value == pytest.approx(d.capex_usd)
    kv = {a.value: b.value for a, b in wb["Assumptions"].iter_rows(min_col=1, max_col=2)}["KV cache dtype"]
    assert kv == "fp8"  # the scenario's kv_cache_dtype


def test_the_kv_cache_dtype_a_workload_runs_with():
    """Left out: bf16 with bf16 weights, else fp8 (workload.kv_cache_dtype's description); given: as given. The
    Assumptions sheet prints this value, not "default"."""
    from types import SimpleNamespace

    from solver.perf.serving import kv_cache_dtype_of

    assert kv_cache_dtype_of(SimpleNamespace(kv_cache_dtype=None, precision="bf16")) == "bf16"
    assert kv_cache_dtype_of(SimpleNamespace(kv_cache_dtype=None, precision="fp4")) == "fp8"
    assert kv_cache_dtype_of(SimpleNamespace(kv_cache_dtype="fp4", precision="fp8")) == "fp4"


@pytest.mark.libreoffice
def test_libreoffice_recalculates_the_fleet_capex(tmp_path):
    """A real spreadsheet application recomputes the live capex row to the JSON's capex (SPEC §8.4)."""
    import shutil

    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) not installed")
    sys.path.insert(0, str(REPO / "tests" / "reports"))
    from office import profile, recalc

    r, path = _workbook(tmp_path)
    wb = recalc(path, profile(tmp_path / "lo"))
    ws = wb["Serving"]
    row = next(c.row for c in ws["A"] if c.value == "capex, live (Σ pool BOM sheets)")
    for j, d in enumerate(r.designs):
        assert ws.cell(row, 2 + j).value == pytest.approx(d.capex_usd, rel=1e-9)


def test_evaluate_with_pins_keeps_them_and_optimises_the_fabric():
    """Pin the aggregated pool fully but leave NIC and rails open: the result is the cheapest fabric for exactly
    those replicas, and pinning more replicas than needed costs at least as much."""
    base = solver.load_scenario(REPO / "scenarios" / "serve-llama3-70b-chat.yaml")
    best = solve_fleet(base).designs[0]
    p = best.pools[0]
    lay = p.option.layout
    data = _data("serve-llama3-70b-chat.yaml")
    pin = {"platform": p.option.machine.platform, "tp": lay.tp, "pp": lay.pp, "ep": lay.ep,
           "concurrency": lay.concurrency, "replicas": p.replicas + 2}
    if best.mode == "disaggregated":
        pin = {"prefill": {"platform": best.pools[0].option.machine.platform},
               "decode": {"platform": best.pools[1].option.machine.platform, "replicas": best.pools[1].replicas + 2}}
    data["pin"] = pin
    r = solver.evaluate(data)
    d = r.designs[0]
    pinned = d.pools[-1]
    assert pinned.replicas == (p.replicas + 2 if best.mode == "aggregated" else best.pools[1].replicas + 2)
    assert d.capex_usd >= best.capex_usd
    if best.mode == "aggregated":
        assert (pinned.option.layout.tp, pinned.option.layout.concurrency) == (lay.tp, lay.concurrency)


def test_disaggregated_pin_on_two_platforms():
    data = _data("serve-llama3-70b-chat.yaml")
    data["pin"] = {"prefill": {"platform": "hgx-h100"}, "decode": {"platform": "hgx-b200"}}
    d = solver.evaluate(data).designs[0]
    assert d.mode == "disaggregated"
    assert [(p.role, p.option.machine.platform) for p in d.pools] == [("prefill", "hgx-h100"), ("decode", "hgx-b200")]


def test_compare_and_sweep_over_traffic_growth(tmp_path):
    path = str(REPO / "scenarios" / "serve-llama3-70b-chat.yaml")
    from openpyxl import load_workbook

    run = _run("compare", path, str(REPO / "scenarios" / "serve-gpt-oss-120b-diurnal.yaml"),
               "--json", str(tmp_path / "c.json"), "--xlsx", str(tmp_path / "c.xlsx"))
    assert run.returncode == 0, run.stderr
    compared = json.loads((tmp_path / "c.json").read_text())["scenarios"]
    assert len(compared) == 2
    # every #1's flags (where the model has no measurement) are printed with its scenario's name
    printed = " ".join(run.stdout.split())
    flagged = [(c["scenario"], f) for c in compared for f in c["designs"][0]["serving"]["flags"]]
    assert flagged and all(f"flag ({name}): {' '.join(f.split())[:40]}" in printed for name, f in flagged)
    book = load_workbook(tmp_path / "c.xlsx", data_only=True)
    assert book.sheetnames[0] == "Serving" and "BOM 1" in book.sheetnames
    run = _run("sweep", path, "--vary", "serving.traffic.tokens_per_day=1e9,4e9,1.6e10", "--json", str(tmp_path / "s.json"),
               "--xlsx", str(tmp_path / "s.xlsx"), "--no-plot")
    assert run.returncode == 0, run.stderr
    rows = json.loads((tmp_path / "s.json").read_text())["points"]
    assert [r["status"] for r in rows] == ["optimal"] * 3
    gpus = [r["gpus"] for r in rows]
    assert gpus == sorted(gpus) and gpus[-1] > gpus[0]  # 16× the traffic needs more GPUs
    sheet = load_workbook(tmp_path / "s.xlsx")["Sweep"]
    assert [sheet.cell(4 + i, 4).value for i in range(3)] == gpus
    # each point says where the model has no measurement: the JSON row, the sheet's last column and the terminal
    assert any(r["flags"] for r in rows)  # the split fleet's KV ports at least
    assert [sheet.cell(4 + i, 10).value or "" for i in range(3)] == ["; ".join(r["flags"]) for r in rows]
    printed = " ".join(run.stdout.split())
    assert all(" ".join(f.split())[:40] in printed for r in rows for f in r["flags"])


def test_frontier_is_cost_against_tokens_per_s_per_user(tmp_path):
    run = _run("solve", str(REPO / "scenarios" / "serve-llama3-70b-chat.yaml"), "--frontier", "4", "--json",
               str(tmp_path / "f.json"), "--no-xlsx")
    assert run.returncode == 0, run.stderr
    front = json.loads((tmp_path / "f.json").read_text())["frontier"]
    assert len(front) >= 2
    costs = [p["capex_usd"] for p in front]
    speeds = [p["tokens_per_s_per_user"] for p in front]
    assert costs == sorted(costs) and speeds == sorted(speeds)
    assert all(a < b for a, b in zip(speeds, speeds[1:]))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_example_comment_works_out_its_peak(path):
    """Each serving example's comment derives the peak request rate the fleet is sized for (as the training examples'
    comments derive their step-time targets)."""
    text = path.read_text(encoding="utf-8")
    comments = "\n".join(line for line in text.splitlines() if line.lstrip().startswith("#"))
    peak = solver.load_scenario(path).scenario.serving.traffic.peak_requests_per_s()
    assert f"{peak:.1f} requests/s" in comments or f"{peak:g} requests/s" in comments, peak


def test_plot_on_a_serving_frontier_is_refused_before_any_output(tmp_path):
    """A serving frontier draws no PNG: `--plot` was silently ignored (README review); now it is a usage error,
    exit 2, no traceback, and nothing is written."""
    out = tmp_path / "f.json"
    proc = _run("solve", "scenarios/serve-llama3-70b-chat.yaml", "--frontier", "3", "--plot", str(tmp_path / "f.png"),
                "--json", str(out), "--no-xlsx")
    assert proc.returncode == 2, proc.stderr
    assert "serving frontier has no plot" in proc.stderr and "leave --plot out" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert list(tmp_path.iterdir()) == []
