"""Bad input, YAML traps and catalog merging (issue 2, SPEC §3 and §8.1).

Each bad-input test writes a copy of a small valid file from tests/data/inputs/ with one line
changed, then runs the command line in-process and checks: exit code 2, the exact
``FILE:LINE:COL: field.path`` of the problem, no traceback, and no output file written. The
line and column numbers are counted by hand from the edited line (shown in each comment);
columns are 1-based, as editors show them.
"""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import DATA, REPO

from solver import cli
from solver.errors import InputError
from solver.inputs import load_catalog, load_scenario

INPUTS = DATA / "inputs"
ROOT = REPO
MINI_CATALOG = INPUTS / "mini-catalog.yaml"
MINI_SCENARIO = INPUTS / "mini-scenario.yaml"
NIC_QUOTE = INPUTS / "nic-quote.yaml"
SHIPPED_SCENARIO = ROOT / "scenarios" / "llama3-70b.yaml"


# ------------------------------------------------------------------------------- helpers


def variant(tmp_path: Path, source: Path, line_no: int, old: str, new: str, name: str = "") -> Path:
    """A copy of `source` with line `line_no` (1-based) changed from `old` to `new`."""
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[line_no - 1].strip() == old, f"line {line_no} of {source.name} is {lines[line_no - 1]!r}"
    lines[line_no - 1] = lines[line_no - 1].replace(old, new)
    out = tmp_path / (name or source.name)
    out.write_text("".join(lines), encoding="utf-8")
    return out


def run(argv: list[str], cwd: Path, monkeypatch, capsys) -> tuple[int, str, str]:
    """Run the CLI in-process from `cwd`; return (exit code, stdout, stderr)."""
    monkeypatch.chdir(cwd)
    try:
        code = cli.main([str(a) for a in argv])
    except SystemExit as exc:  # argparse usage errors
        code = exc.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_rejected(bad: Path, kind: str, where: str, message: str, tmp_path, monkeypatch, capsys) -> str:
    """`validate` and `solve` both exit 2 naming `where` + `message`; nothing is written.

    `where` is the exact ``FILE:LINE:COL: field.path`` prefix; a catalog is passed to `solve`
    with --catalog, a scenario as the scenario.
    """
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    code, _, err = run(["validate", bad], work, monkeypatch, capsys)
    assert code == 2, err
    assert f"{where}: {message}" in err, err
    assert "Traceback" not in err
    out_json = tmp_path / "result.json"
    solve = (["solve", SHIPPED_SCENARIO, "--catalog", bad] if kind == "catalog" else ["solve", bad])
    code, _, err2 = run(solve + ["--json", out_json, "--no-xlsx"], work, monkeypatch, capsys)
    assert code == 2, err2
    assert f"{where}: {message}" in err2, err2
    assert "Traceback" not in err2
    assert not out_json.exists()
    assert list(work.iterdir()) == []  # no outputs/ folder, no workbook
    return err


def test_the_mini_inputs_are_valid(tmp_path, monkeypatch, capsys):
    # the bad-input tests below change one line of these; unchanged they must pass
    code, out, err = run(["validate", MINI_CATALOG, MINI_SCENARIO, NIC_QUOTE], tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert f"{MINI_CATALOG}: valid catalog" in out
    assert f"{MINI_SCENARIO}: valid scenario" in out


# ------------------------------------------------------------------------ one test per kind


def test_wrong_type_in_a_catalog(tmp_path, monkeypatch, capsys):
    # line 10 "    hbm_gb: 80": key at column 5
    bad = variant(tmp_path, MINI_CATALOG, 10, "hbm_gb: 80", "hbm_gb: eighty")
    err = assert_rejected(bad, "catalog", f"{bad}:10:5: gpus[0].hbm_gb", "Input should be a valid number",
                          tmp_path, monkeypatch, capsys)
    assert "(got 'eighty')" in err


def test_wrong_type_in_a_scenario(tmp_path, monkeypatch, capsys):
    # line 6 "    layers: 32": key at column 5
    bad = variant(tmp_path, MINI_SCENARIO, 6, "layers: 32", "layers: thirty-two")
    assert_rejected(bad, "scenario", f"{bad}:6:5: workload.model.layers", "Input should be a valid integer",
                    tmp_path, monkeypatch, capsys)


def test_negative_bandwidth(tmp_path, monkeypatch, capsys):
    # line 23 "    nvlink_gbyte_s: 450": key at column 5
    bad = variant(tmp_path, MINI_CATALOG, 23, "nvlink_gbyte_s: 450", "nvlink_gbyte_s: -5")
    assert_rejected(bad, "catalog", f"{bad}:23:5: platforms[0].nvlink_gbyte_s",
                    "Input should be greater than 0 (got -5)", tmp_path, monkeypatch, capsys)


def test_unknown_key_suggests_the_nearest(tmp_path, monkeypatch, capsys):
    # line 20 "  max_gpus: 4096": key at column 3
    bad = variant(tmp_path, MINI_SCENARIO, 20, "max_gpus: 4096", "max_gpu: 4096")
    assert_rejected(bad, "scenario", f"{bad}:20:3: constraints.max_gpu", "unknown key: did you mean 'max_gpus'?",
                    tmp_path, monkeypatch, capsys)


def test_unknown_key_in_a_catalog_entry(tmp_path, monkeypatch, capsys):
    # line 41 "    power_w: 25" of the first NIC: key at column 5
    bad = variant(tmp_path, MINI_CATALOG, 41, "power_w: 25", "power_watts: 25")
    err = assert_rejected(bad, "catalog", f"{bad}:41:5: nics[0].power_watts", "unknown key: did you mean 'power_w'?",
                          tmp_path, monkeypatch, capsys)
    # power_w is then missing too: reported at the NIC's first key (line 36 "  - id: nic-a", column 5)
    assert f"{bad}:36:5: nics[0].power_w: required field is missing" in err


def test_duplicate_key(tmp_path, monkeypatch, capsys):
    # line 13 "    seq_len: 8192" stays; line 14 becomes a second seq_len (column 5)
    bad = variant(tmp_path, MINI_SCENARIO, 14, "tied_embeddings: false", "seq_len: 4096")
    assert_rejected(bad, "scenario", f"{bad}:14:5: workload.model.seq_len", "duplicate key 'seq_len' (first at line 13)",
                    tmp_path, monkeypatch, capsys)


def test_dangling_gpu_reference(tmp_path, monkeypatch, capsys):
    # line 19 "    gpu: gpu-a": key at column 5
    bad = variant(tmp_path, MINI_CATALOG, 19, "gpu: gpu-a", "gpu: gpu-z")
    err = assert_rejected(bad, "catalog", f"{bad}:19:5: platforms[0].gpu", "no GPU with this id in the catalog",
                          tmp_path, monkeypatch, capsys)
    assert "(got 'gpu-z')" in err


def test_dangling_compatible_nic(tmp_path, monkeypatch, capsys):
    # line 26 "    compatible_nics: [nic-a, nic-z]": 4 spaces + "compatible_nics: [" (18) = 22
    # characters, "nic-a, " 7 more, so nic-z starts at column 22 + 7 + 1 = 30
    bad = variant(tmp_path, MINI_CATALOG, 26, "compatible_nics: [nic-a]", "compatible_nics: [nic-a, nic-z]")
    assert_rejected(bad, "catalog", f"{bad}:26:30: platforms[0].compatible_nics[1]", "no NIC with this id in the catalog",
                    tmp_path, monkeypatch, capsys)


def test_pin_outside_its_allow_list(tmp_path, monkeypatch, capsys):
    # constraints.platforms (line 21) allows hgx-h100 and hgx-h200; line 25 "  platform: ..." column 3.
    # dgx-b200 exists in the shipped catalog, so only the allow-list can reject it.
    bad = variant(tmp_path, MINI_SCENARIO, 25, "platform: hgx-h100", "platform: dgx-b200")
    assert_rejected(bad, "scenario", f"{bad}:25:3: pin.platform", "pinned value is outside the allow-list constraints.platforms",
                    tmp_path, monkeypatch, capsys)


def test_unknown_fabric_family(tmp_path, monkeypatch, capsys):
    # line 21 "  fabrics: [fat-tree, fat-trees]": 2 spaces + "fabrics: [" (10) + "fat-tree, " (10) = 22
    # characters before the bad name, so it starts at column 23.
    bad = variant(tmp_path, MINI_SCENARIO, 21, "platforms: [hgx-h100, hgx-h200]", "fabrics: [fat-tree, fat-trees]")
    assert_rejected(bad, "scenario", f"{bad}:21:23: constraints.fabrics[1]",
                    "Input should be 'fat-tree', 'multi-plane' or 'rail-only' (got 'fat-trees')", tmp_path, monkeypatch, capsys)


def test_pinned_fabric_outside_its_allow_list(tmp_path, monkeypatch, capsys):
    # line 21 allows only the fat tree; line 25 "  fabric: rail-only", column 3.
    allowed = variant(tmp_path, MINI_SCENARIO, 21, "platforms: [hgx-h100, hgx-h200]", "fabrics: [fat-tree]", "allowed.yaml")
    bad = variant(tmp_path, allowed, 25, "platform: hgx-h100", "fabric: rail-only")
    assert_rejected(bad, "scenario", f"{bad}:25:3: pin.fabric",
                    "pinned value is outside the allow-list constraints.fabrics = ['fat-tree']", tmp_path, monkeypatch, capsys)


def test_breakout_split_listed_twice(tmp_path, monkeypatch, capsys):
    # line 55 "    power_w: 750" of the switch becomes "    breakout: [2, 2]" (key at column 5); power_w is
    # then missing as well.
    bad = variant(tmp_path, MINI_CATALOG, 55, "power_w: 750", "breakout: [2, 2]")
    assert_rejected(bad, "catalog", f"{bad}:55:5: switches[0].breakout", "breakout lists a split twice: [2, 2]",
                    tmp_path, monkeypatch, capsys)


def test_tp_pin_must_divide_the_domain(tmp_path, monkeypatch, capsys):
    # hgx-h100 has 8 GPUs per NVLink domain (catalogs/default.yaml); 8 % 3 = 2, so tp = 3 cannot tile
    # it. Line 26 becomes "  tp: 3" inside the pin block (top_k falls back to its default).
    bad = variant(tmp_path, MINI_SCENARIO, 26, "top_k: 3", "  tp: 3")
    assert_rejected(bad, "scenario", f"{bad}:26:3: pin.tp", "tensor parallelism must sit inside one NVLink domain: tp must divide 8 GPUs per domain on hgx-h100",
                    tmp_path, monkeypatch, capsys)


def test_tp_pin_may_divide_the_power_of_two_part_of_an_nvl72_domain(tmp_path):
    # GB200 NVL72: 72 GPUs per domain; a job may use 64 of them (G_u = 64, the largest power of two),
    # so tp = 16 is placeable (64 % 16 = 0) although 72 % 16 = 8. tp = 5 divides neither 72 nor 64.
    from solver import inputs

    cat = inputs.load_catalog()
    base = yaml.safe_load(MINI_SCENARIO.read_text())
    for tp, ok in ((16, True), (5, False)):
        data = {**base, "pin": {"platform": "gb200-nvl72", "tp": tp}, "constraints": {}, "parallelism": {}}
        ls = inputs.load_scenario(data)
        if ok:
            inputs.check_against_catalog(ls, cat)
        else:
            with pytest.raises(InputError, match="tp must divide 72 or 64 GPUs per domain"):
                inputs.check_against_catalog(ls, cat)


@pytest.mark.parametrize("text", ["", "\n\n   \n", "# only a comment\n# and another\n"])
def test_empty_file(text, tmp_path, monkeypatch, capsys):
    bad = tmp_path / "empty.yaml"
    bad.write_text(text, encoding="utf-8")
    assert_rejected(bad, "scenario", f"{bad}:1:1", "empty file", tmp_path, monkeypatch, capsys)


def test_binary_file(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "image.yaml"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00")
    assert_rejected(bad, "scenario", f"{bad}:1:1", "binary file", tmp_path, monkeypatch, capsys)


def test_non_utf8_file_names_the_line(tmp_path, monkeypatch, capsys):
    # Latin-1 "é" (byte 0xe9) on line 3 "name: méni"
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(MINI_SCENARIO.read_bytes().replace(b"name: mini", b"name: m\xe9ni", 1))
    err = assert_rejected(bad, "scenario", f"{bad}:3:8", "not UTF-8 text (byte 0xe9", tmp_path, monkeypatch, capsys)
    assert "save the file as UTF-8" in err


def test_non_utf8_file_names_the_column(tmp_path, monkeypatch, capsys):
    # "name: m" is 7 characters, so the 0xe9 byte is at column 8 of line 3
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes(MINI_SCENARIO.read_bytes().replace(b"name: mini", b"name: m\xe9ni", 1))
    code, _, err = run(["validate", bad], tmp_path, monkeypatch, capsys)
    assert code == 2
    assert f"{bad}:3:8: " in err


def test_file_over_10_mb(tmp_path, monkeypatch, capsys):
    # 11,000,000 bytes: over the limit whether "10 MB" means 10^7 or 2^20·10 = 10,485,760 bytes
    bad = tmp_path / "huge.yaml"
    bad.write_bytes(b"name: huge\n" + b"# padding padding padding padding\n" * (11_000_000 // 34))
    assert bad.stat().st_size > 10_485_760
    t0 = time.perf_counter()
    assert_rejected(bad, "scenario", f"{bad}:1:1", "file is ", tmp_path, monkeypatch, capsys)
    assert time.perf_counter() - t0 < 10


def test_top_level_list(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "list.yaml"
    bad.write_text("- name: a\n- name: b\n", encoding="utf-8")
    assert_rejected(bad, "scenario", f"{bad}:1:1", "expected a YAML mapping at the top level (got list)",
                    tmp_path, monkeypatch, capsys)


def test_yaml_syntax_error(tmp_path, monkeypatch, capsys):
    # line 16 "  precision: bf16: x": 2 spaces + "precision: " (11) + "bf16" (4) = 17 characters
    # before the second ':', which PyYAML points at: column 18
    bad = variant(tmp_path, MINI_SCENARIO, 16, "precision: bf16", "precision: bf16: x")
    assert_rejected(bad, "scenario", f"{bad}:16:18", "YAML syntax error: mapping values are not allowed here",
                    tmp_path, monkeypatch, capsys)


def test_missing_file(tmp_path, monkeypatch, capsys):
    bad = tmp_path / "nowhere.yaml"
    assert_rejected(bad, "scenario", f"{bad}:1:1", "file not found", tmp_path, monkeypatch, capsys)


# ----------------------------------------------------------------------- YAML 1.1 traps


def test_leading_zero_octal_is_rejected(tmp_path, monkeypatch, capsys):
    # YAML 1.1 reads 010 as 8, YAML 1.2 as 10: ambiguous either way. Line 15
    # "  global_batch_size: 010": 2 + len("global_batch_size: ") (19) = 21 characters, value at column 22
    bad = variant(tmp_path, MINI_SCENARIO, 15, "global_batch_size: 512", "global_batch_size: 010")
    err = assert_rejected(bad, "scenario", f"{bad}:15:22: workload.global_batch_size", "ambiguous number",
                          tmp_path, monkeypatch, capsys)
    assert "(got '010')" in err


def test_norway_no_stays_a_string(tmp_path):
    # YAML 1.1 reads NO as false; a GPU vendor and a scenario name are strings, so "NO" stays "NO"
    cat_path = variant(tmp_path, MINI_CATALOG, 7, "vendor: Test", "vendor: NO")
    assert load_catalog([cat_path]).gpus[0].vendor == "NO"
    sc_path = variant(tmp_path, MINI_SCENARIO, 3, "name: mini", "name: NO")
    assert load_scenario(sc_path).scenario.name == "NO"


def test_exponent_without_a_dot_is_a_number(tmp_path):
    # PyYAML's YAML 1.1 resolver needs "1.0e3"; "1e3" would be the string '1e3'. 1e3 = 1000.
    sc_path = variant(tmp_path, MINI_SCENARIO, 18, "step_time_s: 5.0", "step_time_s: 1e3")
    scenario = load_scenario(sc_path).scenario
    assert scenario.target.step_time_s == 1000.0
    assert scenario.target_step_time_s() == 1000.0
    # an integer field too: 4e3 = 4000
    sc_path = variant(tmp_path, MINI_SCENARIO, 20, "max_gpus: 4096", "max_gpus: 4e3")
    assert load_scenario(sc_path).scenario.constraints.max_gpus == 4000


@pytest.mark.parametrize("value", [".nan", ".NaN", ".inf", ".Inf", "-.inf"])
def test_nan_and_infinity_are_rejected(value, tmp_path, monkeypatch, capsys):
    # line 18 "  step_time_s: 5.0": key at column 3
    bad = variant(tmp_path, MINI_SCENARIO, 18, "step_time_s: 5.0", f"step_time_s: {value}")
    code, _, err = run(["validate", bad], tmp_path, monkeypatch, capsys)
    assert code == 2
    # -inf also fails "greater than 0"; the finite-number message is the one a person can act on
    assert f"{bad}:18:3: target.step_time_s: " in err
    assert "finite number" in err or value == "-.inf"
    assert "Traceback" not in err


def _alias_bomb(levels: int, per_level: int, use: str) -> str:
    """Billion laughs: level i is a list of `per_level` aliases of level i-1."""
    lines = ['x0: &x0 [' + ",".join(['"lol"'] * per_level) + ']']
    for i in range(1, levels):
        lines.append(f"x{i}: &x{i} [" + ",".join([f"*x{i - 1}"] * per_level) + "]")
    return "\n".join(lines) + f"\n{use}: *x{levels - 1}\n"


def test_alias_bomb_with_many_aliases_is_rejected_quickly(tmp_path, monkeypatch, capsys):
    # 10 levels of 12: levels 1..9 hold 9 · 12 = 108 aliases, plus the one that uses the last
    # level = 109 aliases; expanded, 12^10 ≈ 6.2·10^10 strings, far over the 200,000-value budget
    # (aliases are not counted since issue 18: the expanded size is)
    bad = tmp_path / "bomb.yaml"
    bad.write_text(_alias_bomb(10, 12, "name"), encoding="utf-8")
    t0 = time.perf_counter()
    code, _, err = run(["validate", bad], tmp_path, monkeypatch, capsys)
    assert time.perf_counter() - t0 < 5
    assert code == 2
    assert "expands to more than 200,000 values through anchors and aliases" in err
    assert "Traceback" not in err


def test_alias_bomb_under_the_alias_budget_is_rejected_quickly(tmp_path):
    # the classic 9 levels of 9: 8 · 9 + 1 = 73 aliases (< 100), 9^9 = 387,420,489 strings when
    # expanded; `name` expects a string, so the error message shows the value it got
    bad = tmp_path / "bomb.yaml"
    bad.write_text(_alias_bomb(9, 9, "name"), encoding="utf-8")
    try:
        proc = subprocess.run([sys.executable, "-m", "solver", "validate", str(bad)], cwd=tmp_path,
                              capture_output=True, text=True, timeout=10)
    except subprocess.TimeoutExpired:
        pytest.fail("validate took more than 10 s on an alias bomb")
    assert proc.returncode == 2


def test_several_problems_in_one_file_are_reported_together(tmp_path, monkeypatch, capsys):
    # three independent problems: wrong type (line 6), non-positive target (line 18), unknown key (line 20)
    lines = MINI_SCENARIO.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[5] = lines[5].replace("layers: 32", "layers: many")
    lines[17] = lines[17].replace("step_time_s: 5.0", "step_time_s: -1")
    lines[19] = lines[19].replace("max_gpus: 4096", "max_gpu: 4096")
    bad = tmp_path / "three.yaml"
    bad.write_text("".join(lines), encoding="utf-8")
    err = assert_rejected(bad, "scenario", f"{bad}:6:5: workload.model.layers", "Input should be a valid integer",
                          tmp_path, monkeypatch, capsys)
    assert f"{bad}:18:3: target.step_time_s: Input should be greater than 0 (got -1)" in err
    assert f"{bad}:20:3: constraints.max_gpu: unknown key: did you mean 'max_gpus'?" in err
    assert "3 problem(s) found" in err
    # one line per problem, each starting with the file name
    problem_lines = [ln for ln in err.splitlines() if ln.startswith(str(bad))]
    assert len(problem_lines) == 3


def test_problems_in_several_files_are_reported_together(tmp_path, monkeypatch, capsys):
    bad_cat = variant(tmp_path, MINI_CATALOG, 23, "nvlink_gbyte_s: 450", "nvlink_gbyte_s: -5")
    bad_sc = variant(tmp_path, MINI_SCENARIO, 20, "max_gpus: 4096", "max_gpu: 4096")
    code, _, err = run(["validate", bad_cat, bad_sc], tmp_path, monkeypatch, capsys)
    assert code == 2
    assert f"{bad_cat}:23:5: platforms[0].nvlink_gbyte_s" in err
    assert f"{bad_sc}:20:3: constraints.max_gpu" in err


def test_input_error_from_the_api_carries_the_problems(tmp_path):
    bad = variant(tmp_path, MINI_CATALOG, 23, "nvlink_gbyte_s: 450", "nvlink_gbyte_s: -5")
    with pytest.raises(InputError) as info:
        load_catalog([bad])
    [problem] = info.value.problems
    assert (problem.file, problem.line, problem.column, problem.path) == (str(bad), 23, 5, "platforms[0].nvlink_gbyte_s")


# ---------------------------------------------------------------------------- catalog merging


def test_later_catalog_overrides_the_same_id():
    # mini-catalog.yaml prices nic-a at $1,700; nic-quote.yaml at $1,500
    merged = load_catalog([MINI_CATALOG, NIC_QUOTE])
    [nic] = merged.nics
    assert nic.unit_price_usd == 1500
    assert nic.price_source == "vendor quote (test)"
    assert [g.id for g in merged.gpus] == ["gpu-a"]  # the rest of the first file stays
    assert merged.provenance.overridden == [f"nics.nic-a: {NIC_QUOTE} overrides {MINI_CATALOG}"]
    # the other order: the mini catalog is later and wins
    [nic] = load_catalog([NIC_QUOTE, MINI_CATALOG]).nics
    assert nic.unit_price_usd == 1700


def test_verbose_reports_the_override(tmp_path, monkeypatch, capsys):
    code, out, err = run(["--verbose", "catalog", "--catalog", MINI_CATALOG, "--catalog", NIC_QUOTE, "--json"],
                         tmp_path, monkeypatch, capsys)
    assert code == 0, err
    flat = " ".join(err.split())  # rich may wrap the line
    assert f"override: nics.nic-a: {NIC_QUOTE} overrides {MINI_CATALOG}" in flat
    code, _, err = run(["catalog", "--catalog", MINI_CATALOG, "--catalog", NIC_QUOTE], tmp_path, monkeypatch, capsys)
    assert "override" not in err


def test_verbose_after_the_subcommand(tmp_path, monkeypatch, capsys):
    code, _, err = run(["catalog", "--catalog", MINI_CATALOG, "--catalog", NIC_QUOTE, "--verbose"],
                       tmp_path, monkeypatch, capsys)
    assert code == 0, err
    assert "override" in err


def _write_project(tmp_path: Path, catalog_line: str) -> Path:
    """project/scenarios/s.yaml whose catalog: list names `catalog_line`; project/quotes/extra.yaml
    adds a platform the scenario's allow-list needs."""
    (tmp_path / "project" / "scenarios").mkdir(parents=True)
    (tmp_path / "project" / "quotes").mkdir()
    extra = (ROOT / "catalogs" / "default.yaml").read_text(encoding="utf-8")
    assert "  - id: hgx-h100\n" in extra
    # one platform copied from the shipped catalog under a new id
    block = extra.split("  - id: hgx-h100\n", 1)[1].split("\n\n", 1)[0]
    (tmp_path / "project" / "quotes" / "extra.yaml").write_text(
        "name: extra\nplatforms:\n  - id: hgx-h100-quoted\n" + block + "\n", encoding="utf-8")
    lines = MINI_SCENARIO.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[20] = "  platforms: [hgx-h100-quoted]\n"
    lines[24] = "  platform: hgx-h100-quoted\n"
    lines[25] = catalog_line + "\n"
    scenario = tmp_path / "project" / "scenarios" / "s.yaml"
    scenario.write_text("".join(lines), encoding="utf-8")
    return scenario


def test_scenario_catalog_list_resolves_relative_to_the_scenario(tmp_path, monkeypatch, capsys):
    scenario = _write_project(tmp_path, "catalog: [../quotes/extra.yaml]")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, out, err = run(["validate", scenario], elsewhere, monkeypatch, capsys)
    assert code == 0, err
    assert "valid scenario" in out
    ls = load_scenario(scenario)
    assert [p.resolve() for p in ls.catalog_paths] == [(tmp_path / "project" / "quotes" / "extra.yaml").resolve()]


def test_missing_scenario_catalog_is_an_error_at_its_line(tmp_path, monkeypatch, capsys):
    # line 26 "catalog: [../quotes/missing.yaml]": "catalog: [" is 10 characters, item at column 11
    scenario = _write_project(tmp_path, "catalog: [../quotes/missing.yaml]")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    assert_rejected(scenario, "scenario", f"{scenario}:26:11: catalog[0]", "catalog file not found",
                    elsewhere, monkeypatch, capsys)
