"""The design-space memo (`design_space.memo.ScanMemo`, issue 26): a build of the same scenario at the same or a
lower target reuses the points an earlier build evaluated and starts its dominance scans where that build found
the first feasible d. Exactness: every build with a memo equals the build from scratch, shape by shape, at a
lower target, at a higher one (the memo then forgets its scan starts), and a memo of another scenario is not
used. The next faster design with the solve's memo equals the one found without it."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import enumerated_designs

import solver
from solver.design_space import build_design_space
from solver.optimize.frontier import FRONTIER_REL, lowered_target, next_faster
from solver.optimize.solve import solve

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ["llama3-70b", "deepseek-v3", "capped-budget-power"]  # dense HGX + NVL72, MoE, multi-plane with caps


def _shapes(space) -> list[tuple]:
    """Everything of a shape the model reads: identity, kept d values and domains, step times, memory and every
    condition's coefficients."""
    out = []
    for s in space.shapes:
        conditions = [(c.name, tuple(c.comp), tuple(c.capacity), tuple((x.name, tuple(map(tuple, x.pieces)))
                                                                        for x in c.exposures)) for c in s.conditions]
        out.append((s.key, tuple(sorted(map(str, s.perfs))), tuple(s.d_values), tuple(s.domains),
                    tuple(s.step_time_s), tuple(s.mem), tuple(conditions)))
    return out


def _same(a, b) -> None:
    assert _shapes(a) == _shapes(b)
    assert a.pruned == b.pruned and a.combinations == b.combinations
    assert [x.label() for x in a.architectures] == [x.label() for x in b.architectures]


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_build_at_a_lower_target_with_the_memo_equals_one_from_scratch(name, default_catalog):
    sc = solver.load_scenario(ROOT / "scenarios" / f"{name}.yaml").scenario
    first = build_design_space(sc, default_catalog, "dominated")
    assert first.memo is not None and any(found and kept for found, kept in first.memo.scans.values())  # where its scans found points
    for factor in (0.9, 0.7):  # the first lowering narrows the scans, the second narrows them again
        lower = lowered_target(sc, sc.target_step_time_s() * factor)
        _same(build_design_space(lower, default_catalog, "dominated", memo=first.memo),
              build_design_space(lower, default_catalog, "dominated"))


def test_a_build_at_a_higher_target_forgets_the_scan_starts(default_catalog):
    """At 1.5 T a segment's first feasible d may lie below the one found at T: the memo's starts would skip it."""
    sc = solver.load_scenario(ROOT / "scenarios" / "llama3-70b.yaml").scenario
    first = build_design_space(sc, default_catalog, "dominated")
    higher = lowered_target(sc, sc.target_step_time_s() * 1.5)
    fresh = build_design_space(higher, default_catalog, "dominated")
    assert sum(len(s.d_values) for s in fresh.shapes) > sum(len(s.d_values) for s in first.shapes)  # more is feasible
    _same(build_design_space(higher, default_catalog, "dominated", memo=first.memo), fresh)


def test_a_memo_of_another_scenario_is_not_used(default_catalog):
    sc = solver.load_scenario(ROOT / "scenarios" / "llama3-70b.yaml").scenario
    first = build_design_space(sc, default_catalog, "dominated")
    other = sc.model_copy(update={"workload": sc.workload.model_copy(update={"global_batch_size": 512})})
    assert not first.memo.serves(other, default_catalog)
    assert first.memo.serves(lowered_target(sc, 1.0), default_catalog)  # only the target and objective may differ
    assert not first.memo.serves(sc, solver.load_catalog())  # another catalog object
    built = build_design_space(other, default_catalog, "dominated", memo=first.memo)
    assert built.memo is not first.memo
    _same(built, build_design_space(other, default_catalog, "dominated"))


def _next_faster_with_and_without_the_memo(result, ls, catalog) -> dict:
    """The next faster design found with the solve's memo, checked equal to the one found without it."""
    with_memo = next_faster(result, ls, catalog)
    result.space_memo = None
    without = next_faster(result, ls, catalog)
    for nf in (with_memo, without):
        nf.pop("time_s")
    assert with_memo == without and with_memo["found"]
    return with_memo


@pytest.mark.parametrize("name", ["llama3-70b", "gpt3-175b"])
def test_the_next_faster_design_with_the_memo_equals_the_one_without(name, default_catalog):
    ls = solver.load_scenario(ROOT / "scenarios" / f"{name}.yaml")
    result = solve(ls, default_catalog, top_k=1)
    assert result.space_memo is not None
    _next_faster_with_and_without_the_memo(result, ls, default_catalog)


def test_placement_checked_once_per_layout_still_counts_every_platform(toy_catalog):
    """Placement is checked once per (layout, G_u) and counted for each platform (`build._placeable`,
    `build._placeable_layouts`). The toy catalog's three 1-GPU platforms (slow-box, cheap-box, fast-box) with one NIC and one switch each: B = 64 and
    b = 1 give d ∈ {1, 2, 4, 8, 16, 32, 64}, 7 combinations per platform, 21 in all; max_gpus = 8 leaves out
    d = 16, 32, 64 on each: 9 pruned by the caps; nothing is unplaceable at t = c = p = 1."""
    from conftest import load_doc as _load

    from tests.optimize.test_frontier import toy

    sc = _load(toy(constraints=dict(max_gpus=8))).scenario
    space = build_design_space(sc, toy_catalog, "dominated")
    assert space.combinations == 21
    assert space.pruned["caps"] == 9 and space.pruned["placement"] == 0


def test_the_next_faster_design_when_its_target_drops_the_goodput(default_catalog):
    """A target in training days puts the goodput in the target; the next faster design's lowered scenario is a step
    time, without it. The solve's scan starts (the first point feasible on T·goodput bound) bound nothing there, and
    the memo forgets them. Before it did, this next faster design came out +95.8 % capex, −28.5 % step time: an
    equal-cost slower layout (t2·p4·d512 for t2·p2·d1024; found by a review of issue 26's fifth pass)."""
    import yaml

    doc = yaml.safe_load((ROOT / "scenarios" / "rent-or-buy.yaml").read_text(encoding="utf-8"))
    # no planned stops (issue 42's default 0.87/day × 600 min would leave no goodput): the unexpected ones only
    doc.update(reliability={"restart_min": 600, "planned_interruptions_per_day": 0}, target={"train_tokens": 2.0e12, "train_days": 16}, objective="capex",
               constraints={"max_gpus": 6000, "platforms": ["hgx-b200"], "nics": ["cx7-ndr"], "fabrics": "fat-tree"},
               parallelism={"tp": [2], "cp": 1, "pp": [2, 4], "vp": 1, "microbatch_size": [1, 2]})
    ls = solver.load_scenario(doc)
    result = solve(ls, default_catalog)
    assert result.space_memo is not None and result.space_memo.goodput_in_target
    with_memo = _next_faster_with_and_without_the_memo(result, ls, default_catalog)
    # the reference: every design of the space, enumerated one by one, that is strictly faster than #1 (meets
    # T1·(1 − ε), a step-time target without the goodput); the next faster design is the cheapest, then the faster
    lowered = lowered_target(ls.scenario, result.designs[0].perf.step_time_s * (1 - FRONTIER_REL))
    cheapest = min(enumerated_designs(lowered, default_catalog), key=lambda d: (d.objective_usd, d.perf.step_time_s))
    assert with_memo["cost_usd"] == pytest.approx(cheapest.objective_usd, rel=1e-9)
    assert with_memo["step_time_s"] == pytest.approx(cheapest.perf.step_time_s, rel=1e-9)  # not the slower layout
