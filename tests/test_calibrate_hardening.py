"""Issue 44 items 2-5 and 7 (and issue 41 item 4's parts in `calibrate`): `calibrate` as hardened as `solve`.
Text from a runs file never becomes live YAML and control characters are refused where they stand; the overlay
never replaces a file the run reads; leave-one-out grows linearly with the runs, a time limit stops a long fit
and progress shows on one; absurd measured values, fits on a bound and repeated runs are refused or named.
Every test here failed on the code before its fix (f57bdd1); docs/reliability.md, round 4, lists them."""
from __future__ import annotations

import copy
import importlib
import re
from pathlib import Path

import pytest
import yaml
from test_calibrate import NEUTRAL, SHAPES, TRUTH, _csv, _refused, _row, _scenario, _write
from test_cli import run

import solver
from solver.api import load_catalog
from solver.calibration import calibrate
from solver.inputs.catalog import default_catalog_path

FIT = importlib.import_module("solver.calibration.fit")  # the module (the package exports a function of that name)


@pytest.fixture(scope="module")
def base_runs(tmp_path_factory):
    """test_calibrate's synthetic runs: four runs at the model's own step times with κ_gemm,bf16 = 0.8 on H100
    (the TRUTH overlay), and the neutral profile they are fitted from."""
    tmp = tmp_path_factory.mktemp("base")
    neutral = _write(tmp / "neutral.yaml", NEUTRAL.format(stack="fsdp"))
    truth = load_catalog([default_catalog_path(), _write(tmp / "truth.yaml", TRUTH)])
    rows = []
    for shape in SHAPES:
        row = _row(*shape)
        design = solver.evaluate(solver.load_scenario(_scenario(row)), truth)
        rows.append({**row, "measured_step_time_s": repr(design.perf.step_time_s), "source": "synthetic"})
    return tmp, _csv(tmp / "runs.csv", rows), neutral


PRICE_ATTACK = "line one\ngpus: []\nplatforms:\n  - {id: dgx-h100, unit_price_usd: 1}\n# tail"


def _rows(runs: Path) -> tuple[list[str], list[list[str]]]:
    import csv

    with runs.open(encoding="utf-8", newline="") as f:
        table = list(csv.reader(f))
    return table[0], table[1:]


def _with_cell(tmp_path: Path, runs: Path, row: int, column: str, value: str, name: str = "r.csv") -> Path:
    import csv

    header, rows = _rows(runs)
    rows = copy.deepcopy(rows)
    rows[row][header.index(column)] = value
    path = tmp_path / name
    with path.open("w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


def _overlay_loads(tmp_path: Path, overlay: Path, neutral: Path) -> None:
    """The overlay loads again (load_catalog and `validate`), adds only its stack entry, and prices nothing."""
    base = load_catalog([default_catalog_path(), neutral])
    layered = load_catalog([default_catalog_path(), neutral, overlay])
    assert layered.by_id("platforms")["dgx-h100"].unit_price_usd == base.by_id("platforms")["dgx-h100"].unit_price_usd
    data = yaml.safe_load(overlay.read_text(encoding="utf-8"))
    assert set(data) == {"name", "description", "stacks"}
    check = run(["validate", overlay, "--catalog", neutral, "--catalog", overlay], tmp_path)
    assert check.returncode == 0, check.stderr


# ------------------------------------------------------------------ item 2: injection, control characters


def test_a_source_with_newlines_stays_a_comment_and_the_overlay_loads(base_runs, tmp_path):
    """Before: the `source` cell's lines were written raw into the comment header, so "platforms: [dgx-h100 at
    $1]" became live YAML (exit 0) and `catalog --catalog overlay.yaml` showed $1. Now each header line escapes
    its line ends, the value is the same text as a YAML string, and the overlay loads with the shipped price."""
    _, runs, neutral = base_runs
    hostile = _with_cell(tmp_path, runs, 1, "source", PRICE_ATTACK)
    overlay = tmp_path / "o.yaml"
    proc = run(["calibrate", hostile, "-o", overlay, "--fit", "gemm", "--catalog", neutral], tmp_path)
    assert proc.returncode == 0, proc.stderr
    text = overlay.read_text(encoding="utf-8")
    assert all(line.startswith("#") for line in text.split("name:")[0].splitlines())  # the header: comments only
    assert "line one\\ngpus: []\\nplatforms:" in text
    _overlay_loads(tmp_path, overlay, neutral)


def test_a_runs_file_name_with_a_newline_stays_a_comment(base_runs, tmp_path):
    """The runs file's name is in the header and in YAML values: a name holding a line end and YAML text."""
    _, runs, neutral = base_runs
    odd = tmp_path / "runs\nplatforms: [{id: dgx-h100, unit_price_usd: 1}]\n#.csv"
    odd.write_bytes(runs.read_bytes())
    overlay = tmp_path / "o.yaml"
    proc = run(["calibrate", odd, "-o", overlay, "--fit", "gemm", "--catalog", neutral], tmp_path)
    assert proc.returncode == 0, proc.stderr
    _overlay_loads(tmp_path, overlay, neutral)


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\u202e", "\x85", "\x7f", "\u2066"],
                         ids=["NUL", "ESC", "RLO", "NEL", "DEL", "LRI"])
def test_control_characters_are_refused_where_they_stand(base_runs, tmp_path, char):
    """Before: written raw into the overlay (with a NUL it could not be loaded again: "binary file"). Now a located
    exit 2 at the character's line and column; nothing written. Row 2 of the file is line 3; "syn" is 3 characters,
    so the character is 4 characters into the source cell, the last column."""
    _, runs, _ = base_runs
    hostile = _with_cell(tmp_path, runs, 1, "source", f"syn{char}thetic")
    line3 = hostile.read_text(encoding="utf-8").split("\n")[2]
    column = line3.index(char) + 1
    err = _refused(tmp_path, hostile, "--fit", "gemm")
    assert f"r.csv:3:{column}: control character U+{ord(char):04X}" in err


def test_control_characters_in_a_yaml_runs_file_are_refused(base_runs, tmp_path):
    _, runs, _ = base_runs
    header, rows = _rows(runs)
    items = [{k: yaml.safe_load(v) for k, v in zip(header, r, strict=True)} for r in rows]
    items[0]["source"] = "a\u202eb"
    path = _write(tmp_path / "r.yaml", yaml.safe_dump(items, allow_unicode=True, sort_keys=False))
    err = _refused(tmp_path, path, "--fit", "gemm")
    assert re.search(r"r\.yaml:\d+:\d+: control character U\+202E", err)


# ------------------------------------------------------------------ item 3: inputs never overwritten


def test_the_overlay_never_replaces_the_shipped_catalog(base_runs, tmp_path):
    """Before: `calibrate -o catalogs/default.yaml` replaced the catalog it had just read (exit 0; every later command
    failed). Now exit 2 before fitting, the file byte-identical."""
    _, runs, neutral = base_runs
    shipped = default_catalog_path()
    before = shipped.read_bytes()
    try:
        proc = run(["calibrate", runs, "-o", shipped, "--fit", "gemm", "--catalog", neutral], tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "would overwrite the input file" in proc.stderr
        assert shipped.read_bytes() == before
    finally:
        if shipped.read_bytes() != before:  # never leave the repository's catalog damaged
            shipped.write_bytes(before)


@pytest.mark.parametrize("which", ["catalog", "runs"])
def test_the_overlay_never_replaces_a_catalog_or_runs_file_it_reads(base_runs, tmp_path, which):
    """`calibrate -o q.yaml --catalog q.yaml` overwrote the buyer's quote; a YAML runs file named by -o too."""
    _, runs, neutral = base_runs
    quote = _write(tmp_path / "q.yaml", neutral.read_text(encoding="utf-8"))
    source = runs
    if which == "runs":
        header, rows = _rows(runs)
        items = [{k: yaml.safe_load(v) for k, v in zip(header, r, strict=True)} for r in rows]
        source = _write(tmp_path / "runs.yaml", yaml.safe_dump(items, sort_keys=False))
    target = quote if which == "catalog" else source
    before = target.read_bytes()
    proc = run(["calibrate", source, "-o", target, "--fit", "gemm", "--catalog", quote], tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "would overwrite the input file" in proc.stderr
    assert target.read_bytes() == before


# ------------------------------------------------------------------ item 4: bounded time


def _many_runs(n: int) -> list[dict]:
    """n runs of one group (fsdp on H100, bf16): the 4 shapes at 8-64 GPUs and 1-8 sequences per GPU; the measured
    step times are arbitrary (1-8 s), as the fit's time does not depend on them."""
    rows = []
    for i in range(n):
        layers, hidden, ffn, heads, _, _ = SHAPES[i % 4]
        dp = (8, 16, 32, 64)[(i // 4) % 4]
        batch = dp * (1, 2, 4, 8)[(i // 16) % 4]
        rows.append({**_row(layers, hidden, ffn, heads, batch, dp), "measured_step_time_s": 1.0 + (i * 7919) % 700 / 100})
    return rows


def test_leave_one_out_evaluations_grow_linearly_with_the_runs(tmp_path):
    """Before: each run was left out by a refit on all the others, n refits of n runs (14 runs 2.5 s, 100 runs 56 s,
    200 runs 166 s). Now a group of more than EXACT_LOO_RUNS runs takes one Gauss-Newton step per run: the run
    evaluations of the whole fit stay within 60 per run (the fit itself ≈ 25 iterations of all runs, the Jacobian
    one more, then one evaluation per left-out run), where refits would need about 25·n per run."""
    neutral = _write(tmp_path / "neutral.yaml", NEUTRAL.format(stack="fsdp"))
    cat = load_catalog([default_catalog_path(), neutral])
    counted = {"rows": 0}
    original = FIT.step_time_s

    def counting(prep, catalog):
        counted["rows"] += 1
        return original(prep, catalog)

    for n in (48, 96):
        runs = _csv(tmp_path / f"r{n}.csv", _many_runs(n))
        FIT.step_time_s = counting
        try:
            counted["rows"] = 0
            cal = calibrate(runs, cat, "fsdp", fits=("gemm",))
        finally:
            FIT.step_time_s = original
        assert n > FIT.EXACT_LOO_RUNS and cal.outcome.linearised == list(range(n))
        assert counted["rows"] <= 60 * n, (n, counted["rows"])


def test_linearised_leave_one_out_agrees_with_refits(tmp_path):
    """On a group small enough to refit (12 runs measured at the model's own step time with κ_gemm,bf16 = 0.8, times
    a ±10 % scatter), the one-step estimate is within 0.3 percentage points of every exact leave-one-out error."""
    import math

    truth = load_catalog([default_catalog_path(), _write(tmp_path / "truth.yaml", TRUTH)])
    rows = []
    for i, row in enumerate(_many_runs(12)):
        row.pop("measured_step_time_s")
        design = solver.evaluate(solver.load_scenario(_scenario(row)), truth)
        rows.append({**row, "measured_step_time_s": repr(design.perf.step_time_s * (1 + 0.1 * math.sin(3 * i)))})
    cat = load_catalog([default_catalog_path(), _write(tmp_path / "neutral.yaml", NEUTRAL.format(stack="fsdp"))])
    cal = calibrate(_csv(tmp_path / "r12.csv", rows), cat, "fsdp", fits=("gemm",))
    model = cal.model
    [(pidx, rows_)] = cal.outcome.groups
    fitted = dict(enumerate(cal.outcome.fitted_errors))
    exact = FIT.exact_loo(model, cal.outcome.values, pidx, rows_)
    linear = FIT.linear_loo(model, cal.outcome.values, pidx, rows_, fitted)
    assert len(rows_) == 12
    for i in rows_:
        assert abs(cal.frac(linear[i]) - cal.frac(exact[i])) < 0.003, i
    assert [exact[i] for i in rows_] == pytest.approx([cal.outcome.loo_errors[i] for i in rows_], abs=1e-9)


def test_time_limit_stops_a_long_fit_and_writes_nothing(tmp_path):
    """`--time-limit 1` on 300 runs (≈ 10 s of fitting): exit 3 naming the limit, no overlay, no temp file."""
    neutral = _write(tmp_path / "neutral.yaml", NEUTRAL.format(stack="fsdp"))
    runs = _csv(tmp_path / "r.csv", _many_runs(300))
    out = tmp_path / "o.yaml"
    proc = run(["calibrate", runs, "-o", out, "--fit", "gemm", "--catalog", neutral, "--time-limit", "1"], tmp_path)
    assert proc.returncode == 3, proc.stderr
    assert "did not finish within the 1 s time limit" in proc.stderr and "Traceback" not in proc.stderr
    assert not out.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".o.yaml")]


def test_progress_lines_without_a_terminal(monkeypatch):
    """Without a terminal: nothing for the first QUIET_S seconds, then one line every LINE_EVERY_S (the clock is
    driven by hand)."""
    from rich.console import Console

    from solver.calibration import command

    clock = {"t": 100.0}
    monkeypatch.setattr(command.time, "monotonic", lambda: clock["t"])
    console = Console(record=True, force_terminal=False, width=120)
    p = command.Progress(console, 600)
    p.start(10)
    for step in range(30):  # 30 ticks 0.5 s apart: 15 s
        clock["t"] += 0.5
        if step % 3 == 0:
            p.advance("left out")
        p.tick()
    lines = [ln for ln in console.export_text().splitlines() if ln.startswith("calibrate:")]
    assert len(lines) == 3  # at 5, 10 and 15 s
    assert lines[0] == "calibrate: 4 of 10 fits and left-out runs done, 5 s"


def test_too_many_runs_is_a_clear_error(tmp_path):
    """10,000 runs fit in the 20 MB file cap; more than MAX_RUNS (2,000) is refused at once, at the first row over."""
    from solver.calibration.runs import MAX_RUNS

    runs = _csv(tmp_path / "r.csv", _many_runs(MAX_RUNS + 1))
    err = _refused(tmp_path, runs)
    assert f"r.csv:{MAX_RUNS + 2}:1: 2,001 runs: calibrate fits at most 2,000 per file" in err


# ------------------------------------------------------------------ item 5: extreme values


@pytest.mark.parametrize("column", ["measured_step_time_s", "measured_tokens_per_s_per_gpu"])
@pytest.mark.parametrize("value", ["1e308", "1e-308"])
def test_measured_values_out_of_physical_range_are_located(base_runs, tmp_path, column, value):
    """Before: 1e308 → ZeroDivisionError, 1e-308 → "math domain error" (exit 3). Now a located exit 2."""
    _, runs, _ = base_runs
    text = runs.read_text(encoding="utf-8").replace("measured_step_time_s", column)
    base = _write(tmp_path / "base.csv", text)
    hostile = _with_cell(tmp_path, base, 2, column, value)
    header = _rows(hostile)[0]
    err = _refused(tmp_path, hostile, "--fit", "gemm")
    assert f"r.csv:4:{header.index(column) + 1}: {column}: out of the physical range" in err


# ------------------------------------------------------------------ item 7 (calibrate): messages


def test_a_fit_on_its_bound_with_absurd_errors_is_refused_with_sane_percentages(base_runs, tmp_path):
    """Runs measured 1000× faster than any GPU runs them (a unit slip): κ stops on its upper bound, every run is
    still ≈ 1000× off. Before: exit 0, an overlay, and percentages of 10¹³ %; now exit 2, nothing written, and no
    percentage longer than "> +1000%"."""
    _, runs, neutral = base_runs
    header, rows = _rows(runs)
    col = header.index("measured_step_time_s")
    for r in rows:
        r[col] = repr(float(r[col]) / 1000)
    fast = _csv(tmp_path / "fast.csv", [dict(zip(header, r, strict=True)) for r in rows])
    out = tmp_path / "o.yaml"
    proc = run(["calibrate", fast, "-o", out, "--fit", "gemm", "--catalog", neutral], tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "on its bound" in " ".join(proc.stderr.split()) and not out.exists()
    assert "> +1000%" in proc.stdout
    assert not re.search(r"\d{6,}(\.\d)?%", proc.stdout + proc.stderr)


def test_repeated_runs_are_counted_once_with_a_warning(base_runs, tmp_path):
    """Before: a run repeated twice counted as two (leave-one-out 0.0 %: its twin predicted it). Now once, named."""
    _, runs, neutral = base_runs
    text = runs.read_text(encoding="utf-8").splitlines()
    twice = _write(tmp_path / "r.csv", "\n".join(text + [text[2], text[2]]) + "\n")
    out = tmp_path / "o.yaml"
    proc = run(["calibrate", twice, "-o", out, "--fit", "gemm", "--catalog", neutral], tmp_path)
    assert proc.returncode == 0, proc.stderr
    said = " ".join(proc.stderr.split())
    assert "r.csv:6: the same run as line 3 (same fields and measured value): counted once" in said
    assert "r.csv:7: the same run as line 3" in said
    assert "4 run(s) of stack 'fsdp'" in out.read_text(encoding="utf-8")


def test_a_quoted_cell_with_a_line_starting_with_hash_is_part_of_the_cell(base_runs, tmp_path):
    """Lines starting with '#' are comments between rows; inside a quoted cell they are the cell's text."""
    from solver.calibration.runs import read_runs

    _, runs, _ = base_runs
    noted = _with_cell(tmp_path, runs, 1, "source", "two lines\n# the second starts with a hash")
    text = "# a comment before the header\n" + noted.read_text(encoding="utf-8")
    path = _write(tmp_path / "n.csv", text)
    result = read_runs(path, load_catalog(), stack="fsdp")
    assert len(result.runs) == 4
    assert result.runs[1].source == "two lines\n# the second starts with a hash"
    assert [r.line for r in result.runs] == [3, 4, 6, 7]  # the quoted cell spans lines 4-5


# ------------------------------------------------------------------ issue 41 item 4: residual trend


def test_residuals_that_trend_with_model_size_are_warned(tmp_path):
    """Eight runs measured at the model's own step time × (parameters / 10⁹)^0.1 (a size effect the model misses):
    the fit of one κ cannot remove it, and calibrate says the errors trend with model size."""
    neutral = _write(tmp_path / "neutral.yaml", NEUTRAL.format(stack="fsdp"))
    truth = load_catalog([default_catalog_path(), _write(tmp_path / "truth.yaml", TRUTH)])
    from solver.perf.totals import parameter_count

    rows = []
    for shape in SHAPES:
        for scale in (1, 2):
            layers, hidden, ffn, heads, batch, dp = shape
            row = _row(layers, hidden, ffn, heads, batch * scale, dp * scale)
            ls = solver.load_scenario(_scenario(row))
            step = solver.evaluate(ls, truth).perf.step_time_s
            size = parameter_count(ls.scenario.workload.model) / 1e9
            rows.append({**row, "measured_step_time_s": repr(step * size ** 0.1)})
    runs = _csv(tmp_path / "trend.csv", rows)
    proc = run(["calibrate", runs, "-o", tmp_path / "o.yaml", "--fit", "gemm", "--catalog", neutral], tmp_path)
    assert "the fitted errors trend with model size (parameters)" in " ".join(proc.stderr.split()), proc.stderr
