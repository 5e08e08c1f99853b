"""docs/model.md's plan table names exactly the constraint families the plan MILP declares (solver/plan/model.py and
the blocks it calls, e.g. plan/resale.py)."""
from __future__ import annotations

import ast
import re

from conftest import REPO

PLAN_MODULES = sorted((REPO / "solver" / "plan").glob("*.py"))


def documented() -> set[str]:
    text = (REPO / "docs" / "model.md").read_text(encoding="utf-8")
    table = text[text.index("| plan name in code | equation |"):]
    table = table[: table.index("\n\n")]
    names: set[str] = set()
    for row in table.splitlines()[2:]:
        names |= set(re.findall(r"`([a-z_0-9]+)(?:\[[^\]]*\])?`", row.split("|")[1]))
    return names


def declared() -> set[str]:
    names = set()
    nodes = [n for path in PLAN_MODULES for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))]
    for node in nodes:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if isinstance(func, ast.Attribute) and func.attr == "Constraint":
                names |= {t.attr for t in node.targets if isinstance(t, ast.Attribute)}
    return names


def test_plan_table_names_exactly_the_declared_families():
    assert declared(), "the plan model declares constraints"
    assert declared() == documented()
