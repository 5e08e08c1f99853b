"""One confidence statement per design (issue 41 item 4, solver/confidence.py): the same words in the JSON, the
terminal, the Summary sheet and the compare outputs; every flag a buyer must read is in it; a buyer's calibrate
overlay is named with the GPUs and stacks it covers."""
from __future__ import annotations

import copy

from conftest import GPT3_1_3B
from openpyxl import Workbook
from rich.console import Console

import solver
from solver.api import solve
from solver.confidence import confidence, overlay_note
from solver.inputs.catalog import default_catalog_path, load_catalog

SPACE = dict(name="confidence", workload=dict(model=GPT3_1_3B, global_batch_size=512),
             target=dict(step_time_s=2.0),
             constraints=dict(platforms=["hgx-h100", "hgx-b200"], rails_per_node=[1, 8]),
             parallelism=dict(tp=[1, 2], cp=1, pp=1, vp=1, microbatch_size=[1, 2]))


def _result(catalog):
    return solve(solver.load_scenario(copy.deepcopy(SPACE)), catalog, top_k=3)


def test_the_statement_reads_the_same_everywhere(default_catalog):
    from solver.reports.summary_sheet import _uncertainty_rows, orderable_rows
    from solver.reports.terminal import print_solve

    result = _result(default_catalog)
    assert result.designs
    console = Console(width=200, record=True, force_terminal=False)
    print_solve(result, console)
    text = console.export_text()
    for d in result.designs:
        conf = confidence(d)
        js = d.to_dict()["confidence"]
        assert js["statement"] == conf.statement() and js["flags"] == list(conf.flags)
        assert conf.statement() in text  # the terminal prints the same words
        for flag in conf.flags:
            assert flag in text
        # the flags are every coverage flag and every caveat, each once
        assert set(conf.flags) == set(d.uncalibrated) | set(d.caveats)
        lo, hi = js["step_time_interval_s"]
        assert lo < d.perf.step_time_s < hi and js["runs"] >= 4 and js["sources"] >= 2
        rows = {r[0]: r[2] for r in _uncertainty_rows(d) + orderable_rows(d)}  # the Summary sheet's rows
        assert rows["caveats"] == conf.flags_text()
        assert (rows["step_p10"], rows["step_p90"]) == conf.interval_s
    # the workbook's Assumptions sheet carries each statement and flag verbatim
    from solver.reports.excel import build_workbook

    wb = build_workbook(result, solver.load_scenario(copy.deepcopy(SPACE)), default_catalog)
    texts = {c.value for c in wb["Assumptions"]["D"] if isinstance(c.value, str)}
    for d in result.designs:
        conf = confidence(d)
        assert conf.statement() in texts and set(conf.flags) <= texts


def test_an_overlay_is_named_with_what_it_covers(tmp_path, default_catalog):
    """A calibrate overlay that fitted H100's GPU-level parameters: an H100 design's statement names the overlay and
    says it covers the design; a B200 design's says it does not (the shipped calibration applies)."""
    overlay = tmp_path / "calibrated-my-runs.yaml"
    overlay.write_text("name: calibrated-my-runs\ngpus:\n- id: h100-sxm\n  compute_efficiency_source: 'fabricplan "
                       "calibrate on my-runs.csv (6 runs of stack ''megatron'', 2026-12-06); leave-one-out median "
                       "|error| 3.0%'\n", encoding="utf-8")
    catalog = load_catalog([default_catalog_path(), overlay])
    inside = overlay_note(catalog, "h100-sxm", "megatron")
    assert "calibrated-my-runs.yaml" in inside and "GPUs h100-sxm" in inside and "covers this design" in inside
    outside = overlay_note(catalog, "b200", "megatron")
    assert "does not cover b200 · megatron" in outside
    assert overlay_note(default_catalog, "h100-sxm", "megatron") == ""
    result = _result(catalog)
    for d in result.designs:
        assert "calibrated-my-runs.yaml" in confidence(d).statement()


def test_the_compare_workbook_lists_each_best_designs_statement_and_flags(default_catalog):
    from solver.reports.compare_excel import build_compare_workbook

    result = _result(default_catalog)
    wb: Workbook = build_compare_workbook([result], ["a.yaml"])
    cells = [c.value for row in wb.active.iter_rows() for c in row if isinstance(c.value, str)]
    assert f"a.yaml: #1 confidence: {confidence(result.designs[0]).statement()}" in cells


def test_the_shipped_deepseek_v3_example_shows_its_bias_flag(default_catalog):
    """The shipped deepseek-v3 example (MXFP8 MoE on GB200): its interval comes from MoE runs only, and the
    statement carries the bias flag exactly when the MoE held-out runs of its regime are ≥ 10 % off on the median
    (physics v3 printed "±8 %, 8 runs" of dense rows and no flag). Issue 41 (trust v4): −15 %, flagged; issue 41p
    (shape-aware GEMM efficiency): the 26 runs' median is −7.8 % in solver/perf/residuals.yaml, so no flag."""
    import statistics

    import yaml
    from conftest import REPO

    result = solve(solver.load_scenario(REPO / "scenarios" / "deepseek-v3.yaml"), default_catalog, top_k=1)
    conf = confidence(result.designs[0])
    assert conf.regime.used == "moe·megatron·gb200·fp8·compute" and conf.regime.rows >= 10
    table = yaml.safe_load((REPO / "solver" / "perf" / "residuals.yaml").read_text(encoding="utf-8"))["rows"]
    errors = [r["error"] for r in table if (r["family"], r["stack"], r["gpu"], r["precision"], r["term"])
              == ("moe", "megatron", "gb200", "fp8", "compute")]
    biased = abs(statistics.median(errors)) >= 0.10
    assert biased == any("the model is biased in moe·" in f for f in conf.flags)
    assert not biased  # issue 41p: −7.8 %


def test_the_overlay_mark_is_what_calibrate_writes():
    """overlay_note finds a buyer's overlay by the provenance string calibration/overlay.py writes into every fitted
    entry; the two stay in step."""
    import inspect

    from solver.calibration import overlay
    from solver.confidence import OVERLAY_MARK

    assert f'f"{OVERLAY_MARK}' in inspect.getsource(overlay._provenance)
