"""The documentation is checked against the code it describes.

- docs/model.md's constraint table names exactly the constraint families the code declares (in
  solver/optimize/model.py and the fabric family modules), and every constraint component of a
  built model is one of them;
- every test docs/reliability.md names exists;
- every module docs/architecture.md names exists.
"""
from __future__ import annotations

import ast
import re

import pytest
from conftest import REPO

import solver
from solver.design_space import build_design_space
from solver.optimize.data import model_data
from solver.optimize.model import CAP_NAMES, build_model

MODEL_MD = REPO / "docs" / "model.md"
CONSTRAINT_MODULES = [REPO / "solver" / "optimize" / "model.py", *sorted((REPO / "solver" / "fabrics").glob("*.py"))]


def documented_constraints() -> set[str]:
    """Names in the first column of the constraint table of docs/model.md ('| name in code | equation |')."""
    text = MODEL_MD.read_text(encoding="utf-8")
    table = text[text.index("| name in code | equation |"):]
    table = table[: table.index("\n\n")]
    names = set()
    for row in table.splitlines()[2:]:
        first = row.split("|")[1]
        names |= set(re.findall(r"`([a-z_0-9]+)(?:\[[^\]]*\])?`", first))
    return names


def declared_constraints() -> set[str]:
    """Every `m.<name> = pyo.Constraint(...)` in the model and fabric modules, plus the caps, the
    no-good cuts and `fastest`'s same-speed rows (added with add_component under their own names), and the user's
    rows."""
    names = set()
    for path in CONSTRAINT_MODULES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                func = node.value.func
                if isinstance(func, ast.Attribute) and func.attr == "Constraint":
                    for target in node.targets:
                        if isinstance(target, ast.Attribute):
                            names.add(target.attr)
    # + the user's rows (optimize/user_rows.py: ConstraintLists named per function, and the scenario's rows)
    return names | set(CAP_NAMES) | {"nogood_k", "same_speed_k", "frontier_step_k", "frontier_cost_k", "user_k",
                                     "scenario_rows"}


def test_model_md_names_exactly_the_declared_constraint_families():
    documented, declared = documented_constraints(), declared_constraints()
    assert declared - documented == set(), "constraint families missing from docs/model.md"
    assert documented - declared == set(), "docs/model.md names constraints the code does not declare"


@pytest.mark.parametrize("scenario", ["llama3-70b.yaml", "capped-budget-power.yaml"])
def test_built_model_components_are_documented(scenario, default_catalog):
    """A real model (caps, 1-, 2- and 3-tier blocks where the scenario uses them) has no constraint
    component that docs/model.md does not name."""
    import pyomo.environ as pyo

    ls = solver.load_scenario(REPO / "scenarios" / scenario)
    model = build_model(model_data(build_design_space(ls.scenario, default_catalog)))
    built = {c.local_name for c in model.component_objects(pyo.Constraint, active=True)}
    assert built, "the model has constraints"
    assert built - documented_constraints() == set()


def test_frontier_rows_are_documented(default_catalog):
    """The rows the frontier adds to a real model (optimize/frontier.py), by their name in code with `_k`."""
    import pyomo.environ as pyo

    from solver.deadline import Deadline
    from solver.optimize.frontier import FrontierModel

    fm = FrontierModel(solver.load_scenario(REPO / "scenarios" / "deepseek-v3.yaml"), default_catalog, Deadline(None))
    first, _, _ = fm.cheapest_faster(None)
    assert first is not None
    fm.cheapest_faster(first.perf.step_time_s)
    added = {re.sub(r"_[0-9]+$", "_k", c.local_name) for c in fm.model.component_objects(pyo.Constraint)
             if c.local_name.startswith("frontier_")}
    assert added == {"frontier_step_k", "frontier_cost_k"}
    fm.fastest_cheaper(None)  # from the fast end (objective: fastest): its probes' same_speed_k rows are removed
    fm.fastest_cheaper(first.cost.capex_usd, first.perf.step_time_s)
    added = {re.sub(r"_[0-9]+$", "_k", c.local_name) for c in fm.model.component_objects(pyo.Constraint)
             if c.local_name.startswith(("frontier_", "same_speed_"))}
    assert added == {"frontier_step_k", "frontier_cost_k"}
    assert added <= documented_constraints()


def test_every_test_named_in_reliability_md_exists():
    text = (REPO / "docs" / "reliability.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(test_[a-z0-9_]+)", text))
    defined = set()
    for path in (REPO / "tests").rglob("test_*.py"):
        defined |= set(re.findall(r"^def (test_[a-z0-9_]+)", path.read_text(encoding="utf-8"), re.M))
    assert named, "docs/reliability.md names its tests"
    assert named - defined == set()


def test_every_module_named_in_architecture_md_exists():
    text = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`(solver/[a-z_/]+\.py)`", text))
    assert named, "docs/architecture.md names modules"
    assert {p for p in named if not (REPO / p).is_file()} == set()
