"""The planner's workflow on the command line (issue 17): --version, quotes layered over the shipped
catalog, `--json -`, compare, training days and goodput, plausibility warnings, word sweeps,
range and executor errors, help texts, and the terminal table at 80 and 120 columns in a real
pseudo-terminal. Expected numbers are worked out in the comments or read from an independent path
(the shipped catalog file, the library API), never from the command's own output.
"""
from __future__ import annotations

import json
import math
import os
import pty
import select
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest
import yaml
from test_cli import SHIPPED_SCENARIO, run

import solver
from solver.api import catalog_for

ROOT = Path(__file__).resolve().parent.parent

QUOTE = """\
name: acme-quote
nics:
  - id: cx7-ndr
    unit_price_usd: 1234
    price_source: ACME quote 42
    price_date: "2026-01"
"""


def _default_nics() -> dict:
    data = yaml.safe_load((ROOT / "catalogs" / "default.yaml").read_text(encoding="utf-8"))
    return {n["id"]: n for n in data["nics"]}


def test_version_matches_the_package_metadata(tmp_path):
    proc = run(["--version"], tmp_path)
    assert proc.returncode == 0
    version = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert proc.stdout.strip() == f"fabricplan {version}"


def test_a_price_only_quote_layers_over_the_shipped_catalog(tmp_path):
    """`--catalog quote.yaml` keeps every shipped part and overrides only the quoted fields."""
    (tmp_path / "quote.yaml").write_text(QUOTE, encoding="utf-8")
    proc = run(["catalog", "--catalog", "quote.yaml", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    shipped = _default_nics()
    assert {n["id"] for n in data["nics"]} == set(shipped)  # nothing lost
    nic = next(n for n in data["nics"] if n["id"] == "cx7-ndr")
    assert (nic["unit_price_usd"], nic["price_source"], nic["price_date"]) == (1234, "ACME quote 42", "2026-01")
    assert nic["price_is_estimate"] is False  # a quoted price is firm
    for key in ("speed_gbps", "efficiency", "power_w", "generation", "source"):
        assert nic[key] == shipped["cx7-ndr"][key], key
    assert [Path(f["path"]).name for f in data["files"]] == ["default.yaml", "quote.yaml"]


def test_a_quote_for_an_unknown_id_is_a_located_error(tmp_path):
    (tmp_path / "quote.yaml").write_text(QUOTE.replace("id: cx7-ndr", "id: cx7-ndrr"), encoding="utf-8")
    proc = run(["solve", SHIPPED_SCENARIO, "--catalog", "quote.yaml", "--json", "r.json"], tmp_path)
    assert proc.returncode == 2
    # line 3 is "  - id: cx7-ndrr": the id value starts at column 5
    assert "quote.yaml:3:5: nics[0].id: no nics entry with this id in the catalogs before this file " \
           "(did you mean 'cx7-ndr'?)" in proc.stderr
    assert "required field is missing" not in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "r.json").exists()


def test_no_default_catalog_starts_from_nothing(tmp_path):
    """A price-only quote alone has nothing to override."""
    (tmp_path / "quote.yaml").write_text(QUOTE, encoding="utf-8")
    proc = run(["catalog", "--no-default-catalog", "--catalog", "quote.yaml"], tmp_path)
    assert proc.returncode == 2
    assert "nics[0].name: required field is missing" in proc.stderr


def test_solve_prices_the_quote_and_json_dash_writes_to_stdout(tmp_path):
    """The quoted NIC price reaches the bill of materials; `--json -` puts only JSON on stdout."""
    (tmp_path / "quote.yaml").write_text(QUOTE, encoding="utf-8")
    doc = yaml.safe_load(SHIPPED_SCENARIO.read_text(encoding="utf-8"))
    doc["constraints"]["nics"] = ["cx7-ndr"]
    # 8-GPU servers buy their NICs (an NVL72 rack, #1 once hot spares are sized, includes them)
    doc["constraints"]["platforms"] = ["hgx-h100", "hgx-h200", "hgx-b200"]
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    proc = run(["solve", "s.yaml", "--catalog", "quote.yaml", "--json", "-", "--no-xlsx", "--top", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    [design] = data["designs"]
    lines = [b for b in design["bom"] if b["part"] == "cx7-ndr"]
    assert lines and all(b["unit_price_usd"] == 1234 and b["price_source"] == "ACME quote 42" for b in lines)
    assert "design(s)" in proc.stderr  # the table went to stderr
    assert not (tmp_path / "outputs").exists()


def test_compare_shows_each_scenarios_best_design(tmp_path):
    """Two scenarios side by side; each column is what `solve` (the library) finds for that file."""
    doc = yaml.safe_load(SHIPPED_SCENARIO.read_text(encoding="utf-8"))
    doc["name"], doc["constraints"]["platforms"] = "nvl72-only", ["gb200-nvl72"]
    other = tmp_path / "nvl72.yaml"
    other.write_text(yaml.safe_dump(doc), encoding="utf-8")
    proc = run(["compare", SHIPPED_SCENARIO, other, "--json", "c.json", "--wide"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert [s["scenario"] for s in data["scenarios"]] == ["llama3-70b", "nvl72-only"]
    for path, entry in zip((SHIPPED_SCENARIO, other), data["scenarios"]):
        ls = solver.load_scenario(path)
        best = solver.solve(ls, catalog_for(ls), top_k=1).designs[0]
        assert entry["designs"][0]["capex_usd"] == pytest.approx(best.cost.capex_usd, abs=0.01)
        assert f"${best.cost.capex_usd:,.0f}" in proc.stdout
    assert data["scenarios"][1]["designs"][0]["platform"] == "gb200-nvl72"


def test_training_days_and_goodput(tmp_path):
    """train_tokens 15e12 in 60 days at 90 % goodput, B·s = 1024·8192 = 8,388,608 tokens per step:
    steps = ⌈15e12 / 8,388,608⌉ = ⌈1,788,139.3⌉ = 1,788,140; target = 60·86,400·0.9 / 1,788,140
    = 4,665,600 / 1,788,140 = 2.60918 s; each design trains in steps·T/(0.9·86,400) ≤ 60 days."""
    doc = yaml.safe_load(SHIPPED_SCENARIO.read_text(encoding="utf-8"))
    doc["target"] = {"train_tokens": 15e12, "train_days": 60, "goodput": 0.9}
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    proc = run(["--wide", "solve", "t.yaml", "--json", "t.json", "--no-xlsx", "--top", "2"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads((tmp_path / "t.json").read_text(encoding="utf-8"))
    assert math.ceil(15e12 / 8_388_608) == 1_788_140
    for d in data["designs"]:
        assert d["target_step_time_s"] == pytest.approx(4_665_600 / 1_788_140, rel=1e-12)
        assert d["train_days"] == pytest.approx(1_788_140 * d["step_time_s"] / (0.9 * 86_400), rel=1e-12)
        assert d["train_days"] <= 60 * (1 + 1e-9)
        assert f"{d['train_days']:,.1f}" in proc.stdout
    assert "train days" in proc.stdout


def test_goodput_needs_train_tokens(tmp_path):
    doc = yaml.safe_load(SHIPPED_SCENARIO.read_text(encoding="utf-8"))
    doc["target"] = {"step_time_s": 3.0, "goodput": 0.9}
    (tmp_path / "g.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    proc = run(["validate", "g.yaml"], tmp_path)
    assert proc.returncode == 2
    assert "goodput needs train_tokens" in proc.stderr


def test_a_step_time_in_the_wrong_unit_gets_a_located_warning(tmp_path):
    """step_time_s: 3000 (3 s meant as ms) is valid but implausible: a warning at its line, exit 0."""
    text = SHIPPED_SCENARIO.read_text(encoding="utf-8").replace("step_time_s: 3.0", "step_time_s: 3000")
    (tmp_path / "w.yaml").write_text(text, encoding="utf-8")
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if "step_time_s: 3000" in ln)
    proc = run(["validate", "w.yaml"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"w.yaml:{line}:3: target.step_time_s: 3000 s per step is unusual" in proc.stderr.replace("\n", " ")
    quiet = run(["validate", SHIPPED_SCENARIO], tmp_path)
    assert "warning" not in quiet.stderr


def test_sweep_over_words_and_help_texts(tmp_path):
    """--vary takes words: one point per precision; each point's design is the library's solve of
    the scenario with that precision."""
    proc = run(["sweep", SHIPPED_SCENARIO, "--vary", "workload.precision=bf16,fp8", "--json", "s.json", "--no-xlsx",
                "--no-plot"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    report = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert [p["labels"]["workload.precision"] for p in report["points"]] == ["bf16", "fp8"]
    for point, precision in zip(report["points"], ("bf16", "fp8")):
        doc = yaml.safe_load(SHIPPED_SCENARIO.read_text(encoding="utf-8"))
        doc["workload"]["precision"] = precision
        ls = solver.load_scenario(doc)
        assert point["capex_usd"] == pytest.approx(solver.solve(ls, catalog_for(ls), top_k=1).designs[0].cost.capex_usd)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.json", "s.points.jsonl"]
    for command, name in (("solve", "outputs/<scenario name>.json"), ("evaluate", "outputs/<scenario name>-evaluate.json"),
                          ("sweep", "outputs/<scenario name>-sweep.json"), ("sweep", "outputs/<scenario name>-sweep.xlsx")):
        helptext = run([command, "--help"], tmp_path).stdout
        assert name in " ".join(helptext.split()), (command, name)


def test_descending_ranges_and_bad_words_are_clear_errors(tmp_path):
    proc = run(["sweep", SHIPPED_SCENARIO, "--vary", "workload.global_batch_size=2048:512:512"], tmp_path)
    assert proc.returncode == 2
    assert "runs downwards" in proc.stderr and "(2048,1536,1024,512)" in proc.stderr
    proc = run(["sweep", SHIPPED_SCENARIO, "--vary", "workload.global_batch_size=big,small"], tmp_path)
    assert proc.returncode == 2
    assert "'big' is not a number" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "outputs").exists()


def test_tcp_dask_address_is_accepted(tmp_path):
    """`tcp://HOST:PORT` (what `dask scheduler` prints) is a Dask address: with nothing listening on
    the port the error is about reaching the scheduler, not about the address's form."""
    pytest.importorskip("distributed")
    proc = run(["sweep", SHIPPED_SCENARIO, "--vary", "workload.global_batch_size=1024", "--executor",
                "tcp://127.0.0.1:9", "--json", "s.json", "--no-xlsx", "--no-plot"], tmp_path, timeout=120)
    assert proc.returncode == 2
    assert "cannot reach the Dask scheduler at 127.0.0.1:9" in proc.stderr


# ------------------------------------------------------------------------------ the terminal


def run_in_pty(args: list, columns: int, cwd: Path, timeout: float = 300) -> str:
    """Run the command on a real pseudo-terminal of `columns` columns; everything it printed."""
    main_fd, child_fd = pty.openpty()
    import fcntl
    import struct
    import termios

    fcntl.ioctl(child_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {**os.environ, "COLUMNS": str(columns), "LINES": "50", "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    proc = subprocess.Popen([sys.executable, "-m", "solver", *map(str, args)], cwd=cwd, stdin=child_fd, stdout=child_fd,
                            stderr=child_fd, env=env, close_fds=True)
    os.close(child_fd)
    chunks, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([main_fd], [], [], 0.5)
        if ready:
            try:
                data = os.read(main_fd, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(main_fd)
    assert proc.returncode == 0
    import re

    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode("utf-8", "replace"))


@pytest.mark.parametrize("columns", [80, 120])
def test_money_and_step_times_are_never_cut_on_a_terminal(columns, tmp_path):
    """At 80 and 120 columns every capex and step time of the ranked designs is printed whole
    (numbers from the JSON the same run wrote); names wrap, numbers never; the alternatives say
    how they differ from #1 from 120 columns on; --wide prints every column even at 80."""
    screen = run_in_pty(["solve", SHIPPED_SCENARIO, "--json", "r.json", "--no-xlsx"], columns, tmp_path)
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert len(data["designs"]) == 5
    for d in data["designs"]:
        assert f"${d['capex_usd']:,.0f}" in screen
        assert f"{d['step_time_s']:.2f} / 3.00" in screen
    table = [line for line in screen.splitlines() if line[:1] in "│┃┏┡└"]  # the spinner writes "solving…"
    assert len(table) >= 5
    assert not any("…" in line for line in table)  # rich marks a cut cell with an ellipsis
    assert all(len(line) <= columns for line in table)
    assert "differs from #1" in " ".join(screen.split())
    if columns == 80:
        wide = run_in_pty(["solve", SHIPPED_SCENARIO, "--json", "r.json", "--no-xlsx", "--wide"], columns, tmp_path)
        assert "racks" in wide and "facility kW" in " ".join(wide.split())
