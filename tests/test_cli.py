"""The command line via subprocess, run from a temporary directory (SPEC §8.1, §8.3).

Both entry points are exercised: `python -m solver` and the installed `fabricplan` script.
"""
from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
INPUTS = TESTS / "data" / "inputs"
SHIPPED_SCENARIO = ROOT / "scenarios" / "llama3-70b.yaml"


def fabricplan_script() -> str:
    """The console script installed next to this Python (pip install -e . puts it there)."""
    here = Path(sys.executable).parent / "fabricplan"
    found = str(here) if here.exists() else shutil.which("fabricplan")
    assert found, "the fabricplan console script is not installed"
    return found


ENTRY_POINTS = {"python -m solver": [sys.executable, "-m", "solver"], "fabricplan": None}


def command(entry: str) -> list[str]:
    return ENTRY_POINTS[entry] or [fabricplan_script()]


def run(args: list, cwd: Path, entry: str = "python -m solver", timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(command(entry) + [str(a) for a in args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_validate_ok(entry, tmp_path):
    proc = run(["validate", SHIPPED_SCENARIO, INPUTS / "mini-catalog.yaml"], tmp_path, entry)
    assert proc.returncode == 0, proc.stderr
    assert f"{SHIPPED_SCENARIO}: valid scenario" in proc.stdout
    assert f"{INPUTS / 'mini-catalog.yaml'}: valid catalog" in proc.stdout
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_validate_bad(entry, tmp_path):
    # line 23 of the mini catalog is "    nvlink_gbyte_s: 450" (key at column 5)
    text = (INPUTS / "mini-catalog.yaml").read_text(encoding="utf-8")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text.replace("nvlink_gbyte_s: 450", "nvlink_gbyte_s: -5"), encoding="utf-8")
    proc = run(["validate", "bad.yaml"], tmp_path, entry)
    assert proc.returncode == 2
    assert "bad.yaml:23:5: platforms[0].nvlink_gbyte_s: Input should be greater than 0 (got -5)" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_catalog_table(entry, tmp_path):
    proc = run(["catalog"], tmp_path, entry)
    assert proc.returncode == 0, proc.stderr
    # parts the issue requires in the shipped catalog, by id
    for part in ("h100-sxm", "gb200-nvl72", "cx7-ndr", "qm9700", "ndr-node-leaf-sr"):
        assert part in proc.stdout
    assert "default.yaml" in proc.stdout  # the files line names the shipped catalog


def test_catalog_json_parses(tmp_path):
    proc = run(["catalog", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    for kind in ("gpus", "platforms", "nics", "switches", "links", "racks", "facility"):
        assert kind in data
    assert {"h100-sxm", "b200", "gb300"} <= {g["id"] for g in data["gpus"]}
    [source] = data["files"]
    assert Path(source["path"]).name == "default.yaml"
    assert len(source["sha256"]) == 64


def test_catalog_json_with_an_override(tmp_path):
    # nic-quote.yaml prices nic-a at $1,500 over the mini catalog's $1,700
    proc = run(["catalog", "--no-default-catalog", "--catalog", INPUTS / "mini-catalog.yaml", "--catalog",
                INPUTS / "nic-quote.yaml", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    [nic] = json.loads(proc.stdout)["nics"]
    assert nic["unit_price_usd"] == 1500


DESIGN_KEYS = ["rank", "objective_usd", "capex_usd", "tco_usd", "platform", "gpu", "gpus_per_domain", "gpus",
               "nodes", "domains", "racks", "power_kw", "parallelism", "fabric", "step_time_s", "target_step_time_s",
               "breakdown_s", "bytes_per_gpu", "flops_per_step", "mfu", "memory_per_gpu_gb", "binding_constraints",
               "bom"]
PARALLELISM_KEYS = ["tp", "cp", "pp", "vp", "dp", "microbatch_size", "microbatches"]
FABRIC_KEYS = ["nic", "rails_per_node", "switch", "tiers", "oversubscription", "leaf_switches", "spine_switches",
               "core_switches", "links"]
LINK_KEYS = ["node_leaf", "leaf_spine", "spine_core"]
BREAKDOWN_KEYS = ["compute", "bubble", "tp", "cp", "pp", "dp_rs", "dp_ag", "capacity", "exposed_comm"]  # SPEC §4.3: dp split
BOM_KEYS = ["category", "part", "description", "quantity", "unit_price_usd", "extended_usd", "price_source",
            "price_date"]


def assert_design_schema(design: dict) -> None:
    """Every key SPEC §8.3 lists for a design."""
    for key in DESIGN_KEYS:
        assert key in design, key
    for key in PARALLELISM_KEYS:
        assert key in design["parallelism"], key
    for key in FABRIC_KEYS:
        assert key in design["fabric"], key
    for key in LINK_KEYS:
        assert key in design["fabric"]["links"], key
    for key in BREAKDOWN_KEYS:
        assert key in design["breakdown_s"], key
    for key in ("nvlink", "scaleout"):
        assert key in design["bytes_per_gpu"], key
    for key in ("model", "hardware"):
        assert key in design["flops_per_step"], key
    assert design["bom"]
    for line in design["bom"]:
        for key in BOM_KEYS:
            assert key in line, key
        # extended = quantity × unit price (SPEC §8.4)
        assert line["extended_usd"] == pytest.approx(line["quantity"] * line["unit_price_usd"])


def test_solve_a_shipped_scenario(tmp_path):
    out = tmp_path / "result.json"
    proc = run(["solve", SHIPPED_SCENARIO, "--no-xlsx", "--json", out, "--top", "2"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    for key in ("schema", "scenario", "status", "solve_time_s", "designs"):
        assert key in data, key
    assert data["schema"] == "fabricplan.result/1"
    assert data["scenario"] == "llama3-70b"
    assert data["status"] == "optimal"
    assert [d["rank"] for d in data["designs"]] == [1, 2]
    for design in data["designs"]:
        assert_design_schema(design)
        # llama3-70b.yaml: target 3.0 s, at most 16,384 GPUs
        assert design["target_step_time_s"] == 3.0
        assert design["step_time_s"] <= 3.0 * (1 + 1e-9)
        assert design["gpus"] <= 16384
    # ranked by objective: the first is no dearer than the second
    assert data["designs"][0]["objective_usd"] <= data["designs"][1]["objective_usd"]
    assert not (tmp_path / "outputs").exists()  # --json and --no-xlsx: nothing at the default place
    assert "Traceback" not in proc.stderr


PINNED = """\
name: evaluate-8b
workload:
  model: {layers: 32, hidden_size: 4096, ffn_hidden_size: 14336, ffn_type: swiglu, attention_heads: 32,
          kv_heads: 8, vocab_size: 128256, seq_len: 8192}
  global_batch_size: 512
target:
  step_time_s: 60.0
pin: {platform: hgx-h100, nic: cx7-ndr, rails_per_node: 8, switch: qm9700,
      tp: 4, cp: 1, pp: 2, vp: 1, dp: 8, microbatch_size: 1}
"""


def test_evaluate_a_fully_pinned_scenario(tmp_path):
    scenario = tmp_path / "pinned.yaml"
    scenario.write_text(PINNED, encoding="utf-8")
    out = tmp_path / "evaluate.json"
    proc = run(["evaluate", scenario, "--json", out], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["schema"] == "fabricplan.result/1"
    [design] = data["designs"]
    assert_design_schema(design)
    # the pins come back: GPUs = tp·cp·pp·dp = 4·1·2·8 = 64; hgx-h100 has 8 GPUs per node, so 8 nodes;
    # microbatches per step = B / (dp · mbs) = 512 / (8 · 1) = 64. Plus one hot-spare node (docs/model.md
    # "Goodput"): 8 nodes · 0.00848 = 0.068 failures per 72 h repair, P(none) = 0.934 < 0.99 → 1 spare
    assert design["platform"] == "hgx-h100"
    assert design["gpus_used"] == 64 and design["gpus"] == 72
    assert design["nodes"] == 9 and design["spare_units"] == 1
    assert design["parallelism"]["microbatches"] == 64
    assert design["fabric"]["nic"] == "cx7-ndr"
    assert design["fabric"]["rails_per_node"] == 8
    assert design["fabric"]["switch"] == "qm9700"
    # SPEC §4.5: T = T_comp + T_bubble + Σ_k Exposed_k (+ what the busiest link adds), k ∈ {tp, cp, pp, dp_rs, dp_ag}
    b = design["breakdown_s"]
    exposed = b["tp"] + b["cp"] + b["pp"] + b["dp_rs"] + b["dp_ag"]
    assert b["exposed_comm"] == pytest.approx(exposed, rel=1e-12)
    assert b["compute"] + b["bubble"] + exposed + b["capacity"] == pytest.approx(design["step_time_s"], rel=1e-12)
    assert all(v >= 0 and math.isfinite(v) for v in b.values())
    assert b["compute"] > 0


def test_evaluate_with_partial_pins_optimises_the_rest(tmp_path):
    """dp left out of the pin block: evaluate optimises it (SPEC §8.1) and writes JSON and a workbook.
    The expected dp comes from evaluating every fully pinned variant (the one-design evaluator, not
    the optimiser): the cheapest design is the smallest dp whose step time meets the 60 s target."""
    import solver
    from solver.api import catalog_for

    scenario = tmp_path / "half.yaml"
    scenario.write_text(PINNED.replace(" dp: 8,", ""), encoding="utf-8")
    ls = solver.load_scenario(scenario)
    cat = catalog_for(ls)
    meets = []
    for dp in (1, 2, 4, 8, 16, 32, 64, 128, 256, 512):  # d·b divides B = 512
        full = solver.load_scenario({**ls.scenario.model_dump(mode="json"),
                                     "pin": {**ls.scenario.pin.model_dump(exclude_none=True), "dp": dp}})
        design = solver.evaluate(full, cat)
        if design.meets_target and design.perf.fits_memory:
            meets.append(dp)
    out, book = tmp_path / "evaluate.json", tmp_path / "evaluate.xlsx"
    proc = run(["evaluate", scenario, "--json", out, "--xlsx", book], tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    [design] = data["designs"]
    assert design["parallelism"]["dp"] == min(meets)
    assert (design["parallelism"]["tp"], design["parallelism"]["pp"], design["fabric"]["nic"]) == (4, 2, "cx7-ndr")
    assert data["pinned"] == ["platform", "nic", "rails_per_node", "tp", "cp", "pp", "vp", "microbatch_size"]
    assert book.stat().st_size > 0


def _assert_unwritable_rejected_before_solving(json_path, tmp_path: Path) -> None:
    t0 = time.perf_counter()
    proc = run(["solve", SHIPPED_SCENARIO, "--no-xlsx", "--json", json_path], tmp_path)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 2, proc.stderr
    assert str(json_path) in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "design(s)" not in proc.stdout  # no solve report: it stopped before solving
    assert elapsed < 30


def test_json_path_that_is_a_directory_is_rejected_before_solving(tmp_path):
    _assert_unwritable_rejected_before_solving(tmp_path, tmp_path)


def test_json_path_in_proc_is_rejected_before_solving(tmp_path):
    _assert_unwritable_rejected_before_solving("/proc/x.json", tmp_path)


def test_json_path_under_a_file_is_rejected_before_solving(tmp_path):
    (tmp_path / "plain-file").write_text("x", encoding="utf-8")
    _assert_unwritable_rejected_before_solving(tmp_path / "plain-file" / "x.json", tmp_path)


@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_help_is_fast(entry, tmp_path):
    t0 = time.perf_counter()
    proc = run(["--help"], tmp_path, entry)
    elapsed = time.perf_counter() - t0
    assert proc.returncode == 0
    for name in ("validate", "catalog", "solve", "evaluate", "sweep"):
        assert name in proc.stdout
    assert elapsed < 2.0  # measured ≈ 0.2 s: no Pyomo, pandas or HiGHS import for --help


def test_no_command_is_a_usage_error(tmp_path):
    proc = run([], tmp_path)
    assert proc.returncode == 2
    assert "usage: fabricplan" in proc.stdout + proc.stderr


def test_unknown_option_is_a_usage_error(tmp_path):
    proc = run(["solve", SHIPPED_SCENARIO, "--bogus"], tmp_path)
    assert proc.returncode == 2
    assert "unrecognized arguments: --bogus" in proc.stderr
    assert "Traceback" not in proc.stderr
