"""`fabricplan calibrate RUNS -o OVERLAY.yaml` (SPEC §4.8, issue 23 item 6): the fit recovers a known
parameter, published runs of one stack reach the issue's leave-one-out target, every refusal is a
located exit 2 that writes nothing, the overlay layers through `--catalog`, the table fits a terminal."""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest
import yaml
from test_cli import run
from test_planner_cli import run_in_pty

import solver
from solver.api import load_catalog
from solver.calibration import calibrate
from solver.calibration.runs import field_paths
from solver.errors import InputError
from solver.inputs.catalog import default_catalog_path

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "calibration-runs.csv"

# The stack's profile made neutral (every factor 1, ψ = 0 on every GPU), so a test's "defaults" are the
# GPUs' own compute models whatever profile the shipped catalog carries.
NEUTRAL = """\
name: neutral-{stack}
stacks:
  - id: {stack}
    tp_overlap: 0.0
    gpus:
      - {{gpus: [any], source: neutral}}
    source: test
"""
# The truth of the synthetic runs: the fsdp stack at κ_gemm,bf16 = 0.8 on H100 (everything else neutral).
TRUTH = """\
name: truth
stacks:
  - id: fsdp
    tp_overlap: 0.0
    gpus:
      - {gpus: [h100-sxm], gemm_factor: {bf16: 0.8}, source: truth}
      - {gpus: [any], source: neutral}
    source: test
"""
LLAMA8B = {"layers": 32, "hidden_size": 4096, "ffn_hidden_size": 14336, "attention_heads": 32, "kv_heads": 8,
           "vocab_size": 128256, "seq_len": 8192}
# (layers, hidden, ffn, heads, batch, dp): four dense models on 8-64 H100s, TP = PP = 1 (FSDP)
SHAPES = [(32, 4096, 14336, 32, 64, 8), (40, 5120, 13824, 40, 64, 16), (48, 6144, 16384, 48, 128, 32),
          (80, 8192, 28672, 64, 256, 64)]


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _row(layers, hidden, ffn, heads, batch, dp) -> dict:
    return {"workload.stack": "fsdp", "workload.model.layers": layers, "workload.model.hidden_size": hidden,
            "workload.model.ffn_hidden_size": ffn, "workload.model.attention_heads": heads,
            "workload.model.kv_heads": 8, "workload.model.vocab_size": 128256, "workload.model.seq_len": 4096,
            "workload.global_batch_size": batch, "workload.precision": "bf16", "workload.optimizer": "fsdp",
            "workload.activation_recompute": "full", "pin.platform": "dgx-h100", "pin.tp": 1, "pin.pp": 1,
            "pin.dp": dp, "pin.microbatch_size": 1}


def _scenario(row: dict) -> dict:
    out: dict = {"name": "synthetic", "target": {"step_time_s": 1.0}}
    for path, value in row.items():
        node = out
        *parents, leaf = path.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    out["pin"].update({"nic": "cx7-ndr", "rails_per_node": 8, "cp": 1, "vp": 1})
    return out


def _csv(path: Path, rows: list[dict]) -> Path:
    columns = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return path


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """Four runs whose measured step times are the model's own at κ_gemm,bf16 = 0.8 (evaluated through the
    public API with the TRUTH overlay layered by load_catalog), and the neutral base catalog."""
    tmp = tmp_path_factory.mktemp("synthetic")
    neutral = _write(tmp / "neutral.yaml", NEUTRAL.format(stack="fsdp"))
    truth = load_catalog([default_catalog_path(), _write(tmp / "truth.yaml", TRUTH)])
    rows = []
    for shape in SHAPES:
        row = _row(*shape)
        design = solver.evaluate(solver.load_scenario(_scenario(row)), truth)
        rows.append({**row, "measured_step_time_s": repr(design.perf.step_time_s), "source": "synthetic"})
    return tmp, _csv(tmp / "runs.csv", rows), neutral


def test_fit_recovers_a_known_factor(synthetic):
    """Runs made at κ = 0.8 from a neutral start (κ = 1): the fit finds 0.8. Tolerance by hand: the data are
    exact, so the least-squares optimum is κ = 0.8 itself; Brent stops within xatol = 1e-5, and a compute-bound
    step time moves ~1:1 with κ, so |κ̂ − 0.8| ≤ 1e-3 leaves every fitted error under 0.1 %."""
    tmp, runs, neutral = synthetic
    cal = calibrate(runs, load_catalog([default_catalog_path(), neutral]), "fsdp", fits=("gemm",))
    assert [p.label for p in cal.params] == ["fsdp h100-sxm gemm_factor.bf16"]
    assert cal.outcome.values[0] == pytest.approx(0.8, abs=1e-3)
    assert cal.median("default") > 0.10  # κ = 1 is 25 % too fast on compute: the defaults are far off
    assert cal.worst("fitted") < 1e-3
    assert cal.worst("loo") < 1e-3  # each run left out: the other three still pin κ = 0.8
    assert cal.improves


TRUTH_2D = """\
name: truth-2d
stacks:
  - id: torchtitan
    tp_overlap: 0.0
    gpus:
      - {gpus: [h100-sxm], gemm_factor: {bf16: 0.9}, tp_overlap: 0.5, source: truth}
      - {gpus: [any], source: neutral}
    source: test
"""


def test_fit_recovers_gemm_factor_and_tp_overlap_together(tmp_path):
    """Six runs at TP 1-8 made at κ = 0.9 and ψ = 0.5 (torchtitan profile): both are fitted together (one group:
    the same runs move with both) and recovered. Tolerance by hand: exact data put the optimum at (0.9, 0.5);
    the trust-region stops at xtol 1e-6 relative, far inside 1e-3; at TP 8 the exposed TP time is about a
    tenth of the step (5.78 s against 5.08 s at TP 1 in the truth), so ψ is well determined."""
    truth = load_catalog([default_catalog_path(), _write(tmp_path / "truth.yaml", TRUTH_2D)])
    rows = []
    for layers, hidden, ffn, heads, tp, dp in ((32, 4096, 14336, 32, 1, 8), (32, 4096, 14336, 32, 2, 4),
                                               (32, 4096, 14336, 32, 4, 2), (32, 4096, 14336, 32, 8, 1),
                                               (48, 6144, 16384, 48, 4, 2), (48, 6144, 16384, 48, 8, 1)):
        row = {**_row(layers, hidden, ffn, heads, 64, dp), "workload.stack": "torchtitan", "pin.tp": tp}
        design = solver.evaluate(solver.load_scenario(_scenario(row)), truth)
        rows.append({**row, "measured_step_time_s": repr(design.perf.step_time_s)})
    neutral = _write(tmp_path / "neutral.yaml", NEUTRAL.format(stack="torchtitan"))
    cal = calibrate(_csv(tmp_path / "runs.csv", rows), load_catalog([default_catalog_path(), neutral]), "torchtitan")
    values = dict(zip([p.label for p in cal.params], cal.outcome.values, strict=True))
    assert values == {"torchtitan h100-sxm gemm_factor.bf16": pytest.approx(0.9, abs=1e-3),
                      "torchtitan h100-sxm tp_overlap (ψ)": pytest.approx(0.5, abs=1e-3)}
    assert len(cal.outcome.groups) == 1
    assert cal.worst("loo") < 1e-3


def test_yaml_runs_equal_csv_runs(synthetic, tmp_path):
    """The same runs as a YAML list (nested mappings) fit to the same value."""
    _, runs, neutral = synthetic
    rows = list(csv.DictReader(runs.open(encoding="utf-8")))
    items = []
    for r in rows:
        nested = _scenario({k: (float(v) if k.startswith("measured") else yaml.safe_load(v)) for k, v in r.items()
                            if k.startswith(("workload", "pin"))})
        items.append({"workload": nested["workload"], "pin": {k: v for k, v in nested["pin"].items()
                                                              if k not in ("nic", "rails_per_node")},
                      "measured_step_time_s": float(r["measured_step_time_s"])})
    path = _write(tmp_path / "runs.yaml", yaml.safe_dump(items, sort_keys=False))
    cat = load_catalog([default_catalog_path(), neutral])
    a, b = calibrate(runs, cat, "fsdp", fits=("gemm",)), calibrate(path, cat, "fsdp", fits=("gemm",))
    assert b.outcome.values == pytest.approx(a.outcome.values, abs=1e-6)
    # each run's line in the YAML file: 23 lines per item = "- workload:" + stack + "model:" + 7 model keys
    # + 4 workload keys + "pin:" + 7 pins (platform, tp, pp, dp, microbatch_size, cp, vp) + the measured value
    assert [r.line for r in b.runs] == [1, 24, 47, 70]


def _published(tmp_path: Path, *sources: str, platform: str | None = None) -> Path:
    """The example file's rows of the given sources (same header; only `platform`'s when given), as a runs file of
    their own."""
    with EXAMPLE.open(encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows = [r for r in reader if r["source"] in {f"docs/sources.md {s}" for s in sources}
                and platform in (None, r["pin.platform"])]
    return _csv(tmp_path / f"{'-'.join(s.strip('[]') for s in sources)}.csv", rows)


def test_published_runs_of_one_stack_loo_under_8_percent(tmp_path):
    """Megatron-DeepSpeed's three published MT-NLG 530B runs (docs/sources.md [R2]: 60.1 / 50.2 / 44.4 s per
    step on 2,240-3,360 A100s): from the neutral profile (the A100's own compute model, fitted on Megatron-LM
    runs) the model is 26-32 % too fast; one GEMM factor brings the leave-one-out median under the issue's 8 %."""
    runs = _published(tmp_path, "[R2]")
    neutral = _write(tmp_path / "neutral.yaml", NEUTRAL.format(stack="deepspeed"))
    cal = calibrate(runs, load_catalog([default_catalog_path(), neutral]), "deepspeed")
    assert len(cal.runs) == 3
    # the runs state overlap.tp = 0 (no TP overlap in 2021): ψ moves none of them and is not fitted
    assert [cal.params[k].label for pidx, _ in cal.outcome.groups for k in pidx] == ["deepspeed a100-80gb gemm_factor.bf16"]
    assert cal.median("default") > 0.20
    assert cal.median("loo") < 0.08
    assert cal.median("loo") < cal.median("default")
    # with the shipped profile as the start (whatever physics v3 ships for deepspeed), the target holds too
    shipped = calibrate(runs, load_catalog(), "deepspeed")
    assert shipped.median("loo") < 0.08


def test_published_megatron_bridge_h100_runs_gemm_and_psi(tmp_path):
    """Megatron-Bridge's seven published DGX-H100 FP8 pre-training runs (docs/sources.md [C3]: 25.11 Llama 3 8B
    FSDP and 70B TP4 PP8; [R1]: 25.09 8B, 70B and 405B TP8 PP8 CP2, 26.02 70B and 405B), one stack (megatron) on
    one GPU: κ_gemm,fp8 and ψ of the megatron profile on H100, fitted together, bring the leave-one-out median
    under issue 41's 8 % and below the neutral profile's (ψ = 0 leaves the TP4/TP8 runs' TP traffic exposed).
    (The NeMo Framework performance summaries of 24.x-25.04, which this test used before, are reserved for judging.)"""
    runs = _published(tmp_path, "[C3]", "[R1]", platform="dgx-h100")
    neutral = _write(tmp_path / "neutral.yaml", NEUTRAL.format(stack="megatron"))
    cal = calibrate(runs, load_catalog([default_catalog_path(), neutral]), "megatron")
    assert len(cal.runs) == 7
    assert {p.label for p in cal.params} == {"megatron h100-sxm gemm_factor.fp8", "megatron h100-sxm tp_overlap (ψ)"}
    assert cal.median("loo") < 0.08
    assert cal.median("loo") < cal.median("default")


def test_published_mosaicml_runs_of_one_stack_loo_under_8_percent(tmp_path):
    """MosaicML's llm-foundry benchmark table (docs/sources.md [C4]: 10 H100 and 5 A100 BF16 runs, FSDP, one
    stack): the fsdp profile's κ_gemm per GPU brings the leave-one-out median under 8 % and below the neutral
    profile's (TP = 1 everywhere: ψ moves no run)."""
    runs = _published(tmp_path, "[C4]")
    neutral = _write(tmp_path / "neutral.yaml", NEUTRAL.format(stack="fsdp"))
    cal = calibrate(runs, load_catalog([default_catalog_path(), neutral]), "fsdp")
    assert len(cal.runs) == 15
    fitted = {cal.params[k].label for pidx, _ in cal.outcome.groups for k in pidx}
    assert fitted == {"fsdp h100-sxm gemm_factor.bf16", "fsdp a100-80gb gemm_factor.bf16"}
    assert cal.median("loo") < 0.08
    assert cal.median("loo") < cal.median("default")


# ------------------------------------------------------------------------------ refusals


def _refused(tmp_path: Path, runs: Path, *extra) -> str:
    out = tmp_path / "overlay.yaml"
    proc = run(["calibrate", runs, "-o", out, *extra], tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".overlay.yaml")]  # no temp file left
    return proc.stderr


def test_refuses_too_few_runs(synthetic, tmp_path):
    """Two runs for one parameter: 1 + 2 = 3 are needed (one left out still leaves two)."""
    _, runs, neutral = synthetic
    lines = runs.read_text(encoding="utf-8").splitlines()
    few = _write(tmp_path / "few.csv", "\n".join(lines[:3]) + "\n")
    err = _refused(tmp_path, few, "--stack", "fsdp", "--fit", "gemm", "--catalog", neutral)
    assert "few.csv:2:1: too few runs: 2 run(s) (line 2, 3) for 1 parameter(s) (fsdp h100-sxm gemm_factor.bf16)" in err
    assert "at least 3 are needed" in err


def test_refuses_a_file_without_runs(synthetic, tmp_path):
    _, runs, _ = synthetic
    header = runs.read_text(encoding="utf-8").splitlines()[0]
    err = _refused(tmp_path, _write(tmp_path / "empty.csv", "# my runs\n" + header + "\n"))
    assert "empty.csv:2:1: no runs: add one row per measured run under the header" in err


def test_refuses_unknown_column_naming_the_nearest(synthetic, tmp_path):
    _, runs, _ = synthetic
    text = runs.read_text(encoding="utf-8").replace("workload.model.hidden_size", "workload.model.hiden_size", 1)
    err = _refused(tmp_path, _write(tmp_path / "typo.csv", text))
    col = text.splitlines()[0].split(",").index("workload.model.hiden_size") + 1
    assert f"typo.csv:1:{col}: workload.model.hiden_size: unknown column: did you mean 'workload.model.hidden_size'?" in err


@pytest.mark.parametrize("case", ["missing", "two", "twice"])
def test_refuses_measured_column_problems(synthetic, tmp_path, case):
    _, runs, _ = synthetic
    lines = runs.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    m = header.index("measured_step_time_s")
    if case == "missing":
        header[m] = "step"
    elif case == "two":
        header[m] = "measured_tokens_per_s_per_gpu"
        header.append("measured_step_time_s")
        lines = [lines[0]] + [ln + ",1.0" for ln in lines[1:]]
    else:
        header.append("measured_step_time_s")
        lines = [lines[0]] + [ln + ",1.0" for ln in lines[1:]]
    err = _refused(tmp_path, _write(tmp_path / "m.csv", "\n".join([",".join(header)] + lines[1:]) + "\n"))
    expected = {"missing": "m.csv:1:1: no measured column: add measured_step_time_s",
                "two": "m.csv:1:1: two measured columns (measured_step_time_s, measured_tokens_per_s_per_gpu): keep "
                       "exactly one",
                "twice": f"m.csv:1:{len(header)}: measured_step_time_s: duplicate column (also column {m + 1})"}[case]
    assert expected in err


def test_refuses_a_bad_value_at_its_row_and_column(synthetic, tmp_path):
    """pin.tp = 0 on the third data row (line 4): the scenario schema's message, located at that cell."""
    _, runs, _ = synthetic
    rows = list(csv.DictReader(runs.open(encoding="utf-8")))
    rows[2]["pin.tp"] = "0"
    path = _csv(tmp_path / "bad.csv", rows)
    col = list(rows[0]).index("pin.tp") + 1
    err = _refused(tmp_path, path, "--stack", "fsdp")
    assert f"bad.csv:4:{col}: pin.tp: Input should be greater than or equal to 1 (got 0)" in err


def test_refuses_a_fit_no_better_than_the_defaults(synthetic, tmp_path):
    """Runs measured exactly at the neutral profile's predictions: the defaults' error is 0, so no fit can beat
    them; the table is shown, nothing is written."""
    _, runs, neutral = synthetic
    cat = load_catalog([default_catalog_path(), neutral])
    rows = list(csv.DictReader(runs.open(encoding="utf-8")))
    for r in rows:
        sc = _scenario({k: yaml.safe_load(v) for k, v in r.items() if k.startswith(("workload", "pin"))})
        r["measured_step_time_s"] = repr(solver.evaluate(solver.load_scenario(sc), cat).perf.step_time_s)
    err = _refused(tmp_path, _csv(tmp_path / "same.csv", rows), "--fit", "gemm", "--catalog", neutral)
    assert "same.csv:1:1: the fit is no better than the defaults: leave-one-out median |error| 0.0% against 0.0%" in err


def test_api_refusal_is_an_input_error(synthetic):
    _, runs, _ = synthetic
    with pytest.raises(InputError) as info:
        calibrate(runs, load_catalog(), "torchtitan")
    assert "no run of stack 'torchtitan' (the runs are of: fsdp)" in str(info.value)


# ------------------------------------------------------------------------------ the overlay


def test_overlay_round_trips_through_catalog(synthetic, tmp_path):
    """The written overlay layers over the shipped catalog with --catalog: `evaluate` of a run's scenario then
    predicts the fitted step time (the overlay keeps 4 decimals of κ: ≤ 0.05 % apart), and `solve` accepts it."""
    _, runs, neutral = synthetic
    overlay = tmp_path / "fsdp-h100.yaml"
    proc = run(["calibrate", runs, "-o", overlay, "--fit", "gemm", "--catalog", neutral], tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = overlay.read_text(encoding="utf-8")
    assert text.startswith("# fabricplan calibrate overlay")
    assert "# runs: " in text and "4 run(s) of stack 'fsdp' (lines 2-5)" in text
    assert "# fitted over the catalogs: default.yaml, neutral.yaml (layer this file after the same ones)" in text
    assert re.search(r"fsdp h100-sxm gemm_factor\.bf16: 1\.0000 -> 0\.8000", text)
    data = yaml.safe_load(text)
    entry = next(g for g in data["stacks"][0]["gpus"] if g["gpus"] == ["h100-sxm"])
    assert entry["gemm_factor"]["bf16"] == pytest.approx(0.8, abs=1e-3)
    row = next(csv.DictReader(runs.open(encoding="utf-8")))
    scenario = _scenario({k: yaml.safe_load(v) for k, v in row.items() if k.startswith(("workload", "pin"))})
    path = _write(tmp_path / "one.yaml", yaml.safe_dump(scenario, sort_keys=False))
    ev = run(["evaluate", path, "--catalog", neutral, "--catalog", overlay, "--json", "-", "--no-xlsx"], tmp_path)
    assert ev.returncode in (0, 1), ev.stderr
    step = json.loads(ev.stdout)["designs"][0]["step_time_s"]
    assert step == pytest.approx(float(row["measured_step_time_s"]), rel=5e-4)
    # the overlay changes the fsdp profile only: the same run under another stack times the same with or without it
    other = {**scenario, "workload": {**scenario["workload"], "stack": "torchtitan"}}
    cats = [default_catalog_path(), neutral]
    plain_step = solver.evaluate(solver.load_scenario(other), load_catalog(cats)).perf.step_time_s
    layered_step = solver.evaluate(solver.load_scenario(other), load_catalog([*cats, overlay])).perf.step_time_s
    assert layered_step == plain_step
    reachable = _write(tmp_path / "solve.yaml", yaml.safe_dump({**scenario, "target": {"step_time_s": 1000.0}}))
    solved = run(["solve", reachable, "--catalog", neutral, "--catalog", overlay, "--json", "-", "--no-xlsx", "--top", "1"],
                 tmp_path)
    assert solved.returncode == 0, solved.stderr
    assert json.loads(solved.stdout)["designs"][0]["step_time_s"] == pytest.approx(step, rel=1e-9)


def test_field_paths_cover_the_example_columns():
    header = EXAMPLE.read_text(encoding="utf-8").splitlines()[0].split(",")
    known = set(field_paths()) | {"measured_tokens_per_s_per_gpu", "source", "note"}
    assert set(header) <= known


@pytest.mark.parametrize("columns", [80, 120])
def test_table_fits_the_terminal(synthetic, tmp_path, columns):
    """Every line fits the terminal; each run's measured value and its errors (from the overlay the same run
    wrote) are printed whole."""
    _, runs, neutral = synthetic
    screen = run_in_pty(["calibrate", runs, "-o", "o.yaml", "--fit", "gemm", "--catalog", neutral], columns, tmp_path)
    assert all(len(line) <= columns for line in screen.splitlines())
    header = [ln for ln in (tmp_path / "o.yaml").read_text(encoding="utf-8").splitlines() if re.match(r"#\s+\d+\s", ln)]
    assert len(header) == 4
    for line in header:
        _, _, measured, default, *_ = line.split()
        assert f"{float(measured):,.4g}" in screen
        assert default.replace("−", "-") + "%" in screen
    assert "fitted fsdp h100-sxm gemm_factor.bf16: 1.0000 → 0.8000 (4 runs)" in screen


def test_example_runs_load_cite_their_sources_and_are_up_to_date():
    """Every run of examples/calibration-runs.csv validates against the shipped catalog, is evaluated on its
    pinned layout, and cites a docs/sources.md entry that exists; the file is what tools/calibration_runs_csv.py
    writes from tests/perf/calibration_rows.py (rerun the tool when those rows change)."""
    import subprocess
    import sys

    from solver.calibration.fit import prepare
    from solver.calibration.runs import read_runs

    cat = load_catalog()
    runs = read_runs(EXAMPLE, cat)
    # 106 runs before issue 41n, less the 12 NeMo performance-summary DGX-H100 rows reserved for judging by issue 41,
    # plus issue 41d's three Megatron-Bridge DGX-H100 rows ([R3])
    assert len(runs.runs) == 106 - 12 + 3
    assert len(prepare(runs, cat)) == 106 - 12 + 3
    sources = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    for r in runs.runs:
        ids = re.findall(r"\[[A-Z]\d+\]", r.source)
        assert ids and all(f"**{i}**" in sources or f"### {i}" in sources for i in ids), r.source
    stacks = {r.stack for r in runs.runs}
    assert stacks == {"megatron", "fsdp", "torchtitan", "deepspeed"}
    proc = subprocess.run([sys.executable, ROOT / "tools" / "calibration_runs_csv.py", "--check"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, "examples/calibration-runs.csv is out of date: run tools/calibration_runs_csv.py"


def test_without_a_stack_profile_the_gpu_efficiency_is_fitted(synthetic, tmp_path):
    """A catalog without a `stacks:` list (the shipped one minus that block, --no-default-catalog): the GPU's own
    η_gemm,bf16 is fitted and written as a `gpus:` entry. The synthetic runs were made at κ = 0.8 on the H100's
    own η, so the fit finds 0.8 · η (hand arithmetic on the catalog's value, read here)."""
    _, runs, _ = synthetic
    data = yaml.safe_load(default_catalog_path().read_text(encoding="utf-8"))
    data.pop("stacks", None)
    eta = next(g for g in data["gpus"] if g["id"] == "h100-sxm")["compute_model"]["gemm_efficiency"]["bf16"]
    base = _write(tmp_path / "no-stacks.yaml", yaml.safe_dump(data, sort_keys=False))
    text = runs.read_text(encoding="utf-8").replace("fsdp,", "megatron,", 1)  # the neutral built-in profile
    runs2 = _write(tmp_path / "runs.csv", text.replace("\nfsdp,", "\nmegatron,"))
    overlay = tmp_path / "gpus.yaml"
    proc = run(["calibrate", runs2, "-o", overlay, "--no-default-catalog", "--catalog", base], tmp_path)
    assert proc.returncode == 0, proc.stderr
    entry = yaml.safe_load(overlay.read_text(encoding="utf-8"))["gpus"][0]
    assert entry["id"] == "h100-sxm"
    assert entry["compute_model"]["gemm_efficiency"]["bf16"] == pytest.approx(0.8 * eta, abs=1e-3)
    assert entry["compute_efficiency_source"].startswith("fabricplan calibrate on runs.csv (4 runs of stack 'megatron'")
    assert "they apply to every stack run on those GPUs" in overlay.read_text(encoding="utf-8")
    check = run(["validate", overlay, "--no-default-catalog", "--catalog", base, "--catalog", overlay], tmp_path)
    assert check.returncode == 0, check.stderr


def test_pins_a_run_may_leave_out(tmp_path):
    """cp, vp and the microbatch size default to 1, the NIC to the platform's first at one per GPU, and
    pin.nodes gives dp: 8 DGX H100 nodes × 8 GPUs / (tp 2 · pp 2) = dp 16."""
    from solver.calibration.runs import read_runs

    row = {**_row(32, 4096, 14336, 32, 64, 1), "pin.tp": 2, "pin.pp": 2, "pin.nodes": 8, "measured_step_time_s": 2.0}
    del row["pin.dp"], row["pin.microbatch_size"]
    runs = read_runs(_csv(tmp_path / "r.csv", [row]), load_catalog())
    pin = runs.runs[0].scenario.pin
    assert (pin.cp, pin.vp, pin.microbatch_size, pin.dp, pin.nic, pin.rails_per_node) == (1, 1, 1, 16, "cx7-ndr", 8)


def test_refuses_an_unknown_stack_at_its_cell(synthetic, tmp_path):
    _, runs, _ = synthetic
    text = runs.read_text(encoding="utf-8").splitlines()
    text[2] = text[2].replace("fsdp,", "fsdpp,", 1)
    err = _refused(tmp_path, _write(tmp_path / "s.csv", "\n".join(text) + "\n"))
    # the stack is the first column (column 1) of the third line (the second run)
    assert "s.csv:3:1: workload.stack: no stack with this id in the catalog: did you mean 'fsdp'?" in err
    assert "(got 'fsdpp')" in err


def test_a_generation_entry_covering_gpus_without_runs_is_split(synthetic, tmp_path):
    """A profile entry naming a GPU generation ([h100-sxm, h200]) with runs of the H100 only: the H100 gets an
    entry of its own (a copy of the generation's) and is fitted there; the H200 keeps the generation entry as it
    was (issue 41: an H100-only fit must not silently set the H200 too)."""
    from solver.calibration.overlay import entries

    _, runs, _ = synthetic
    gen = _write(tmp_path / "gen.yaml", """\
name: generation
stacks:
  - id: fsdp
    tp_overlap: 0.0
    gpus:
      - {gpus: [h100-sxm, h200], gemm_factor: {bf16: 1.0}, source: hopper}
      - {gpus: [any], gemm_factor: {bf16: 1.1}, source: rest}
    source: test
""")
    cal = calibrate(runs, load_catalog([default_catalog_path(), gen]), "fsdp", fits=("gemm",))
    assert cal.outcome.values == [pytest.approx(0.8, abs=1e-3)]
    [stack] = entries(cal, cal.catalog_entries)["stacks"]
    assert [e["gpus"] for e in stack["gpus"]] == [["h100-sxm"], ["h100-sxm", "h200"], ["any"]]
    assert stack["gpus"][0]["gemm_factor"]["bf16"] == pytest.approx(0.8, abs=1e-3)
    assert stack["gpus"][0]["source"].startswith("fabricplan calibrate on runs.csv")
    assert stack["gpus"][1]["gemm_factor"]["bf16"] == 1.0 and stack["gpus"][1]["source"] == "hopper"  # the H200's, kept
    assert stack["gpus"][2]["gemm_factor"]["bf16"] == 1.1  # the rest of the profile as it was
