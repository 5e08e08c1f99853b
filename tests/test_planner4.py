"""Issue 45 (the planner's workflow, round 4): ask in the buyer's words, answer in the buyer's units.

- the shipped five-line "train a 400B model on 15T tokens in 90 days within $150M and 12 MW" answers in days, and
  each figure it quotes is re-derived from independent solves (the fastest design within the caps; the cheapest
  meeting 90 days without them);
- a days target that is met says so in days; what $X buys says what the next design up costs;
- every file of a run goes beside --json (never silently into outputs/);
- the BOM CSV: every ranked design, a role per line, manufacturer part numbers where the catalog has them.
"""
from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

import solver
from solver import api
from solver.inputs.yaml_safe import read_yaml

EXAMPLE = REPO / "scenarios" / "train-400b-90-days.yaml"


def run(args: list, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=300, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "COLUMNS": "250"})


def test_the_400b_question_fits_in_five_lines_of_yaml():
    lines = [x for x in EXAMPLE.read_text(encoding="utf-8").splitlines() if x.strip() and not x.lstrip().startswith("#")]
    assert len(lines) <= 5
    sc = solver.load_scenario(EXAMPLE).scenario
    assert sc.target.train_days == 90 and sc.target.train_tokens == 15e12
    assert sc.constraints.budget_usd == 150e6 and sc.constraints.facility_power_kw == 12000


@pytest.fixture(scope="module")
def answered(tmp_path_factory):
    work = tmp_path_factory.mktemp("q400b")
    proc = run(["solve", EXAMPLE, "--json", "out/a.json"], work)
    return work, proc


def test_the_400b_answer_is_in_days_and_each_figure_is_re_derived(answered):
    work, proc = answered
    assert proc.returncode == 1, proc.stderr  # infeasible: $150M and 12 MW cannot train it in 90 days
    text = " ".join(proc.stdout.split())
    assert "assumption: params 400B → a dense Llama-3-like shape" in text
    assert "assumption: global_batch_size 2048 sequences" in text
    found = re.search(r"within \$150M and 12\.0 MW the best finishes in ≈ ([\d,]+) days \(([\d.]+) s per step", text)
    assert found, text
    days, step = float(found.group(1).replace(",", "")), float(found.group(2))
    # the fastest design within the same caps, solved on its own (objective fastest, no days target)
    data = read_yaml(EXAMPLE).data  # the solver's reader: 400e9 is a number
    fast = {**data, "objective": "fastest", "target": {"train_tokens": 15e12}}
    ls = solver.load_scenario(fast)
    best = solver.solve(ls, api.catalog_for(ls), top_k=1).designs[0]
    assert best.perf.step_time_s == pytest.approx(step, rel=2e-3)
    steps = -(-15e12 // (2048 * 8192))  # ⌈15e12 / 16,777,216⌉ = 894,070 steps
    assert days == pytest.approx(steps * best.perf.step_time_s / (best.goodput * 86_400), abs=0.5)
    # the cheapest design meeting 90 days with the caps lifted: what "90 days needs" quotes
    need = re.search(r"90 days needs ≈ \$([\d,]+)M and ([\d.]+) MW", text)
    assert need, text
    free = {**data, "constraints": {}}
    ls = solver.load_scenario(free)
    cheapest = solver.solve(ls, api.catalog_for(ls), top_k=1).designs[0]
    assert cheapest.cost.capex_usd / 1e6 == pytest.approx(float(need.group(1).replace(",", "")), abs=0.5)
    assert cheapest.cost.facility_power_kw / 1e3 == pytest.approx(float(need.group(2)), abs=0.05)
    assert cheapest.cost.capex_usd > 150e6 and cheapest.cost.facility_power_kw > 12000
    js = json.loads((work / "out" / "a.json").read_text(encoding="utf-8"))
    assert js["explanation"].startswith("within $150M") and len(js["assumptions"]) == 2


def test_a_met_days_target_is_answered_in_days(tmp_path):
    data = read_yaml(EXAMPLE).data  # the solver's reader: 400e9 is a number
    data["target"]["train_days"] = 200
    ls = solver.load_scenario(data)
    result = solver.solve(ls, api.catalog_for(ls), top_k=1)
    d = result.designs[0]
    days = 894_070 * d.perf.step_time_s / (d.goodput * 86_400)
    assert result.answer.startswith(f"#1 trains 15T tokens in ≈ {days:,.1f} days ({d.perf.step_time_s:.3g} s per step")
    assert f"within the 200-day target ({200 - days:,.1f} days to spare)" in result.answer
    assert result.to_dict()["answer"] == result.answer


def test_what_60m_buys_says_what_the_next_design_up_costs(tmp_path):
    # the shipped $60M example spends about 94 % of its budget: the note says why the rest is left
    proc = run(["solve", REPO / "scenarios" / "budget-60m-fastest.yaml", "--json", "r.json", "--no-xlsx"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    found = re.search(r"note: #1 spends \$([\d,]+) of the \$60,000,000 budget .*the next design up .*costs \$([\d,]+), "
                      r"\$([\d,]+) over the budget", text)
    assert found, text
    js = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert float(found.group(1).replace(",", "")) == pytest.approx(js["designs"][0]["capex_usd"], abs=1)
    nxt, over = (float(found.group(i).replace(",", "")) for i in (2, 3))
    assert nxt - 60e6 == pytest.approx(over, abs=1) and nxt > js["designs"][0]["capex_usd"]
    # the next-faster line's search time no longer reads like a step time
    assert "s more]" not in text and "(found in" in text


def test_every_file_of_a_run_goes_beside_its_json(tmp_path):
    proc = run(["solve", REPO / "scenarios" / "llama3-70b.yaml", "--json", "set/r.json", "--frontier", "2"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "set").iterdir()) == ["llama3-70b-frontier.png", "llama3-70b.xlsx", "r.json"]
    assert not (tmp_path / "outputs").exists()


def test_sweep_plot_goes_beside_its_workbook(tmp_path):
    proc = run(["sweep", REPO / "scenarios" / "growth-sweep.yaml", "--xlsx", "set/s.xlsx", "--time-limit", "120"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in (tmp_path / "set").iterdir())
    assert "growth-sweep-sweep.png" in names and "s.xlsx" in names and "growth-sweep-sweep.json" in names
    assert not (tmp_path / "outputs").exists()


def test_bom_csv_for_every_ranked_design_with_roles_and_part_numbers(tmp_path):
    proc = run(["solve", REPO / "scenarios" / "llama3-70b.yaml", "--json", "r.json", "--no-xlsx", "--bom-csv", "b.csv"],
               tmp_path)
    assert proc.returncode == 0, proc.stderr
    js = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    files = ["b.csv"] + [f"b-{k}.csv" for k in range(2, len(js["designs"]) + 1)]
    assert len(files) >= 2
    for name, design in zip(files, js["designs"]):
        with open(tmp_path / name, newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        assert sum(float(r["extended_usd"]) for r in rows) == pytest.approx(design["capex_usd"], abs=0.01)
        links = [r for r in rows if r["category"] == "link"]
        for part in {r["part_id"] for r in links}:
            roles = [r["role"] for r in links if r["part_id"] == part]
            assert len(roles) == len(set(roles))  # the lines sharing a link's id differ by role
            assert all(re.fullmatch(r"(node_leaf|leaf_spine|spine_core) (cable|switch-end module|far-end module)", x)
                       for x in roles)
    # the catalog's part numbers, as docs/sources.md [30][32] and [H13] list them
    with open(tmp_path / "b.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    by_role = {(r["part_id"], r["role"]): r["manufacturer_part_number"] for r in rows}
    if ("400gbe-node-leaf-sr", "node_leaf switch-end module") in by_role:
        assert by_role["400gbe-node-leaf-sr", "node_leaf switch-end module"] == "MMA4Z00-NS"
        assert by_role["400gbe-node-leaf-sr", "node_leaf cable"] == "MFP7E10-N0xx"
    nics = [r for r in rows if r["category"] == "nic"]
    assert all(r["manufacturer_part_number"] == "900-9D3D4-00EN-HA0" for r in nics if r["part_id"] == "bf3-400gbe")


# ----------------------------------------------------------------------------------- price age and lead times

LEAD = """\
name: lead
platforms:
  - id: gb300-nvl72
    lead_time_weeks: 26
switches:
  - id: q3400
    lead_time_weeks: 12
"""


def test_a_price_date_reads_at_its_latest_day():
    import datetime

    from solver.optimize.price_age import age_months, latest_day

    assert latest_day("2024") == datetime.date(2024, 12, 31)
    assert latest_day("2024-02") == datetime.date(2024, 2, 29)  # a leap year's February
    assert latest_day("2024-08-15") == datetime.date(2024, 8, 15)
    # 2024-08-31 → 2025-08-31 is 365 days: 365 / (365 / 12) = 12.0 months, not past 12 (a 365-day year, solver/units.py)
    assert age_months("2024-08", datetime.date(2025, 8, 31)) == pytest.approx(12.0)
    # 2023-08-31 → 2024-08-31 spans 2024-02-29: 366 days = 12.03 months
    assert age_months("2023-08", datetime.date(2024, 8, 31)) == pytest.approx(366 / (365 / 12))


def test_old_prices_are_named_per_part_and_the_limit_is_the_scenarios():
    import datetime

    from solver.optimize.price_age import price_age_warning

    ls = solver.load_scenario(REPO / "scenarios" / "llama3-70b.yaml")
    designs = solver.solve(ls, api.catalog_for(ls), top_k=1).designs
    bought = {(x.part, x.price_date) for x in designs[0].cost.bom if x.extended_usd > 0 and not x.owned}
    # on 2025-09-01 every 2024-08 price (ends 2024-08-31: 366 days = 12.03 months) is old, none from 2025
    text = price_age_warning(designs, 12, datetime.date(2025, 9, 1))
    old = sorted(p for p, d in bought if d.startswith("2024-08") or d in ("2024", "2023") or d.startswith("2023"))
    for part in old:
        assert f"{part} 2024-08" in text or f"{part} 2023" in text or f"{part} 2024 " in text
    assert all(f"{p} {d} " not in text for p, d in bought if d.startswith("2025"))
    assert price_age_warning(designs, 600, datetime.date(2025, 9, 1)) is None  # a 50-year limit: nothing is old
    data = read_yaml(REPO / "scenarios" / "llama3-70b.yaml").data
    data["price_max_age_months"] = 1200
    ls = solver.load_scenario(data)
    assert solver.solve(ls, api.catalog_for(ls), top_k=1).price_warning is None


def test_lead_times_show_in_the_bom_csv_and_the_plan(tmp_path):
    (tmp_path / "lead.yaml").write_text(LEAD, encoding="utf-8")
    cat = ["--catalog", REPO / "catalogs" / "default.yaml", "--catalog", "lead.yaml"]
    proc = run(["plan", REPO / "scenarios" / "plan-5-years.yaml", *cat, "--json", "p.json", "--no-xlsx", "--no-plot"],
               tmp_path)
    assert proc.returncode == 0, proc.stderr
    js = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    first = js["periods"][0]["bought"]
    # since issue 43's lifecycle windows the plan buys GB300 NVL72 on Quantum-X800 (Q3400) switches in 2026
    assert {b["part"]: b.get("lead_time_weeks") for b in first if b["part"] in ("gb300-nvl72", "q3400")} == \
        {"gb300-nvl72": 26, "q3400": 12}
    assert "(lead ≤ 26 wk)" in " ".join(proc.stdout.split())
    proc = run(["solve", REPO / "scenarios" / "plan-5-years.yaml", *cat, "--json", "s.json", "--xlsx", "s.xlsx",
                "--bom-csv", "b.csv", "--top", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "b.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    leads = {r["part_id"]: r["lead_time_weeks"] for r in rows}
    assert leads.get("q3400") == "12"  # the plan's first design, at the 2026 batch, uses Q3400 switches
    assert all(leads[p] == {"gb300-nvl72": "26"}.get(p, "") for p in leads if p != "q3400")
    import openpyxl

    ws = openpyxl.load_workbook(tmp_path / "s.xlsx")["BOM 1"]
    assert ws.cell(row=4, column=9).value == "Lead time (weeks)"
    sheet = {ws.cell(row=r, column=2).value: ws.cell(row=r, column=9).value for r in range(5, ws.max_row + 1)}
    assert sheet.get("q3400") == 12


# ----------------------------------------------------------------------------------- asking: validate, paths

ONE_PASS = """\
name: v
workload:
  model: {params: 70e9}
  global_batch_size: 1024
  precison: bf16
target: {step_time_s: 3}
constraints:
  platforms: [hgx-h10, gb200-nvl72]
  max_gpus: lots
pin: {switch: qm970}
"""


def test_validate_reports_schema_and_catalog_names_in_one_pass(tmp_path):
    (tmp_path / "v.yaml").write_text(ONE_PASS, encoding="utf-8")
    proc = run(["validate", "v.yaml"], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    err = proc.stderr
    assert "v.yaml:5:3: workload.precison: unknown key: did you mean 'precision'?" in err
    assert "v.yaml:9:3: constraints.max_gpus" in err
    assert "v.yaml:8:15: constraints.platforms[0]: no platform with this id in the catalog: did you mean 'hgx-h100'?" in err
    assert "v.yaml:10:7: pin.switch: no switch with this id in the catalog: did you mean 'qm9700'?" in err
    assert "4 problem(s) found" in err
    lines = [int(m) for m in re.findall(r"v\.yaml:(\d+):", err)]
    assert lines == sorted(lines)  # in the file's order


def test_a_mistyped_path_names_the_nearest(tmp_path):
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "llama3-70b.yaml").write_text("name: x\n", encoding="utf-8")
    for typo in ("scenarios/llama3-70.yaml", "scenario/llama3-70b.yaml"):
        proc = run(["solve", typo], tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert f"{typo}:1:1: file not found: check the path; did you mean scenarios/llama3-70b.yaml?" in proc.stderr
    proc = run(["validate", "nothing-like-it.yaml"], tmp_path)
    assert "did you mean" not in proc.stderr


# ----------------------------------------------------------------------------------- 80 to 200 columns


def _pty(args: list, columns: int, cwd: Path) -> str:
    from test_planner_cli import run_in_pty  # a real pseudo-terminal of that many columns

    return run_in_pty(args, columns, cwd)


def _header_of(screen: str, first: str) -> str:
    """The table's header lines (between ┏ and ┡) joined, the box characters removed."""
    lines = screen.splitlines()
    top = next(i for i, ln in enumerate(lines) if ln.startswith("┏") and first in "".join(lines[i:i + 6]))
    end = next(i for i in range(top, len(lines)) if lines[i].startswith("┡"))
    return " ".join(" ".join(ln.replace("┃", " ").split()) for ln in lines[top + 1:end])


@pytest.mark.parametrize("columns", [80, 120])
def test_sweep_keeps_capex_and_plan_keeps_its_decisions(tmp_path, columns):
    screen = _pty(["sweep", REPO / "scenarios" / "growth-sweep.yaml", "--json", "s.json", "--no-xlsx", "--no-plot"],
                  columns, tmp_path)
    assert max(len(ln) for ln in screen.splitlines() if ln.startswith(("┏", "│", "┃"))) <= columns
    assert "capex" in _header_of(screen, "architecture")
    report = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert f"${report['points'][0]['capex_usd']:,.0f}" in screen  # the money itself, not cut
    screen = _pty(["plan", REPO / "scenarios" / "plan-5-years.yaml", "--json", "p.json", "--no-xlsx", "--no-plot"],
                  columns, tmp_path)
    header = _header_of(screen, "period")
    # the one field the plan grows heads its column (global_batch_size, stacked at narrow widths)
    assert "step s" in header and "bought" in header and "capex" in header
    assert {"global_", "batch_", "size"} <= set(header.split()) or "global_batch_size" in header
    plan = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    first = plan["periods"][0]
    assert f"{first['step_time_s']:.2f} / {first['target_step_time_s']:.2f}" in screen
    assert f"+{first['gpus_owned']:,} GPUs" in " ".join(screen.split())


def test_a_line_the_designs_share_is_printed_once():
    from types import SimpleNamespace

    from solver.reports.grouping import grouped

    ds = [SimpleNamespace(rank=1, t="same"), SimpleNamespace(rank=2, t="same"), SimpleNamespace(rank=3, t="other"),
          SimpleNamespace(rank=4, t="")]
    assert grouped(ds, lambda d: d.t) == [("#1, #2", "same"), ("#3", "other")]


def test_validate_prints_what_it_assumed(tmp_path):
    proc = run(["validate", EXAMPLE], tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    # by hand: (400e9 − 4,202,692,608) / 3,188,228,096 per layer = 124.1 → 124 layers; 124 · 3,188,228,096 +
    # 16,384 + 2 · 16,384 · 128,256 = 399,542,992,896 parameters
    assert "assumption: params 400B → a dense Llama-3-like shape of 399.5B parameters: 124 layers" in out
    assert "valid scenario" in out
