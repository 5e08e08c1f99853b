"""A design's figures, one registry (`solver.figures`, issue 26 item 6): each figure read off the design's JSON equals
the design's own number, each unit formats as docs say, and the tables, workbooks, sweep rows and `SolveResult.table()`
take their figures from it (the solve table gained the fabric family it lacked)."""
from __future__ import annotations

import copy
import io
from dataclasses import replace

import pytest
from rich.console import Console

import solver
from solver import api
from solver.figures import FIGURES, UNITS, figure, figures_of
from solver.reports.compare_excel import ROWS, build_compare_workbook
from solver.reports.compare_terminal import COMPARE_ROWS
from solver.reports.sweep_excel import SWEEP_COLUMNS
from solver.reports.terminal import differs_from_first, solve_table
from solver.results import TABLE_FIGURES
from solver.sweep.summary import ROW_FIGURES, point_summary
from tests.test_planner3_details import ROOT


@pytest.fixture(scope="module")
def solved():
    """llama3-405b's five designs: #1 a multi-plane GB300 NVL72, #2 the same parts as a fat tree."""
    ls = solver.load_scenario(ROOT / "scenarios" / "llama3-405b.yaml")
    return ls, api.solve(ls, api.catalog_for(ls))


@pytest.mark.parametrize("unit, value, text", [
    ("count", 2096, "2,096"), ("usd", 103_819_200.4, "$103,819,200"), ("usd_cents", 0.19713, "$0.20"),
    ("s", 2.4636, "2.46"), ("fraction", 0.35575, "35.6%"), ("kw", 5026.125, "5,026"), ("days", 12.34, "12.3"),
    ("ratio", 0.6089, "0.61"), ("text", "fat-tree", "fat-tree")])
def test_each_unit_formats_as_documented(unit, value, text):
    f = next(f for f in FIGURES.values() if f.unit == unit) if unit != "usd_cents" else None
    assert UNITS[unit][1](value) == text
    if f is not None:
        assert f.format(value) == text and f.format(None) == ""


def test_each_figure_is_the_designs_own_number(solved):
    _, result = solved
    for d in result.designs:
        js = d.to_dict()
        got = figures_of(js, list(FIGURES))
        c, p = d.cost, d.perf
        assert got["architecture"] == d.label and got["platform"] == d.architecture.platform
        assert got["fabric"] == d.architecture.fabric
        assert (got["gpus"], got["nodes"], got["racks"]) == (c.gpus, c.nodes, c.racks)
        assert (got["step_time_s"], got["mfu"]) == (p.step_time_s, p.mfu)
        assert got["target_step_time_s"] == d.target_step_time_s == 9.0  # the scenario's target
        assert got["train_days"] == d.train_days
        assert got["goodput"] == d.goodput
        assert got["facility_power_kw"] == c.facility_power_kw
        assert (got["capex_usd"], got["tco_usd"]) == (c.capex_usd, c.tco_usd)
        assert got["cost_per_gpu_usd"] == pytest.approx(c.capex_usd / c.gpus, rel=1e-15)
        # $ per sustained model PFLOP/s: capex / (F_model / step / 1e15)
        assert got["capex_usd_per_pflop_s"] == pytest.approx(c.capex_usd / (p.flops_model / p.step_time_s / 1e15),
                                                             rel=1e-12)
        fab = c.fabric
        assert got["switches"] == sum(fab.switches.values())
        assert got["network_load"] == d.network_load["value"]


def test_the_reports_take_their_figures_from_the_registry(solved):
    ls, result = solved
    assert {f.key for f in ROWS} <= set(FIGURES)
    wb = build_compare_workbook([result], ["a.yaml"])
    labels = [c.value for c in wb["Compare"]["A"]]
    assert all(f.label in labels for f in ROWS)
    assert all(figure(k).header in COMPARE_ROWS for k in ("gpus", "nodes", "mfu", "capex_usd", "cost_per_gpu_usd"))
    assert [f.label for f in SWEEP_COLUMNS[:-1]] == [FIGURES[k].label for k in ("gpus", "step_time_s", "mfu", "goodput",
                                                                               "capex_usd", "tco_usd",
                                                                               "capex_usd_per_pflop_s")]
    design = result.designs[0].to_dict()
    row = point_summary(design, ls.scenario.model_dump())
    assert {k: row[k] for k in ROW_FIGURES} == figures_of(design, ROW_FIGURES)
    table = result.table()
    # the columns before the registry (rank, architecture, platform, the parts, the layout, …), the fabric family added
    assert list(table.columns) == ["rank", "architecture", "fabric", "platform", "nic", "rails_per_node", "switch",
                                   "tiers", "oversubscription", "gpus", "nodes", "tp", "cp", "pp", "vp", "dp",
                                   "microbatch_size", "ep", "etp", "step_time_s", "mfu", "capex_usd", "tco_usd",
                                   "facility_power_kw", "racks"]
    assert set(TABLE_FIGURES) <= set(table.columns)
    assert list(table["fabric"]) == [d.architecture.fabric for d in result.designs]


def test_the_solve_table_shows_the_fabric_family(solved):
    _, result = solved
    out = io.StringIO()
    Console(file=out, width=400, color_system=None).print(solve_table(result, 400))
    header = next(line for line in out.getvalue().splitlines() if "architecture" in line)
    assert header.rstrip(" ┃│").endswith("fabric")
    assert "multi-plane" in out.getvalue() and "fat-tree" in out.getvalue()


def test_differs_from_first_names_the_fabric_family(solved):
    """#2 has #1's parts on a fat tree instead of a multi-plane fat tree: not "same design, other layout"."""
    _, result = solved
    first, second = result.designs[:2]
    assert (first.architecture.fabric, second.architecture.fabric) == ("multi-plane", "fat-tree")
    assert "fat-tree" in differs_from_first(second, first).split("; ")
    # the same design with its tier above the pods 2:1 (a made-up twin): the oversubscription is named
    pods = copy.copy(second)
    object.__setattr__(pods, "architecture", replace(second.architecture, above_pod_oversubscription=2.0))
    assert differs_from_first(pods, second) == "2:1 above the pods"
