"""A large build split between this process and a helper process (`design_space.parallel`, issue 26): about half the
platforms are scanned by the helper (`build._split`), each process with its own UB_K, and what the helper made is
taken in. Checked against the serial build of the same scenario (PARALLEL_MIN_SIZE lowered so that the shipped
scenarios use the helper): without a bound the shapes are the same, shape by shape, with the same counts; with one
the K best designs and the next faster design are the same; a helper that died is replaced by a scan here."""
from __future__ import annotations

from pathlib import Path

import pytest

import solver
from solver.design_space import build_design_space, parallel

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(parallel.cores() < 2 or not parallel.sys.platform.startswith("linux"),
                                reason="the helper needs two cores and fork")


@pytest.fixture
def split(monkeypatch):
    """Every build uses the helper; stopped after the test."""
    monkeypatch.setattr(parallel, "PARALLEL_MIN_SIZE", 0)
    monkeypatch.delenv("FABRICPLAN_SERIAL", raising=False)
    yield
    parallel.forget()


def _serial(monkeypatch):
    monkeypatch.setattr(parallel, "PARALLEL_MIN_SIZE", 10**12)


def _shapes(space) -> list[tuple]:
    return [(s.key, s.perfs, s.d_values, s.domains, s.step_time_s, s.mem, s.conditions) for s in space.shapes]


def _ranked(result) -> list[tuple]:
    return [(d.identity, d.layout, round(d.objective_usd, 2), d.perf.step_time_s) for d in result.designs]


@pytest.mark.parametrize("name, layout_per_cost", [("llama3-405b", True), ("capped-budget-power", False),
                                                   ("deepseek-v3", True)])
def test_without_a_bound_the_shapes_are_the_serial_builds(default_catalog, split, monkeypatch, name, layout_per_cost):
    sc = solver.load_scenario(ROOT / "scenarios" / f"{name}.yaml").scenario
    both = build_design_space(sc, default_catalog, "dominated", one_layout_per_cost=layout_per_cost)
    assert parallel._HELPER is not None and parallel._HELPER.alive()  # the helper made half of it
    _serial(monkeypatch)
    alone = build_design_space(sc, default_catalog, "dominated", one_layout_per_cost=layout_per_cost)
    assert _shapes(both) == _shapes(alone)
    assert both.pruned == alone.pruned and both.combinations == alone.combinations
    assert both.leanest == alone.leanest
    # the fastest reachable point is recorded until some point meets the target (it explains an infeasible target
    # only): each process stops recording at its own first such point
    met = [space.fastest[0] <= space.target_step_time_s for space in (both, alone)]
    assert met[0] == met[1] and (met[0] or both.fastest == alone.fastest)
    assert [a.identity(1) for a in both.architectures] == [a.identity(1) for a in alone.architectures]


@pytest.mark.parametrize("name", ["llama3-405b", "frontier-100k", "budget-60m-fastest", "capped-budget-power"])
def test_the_k_best_and_the_next_faster_design_are_the_serial_ones(default_catalog, split, monkeypatch, name):
    """With a cost bound (or `fastest`'s step bound) the helper and this process cut different points, not the
    K best; the next faster design's build reuses the helper's scan memo (the same memo token). A split build is the
    same every time it runs."""
    from solver.optimize.frontier import next_faster

    ls = solver.load_scenario(ROOT / "scenarios" / f"{name}.yaml")
    both = solver.solve(ls, default_catalog, top_k=5)
    assert both.space_memo is not None and both.space_memo.token is not None
    again = build_design_space(ls.scenario, default_catalog, "dominated", top_k=5)
    assert _shapes(again) == _shapes(build_design_space(ls.scenario, default_catalog, "dominated", top_k=5))
    faster_both = next_faster(both, ls, default_catalog)
    _serial(monkeypatch)
    ls = solver.load_scenario(ROOT / "scenarios" / f"{name}.yaml")
    alone = solver.solve(ls, default_catalog, top_k=5)
    faster_alone = next_faster(alone, ls, default_catalog)
    assert _ranked(both) == _ranked(alone)
    for nf in (faster_both, faster_alone):
        if nf is not None:
            nf.pop("time_s")
    assert faster_both == faster_alone


def test_a_dead_helper_is_replaced_by_a_scan_here(default_catalog, split, monkeypatch):
    sc = solver.load_scenario(ROOT / "scenarios" / "llama3-405b.yaml").scenario
    first = build_design_space(sc, default_catalog, "dominated")
    helper = parallel._HELPER
    assert helper is not None
    helper._process.kill()
    helper._process.join(5)
    again = build_design_space(sc, default_catalog, "dominated")  # a new helper: the dead one is not alive
    assert parallel._HELPER is not helper
    assert _shapes(again) == _shapes(first)
    # a helper that dies while the build waits for it: its platforms are scanned here
    dying = parallel._HELPER
    assert dying is not None
    monkeypatch.setattr(parallel.Helper, "send", lambda self, request: (self._process.kill(), True)[1])
    third = build_design_space(sc, default_catalog, "dominated")
    assert _shapes(third) == _shapes(first)
    assert parallel._HELPER is None  # forgotten: the next build starts another


def test_small_builds_and_other_threads_stay_here(default_catalog, monkeypatch):
    assert parallel.helper_for(default_catalog, parallel.PARALLEL_MIN_SIZE - 1, lambda *a: None) is None
    monkeypatch.setenv("FABRICPLAN_SERIAL", "1")
    assert parallel.helper_for(default_catalog, 10**9, lambda *a: None) is None
    monkeypatch.delenv("FABRICPLAN_SERIAL")
    import threading

    seen = []
    worker = threading.Thread(target=lambda: seen.append(parallel.helper_for(default_catalog, 10**9, lambda *a: None)))
    worker.start()
    worker.join()
    assert seen == [None]


def test_an_unmet_target_records_the_serial_fastest_point(default_catalog, split, monkeypatch):
    """No point meets 10 ms: every process records its fastest reachable point, and the faster of the two is the
    serial build's (the explanation of an infeasible target names it)."""
    from solver.optimize.frontier import lowered_target

    sc = lowered_target(solver.load_scenario(ROOT / "scenarios" / "llama3-405b.yaml").scenario, 0.01)
    both = build_design_space(sc, default_catalog, "dominated")
    _serial(monkeypatch)
    alone = build_design_space(sc, default_catalog, "dominated")
    assert both.shapes == [] == alone.shapes
    assert both.fastest == alone.fastest and both.fastest[0] > 0.01


def test_platforms_that_share_their_scans_go_to_one_process(tmp_path):
    """The 4× bench catalog (bench/synth_catalog.py): each shipped platform and its three price copies go to one
    process; the groups alternate, most promising first, to the process with fewer platforms."""
    import sys

    from solver.design_space.build import _most_promising_first, _split

    sys.path.insert(0, str(ROOT / "bench"))
    import synth_catalog

    cat = solver.load_catalog([ROOT / "catalogs" / "default.yaml", synth_catalog.write_overlay(tmp_path)])
    platforms = cat.by_id("platforms")
    ls = solver.load_scenario(ROOT / "scenarios" / "llama3-70b.yaml")
    order = _most_promising_first(ls.scenario, cat, sorted(platforms))
    mine, theirs = _split(order, platforms)
    assert sorted(mine + theirs) == sorted(order) and not set(mine) & set(theirs)
    for plat_id in platforms:
        base = plat_id.rsplit("-s", 1)[0] if plat_id[-3:-1] == "-s" else plat_id
        side = mine if plat_id in mine else theirs
        assert all(copy in side for copy in [base] + [f"{base}-s{i}" for i in (1, 2, 3)])
    assert len(mine) - len(theirs) in (0, 4)  # nine groups of four
    assert mine == [p for p in order if p in mine] and theirs == [p for p in order if p in theirs]


class _Unpicklable(Exception):
    """An exception whose pickled form does not rebuild it (as `errors.InputError`'s list of problems does not)."""

    def __init__(self, problems: list, where: str):
        super().__init__(f"{len(problems)} problems in {where}")


def test_a_helper_that_raises_is_replaced_by_a_scan_here(default_catalog, split, monkeypatch):
    """The helper's exception is not sent back as itself (not every exception survives the pipe): its platforms are
    scanned here, where a real error would be raised with its own type and text."""
    from solver.design_space import build

    def failing(catalog, memos, request):
        raise _Unpicklable([1, 2], "the helper")

    monkeypatch.setattr(build, "_helper_part", failing)
    sc = solver.load_scenario(ROOT / "scenarios" / "llama3-405b.yaml").scenario
    both = build_design_space(sc, default_catalog, "dominated")
    assert parallel._HELPER is None  # forgotten after it failed
    _serial(monkeypatch)
    assert _shapes(both) == _shapes(build_design_space(sc, default_catalog, "dominated"))
