"""The design space's counts (`DesignSpace.pruned`, `combinations`, `points`) count (shape, d, switch) points, each once:
Σ pruned + points = combinations at every prune level. Two cases broke it before issue 26's eighth pass: at the
levels below `dominated` the infeasible points were counted under `infeasible_points` although `none` and `shapes`
keep them, and again under `target` when a layout had no feasible point (goodput-32k as `fastest`, which builds at
`points`: 820 counted of 576); and a class with two switch choices counted its pruned points once but its
combinations and kept points per switch (budget-60m-fastest with tests/data/small-switch-overlay.yaml's 8-port NDR
switch beside the shipped 64-port one: 14,774 counted of 17,472)."""
from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

import solver
from solver.design_space import build_design_space
from solver.inputs.yaml_safe import read_yaml
from tests.optimize.test_optimizer import toy

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
LEVELS = [("none", None), ("shapes", None), ("points", None), ("points", 3), ("dominated", None), ("dominated", 3)]


def _adds_up(space) -> None:
    assert min(space.pruned.values()) >= 0
    assert sum(space.pruned.values()) + space.points == space.combinations


def _shipped(name: str, **changes):
    doc = dict(read_yaml(ROOT / "scenarios" / f"{name}.yaml").data)  # the repository's reader (1e12 is a number)
    doc.update(changes)
    return solver.load_scenario(doc).scenario


@pytest.mark.parametrize("prune, top_k", LEVELS)
@pytest.mark.parametrize("name, objective", [("llama3-70b", None), ("goodput-32k", "fastest"),
                                             ("capped-budget-power", None)])
def test_the_counts_add_up_on_shipped_scenarios(default_catalog, name, objective, prune, top_k):
    sc = _shipped(name, **({"objective": objective} if objective else {}))
    _adds_up(build_design_space(sc, default_catalog, prune, top_k=top_k, one_layout_per_cost=top_k is not None))


@pytest.mark.parametrize("prune, top_k", LEVELS)
def test_the_counts_add_up_with_two_switches_per_class(prune, top_k):
    cat = solver.load_catalog([ROOT / "catalogs" / "default.yaml", DATA / "small-switch-overlay.yaml"])
    sc = solver.load_scenario(ROOT / "scenarios" / "budget-60m-fastest.yaml").scenario
    _adds_up(build_design_space(sc, cat, prune, top_k=top_k, one_layout_per_cost=top_k is not None))


def test_levels_that_keep_infeasible_points_do_not_count_them_as_pruned(default_catalog):
    """`none` keeps every placeable point within max_gpus: what it leaves out is the placement and max_gpus counts
    alone. `shapes` keeps every point of a layout with a feasible one."""
    sc = _shipped("llama3-70b")
    none = build_design_space(sc, default_catalog, "none")
    assert set(none.pruned) == {"placement", "memory", "target", "caps"}
    assert none.pruned["memory"] == none.pruned["target"] == 0
    assert none.points == none.combinations - none.pruned["placement"] - none.pruned["caps"]
    assert "infeasible_points" not in build_design_space(sc, default_catalog, "shapes").pruned


@pytest.mark.parametrize("prune, top_k", LEVELS)
def test_a_second_switch_doubles_every_count(tmp_path, toy_catalog, prune, top_k):
    """The toy catalog with a second switch equal to its one (another id): every class has two architectures, so the
    combinations are 3 platforms · 7 d values (1 … 64) · 2 switches = 42 (21 with one), and every count and the kept
    points double (the same points are kept for either switch)."""
    doc = yaml.safe_load((DATA / "toy-catalog.yaml").read_text(encoding="utf-8"))
    twin = copy.deepcopy(doc["switches"][0])
    twin.update(id="toy-switch-b", name="toy 64-port switch, second vendor")
    doc["switches"].append(twin)
    (tmp_path / "toy2.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    two = solver.load_catalog([tmp_path / "toy2.yaml"])
    sc = solver.load_scenario(toy(constraints=dict(budget_usd=200_000))).scenario
    one_space, two_space = (build_design_space(sc, cat, prune, top_k=top_k) for cat in (toy_catalog, two))
    assert (one_space.combinations, two_space.combinations) == (21, 42)
    assert two_space.points == 2 * one_space.points
    assert two_space.pruned == {reason: 2 * n for reason, n in one_space.pruned.items()}
    _adds_up(two_space)
