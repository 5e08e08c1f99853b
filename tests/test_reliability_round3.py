"""Reliability round 3 (issue 27): every command's status honest, outputs that never clobber inputs,
bounded time and memory for plans, and the smaller items. docs/reliability.md lists every fault class
with its test here (R3).

Expected numbers are worked out by hand from the shipped catalog (catalogs/default.yaml) in the
comments; every test here failed on the code before the fix it checks.
"""
from __future__ import annotations

import copy
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from reliability_helpers import DEFAULT, catalog_entry, tiny_scenario, write_yaml  # noqa: F401

from solver import api

REPO = Path(__file__).resolve().parent.parent


# ------------------------------------------------------------------------------------ helpers





def pinned_tiny(**changes) -> dict:
    """The tiny scenario with every decision pinned: one hgx-h100 node (8 GPUs per node, the
    catalog), tp = cp = pp = 1, dp = 8 — every GPU of the node."""
    sc = tiny_scenario(**changes)
    sc.pop("parallelism")
    sc["pin"] = {"platform": "hgx-h100", "nic": "cx7-ndr", "rails_per_node": 1, "switch": "qm9700", "tp": 1, "cp": 1,
                 "pp": 1, "vp": 1, "dp": 8, "microbatch_size": 1}
    return sc


def run_cli(*args, timeout_s: float = 180, cwd: Path = REPO, **kwargs) -> subprocess.CompletedProcess:
    """The command line of this checkout (whatever the cwd), as a child process."""
    env = {**os.environ, "PYTHONPATH": str(REPO), **kwargs.pop("env", {})}
    return subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout_s, env=env, **kwargs)


def assert_clean_exit(proc: subprocess.CompletedProcess, code: int) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert "internal error" not in proc.stderr


def flat(text: str) -> str:
    """Terminal text with rich's line wrapping undone."""
    return " ".join(text.split())


# ------------------------------------------------------ 1. evaluate with every decision pinned


def test_fully_pinned_evaluate_checks_every_cap(tmp_path):
    # One 8-GPU hgx-h100 node costs more than $255,240 (the platform's unit price alone), so a
    # $100,000 budget and max_gpus 4 both fail; the partial-pin path and `solve` say infeasible.
    sc = write_yaml(tmp_path / "sc.yaml", pinned_tiny(constraints={"budget_usd": 100_000, "max_gpus": 4}))
    proc = run_cli("evaluate", sc, "--json", tmp_path / "r.json", "--no-xlsx")
    assert_clean_exit(proc, 1)
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["status"] == "infeasible"
    assert data["designs"][0]["gpus"] == 8
    text = flat(proc.stdout + proc.stderr)
    assert "budget_usd" in text and "max_gpus" in text
    assert "8 GPUs" in text and "$100,000" in text
    assert "budget_usd" in data["explanation"] and "max_gpus" in data["explanation"]


@pytest.mark.parametrize("cap", [{"facility_power_kw": 1.0}, {"max_racks": 1}])
def test_fully_pinned_evaluate_checks_power_and_racks(tmp_path, cap):
    # 8 hgx-h100 nodes (dp = 64, batch 64): each draws ≈ 10 kW (catalog) > 1 kW, and a 41 kW rack
    # holds 4 of them (catalog rack-42u: 4 × 10.2 kW), so 8 nodes need at least 2 racks > 1.
    sc = pinned_tiny(constraints=cap)
    sc["workload"]["global_batch_size"] = 64
    sc["pin"]["dp"] = 64
    proc = run_cli("evaluate", write_yaml(tmp_path / "sc.yaml", sc), "--json", tmp_path / "r.json", "--no-xlsx")
    assert_clean_exit(proc, 1)
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["status"] == "infeasible"
    assert next(iter(cap)) in data["explanation"]


def test_fully_pinned_evaluate_within_caps_stays_feasible(tmp_path):
    sc = write_yaml(tmp_path / "sc.yaml", pinned_tiny(constraints={"budget_usd": 10_000_000, "max_gpus": 8}))
    proc = run_cli("evaluate", sc, "--json", tmp_path / "r.json", "--no-xlsx")
    assert_clean_exit(proc, 0)
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["status"] == "feasible"


# ------------------------------------------------- 2. a time limit hit, shown on the terminal


def _time_limit_after_the_bounds(monkeypatch):
    """A real time limit that runs out right after the bound pruning evaluated its first design:
    the "bounds" share of every limited deadline expires on its second check. Everything else is
    real; the search ends with the evaluated designs, unproven (status `time_limit`)."""
    from solver import deadline

    real = deadline.Deadline.expired

    def expired(self, stage=None):
        if self.seconds is not None and stage == "bounds":
            # counted on the deadline itself: an id() can be reused by the next solve's deadline once the
            # last one is freed (compare solves two scenarios), which made a fresh deadline expire at once
            self._bounds_checks = getattr(self, "_bounds_checks", 0) + 1
            return self._bounds_checks > 1
        return real(self, stage)

    monkeypatch.setattr(deadline.Deadline, "expired", expired)


def test_compare_with_a_time_limit_hit_warns_on_the_terminal(tmp_path, monkeypatch, capsys):
    from solver import cli

    _time_limit_after_the_bounds(monkeypatch)
    a = write_yaml(tmp_path / "a.yaml", tiny_scenario(name="tiny-a"))
    b = write_yaml(tmp_path / "b.yaml", tiny_scenario(name="tiny-b", target={"step_time_s": 2.0}))
    code = cli.main(["compare", str(a), str(b), "--json", str(tmp_path / "c.json"), "--time-limit", "30"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert [s["status"] for s in data["scenarios"]] == ["time_limit", "time_limit"]
    err = flat(captured.err)
    for name in ("tiny-a", "tiny-b"):
        assert f"warning: {name}" in err
    assert err.count("may not be optimal") == 2
    assert "time_limit" in flat(captured.out)  # the table's status row


def test_solve_with_a_time_limit_hit_warns_that_the_design_may_not_be_optimal(tmp_path, monkeypatch, capsys):
    from solver import cli

    _time_limit_after_the_bounds(monkeypatch)
    sc = write_yaml(tmp_path / "a.yaml", tiny_scenario())
    code = cli.main(["solve", str(sc), "--json", str(tmp_path / "r.json"), "--no-xlsx", "--time-limit", "30"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["status"] == "time_limit"
    assert "may not be optimal" in flat(captured.err)
    # #1 is unproven, so the next faster design is not searched (no second search spending the limit again)
    assert data["next_faster"]["found"] is False and data["next_faster"]["status"] == "time_limit"
    assert "not searched: the solve hit its time limit" in flat(captured.out)


def test_sweep_with_a_time_limit_hit_warns_on_the_terminal(tmp_path, monkeypatch, capsys):
    from solver import cli

    _time_limit_after_the_bounds(monkeypatch)
    sc = write_yaml(tmp_path / "a.yaml", tiny_scenario())
    code = cli.main(["sweep", str(sc), "--vary", "workload.global_batch_size=8,16", "--json", str(tmp_path / "s.json"),
                     "--no-xlsx", "--no-plot", "--time-limit", "30"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    data = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    assert data["status_counts"]["time_limit"] == 2
    assert "the time limit stopped 2 point(s)" in flat(captured.err) and "may not be optimal" in flat(captured.err)


# ------------------------------------------------------ 3. comparisons a plan did not run


TOY_CATALOG = REPO / "tests" / "data" / "toy-catalog.yaml"
# The toy plan of tests/plan/test_plan_cli.py: cheap-box buys 32 nodes and the $1,000 switch
# ($161,000), then 32 more nodes ($160,000).
TOY_PLAN = dict(name="toy-plan", workload=dict(model=dict(layers=1, hidden_size=256, ffn_hidden_size=256, ffn_type="gelu",
                                                          attention_heads=1, vocab_size=2048, seq_len=256),
                                               global_batch_size=64, activation_recompute="none"),
                target=dict(step_time_s=0.004), overlap=dict(tp=1, cp=1, pp=1, dp=1),
                parallelism=dict(tp=1, cp=1, pp=1, vp=1, microbatch_size=1),
                plan=dict(periods=[{"label": "year one", "set": {"target.step_time_s": 0.004}},
                                   {"label": "year two", "set": {"target.step_time_s": 0.002}}]))


def toy_plan_cli(tmp_path: Path, doc: dict, *args) -> subprocess.CompletedProcess:
    path = write_yaml(tmp_path / "plan.yaml", doc)
    return run_cli("plan", path, *args, "--no-default-catalog", "--catalog", TOY_CATALOG, cwd=tmp_path)


def test_plan_without_comparisons_says_not_computed(tmp_path):
    import openpyxl

    proc = toy_plan_cli(tmp_path, TOY_PLAN, "--no-compare", "--json", "p.json", "--xlsx", "p.xlsx", "--no-plot")
    assert_clean_exit(proc, 0)
    report = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    assert [round(p["capex_usd"]) for p in report["periods"]] == [161_000, 160_000]
    comp = report["comparison"]
    assert comp["from_scratch"] is None and comp["up_front"] is None
    assert comp["computed"] is False
    text = flat(proc.stdout)
    assert "from scratch" not in text or "not computed" in text
    assert "$0" not in text
    assert "comparisons: not computed" in text
    cells = [c.value for row in openpyxl.load_workbook(tmp_path / "p.xlsx")["Plan"].iter_rows() for c in row]
    assert "not computed (--no-compare)" in cells
    assert not any(isinstance(v, str) and "from scratch" in v for v in cells)


# ------------------------------------------------ 4. a price-only quote without its source


@pytest.mark.parametrize("given, missing", [
    ({}, "price_source, price_date"),
    ({"price_source": "ACME quote 42"}, "price_date"),
    ({"price_date": "2026-11"}, "price_source"),
])
def test_price_only_quote_must_say_where_and_when(tmp_path, given, missing):
    # Before: the quote kept the shipped entry's source and date and was labelled a firm quote.
    quote = tmp_path / "quote.yaml"
    quote.write_text("name: acme\nnics:\n  - id: cx7-ndr\n    unit_price_usd: 1234\n"
                     + "".join(f"    {k}: '{v}'\n" for k, v in given.items()), encoding="utf-8")
    sc = write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    proc = run_cli("solve", sc, "--catalog", quote, "--json", tmp_path / "r.json", "--no-xlsx")
    assert_clean_exit(proc, 2)
    assert f"{quote}:4:5:" in proc.stderr  # the unit_price_usd line of the quote
    assert f"missing: {missing}" in flat(proc.stderr)
    assert not (tmp_path / "r.json").exists()


def test_price_only_quote_with_source_and_date_is_used(tmp_path):
    quote = tmp_path / "quote.yaml"
    quote.write_text("name: acme\nnics:\n  - id: cx7-ndr\n    unit_price_usd: 1234\n"
                     "    price_source: ACME quote 42\n    price_date: '2026-11'\n", encoding="utf-8")
    sc = write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    proc = run_cli("solve", sc, "--catalog", quote, "--json", tmp_path / "r.json", "--no-xlsx")
    assert_clean_exit(proc, 0)
    nic = next(x for x in json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["designs"][0]["bom"]
               if x["part"] == "cx7-ndr")
    assert (nic["unit_price_usd"], nic["price_source"], nic["price_date"], nic["price_is_estimate"]) == \
        (1234, "ACME quote 42", "2026-11", False)


# ----------------------------------------------------- 5. strict number (and yes/no) fields


def _replace_line(text: str, old: str, new: str) -> tuple[str, int]:
    """`text` with the one line holding `old` replaced by `new`, and that line's number (1-based)."""
    lines = text.splitlines()
    [index] = [i for i, line in enumerate(lines) if line.strip() == old]
    lines[index] = lines[index].replace(old, new)
    return "\n".join(lines) + "\n", index + 1


SCENARIO_TEXT = yaml.safe_dump(tiny_scenario(), sort_keys=False)


@pytest.mark.parametrize("old, new, path", [
    ("step_time_s: 1.0", "step_time_s: true", "target.step_time_s"),       # was read as 1 s
    ("step_time_s: 1.0", "step_time_s: '3'", "target.step_time_s"),        # was read as 3 s
    ("global_batch_size: 8", "global_batch_size: 1_0", "workload.global_batch_size"),  # was read as 10
    ("global_batch_size: 8", "global_batch_size: \"8\"", "workload.global_batch_size"),
    ("hidden_size: 256", "hidden_size: false", "workload.model.hidden_size"),
])
def test_scenario_numbers_must_be_numbers(tmp_path, old, new, path):
    text, line = _replace_line(SCENARIO_TEXT, old, new)
    sc = tmp_path / "sc.yaml"
    sc.write_text(text, encoding="utf-8")
    proc = run_cli("solve", sc, "--json", tmp_path / "r.json", "--no-xlsx")
    assert_clean_exit(proc, 2)
    assert f"{sc}:{line}:" in proc.stderr and f"{path}: must be a number" in proc.stderr
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("old, new, path, message", [
    ("unit_price_usd: 255240", "unit_price_usd: true", "platforms[0].unit_price_usd", "must be a number"),  # was $1
    ("unit_price_usd: 255240", "unit_price_usd: '255240'", "platforms[0].unit_price_usd", "must be a number"),
    ("unit_price_usd: 255240", "unit_price_usd: 255_240", "platforms[0].unit_price_usd", "must be a number"),
    ("gpus_per_node: 8", "gpus_per_node: true", "platforms[0].gpus_per_node", "must be a number"),
    ("includes_scaleout_nics: false", "includes_scaleout_nics: 0", "platforms[0].includes_scaleout_nics",
     "must be true or false"),
])
def test_catalog_numbers_must_be_numbers(tmp_path, old, new, path, message):
    plat = catalog_entry("platforms", "hgx-h100")
    assert plat["unit_price_usd"] == 255_240 and plat["gpus_per_node"] == 8  # the lines edited below
    text, line = _replace_line(yaml.safe_dump({"name": "quote", "platforms": [plat]}, sort_keys=False), old, new)
    quote = tmp_path / "quote.yaml"
    quote.write_text(text, encoding="utf-8")
    proc = run_cli("validate", quote)
    assert_clean_exit(proc, 2)
    assert f"{quote}:{line}:" in proc.stderr and f"{path}: {message}" in proc.stderr


def test_number_lists_must_hold_numbers(tmp_path):
    sc = tiny_scenario()
    sc["constraints"]["rails_per_node"] = [1, True]
    proc = run_cli("validate", write_yaml(tmp_path / "sc.yaml", sc))
    assert_clean_exit(proc, 2)
    assert "constraints.rails_per_node: item 2 must be a number, not the boolean true" in flat(proc.stderr)


def test_numbers_written_as_yaml_numbers_still_load(tmp_path):
    # 4e3 (YAML 1.2: the float 4000.0) for an integer cap, 1.5e7 for a budget: numbers, accepted.
    sc = tiny_scenario(constraints={"max_gpus": 4e3, "budget_usd": 1.5e7})
    path = tmp_path / "sc.yaml"
    path.write_text(yaml.safe_dump(sc).replace("4000.0", "4e3"), encoding="utf-8")
    loaded = api.load_scenario(path)
    assert loaded.scenario.constraints.max_gpus == 4000 and loaded.scenario.constraints.budget_usd == 15_000_000


# ------------------------------------------------- 6. outputs never overwrite inputs or each other


def _solve_args(tmp_path: Path) -> tuple[Path, Path, bytes, bytes]:
    sc = write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    quote = tmp_path / "quote.yaml"
    quote.write_text("name: acme\nnics:\n  - id: cx7-ndr\n    unit_price_usd: 1234\n"
                     "    price_source: ACME quote 42\n    price_date: '2026-11'\n", encoding="utf-8")
    return sc, quote, sc.read_bytes(), quote.read_bytes()


@pytest.mark.parametrize("outputs, message", [
    (["--json", "sc.yaml", "--no-xlsx"], "--json would overwrite the input file"),
    (["--json", "r.json", "--xlsx", "quote.yaml"], "--xlsx would overwrite the input file"),
    (["--json", "./sub/../sc.yaml", "--no-xlsx"], "--json would overwrite the input file"),
    (["--json", "hard.yaml", "--no-xlsx"], "--json would overwrite the input file"),  # a hard link of sc.yaml
    (["--json", "x.out", "--xlsx", "x.out"], "--json and --xlsx name the same file"),
    (["--json", "x.out", "--xlsx", "./x.out"], "--json and --xlsx name the same file"),
])
def test_outputs_never_overwrite_inputs_or_each_other(tmp_path, outputs, message):
    sc, quote, sc_bytes, quote_bytes = _solve_args(tmp_path)
    (tmp_path / "sub").mkdir()
    os.link(sc, tmp_path / "hard.yaml")
    proc = run_cli("solve", "sc.yaml", "--catalog", "quote.yaml", *outputs, cwd=tmp_path)
    assert_clean_exit(proc, 2)
    assert message in flat(proc.stderr)
    assert sc.read_bytes() == sc_bytes and quote.read_bytes() == quote_bytes
    assert not (tmp_path / "x.out").exists() and not (tmp_path / "r.json").exists()


def test_output_into_the_default_catalog_is_refused(tmp_path):
    sc, _, _, _ = _solve_args(tmp_path)
    default = REPO / "catalogs" / "default.yaml"
    before = default.read_bytes()
    proc = run_cli("evaluate", write_yaml(tmp_path / "p.yaml", pinned_tiny()), "--json", tmp_path / "r.json",
                   "--xlsx", default)
    assert_clean_exit(proc, 2)
    assert "--xlsx would overwrite the input file" in flat(proc.stderr)
    assert default.read_bytes() == before


def test_sweep_outputs_are_distinct_from_the_results_file_and_inputs(tmp_path):
    sc, _, sc_bytes, _ = _solve_args(tmp_path)
    proc = run_cli("sweep", "sc.yaml", "--vary", "workload.global_batch_size=8,16", "--json", "s.json",
                   "--xlsx", "s.points.jsonl", "--no-plot", cwd=tmp_path)
    assert_clean_exit(proc, 2)
    assert "--xlsx and the results file name the same file" in flat(proc.stderr)
    proc = run_cli("sweep", "sc.yaml", "--vary", "workload.global_batch_size=8,16", "--json", "s.json",
                   "--no-xlsx", "--plot", "sc.yaml", cwd=tmp_path)
    assert_clean_exit(proc, 2)
    assert "--plot would overwrite the input file" in flat(proc.stderr)
    assert sc.read_bytes() == sc_bytes


def _device_node(path: Path, like: str) -> Path:
    """A private character device node with the numbers of `like` (e.g. /dev/null), so that a test
    whose code under test is wrong replaces this node, never the system's (as root, the code before
    the fix did replace /dev/null). Skips where device nodes cannot be made (not root)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.stat(like).st_rdev)
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node: {exc}")
    return path


def test_symlink_fifo_and_device_outputs_are_refused(tmp_path):
    sc, _, _, _ = _solve_args(tmp_path)
    target = tmp_path / "target.json"
    target.write_text("keep", encoding="utf-8")
    (tmp_path / "link.json").symlink_to(target)
    os.mkfifo(tmp_path / "fifo.json")
    zero = _device_node(tmp_path / "zero", "/dev/zero")
    for out, kind in (("link.json", "is a symbolic link"), ("fifo.json", "is a named pipe (FIFO), not a regular file"),
                      ("zero", "is a character device, not a regular file")):
        proc = run_cli("solve", "sc.yaml", "--json", out, "--no-xlsx", cwd=tmp_path, timeout_s=60)
        assert_clean_exit(proc, 2)
        assert kind in flat(proc.stderr)
    assert (tmp_path / "link.json").is_symlink() and target.read_text(encoding="utf-8") == "keep"
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo.json").st_mode)
    assert stat.S_ISCHR(os.stat(zero).st_mode)


def test_dev_null_output_is_discarded_never_replaced(tmp_path):
    # The null device (a private node with /dev/null's device numbers, see _device_node) given as
    # every output: the run succeeds, writes nothing there and leaves the node a device.
    sc, _, _, _ = _solve_args(tmp_path)
    null = _device_node(tmp_path / "null", os.devnull)
    before = os.stat(null)
    proc = run_cli("solve", "sc.yaml", "--json", "null", "--xlsx", "null", cwd=tmp_path)
    assert_clean_exit(proc, 0)
    proc = run_cli("sweep", "sc.yaml", "--vary", "workload.global_batch_size=8,16", "--json", "null",
                   "--no-xlsx", "--plot", "null", cwd=tmp_path)
    assert_clean_exit(proc, 0)
    after = os.stat(null)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    assert not list(tmp_path.glob(".null.*")) and not (tmp_path / "null.points.jsonl").exists()
    assert (tmp_path / "outputs" / "tiny-sweep.points.jsonl").is_file()  # the finished points go to the default


# ---------------------------------------------------- 7. one run's output set, never a mix


def _run_ids(folder: Path, stem: str = "a") -> tuple[str | None, str | None]:
    """The run id of the JSON and of the workbook of one output set."""
    import openpyxl

    data = json.loads((folder / f"{stem}.json").read_text(encoding="utf-8"))
    return data.get("run_id"), openpyxl.load_workbook(folder / f"{stem}.xlsx").properties.identifier


def test_concurrent_output_sets_rename_one_after_the_other(tmp_path, monkeypatch):
    # Two sets of the same two files committed from two threads; the first rename of set A is
    # followed by a 0.5 s pause (a widened rename window), set B starts 0.1 s later. Without a lock
    # B's two renames land inside A's window: a.json from B beside a.txt from A.
    import threading
    import time

    from solver import files as io

    real = os.replace
    slow = threading.Event()

    def replace(src, dst, *args, **kwargs):
        real(src, dst, *args, **kwargs)
        if str(dst).endswith("a.json") and threading.current_thread().name == "A":
            slow.set()
            time.sleep(0.5)

    monkeypatch.setattr(os, "replace", replace)
    ids: dict[str, str] = {}

    def write(name: str) -> None:
        if name == "B":
            slow.wait(5)
        with io.output_set() as outputs:
            ids[name] = outputs.run_id
            for target in ("a.json", "a.txt"):
                with io.atomic_path(tmp_path / target) as tmp:
                    tmp.write_text(outputs.run_id, encoding="utf-8")

    threads = [threading.Thread(target=write, args=(n,), name=n) for n in ("A", "B")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    texts = {(tmp_path / f).read_text(encoding="utf-8") for f in ("a.json", "a.txt")}
    assert len(texts) == 1 and texts <= set(ids.values())  # one run's set, whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "a.txt"]  # no lock, journal or temp left


def test_concurrent_solves_to_the_same_paths_leave_one_run(tmp_path):
    # Two real `solve`s with different H100 quotes to the same JSON and workbook, three times over:
    # after each pair the JSON and the workbook carry one run id, and the price in the JSON is
    # one of the two quotes.
    plat = catalog_entry("platforms", "hgx-h100")
    for price in (200_000, 300_000):
        write_yaml(tmp_path / f"q{price}.yaml", {"name": "q", "platforms": [{**plat, "unit_price_usd": price}]})
    sc = write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    for _ in range(3):
        procs = [subprocess.Popen([sys.executable, "-m", "solver", "solve", str(sc), "--catalog", f"q{price}.yaml",
                                   "--json", "a.json", "--xlsx", "a.xlsx"], cwd=tmp_path, env=env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                 for price in (200_000, 300_000)]
        for p in procs:
            assert p.wait(120) == 0, p.stderr.read() if p.stderr else ""
        json_id, book_id = _run_ids(tmp_path)
        assert json_id is not None and json_id == book_id


KILL_BETWEEN_RENAMES = """
import os, sys
from solver import cli
real = os.replace
def replace(src, dst, *args, **kwargs):
    if str(dst).endswith("a.xlsx"):  # the JSON is renamed, the workbook not yet: die as kill -9 does
        os._exit(9)
    return real(src, dst, *args, **kwargs)
os.replace = replace
sys.exit(cli.main(sys.argv[1:]))
"""


def test_kill_between_renames_is_recognisable_and_rolled_forward(tmp_path):
    sc = write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    proc = run_cli("solve", "sc.yaml", "--json", "a.json", "--xlsx", "a.xlsx", cwd=tmp_path)
    assert_clean_exit(proc, 0)
    old_id, old_book = _run_ids(tmp_path)
    assert old_id == old_book
    killed = subprocess.run([sys.executable, "-c", KILL_BETWEEN_RENAMES, "solve", str(sc), "--json", "a.json",
                             "--xlsx", "a.xlsx"], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(REPO)},
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == 9
    new_id, book_id = _run_ids(tmp_path)
    assert new_id != old_id and book_id == old_id  # the mix a kill leaves is recognisable by the run ids
    # the next run that checks an output in this folder (here one writing b.json) finishes the set
    proc = run_cli("solve", "sc.yaml", "--json", "b.json", "--no-xlsx", cwd=tmp_path)
    assert_clean_exit(proc, 0)
    assert _run_ids(tmp_path) == (new_id, new_id)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "a.xlsx", "b.json", "sc.yaml"]


# ------------------------------------------------------------- 8. everything owned: capex $0


OWN_EVERYTHING = {"hgx-h100": 1, "cx7-ndr": 1, "qm9700": 1, "rack-42u": 2,
                  # a leaf-end module serves 2 node-leaf links (catalog: switch_end_links_per_module 2),
                  # so two owned links own one whole module: the one link the job needs costs nothing
                  "ndr-node-leaf-sr": 2}


def _network_share(path: Path, recalculated: bool = False) -> list:
    """The 'Network share of capex' values of a workbook (cached, or after LibreOffice recalculates)."""
    import openpyxl

    if recalculated:
        sys.path.insert(0, str(REPO / "tests" / "reports"))
        from office import profile, recalc

        wb = recalc(path, profile(path.parent / "lo"))
    else:
        wb = openpyxl.load_workbook(path, data_only=True)
    values = []
    for ws in wb.worksheets:
        for row in ws.iter_rows():
            if row and row[0].value == "Network share of capex":
                values += [c.value for c in row[1:] if c.value is not None]
    return values


@pytest.mark.parametrize("command", ["solve", "evaluate"])
def test_everything_owned_costs_nothing_and_says_so(tmp_path, command):
    # One 8-GPU hgx-h100 node with its NIC, switch, links and racks all owned: nothing is bought,
    # capex $0 (owned parts are priced at zero); power still counts, so TCO > 0.
    # capex_scope compute_fabric_only: the site lines (storage fabric, management switches per scalable unit,
    # on by default since the orderable-designs merge) are no part the inventory can own; this test is about
    # owned parts costing nothing, so the scenario leaves the site out.
    doc = (tiny_scenario if command == "solve" else pinned_tiny)(inventory=OWN_EVERYTHING,
                                                                  capex_scope="compute_fabric_only")
    sc = write_yaml(tmp_path / "sc.yaml", doc)
    proc = run_cli(command, sc, "--json", tmp_path / "r.json", "--xlsx", tmp_path / "r.xlsx")
    assert_clean_exit(proc, 0)
    design = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["designs"][0]
    assert design["capex_usd"] == 0 and design["tco_usd"] > 0
    assert all(line["extended_usd"] == 0 for line in design["bom"])
    assert "$0" in proc.stdout
    assert _network_share(tmp_path / "r.xlsx") == [0]


@pytest.mark.libreoffice
def test_everything_owned_workbook_recalculates_without_div0(tmp_path):
    import shutil

    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) not installed")
    # compute_fabric_only: as in test_everything_owned_costs_nothing_and_says_so (no site lines to buy)
    sc = write_yaml(tmp_path / "sc.yaml", tiny_scenario(inventory=OWN_EVERYTHING, capex_scope="compute_fabric_only"))
    proc = run_cli("solve", sc, "--json", tmp_path / "r.json", "--xlsx", tmp_path / "r.xlsx")
    assert_clean_exit(proc, 0)
    assert _network_share(tmp_path / "r.xlsx", recalculated=True) == [0]  # not #DIV/0!


# ----------------------------------------------------- 9. plan period labels: literal, bounded


def _labelled_plan(first: str, second: str) -> dict:
    doc = copy.deepcopy(TOY_PLAN)
    doc["plan"]["periods"][0]["label"] = first
    doc["plan"]["periods"][1]["label"] = second
    return doc


def test_dollar_in_a_plan_label_is_drawn_literally(tmp_path):
    # `$x^$` is malformed mathtext (it raised in matplotlib before the fix); `$5 vs $6` a valid pair
    # that would have been typeset as math. Both are drawn as written.
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    from solver.reports import plan_plot

    proc = toy_plan_cli(tmp_path, _labelled_plan("$x^$", "cost $5 vs $6"), "--json", "p.json", "--no-xlsx",
                        "--plot", "p.png")
    assert_clean_exit(proc, 0)
    assert (tmp_path / "p.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))
    texts = []
    real_close = plt.close

    def keep(fig=None):
        texts.extend(t.get_text() for t in fig.findobj(matplotlib.text.Text))
        real_close(fig)

    plt.close = keep
    try:
        plan_plot.write_plan_plot(report, tmp_path / "again.png")
    finally:
        plt.close = real_close
    labels = [t for t in texts if "x^" in t or "vs" in t]
    assert labels and all(t.count("$") == t.count(r"\$") for t in labels)  # every $ escaped: no mathtext


def test_plan_label_over_200_characters_is_a_located_error(tmp_path):
    proc = toy_plan_cli(tmp_path, _labelled_plan("year one", "y" * 2_000_000), "--json", "p.json", "--no-xlsx",
                        "--plot", "p.png")
    assert_clean_exit(proc, 2)
    assert "plan.periods[1].label" in proc.stderr and "at most 200 characters" in proc.stderr
    assert len(proc.stderr) < 2_000  # the 2 MB label is not echoed back
    assert not (tmp_path / "p.png").exists()


# --------------------------------------------------- 10. a price factor that overflows


@pytest.mark.parametrize("plan, where, factor", [
    # 11^(1·50) = 1.17e52 by period 1 (with 3 periods HiGHS failed on 11^100: exit 3)
    ({"periods": 3, "period_years": 50, "price_change_per_year": {"compute": 10}}, "plan.price_change_per_year.compute",
     "1.17e+52 by period 1"),
    # the same change over 20 periods: 11^(19·50) overflows a float (an internal error before)
    ({"periods": 20, "period_years": 50, "price_change_per_year": {"compute": 10}}, "plan.price_change_per_year.compute",
     "1.17e+52 by period 1"),
    # 0.01^(1·10) = 1e-20 by period 1
    ({"periods": 2, "period_years": 10, "price_change_per_year": {"switch": -0.99}}, "plan.price_change_per_year.switch",
     "1e-20 by period 1"),
    # 2^-(19·50): the last period discounted to nothing
    ({"periods": 20, "period_years": 50, "discount_rate": 1.0}, "plan.discount_rate", None),
])
def test_price_factor_out_of_range_is_a_located_error(tmp_path, plan, where, factor):
    doc = copy.deepcopy(TOY_PLAN)
    doc["plan"] = plan
    proc = toy_plan_cli(tmp_path, doc, "--json", "p.json", "--no-xlsx", "--no-plot")
    assert_clean_exit(proc, 2)
    err = flat(proc.stderr)
    assert f"{where}:" in err
    if factor:
        assert f"price factor of {factor}" in err and "between 1e-06 and 1e+06" in err
    else:
        assert "by a factor below 1e-06" in err
    assert not (tmp_path / "p.json").exists()


# ------------------------------------------- 11. closed, full or broken standard output


def _with_stdout(args: list, stdout, tmp_path: Path, close: bool = False) -> subprocess.CompletedProcess:
    """The CLI with its standard output replaced (a file object), or closed (`>&-`)."""
    return subprocess.run([sys.executable, "-m", "solver", *map(str, args)], cwd=tmp_path, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)},
                          preexec_fn=(lambda: os.close(1)) if close else None)


def test_json_to_a_closed_stdout_is_an_output_error(tmp_path):
    sc = write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    for args in (["solve", sc, "--json", "-", "--no-xlsx"], ["catalog", "--json"]):
        proc = _with_stdout(args, None, tmp_path, close=True)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
        assert "standard output is closed, so the JSON cannot be written there" in proc.stderr
    # the files are the result: a closed stdout only drops the terminal text
    proc = _with_stdout(["solve", sc, "--json", "r.json", "--no-xlsx"], None, tmp_path, close=True)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["status"] == "optimal"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_full_stdout_is_an_output_error_naming_it(tmp_path):
    sc = write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    for args in (["solve", sc, "--json", "-", "--no-xlsx"], ["solve", sc, "--json", "r.json", "--no-xlsx"],
                 ["catalog", "--json"], ["catalog"]):
        with open("/dev/full", "w") as full:
            proc = _with_stdout(args, full, tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
        assert "error: standard output: cannot write: No space left on device" in proc.stderr
    proc = run_cli("solve", sc, "--json", "/dev/full", "--no-xlsx", cwd=tmp_path)
    assert_clean_exit(proc, 2)
    assert "/dev/full: is a character device, not a regular file" in proc.stderr


def test_broken_pipe_on_stdout_is_an_output_error(tmp_path):
    # The reader closes the pipe before `catalog --json` (≈ 100 KB) writes: EPIPE (Python ignores SIGPIPE).
    proc = subprocess.Popen([sys.executable, "-m", "solver", "catalog", "--json"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(120) == 2, err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert "error: standard output: cannot write: Broken pipe" in err


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_output_held_until_the_command_ends_fails_as_an_output_error(tmp_path):
    """A command whose last output is still in the stream's buffer when it returns: the flush fails in `main`, named,
    exit 2 (the console entry then leaves without the interpreter's own exit flush, `cli.run`)."""
    code = ("import sys\nfrom solver import cli\n"
            "def held(args, out, err):\n    sys.stdout.write('ten chars!')\n    return 0\n"
            "cli._COMMANDS['validate'] = held\nsys.argv = ['fabricplan', 'validate', 'sc.yaml']\ncli.run()\n")
    write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, stdout=full, stderr=subprocess.PIPE, text=True,
                              timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2, proc.stderr
    assert "error: standard output: cannot write: No space left on device" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_full_disk_while_writing_the_json_names_the_file(tmp_path, monkeypatch, capsys):
    import errno

    from solver import cli

    sc = write_yaml(tmp_path / "sc.yaml", tiny_scenario())
    out = tmp_path / "r.json"
    out.write_text("earlier", encoding="utf-8")
    real = Path.write_text

    def full(self, *args, **kwargs):
        if self.name.startswith(".r.json."):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full)
    code = cli.main(["solve", str(sc), "--json", str(out), "--no-xlsx"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"error: {out}: cannot write: No space left on device" in flat(err)
    assert out.read_text(encoding="utf-8") == "earlier"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "sc.yaml"]


# --------------------------------------- 12. one time limit and a memory bound for a plan


def _big_plan(tmp_path: Path):
    """bench dense-1k as a 3-period plan (batch × 1.5 per period) on the default catalog plus 10
    perturbed copies of every platform and NIC (bench/synth_catalog.py; 99 platforms, 44 NICs)."""
    sys.path.insert(0, str(REPO / "bench"))
    from synth_catalog import write_overlay

    from solver import inputs

    overlay = write_overlay(tmp_path, copies=10)
    doc = yaml.safe_load((REPO / "bench" / "scenarios" / "dense-1k.yaml").read_text(encoding="utf-8"))
    doc.update(name="dense-1k-plan", plan={"periods": 3, "growth": [{"path": "workload.global_batch_size",
                                                                      "factor": 1.5}]})
    doc.pop("top_k", None)
    path = write_yaml(tmp_path / "plan.yaml", doc)
    ls = api.load_scenario(path)
    return path, overlay, ls, api.catalog_for(ls, [inputs.default_catalog_path(), overlay])


def test_plan_time_limit_bounds_design_spaces_plan_and_comparisons(tmp_path):
    # Before: each period's design space was unbounded and each of the 1 + 3 + 1 MILPs got the full
    # limit (the issue: `plan --time-limit 3` on a large catalog ran 276 s). Now one deadline covers
    # everything after the inputs are checked: the whole plan ends within the limit plus a second
    # and a half of slack (evaluating what was found, HiGHS's last floor, a loaded machine).
    from solver.errors import SolverFailure

    _, _, ls, cat = _big_plan(tmp_path)
    import time

    for limit_s in (3.0, 8.0):
        start = time.perf_counter()
        try:
            result = api.plan(ls, cat, time_limit_s=limit_s)
        except SolverFailure as exc:
            assert "time limit" in str(exc) and "allow more time" in str(exc)
            result = None
        elapsed = time.perf_counter() - start
        assert elapsed < limit_s + 1.5, (limit_s, elapsed)
        if result is not None:
            report = result.to_dict()
            assert report["status"] in ("optimal", "feasible", "time_limit")
            statuses = [p["status"] for p in report["comparison"]["from_scratch"]["periods"]]
            statuses.append(report["comparison"]["up_front"]["status"])
            assert set(statuses) <= {"optimal", "feasible", "time_limit", "not computed"}


def test_plan_with_a_time_limit_on_a_large_catalog_stays_in_bounded_memory(tmp_path):
    # The CLI as a grandchild: a wrapper process runs it and prints its own children's peak resident
    # memory (ru_maxrss, KiB on Linux), so earlier tests' children (LibreOffice, other solves) do not count.
    # Before: 1.25 GB per the issue; now ≈ 115 MB measured (limit 10 s): 400 MB is the bound here.
    path, overlay, _, _ = _big_plan(tmp_path)
    wrapper = ("import resource, subprocess, sys; "
               "code = subprocess.run([sys.executable, '-m', 'solver', *sys.argv[1:]]).returncode; "
               "print('PEAK_KIB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
               "sys.exit(code)")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", wrapper, "plan", str(path), "--catalog", str(overlay), "--json",
                           "p.json", "--no-xlsx", "--no-plot", "--time-limit", "8"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode in (0, 3), proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    peak_kib = int(proc.stderr.rsplit("PEAK_KIB", 1)[1].split()[0])
    assert 0 < peak_kib < 400 * 1024


def test_plan_design_spaces_over_the_point_cap_fail_clearly(tmp_path, monkeypatch, capsys):
    # The cap (plan.run.MAX_PLAN_POINTS, 2,000,000) lowered to 1 point: the toy plan's first
    # period already has more, so the plan stops before building any MILP, with what to do.
    from solver import cli
    from solver.plan import run

    monkeypatch.setattr(run, "MAX_PLAN_POINTS", 1)
    path = write_yaml(tmp_path / "plan.yaml", TOY_PLAN)
    code = cli.main(["plan", str(path), "--no-default-catalog", "--catalog", str(TOY_CATALOG), "--json",
                     str(tmp_path / "p.json"), "--no-xlsx", "--no-plot"])
    err = flat(capsys.readouterr().err)
    assert code == 3, err
    assert "the plan's design spaces hold more than 1 points by period" in err
    assert "too many to plan in bounded memory; narrow the allow-lists" in err
    assert not (tmp_path / "p.json").exists()


def test_plan_comparisons_left_without_time_say_not_computed(tmp_path, monkeypatch):
    # The whole budget is reported used up once the plan's own MILP is solved (Deadline.expired()
    # for the full budget returns True; the design-space share is untouched): every comparison is
    # "not computed", with no numbers, and the plan itself is reported.
    from solver import deadline

    real = deadline.Deadline.expired
    monkeypatch.setattr(deadline.Deadline, "expired",
                        lambda self, stage=None: (self.seconds is not None and stage is None) or real(self, stage))
    ls = api.load_scenario(write_yaml(tmp_path / "plan.yaml", TOY_PLAN))
    cat = api.catalog_for(ls, [TOY_CATALOG], default=False)
    report = api.plan(ls, cat, time_limit_s=30).to_dict()
    assert [round(p["capex_usd"]) for p in report["periods"]] == [161_000, 160_000]
    scratch, up = report["comparison"]["from_scratch"], report["comparison"]["up_front"]
    assert [p["status"] for p in scratch["periods"]] == ["not computed", "not computed"]
    assert scratch["discounted_usd"] is None and up["status"] == "not computed" and "discounted_usd" not in up
    assert "time limit ran out" in up["explanation"]


# ------------------------------------------- 13. aliases that expand to huge strings


def test_aliases_of_a_large_string_are_a_located_error(tmp_path):
    # A 1 MiB string anchored once and aliased by 30 entries: 31 MiB of text once expanded (over the
    # 20 MiB budget) from a 1 MiB file with 31 values (far under the 200,000-value budget).
    big = "x" * (1024 * 1024)
    lines = ["name: bomb", f"description: &big {big}", "platforms:"]
    lines += [f"  - id: p{i}\n    name: *big" for i in range(30)]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text("\n".join(lines) + "\n", encoding="utf-8")
    import time

    start = time.perf_counter()
    for args in (["validate", bomb], ["catalog", "--json", "--catalog", bomb]):
        proc = run_cli(*args, cwd=tmp_path)
        assert_clean_exit(proc, 2)
        assert f"{bomb}:2:14: this value (1.0 MiB) is repeated 31 times through aliases" in proc.stderr
        assert "expands to 31 MiB of text, over the 20 MiB limit" in proc.stderr
    assert time.perf_counter() - start < 60


def test_aliases_of_small_values_still_load(tmp_path):
    # 300 platforms sharing one list (R2's safe_dump case) and one short string aliased 300 times.
    plat = catalog_entry("platforms", "hgx-h100")
    shared = plat["rails_per_node_options"]
    plats = [{**plat, "id": f"h100-{i}", "rails_per_node_options": shared} for i in range(300)]
    text = yaml.safe_dump({"name": "many", "platforms": plats}, sort_keys=False)
    assert text.count("*id") >= 299  # safe_dump wrote aliases
    path = tmp_path / "many.yaml"
    path.write_text(text, encoding="utf-8")
    proc = run_cli("validate", path, cwd=tmp_path)
    assert_clean_exit(proc, 0)


# ------------------------------------------------------------------- 14. the minor items


def test_plot_warnings_never_reach_stderr(tmp_path):
    # ESC, CJK and an emoji in plan labels: DejaVu Sans has none of them, so matplotlib warned once
    # per glyph on stderr, the ESC raw. Now the plot is drawn quietly (the ESC shown as text).
    doc = _labelled_plan("\x1b[31mred 中文", "\U0001F600 two")
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True), encoding="utf-8")
    proc = run_cli("plan", path, "--no-default-catalog", "--catalog", TOY_CATALOG, "--json", "p.json", "--no-xlsx",
                   "--plot", "p.png", cwd=tmp_path)
    assert_clean_exit(proc, 0)
    assert "Glyph" not in proc.stderr and "UserWarning" not in proc.stderr
    assert "\x1b" not in proc.stderr + proc.stdout


def test_zero_periods_is_one_message(tmp_path):
    doc = copy.deepcopy(TOY_PLAN)
    doc["plan"] = {"periods": 0}
    proc = toy_plan_cli(tmp_path, doc, "--json", "p.json", "--no-xlsx", "--no-plot")
    assert_clean_exit(proc, 2)
    assert proc.stderr.count("plan.periods:") == 1 and "greater than or equal to 1" in proc.stderr
    assert "1 problem(s) found" in proc.stderr


def test_scenario_quote_beating_a_catalog_flag_quote_is_warned(tmp_path):
    (tmp_path / "q.yaml").write_text("name: acme\nnics:\n  - id: cx7-ndr\n    unit_price_usd: 1234\n"
                                     "    price_source: ACME\n    price_date: '2026-11'\n", encoding="utf-8")
    (tmp_path / "s.yaml").write_text("name: other\nnics:\n  - id: cx7-ndr\n    unit_price_usd: 999\n"
                                     "    price_source: Other\n    price_date: '2026-10'\n", encoding="utf-8")
    sc = write_yaml(tmp_path / "sc.yaml", tiny_scenario(catalog=["s.yaml"]))
    proc = run_cli("solve", sc, "--catalog", "q.yaml", "--json", "r.json", "--no-xlsx", cwd=tmp_path)
    assert_clean_exit(proc, 0)
    err = flat(proc.stderr)
    assert f"warning: nics.cx7-ndr: the scenario's catalog file {tmp_path / 's.yaml'} overrides the --catalog file q.yaml" \
        in err
    nic = next(x for x in json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["designs"][0]["bom"]
               if x["part"] == "cx7-ndr")
    assert nic["unit_price_usd"] == 999  # the scenario's (layered last), as the warning says
    proc = run_cli("--verbose", "solve", sc, "--catalog", "q.yaml", "--json", "r.json", "--no-xlsx", cwd=tmp_path)
    assert f"override: nics.cx7-ndr: {tmp_path / 's.yaml'} overrides q.yaml" in flat(proc.stderr)


def test_two_growth_rules_on_one_path_are_an_error(tmp_path):
    doc = copy.deepcopy(TOY_PLAN)
    doc["plan"] = {"periods": 2, "growth": [{"path": "workload.global_batch_size", "factor": 1.5},
                                            {"path": "workload.global_batch_size", "factor": 2}]}
    proc = toy_plan_cli(tmp_path, doc, "--json", "p.json", "--no-xlsx", "--no-plot")
    assert_clean_exit(proc, 2)
    assert "plan.growth[1].path: a second growth rule for workload.global_batch_size (the first is plan.growth[0])" \
        in flat(proc.stderr)


@pytest.mark.parametrize("key", ["fabrics", "platforms", "nics", "rails_per_node", "oversubscription"])
def test_empty_allow_list_is_an_error_not_all(tmp_path, key):
    sc = tiny_scenario()
    sc["constraints"][key] = []
    proc = run_cli("validate", write_yaml(tmp_path / "sc.yaml", sc))
    assert_clean_exit(proc, 2)
    assert f"constraints.{key}: must list at least one value (an empty list does not mean all" in flat(proc.stderr)


def test_partial_pin_of_above_pod_oversubscription_is_honoured(tmp_path):
    # Only the platform and a 7:1 tier above the pods are pinned; the one-node job would otherwise
    # be a 1-tier fabric (no tier above the pods). Now it is built with 3 tiers, 7:1 above the pods,
    # and costs exactly what the fully pinned evaluate of the same design costs.
    partial = tiny_scenario(pin={"platform": "hgx-h100", "above_pod_oversubscription": 7})
    proc = run_cli("evaluate", write_yaml(tmp_path / "p.yaml", partial), "--json", tmp_path / "p.json", "--no-xlsx")
    assert_clean_exit(proc, 0)
    got = json.loads((tmp_path / "p.json").read_text(encoding="utf-8"))["designs"][0]
    assert got["architecture"].endswith("3-tier, 7:1 above the pods")
    lay = got["parallelism"]
    full = pinned_tiny()
    full["pin"].update(above_pod_oversubscription=7, dp=lay["dp"], tp=lay["tp"], pp=lay["pp"], cp=lay["cp"],
                       vp=lay["vp"], microbatch_size=lay["microbatch_size"])
    proc = run_cli("evaluate", write_yaml(tmp_path / "f.yaml", full), "--json", tmp_path / "f.json", "--no-xlsx")
    assert_clean_exit(proc, 0)
    ref = json.loads((tmp_path / "f.json").read_text(encoding="utf-8"))["designs"][0]
    assert ref["architecture"] == got["architecture"]
    assert got["capex_usd"] == pytest.approx(ref["capex_usd"], abs=0.01)


def test_plan_workbook_caches_every_total(tmp_path):
    # pandas (and any reader without a spreadsheet application) read None for every formula before;
    # now each live total caches the ledger's value: $161,000 + $160,000 = $321,000 (toy plan).
    import pandas as pd

    proc = toy_plan_cli(tmp_path, TOY_PLAN, "--json", "p.json", "--xlsx", "p.xlsx", "--no-plot")
    assert_clean_exit(proc, 0)
    sheet = pd.read_excel(tmp_path / "p.xlsx", sheet_name=None, header=None)
    cells = {str(row[0]): list(row[1:]) for df in sheet.values() for row in df.itertuples(index=False)}
    assert cells["Discounted total (USD)"][0] == pytest.approx(321_000)
    assert cells["Spend total, undiscounted (USD)"][0] == pytest.approx(321_000)
    capex_row = cells["Capex (USD)"]
    assert [round(x) for x in capex_row[:2]] == [161_000, 160_000]
