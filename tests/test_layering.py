"""The pipeline's layering (docs/architecture.md): no module imports a later stage, and the imports between
fabricplan's modules have no cycle. Every import counts, also one inside a function (a lazy import hides a cycle
from Python, not from the design) and one under `if TYPE_CHECKING:` (an annotation-only import is still a dependency
a reader follows; issue 39). Read from the source with `ast`; nothing is imported."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "solver"

# The stages in pipeline order (docs/architecture.md); a module belongs to the first prefix it matches. Modules
# of one stage may import one another (without cycles); `perf` and `fabrics` share a stage and import neither
# the other ("solver/fabrics never imports solver/perf").
STAGES: tuple[tuple[str, ...], ...] = (
    ("solver.errors", "solver.deadline", "solver.integers", "solver.commit", "solver.files", "solver.version",
     "solver.units"),  # foundation
    ("solver.inputs",),
    ("solver.perf", "solver.fabrics"),
    ("solver.failures",),
    ("solver.costing", "solver.rentals"),  # rentals: priced off a costed design
    ("solver.design_space",),
    ("solver.results", "solver.figures", "solver.confidence"),
    ("solver.optimize",),
    ("solver.sweep",),
    ("solver.plan",),
    ("solver.reports",),
    ("solver.calibration",),
    ("solver.api", "solver.cli",
     "solver.entry", "solver.__main__", "solver"),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES: dict[str, Path] = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def owner(name: str) -> str:
    """The module an imported name lives in (`solver.perf.step.performance` → `solver.perf.step`)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports_of(module: str) -> set[str]:
    """Every fabricplan module `module` imports, anywhere in its source (`if TYPE_CHECKING:` blocks included)."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):  # `if TYPE_CHECKING:` imports included
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            found |= {f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source for a in node.names}
    return {owner(n) for n in found if n == "solver" or n.startswith("solver.")} - {module}


GRAPH: dict[str, set[str]] = {m: imports_of(m) for m in MODULES}


def stage(module: str) -> tuple[int, str]:
    """(stage index, the prefix that placed it there)."""
    for i, prefixes in enumerate(STAGES):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                return i, prefix
    raise AssertionError(f"{module} belongs to no stage of docs/architecture.md: add it to STAGES")


def test_every_module_has_a_stage():
    for m in MODULES:
        stage(m)


def test_no_module_imports_a_later_stage():
    wrong = []
    for m, targets in GRAPH.items():
        mine, my_prefix = stage(m)
        for t in targets:
            theirs, their_prefix = stage(t)
            if theirs > mine or (theirs == mine and mine == 2 and my_prefix != their_prefix):
                wrong.append(f"{m} (stage {mine}) imports {t} (stage {theirs})")
    assert not wrong, "\n".join(sorted(wrong))


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    assert cycles(GRAPH) == []


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
    ({"a": {"b"}, "b": set()}, []),
])
def test_the_cycle_finder_finds_cycles(graph, expected):
    """The checker can fail: a three-module loop is found (perf.compute → perf.model → perf.moe → perf.compute was
    one before issue 26)."""
    assert cycles(graph) == expected


def test_the_import_reader_sees_lazy_and_relative_imports():
    """`imports_of` reads imports inside functions and resolves relative ones: cli/sweep.py imports the sweep's
    terminal report only inside a function (its workbook module is named only in reports/side_process.py's table)."""
    assert "solver.reports.terminal" in GRAPH["solver.cli.sweep"]
    assert "solver.perf.totals" in GRAPH["solver.perf.step"]


def test_the_import_reader_counts_type_checking_imports():
    """An annotation-only import (`if TYPE_CHECKING:`) is a dependency too (issue 39): calibration/table.py imports
    the package's `Calibration` only under TYPE_CHECKING."""
    assert "solver.calibration" in GRAPH["solver.calibration.table"]


def test_architecture_md_lists_the_stages_in_this_order():
    """docs/architecture.md's diagram names the stages top to bottom in the order this test enforces."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    diagram = text.split("```", 2)[1]
    named = re.findall(r"^[ │]*(solver/[a-z_]+)", diagram, flags=re.M)
    stages = [stage(n.replace("/", ".").removesuffix(".py"))[0] for n in named]
    assert len(named) >= 11, named
    assert stages == sorted(stages), list(zip(named, stages))


MAX_MODULE_LINES = 600  # issue 26: a module past it is split along the seams it has


def test_no_module_is_over_600_lines():
    long = {module_name(p): n for p in sorted(PACKAGE.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"split these modules (at most {MAX_MODULE_LINES} lines each): {long}"
