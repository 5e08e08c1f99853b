"""One public face per module (issue 39): a name another module imports is public — no leading underscore — and
documented where it is defined, so a module's contract can be read off its names. Read from the source with `ast`
(like tests/test_layering.py); nothing is imported. The few private names still imported across modules are listed
below, each with the reason it stays private."""
from __future__ import annotations

import ast

from test_layering import MODULES

# (importing module, defining module, name): why the name stays private. At most MAX_ALLOWED entries.
ALLOWED: dict[tuple[str, str, str], str] = {
}
MAX_ALLOWED = 10


def private_imports(module: str) -> set[tuple[str, str, str]]:
    """(module, source module, name) for every `from solver.x import _name` in `module`, lazy ones included."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[tuple[str, str, str]] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        if source != "solver" and not source.startswith("solver."):
            continue
        found |= {(module, source, a.name) for a in node.names if a.name.startswith("_") and not a.name.startswith("__")}
    return found


PRIVATE = sorted(set().union(*(private_imports(m) for m in MODULES)))


def test_no_private_name_is_imported_across_modules():
    unexpected = [f"{m} imports {name} from {source}" for m, source, name in PRIVATE if (m, source, name) not in ALLOWED]
    assert not unexpected, "make these names public (and document them) or move the code:\n" + "\n".join(unexpected)


def test_the_allow_list_is_short_and_current():
    assert len(ALLOWED) <= MAX_ALLOWED
    stale = set(ALLOWED) - set(PRIVATE)
    assert not stale, f"no longer imported, drop from ALLOWED: {sorted(stale)}"
    assert all(reason.strip() for reason in ALLOWED.values())


def test_the_reader_finds_a_private_import(tmp_path, monkeypatch):
    """The check can fail: a lazy `from ..x import _y` inside a function is found."""
    fake = tmp_path / "mod.py"
    fake.write_text("def f():\n    from ..reports.xlsx import _hidden\n    return _hidden\n", encoding="utf-8")
    monkeypatch.setitem(MODULES, "solver.optimize.mod", fake)
    assert private_imports("solver.optimize.mod") == {("solver.optimize.mod", "solver.reports.xlsx", "_hidden")}
