"""Fuzzed inputs (issue 9 §1): mutate the shipped catalog and scenarios and check that every run
ends in a result or a clear input error located as FILE:LINE:COL — never a traceback, a hang or an
"internal error". Hypothesis runs derandomized with bounded examples so CI is deterministic.

Properties:
- loader (in process): `load_catalog` / `load_scenario` + `catalog_for` + `check_against_catalog`
  either return, or raise InputError whose every problem names the mutated file and a line inside it;
- NaN and ±infinity anywhere are rejected at load;
- the CLI (subprocess, with a timeout) exits 0/1/2 on mutated files, with FILE:LINE:COL on exit 2.
"""
from __future__ import annotations

import copy
import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from solver import api, inputs
from solver.errors import InputError

REPO = Path(__file__).resolve().parent.parent
CATALOG_FILE = REPO / "catalogs" / "default.yaml"
SCENARIO_FILES = sorted((REPO / "scenarios").glob("*.yaml"))
CATALOG = yaml.safe_load(CATALOG_FILE.read_text(encoding="utf-8"))
SCENARIOS = {p.name: yaml.safe_load(p.read_text(encoding="utf-8")) for p in SCENARIO_FILES}
LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): ")

FUZZ = settings(derandomize=True, max_examples=120, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ------------------------------------------------------------------------------ mutations


def paths_of(data, prefix=()) -> list[tuple]:
    """Every key/index path in a parsed YAML tree (the root excluded)."""
    out = []
    if isinstance(data, dict):
        items = data.items()
    elif isinstance(data, list):
        items = enumerate(data)
    else:
        return out
    for key, value in items:
        out.append(prefix + (key,))
        out.extend(paths_of(value, prefix + (key,)))
    return out


def nest(value, depth: int):
    for i in range(depth):
        value = [value] if i % 2 else {"k": value}
    return value


MUTATIONS = {
    "delete": None,
    "str": "not-a-number",
    "list": [1, 2],
    "dict": {"x": 1},
    "bool": True,
    "null": None,
    "zero": 0,
    "negative": -1,
    "negative_float": -2.5,
    "nan": math.nan,
    "inf": math.inf,
    "-inf": -math.inf,
    "1e308": 1e308,
    "-1e308": -1e308,
    "huge_int": 10**40,
    "huge_list": list(range(20_000)),
    "unicode": "λ-ünï©ødé 🚀 \u202e\u0000x",
    "empty_str": "",
    "deep": "deep",  # filled in by mutate(): 60 levels of nesting
}
NON_FINITE = {"nan", "inf", "-inf"}


def mutate(data: dict, path: tuple, kind: str) -> dict:
    """A copy of `data` with the value at `path` replaced (or deleted) by mutation `kind`."""
    out = copy.deepcopy(data)
    parent = out
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if kind == "delete":
        del parent[last]
    elif kind == "deep":
        parent[last] = nest(1, 60)
    else:
        parent[last] = copy.deepcopy(MUTATIONS[kind])
    return out


def dump(data) -> str:
    # allow_unicode keeps the text UTF-8; PyYAML writes NaN/inf as .nan/.inf, which the loader reads
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=10_000)


def assert_located(exc: InputError, files: dict[str, int]) -> None:
    """Every problem is FILE:LINE:COL with a known file and a line inside it (`files`: name → lines)."""
    assert exc.problems
    for problem in exc.problems:
        text = str(problem)
        m = LOCATED.match(text)
        assert m, text
        assert "Traceback" not in text
        assert m["file"] in files, text
        assert 1 <= int(m["line"]) <= files[m["file"]] + 1, text


def load_scenario_fully(path: Path):
    """What `fabricplan validate` does with a scenario: load, merge its catalog, cross-check."""
    ls = inputs.load_scenario(path)
    cat = api.catalog_for(ls)
    inputs.check_against_catalog(ls, cat)
    return ls, cat


def line_count(path: Path) -> int:
    return path.read_text(encoding="utf-8", errors="replace").count("\n") + 1


# ------------------------------------------------------------------------- structured fuzzing

CATALOG_PATHS = paths_of(CATALOG)


@settings(FUZZ, max_examples=80)  # the shipped catalog takes ~0.2 s to load and check
@given(path=st.sampled_from(CATALOG_PATHS), kind=st.sampled_from(sorted(MUTATIONS)))
def test_mutated_catalog_loads_or_fails_with_location(path, kind):
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / "catalog.yaml"
        file.write_text(dump(mutate(CATALOG, path, kind)), encoding="utf-8")
        try:
            inputs.load_catalog([file])
        except InputError as exc:
            assert_located(exc, {str(file): line_count(file)})
        else:
            assert kind not in NON_FINITE, f"{kind} at {path} was accepted"


SCENARIO_CASES = [(name, p) for name, data in SCENARIOS.items() for p in paths_of(data)]


@FUZZ
@given(case=st.sampled_from(SCENARIO_CASES), kind=st.sampled_from(sorted(MUTATIONS)))
def test_mutated_scenario_loads_or_fails_with_location(case, kind):
    name, path = case
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / name
        file.write_text(dump(mutate(SCENARIOS[name], path, kind)), encoding="utf-8")
        try:
            load_scenario_fully(file)
        except InputError as exc:
            assert_located(exc, {str(file): line_count(file), str(inputs.default_catalog_path()): 10**6})
        else:
            assert kind not in NON_FINITE, f"{kind} at {path} was accepted"


@pytest.mark.parametrize("kind", sorted(NON_FINITE))
@pytest.mark.parametrize("path", [("workload", "global_batch_size"), ("target", "step_time_s"),
                                  ("constraints", "budget_usd"), ("overlap", "dp"), ("tco", "years")])
def test_non_finite_numbers_are_rejected_at_load(tmp_path, path, kind):
    file = tmp_path / "sc.yaml"
    data = copy.deepcopy(SCENARIOS["llama3-70b.yaml"])
    data.setdefault(path[0], {})
    file.write_text(dump(mutate(data, path, kind)), encoding="utf-8")
    with pytest.raises(InputError) as info:
        inputs.load_scenario(file)
    assert any(".".join(path) in str(p) for p in info.value.problems), str(info.value)


# ------------------------------------------------------------------------------ text fuzzing

CATALOG_TEXT = CATALOG_FILE.read_text(encoding="utf-8")
SCENARIO_TEXT = (REPO / "scenarios" / "llama3-70b.yaml").read_text(encoding="utf-8")
YAML_NOISE = st.text(alphabet=st.sampled_from(list(":-[]{}&*!|>'\"#%@`,? \t\\") + ["\n", "é", "𝔘", "a", "1", ".", "e"]),
                     max_size=40)


@FUZZ
@given(source=st.sampled_from(["catalog", "scenario"]), op=st.sampled_from(["replace", "insert", "delete", "truncate"]),
       where=st.floats(0, 1), noise=YAML_NOISE)
def test_text_mutations_load_or_fail_with_location(source, op, where, noise):
    """Raw-text damage (broken syntax, stray indicators, cut-off files) is a located error too."""
    text = CATALOG_TEXT if source == "catalog" else SCENARIO_TEXT
    lines = text.splitlines(keepends=True)
    at = min(int(where * len(lines)), len(lines) - 1)
    if op == "replace":
        lines[at] = noise + "\n"
    elif op == "insert":
        lines.insert(at, noise + "\n")
    elif op == "delete":
        del lines[at]
    else:
        lines = [text[: int(where * len(text))]]
    with tempfile.TemporaryDirectory() as folder:
        file = Path(folder) / f"{source}.yaml"
        file.write_text("".join(lines), encoding="utf-8")
        try:
            if source == "catalog":
                inputs.load_catalog([file])
            else:
                load_scenario_fully(file)
        except InputError as exc:
            assert_located(exc, {str(file): line_count(file), str(inputs.default_catalog_path()): 10**6})


# ------------------------------------------------------------------------ hand-made nasties

ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)  # 9^9 ≈ 387 million leaves if expanded

NASTY = {
    "alias_bomb": ALIAS_BOMB,
    "python_object": "name: x\ngpus: !!python/object/apply:os.getcwd []\n",
    "python_name": "name: !!python/name:os.system\n",
    "deep_nesting": "name: x\ndescription: " + "[" * 200 + "]" * 200 + "\n",
    "deep_block_nesting": "name: x\n" + "".join("  " * i + f"k{i}:\n" for i in range(80)) + "  " * 80 + "v: 1\n",
    "nan_scalar": "name: x\nfacility: {pue: .nan, source: s}\n",
    "inf_scalar": "name: x\nfacility: {pue: .inf, source: s}\n",
    "tab_indent": "name: x\ngpus:\n\t- id: a\n",
    "duplicate_keys": "name: x\nname: y\n",
    "octal": "name: x\nfacility: {pue: 0755, source: s}\n",
    "top_level_list": "- 1\n- 2\n",
    "huge_key": "name: x\n" + "k" * 100_000 + ": 1\n",
    "many_documents": "name: x\n---\nname: y\n",
    "bad_utf8": None,  # written as bytes below
}


@pytest.mark.parametrize("case", sorted(NASTY))
def test_nasty_yaml_is_a_located_error_in_process(tmp_path, case):
    file = tmp_path / "c.yaml"
    if NASTY[case] is None:
        file.write_bytes(b"name: caf\xe9\n")
    else:
        file.write_text(NASTY[case], encoding="utf-8")
    start = time.perf_counter()
    with pytest.raises(InputError) as info:
        inputs.load_catalog([file])
    assert time.perf_counter() - start < 5  # the alias bomb is refused, not expanded
    assert_located(info.value, {str(file): line_count(file)})


def test_bom_and_crlf_line_endings_are_a_result(tmp_path):
    # A Windows editor's UTF-8 BOM and CRLF endings are valid YAML: the file loads, not an error.
    file = tmp_path / "c.yaml"
    file.write_text("\ufeffname: crlf-catalog\r\ndescription: y\r\n", encoding="utf-8", newline="")
    assert inputs.load_catalog([file]).name == "crlf-catalog"


# -------------------------------------------------------------------------------- via the CLI

CLI_CASES = {
    # name: (file text, exit codes allowed)
    "nan_target": (dump(mutate(SCENARIOS["llama3-70b.yaml"], ("target", "step_time_s"), "nan")), {2}),
    "inf_batch": (dump(mutate(SCENARIOS["llama3-70b.yaml"], ("workload", "global_batch_size"), "inf")), {2}),
    "1e308_budget": (dump(mutate(SCENARIOS["capped-budget-power.yaml"], ("constraints", "budget_usd"), "1e308")), {2}),
    "unicode_name": (dump(mutate(SCENARIOS["llama3-70b.yaml"], ("name",), "unicode")), {2}),
    "deleted_workload": (dump(mutate(SCENARIOS["llama3-70b.yaml"], ("workload",), "delete")), {2}),
    "huge_allow_list": (dump(mutate(SCENARIOS["llama3-70b.yaml"], ("parallelism", "tp"), "huge_list")), {0, 1, 2}),
    "alias_bomb": (ALIAS_BOMB, {2}),
    "python_object": ("name: x\nworkload: !!python/object/apply:os.getcwd []\n", {2}),
}


@pytest.mark.parametrize("case", sorted(CLI_CASES))
def test_cli_on_fuzzed_files_exits_cleanly(tmp_path, case):
    text, allowed = CLI_CASES[case]
    file = tmp_path / "sc.yaml"
    file.write_text(text, encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "solver", "validate", str(file)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode in allowed, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "internal error" not in proc.stderr
    if proc.returncode == 2:
        assert re.search(rf"^{re.escape(str(file))}:\d+:\d+: ", proc.stderr, flags=re.M), proc.stderr


@pytest.mark.parametrize("path, kind", [
    (("workload", "model", "layers"), "huge_int"),
    (("parallelism", "tp"), "huge_list"),
    (("constraints", "max_gpus"), "zero"),
    (("workload", "global_batch_size"), "negative"),
])
def test_cli_solve_on_mutated_scenario_never_crashes(tmp_path, path, kind):
    file = tmp_path / "sc.yaml"
    file.write_text(dump(mutate(SCENARIOS["llama3-70b.yaml"], path, kind)), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "solver", "solve", str(file), "--json", str(tmp_path / "r.json"),
                           "--no-xlsx", "--time-limit", "20"], cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert proc.returncode in (0, 1, 2), proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr and "internal error" not in proc.stderr
    if proc.returncode == 2:
        assert re.search(rf"^{re.escape(str(file))}:\d+:\d+: ", proc.stderr, flags=re.M), proc.stderr
