"""The fast input loading of issue 26: YAML scanned and parsed by libyaml, field docstrings read once per module.
Each gives what the slow way gives: the same data, the same node tree (the
line and column of every value), the same located errors, the same field descriptions.

The libyaml side is skipped only when PyYAML was built without libyaml; the pure-Python side is the reference
(`yaml_loader.FAST_LOADER = None` forces it, as on such a build).
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml
from conftest import DATA, REPO
from pydantic import ConfigDict

from solver.errors import InputError
from solver.inputs import load_catalog, load_scenario, yaml_loader, yaml_safe
from solver.inputs.schema_base import Strict, attribute_docstrings

needs_libyaml = pytest.mark.skipif(yaml_loader.FAST_LOADER is None, reason="PyYAML built without libyaml")
MINI_SCENARIO = DATA / "inputs" / "mini-scenario.yaml"
SHIPPED = sorted([*(REPO / "catalogs").glob("*.yaml"), *(REPO / "scenarios").glob("*.yaml"), *DATA.rglob("*.yaml")])


def _tree(node: yaml.Node | None, seen: dict | None = None):
    """Everything a node tree holds: kind, tag, value, style, flow style, start and end marks (line, column,
    index); an alias is the index of the node it repeats."""
    seen = {} if seen is None else seen
    if node is None:
        return None
    if id(node) in seen:
        return ("alias", seen[id(node)])
    seen[id(node)] = len(seen)
    marks = tuple((m.line, m.column, m.index) for m in (node.start_mark, node.end_mark))
    head = (type(node).__name__, node.tag, marks, getattr(node, "style", None), getattr(node, "flow_style", None))
    if isinstance(node, yaml.ScalarNode):
        return (*head, node.value)
    if isinstance(node, yaml.SequenceNode):
        return (*head, [_tree(item, seen) for item in node.value])
    return (*head, [(_tree(k, seen), _tree(v, seen)) for k, v in node.value])


def _parsed(text: str) -> tuple:
    """`_parse`'s outcome as comparable data: (data repr, node tree) or the located problems."""
    try:
        data, node = yaml_safe._parse(text, "f.yaml")
    except InputError as exc:
        return ("error", [str(p) for p in exc.problems])
    return ("ok", repr(data), _tree(node))


def _both(text: str, monkeypatch) -> tuple[tuple, tuple]:
    """(pure-Python outcome, outcome with libyaml)."""
    fast = yaml_loader.FAST_LOADER
    with monkeypatch.context() as m:
        m.setattr(yaml_loader, "FAST_LOADER", None)
        slow_result = _parsed(text)
    assert yaml_loader.FAST_LOADER is fast
    return slow_result, _parsed(text)


# ------------------------------------------------------------------------------------------- YAML


@needs_libyaml
@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(REPO)))
def test_every_shipped_yaml_file_reads_the_same_with_libyaml(path, monkeypatch):
    slow, fast = _both(path.read_text(encoding="utf-8"), monkeypatch)
    assert fast == slow


@needs_libyaml
def test_the_shipped_catalog_is_read_by_libyaml(monkeypatch):
    """The speed-up applies where it matters (the catalog is 3,000 nodes, 90 ms in pure Python): the
    pure-Python loader is not used for it, nor for a shipped scenario."""
    made = []

    class Spy(yaml_loader.PyLoader):
        def __init__(self, stream):
            made.append(stream)
            super().__init__(stream)

    monkeypatch.setattr(yaml_loader, "PyLoader", Spy)
    yaml_safe.read_yaml(REPO / "catalogs" / "default.yaml")
    yaml_safe.read_yaml(REPO / "scenarios" / "llama3-70b.yaml")
    assert made == []
    with pytest.raises(InputError):  # an error is read again by the pure-Python loader, for its message
        yaml_safe._parse("a: [1, 2\n", "f.yaml")
    assert made == ["a: [1, 2\n"]


# Texts where libyaml 0.2.5 and PyYAML part ways, each with what differs; `_parse` gives PyYAML's reading.
DISAGREE = {
    "tab": "a:\t1\nb: 2\n",  # libyaml takes the tab as a space; PyYAML refuses it
    "tab in a key": "objective\t: capex\n",
    "byte order mark": "\ufeffa: 1\nb: [1]\n",  # libyaml leaves the BOM out of a mark's index
    "no final line break": "a: 1\nb: {c: 2}",  # libyaml ends the last marks on a new line
    "question mark in a flow scalar": "a: {x: y?z}\n",  # libyaml 0.2.5 reads 'y?z'; PyYAML fails
    "question mark after a space": "a: [b ?c]\n",
    "empty value in a flow mapping": "overlap: {tp: 1, dp: }\n",  # libyaml places the null at the '}'
    "empty value in a flow sequence": "a: [b: ]\n",
    "non-specific tag": "top_k: !\n",  # PyYAML resolves `!` with no value to null, libyaml to ''
    "comment on a block scalar's header": "a: |#\n  x\n",  # libyaml reads it, PyYAML refuses it
    "comment on a folded header": "a: >-2#\n  x\n",
}


@needs_libyaml
@pytest.mark.parametrize("text", DISAGREE.values(), ids=DISAGREE.keys())
def test_where_libyaml_reads_otherwise_the_pure_python_reading_is_kept(text, monkeypatch):
    slow, fast = _both(text, monkeypatch)
    assert fast == slow
    # and the guard is what keeps it: libyaml's own reading is refused, or never attempted
    if yaml_loader.libyaml_agrees(text):
        with pytest.raises(yaml.YAMLError):
            yaml_loader.FAST_LOADER(text).get_single_node()


BAD = {
    "duplicate key": ("a: 1\nb:\n  c: 2\n  c: 3\n", "f.yaml:4:3: b.c: duplicate key 'c' (first at line 3)"),
    # line 2 "  b: 2": the ':' is the 4th character
    "syntax": ("a: 1\n  b: 2\n", "f.yaml:2:4: YAML syntax error: mapping values are not allowed here"),
    # the list goes on over the line break ("2 b" is one plain scalar), so line 2 "b: 3" has its ':' at column 2
    "unclosed flow": ("a: [1, 2\nb: 3\n", "f.yaml:2:2: YAML syntax error: expected ',' or ']', but got ':'"),
    "undefined alias": ("a: *nowhere\n", "f.yaml:1:4: YAML syntax error: found undefined alias 'nowhere'"),
    "two documents": ("a: 1\n---\nb: 2\n", "f.yaml:2:1: YAML syntax error: but found another document"),
    # the mapping is level 1 and the k-th '[' level k + 1: the 51st (3 + 51 = column 54, after "a: ") is one too deep
    "too deep": ("a: " + "[" * 60 + "]" * 60 + "\n", "f.yaml:1:54: nesting deeper than 50 levels: flatten the structure"),
}


@needs_libyaml
@pytest.mark.parametrize("name", BAD)
def test_a_yaml_error_has_the_same_message_and_place(name, monkeypatch):
    text, expected = BAD[name]
    slow, fast = _both(text, monkeypatch)
    assert fast == slow
    if name == "duplicate key":  # found on the node tree, after parsing: line 4 "  c: 3", the key at column 3
        problems = []
        for flag in (None, yaml_loader.FAST_LOADER):
            with monkeypatch.context() as m:
                m.setattr(yaml_loader, "FAST_LOADER", flag)
                doc = yaml_safe.Document("f.yaml", *yaml_safe._parse(text, "f.yaml"))
                yaml_safe._node_checks(doc, doc.node)
                problems.append([str(p) for p in doc.problems])
        assert problems[0] == problems[1]
        assert expected in problems[0][0]
    else:
        assert fast[0] == "error" and expected in fast[1][0], fast


def _scenario_problems(path: Path, fast, monkeypatch) -> list[str]:
    with monkeypatch.context() as m:
        m.setattr(yaml_loader, "FAST_LOADER", fast)
        with pytest.raises(InputError) as caught:
            load_scenario(path)
    return [str(p) for p in caught.value.problems]


@needs_libyaml
@pytest.mark.parametrize(("line_no", "old", "new", "expected"), [
    # line 14 "  seq_len: 4096" repeats line 13's key: column 5 (4 spaces)
    (14, "tied_embeddings: false", "seq_len: 4096", ":14:5: workload.model.seq_len: duplicate key 'seq_len'"),
    # line 7 "    hidden_size: lots": the key at column 5
    (7, "hidden_size: 4096", "hidden_size: lots", ":7:5: workload.model.hidden_size:"),
    # line 26 "top_k: true": a boolean where a number goes, at column 1
    (26, "top_k: 3", "top_k: true", ":26:1: top_k: must be a number, not the boolean true"),
    # line 21 "  platforms: [hgx-h100, 0755]": the second item, "  platforms: [hgx-h100, " is 24 characters
    (21, "platforms: [hgx-h100, hgx-h200]", "platforms: [hgx-h100, 0755]", ":21:25: constraints.platforms[1]: ambiguous number"),
])
def test_a_bad_scenario_gets_the_same_located_problems(line_no, old, new, expected, tmp_path, monkeypatch):
    lines = MINI_SCENARIO.read_text(encoding="utf-8").splitlines(keepends=True)
    assert lines[line_no - 1].strip() == old
    lines[line_no - 1] = lines[line_no - 1].replace(old, new)
    bad = tmp_path / "bad.yaml"
    bad.write_text("".join(lines), encoding="utf-8")
    slow = _scenario_problems(bad, None, monkeypatch)
    fast = _scenario_problems(bad, yaml_loader.FAST_LOADER, monkeypatch)
    assert fast == slow
    assert any(f"{bad}{expected}" in p for p in fast), fast


@needs_libyaml
def test_mutated_inputs_read_the_same(monkeypatch):
    """A small seeded fuzz: snippets of the shipped files with YAML's special characters put in, taken out or
    swapped; both readers agree on every one (data, node tree, or the error and its place). During
    development 72,000 such cases were compared; each disagreement became a guard of DISAGREE (the last,
    `|#`, showed up after 50,000 cases), and the 16,000 cases run after it, richer in block scalars, tags
    and anchors, all agreed."""
    texts = [p.read_text(encoding="utf-8") for p in SHIPPED]
    rng = random.Random(26)
    pieces = list(":-[]{},#&*!|>'\"?\t \n.0eE_~") + ["{a: b}", "[x, y: z]", "? k\n: v", "&a x", "*a", "!!str 3", "'q'",
                                                       "- ", ": ", "{a: }", "\ufeff", "\u00a0", "\r\n"]
    outcomes = set()
    for _ in range(200):
        lines = rng.choice(texts).splitlines(keepends=True)
        start = rng.randrange(len(lines))
        chars = list("".join(lines[start:start + rng.randint(2, 30)]))
        for _ in range(rng.randint(1, 4)):
            at = rng.randrange(len(chars) + 1)
            if rng.random() < 0.5:
                chars[at:at] = list(rng.choice(pieces))
            elif chars:
                del chars[min(at, len(chars) - 1)]
        text = "".join(chars)
        slow, fast = _both(text, monkeypatch)
        assert fast == slow, text
        outcomes.add(slow[0])
    assert outcomes == {"ok", "error"}  # both kinds were exercised


# -------------------------------------------------------------------------------------- pydantic


def _input_models():
    import solver.inputs.schema as schema
    from solver.inputs import (
        catalog_schema,
        nic_configs,
        reliability,
        rentals,
        scenario_schema,
        stacks,
        workload_schema,
    )

    modules = (schema, catalog_schema, nic_configs, reliability, rentals, scenario_schema, stacks, workload_schema)
    return sorted({obj for module in modules for obj in vars(module).values()
                   if isinstance(obj, type) and hasattr(obj, "model_fields") and obj.__module__ == module.__name__},
                  key=lambda c: (c.__module__, c.__name__))


def test_field_descriptions_are_pydantics_attribute_docstrings():
    """Each field's description is what pydantic's own `use_attribute_docstrings` reads from the source (the
    private function it calls, on the class's own source)."""
    extract = pytest.importorskip("pydantic._internal._docs_extraction").extract_docstrings_from_cls
    models = _input_models()
    assert len(models) >= 45  # the catalog, scenario, workload, stack and reliability models
    for cls in models:
        own = extract(cls, use_inspect=True)
        assert attribute_docstrings(cls) == own, cls
        for name, info in cls.model_fields.items():
            if name in own:
                assert info.description == own[name], (cls, name)
    # reliability.py documents every field: FailureRate 3, CatalogReliability 10, ScenarioReliability 9 = 22 (issue 42:
    # planned_interruptions_per_day)
    from solver.inputs import reliability

    fields = [info for cls in (reliability.FailureRate, reliability.CatalogReliability, reliability.ScenarioReliability)
              for info in cls.model_fields.values()]
    assert len(fields) == 22 and all(info.description for info in fields)


def test_a_known_field_description_and_its_json_schema():
    from solver.inputs.reliability import ScenarioReliability
    from solver.inputs.scenario_schema import Scenario

    # solver/inputs/reliability.py: `repair_h` and the string under it
    text = ("Hours to repair or replace a failed node, tray or rack and return it to service (estimate).")
    assert ScenarioReliability.model_fields["repair_h"].description == text
    assert ScenarioReliability.model_json_schema()["properties"]["repair_h"]["description"] == text
    schema = Scenario.model_json_schema()
    assert schema["$defs"]["ScenarioReliability"]["properties"]["repair_h"]["description"] == text


def test_a_model_built_at_once_gets_its_descriptions_too():
    class BuiltAtOnce(Strict):  # the name is unique in this file: its docstrings are found by name
        model_config = ConfigDict(defer_build=False)

        width_m: float = 1.0
        """How wide, in metres."""

    assert BuiltAtOnce.__pydantic_complete__
    assert BuiltAtOnce.model_fields["width_m"].description == "How wide, in metres."
    assert BuiltAtOnce.model_json_schema()["properties"]["width_m"]["description"] == "How wide, in metres."


def test_validators_are_built_at_import_with_their_descriptions():
    """Every input model is built when its class is made, as pydantic does without `defer_build` (which
    INPUT_CONFIG sets only to let `Described` put the descriptions in first): nothing is left to build on
    first use, and the built schema carries the descriptions."""
    from solver.inputs.catalog_schema import Gpu

    for cls in _input_models():
        assert cls.__pydantic_complete__, cls
    built = Gpu.__pydantic_core_schema__
    # catalog_schema.py: the string under `Gpu.tdp_w`; the JSON schema comes from the schema built at import
    assert Gpu.model_json_schema()["properties"]["tdp_w"]["description"] == "Thermal design power, W."
    assert Gpu.__pydantic_core_schema__ is built  # not built again for it


def test_the_shipped_catalog_loads_the_same_without_libyaml(monkeypatch):
    """The whole load (catalog merged and validated) through either reader gives equal models."""
    with monkeypatch.context() as m:
        m.setattr(yaml_loader, "FAST_LOADER", None)
        slow = load_catalog()
    fast = load_catalog()
    assert fast.model_dump() == slow.model_dump()
