"""Safe YAML parsing with located errors: YAML files → (data, node tree) → pydantic models.

Every problem in a file is collected and reported at once as
``FILE:LINE:COL: field.path: message (got VALUE)``. YAML is parsed once with a safe loader that
keeps the node tree, so each pydantic error location maps back to a line (scanned by libyaml when
PyYAML has it, see `_fast_loader`; errors always come from the pure-Python loader). The loader reads YAML 1.2
scalars (``NO`` stays a string, ``1e3`` is a number) and rejects YAML 1.1 octal/sexagesimal
integers, duplicate keys, alias bombs and oversized, empty, non-UTF-8 or non-mapping files.
"""
from __future__ import annotations

import difflib
import hashlib
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from ..errors import InputError, Problem
from . import yaml_loader
from .yaml_loader import MAX_DEPTH

MAX_FILE_BYTES = 10 * 1024 * 1024
MAX_EXPANDED_VALUES = 200_000  # values after expanding aliases (a shipped catalog has ~2,000)
MAX_EXPANDED_BYTES = 20 * 1024 * 1024  # text after expanding aliases (2 × the file cap; issue 27)

# ------------------------------------------------------------------------------ YAML parsing

_LEGACY_INT = re.compile(r"^[-+]?(0[0-7_]+|0o[0-7]+|0x[0-9a-fA-F_]+|0b[01_]+|[0-9][0-9_]*(:[0-5]?[0-9])+)$")


@dataclass
class Document:
    """A parsed YAML file: its data, its node tree (for line numbers) and its path."""

    path: str
    data: Any
    node: yaml.Node | None
    sha256: str = ""
    problems: list[Problem] = field(default_factory=list)

    def mark(self, loc: Iterable) -> tuple[int, int]:
        """1-based (line, column) of the value at `loc`; the parent mapping when a key is missing."""
        node = self.node
        if node is None:
            return (1, 1)
        line, col = node.start_mark.line, node.start_mark.column
        for key in loc:
            if isinstance(node, yaml.MappingNode):
                hit = next(((k, v) for k, v in node.value if k.value == str(key)), None)
                if hit is None:
                    break
                line, col = hit[0].start_mark.line, hit[0].start_mark.column
                node = hit[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(key, int) and key < len(node.value):
                node = node.value[key]
                line, col = node.start_mark.line, node.start_mark.column
            else:
                break
        return (line + 1, col + 1)

    def problem(self, loc: Iterable, message: str, *args) -> Problem:
        loc = list(loc)
        line, col = self.mark(loc)
        got = {"got": args[0], "has_got": True} if args else {}
        return Problem(self.path, line, col, dotted(loc), message, **got)


def dotted(loc: Iterable) -> str:
    out = ""
    for key in loc:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def _node_checks(doc: Document, node: yaml.Node, depth: int = 0, seen: set | None = None, loc: tuple = ()) -> None:
    """Duplicate keys, YAML 1.1 integers and nesting depth, checked on the node tree."""
    seen = set() if seen is None else seen
    if id(node) in seen:  # an alias: already checked
        return
    seen.add(id(node))
    if depth > MAX_DEPTH:
        m = node.start_mark
        doc.problems.append(Problem(doc.path, m.line + 1, m.column + 1, "", f"nesting deeper than {MAX_DEPTH} levels"))
        return
    if isinstance(node, yaml.MappingNode):
        first: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = str(key_node.value)
            if key in first:
                m = key_node.start_mark
                doc.problems.append(Problem(
                    doc.path, m.line + 1, m.column + 1, dotted(loc + (key,)),
                    f"duplicate key '{key}' (first at line {first[key]}); YAML would silently keep the last one: remove one",
                ))
            else:
                first[key] = key_node.start_mark.line + 1
            _node_checks(doc, value_node, depth + 1, seen, loc + (key,))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _node_checks(doc, item, depth + 1, seen, loc + (index,))
    elif isinstance(node, yaml.ScalarNode) and node.style is None and _LEGACY_INT.match(node.value):
        m = node.start_mark
        doc.problems.append(Problem(
            doc.path, m.line + 1, m.column + 1, dotted(loc),
            "ambiguous number: YAML 1.1 reads a leading 0 as octal and a:b as base 60; "
            "write a plain decimal number, or quote it if it is text", node.value, True,
        ))


def _expanded_size(node: yaml.Node, memo: dict) -> int:
    """How many values the document has once every alias is expanded (memoised per node)."""
    key = id(node)
    if key not in memo:
        memo[key] = 1  # a recursive alias counts once instead of looping
        if isinstance(node, yaml.MappingNode):
            memo[key] = 1 + sum(_expanded_size(k, memo) + _expanded_size(v, memo) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            memo[key] = 1 + sum(_expanded_size(v, memo) for v in node.value)
    return memo[key]


def _expanded_bytes(node: yaml.Node, memo: dict) -> int:
    """How many bytes of scalar text the document has once every alias is expanded (memoised)."""
    key = id(node)
    if key not in memo:
        memo[key] = 0  # a recursive alias counts once instead of looping
        if isinstance(node, yaml.MappingNode):
            memo[key] = sum(_expanded_bytes(k, memo) + _expanded_bytes(v, memo) for k, v in node.value)
        elif isinstance(node, yaml.SequenceNode):
            memo[key] = sum(_expanded_bytes(v, memo) for v in node.value)
        else:
            memo[key] = len(str(node.value).encode("utf-8", "surrogatepass"))
    return memo[key]


def _aliased(node: yaml.Node) -> dict[int, tuple[yaml.Node, int]]:
    """Every node the tree refers to more than once (through aliases), with its reference count."""
    refs: dict[int, list] = {}
    stack = [node]
    while stack:
        current = stack.pop()
        children = ([c for pair in current.value for c in pair] if isinstance(current, yaml.MappingNode) else
                    current.value if isinstance(current, yaml.SequenceNode) else [])
        for child in children:
            entry = refs.setdefault(id(child), [child, 0])
            entry[1] += 1
            if entry[1] == 1:
                stack.append(child)
    return {k: (n, c) for k, (n, c) in refs.items() if c > 1}


def _too_many_bytes(name: str, node: yaml.Node) -> InputError | None:
    """A located error when aliases expand the document past MAX_EXPANDED_BYTES (at the aliased
    value that weighs most), else None."""
    memo: dict = {}
    total = _expanded_bytes(node, memo)
    if total <= MAX_EXPANDED_BYTES:
        return None
    mib = 1024 * 1024
    repeated = sorted(_aliased(node).values(), key=lambda nc: memo.get(id(nc[0]), 0) * nc[1], reverse=True)
    where, what = (1, 1), "the document"
    if repeated:
        heavy, count = repeated[0]
        where = (heavy.start_mark.line + 1, heavy.start_mark.column + 1)
        what = f"this value ({memo[id(heavy)] / mib:,.1f} MiB) is repeated {count:,} times through aliases, and"
    return _fail(name, f"{what} the YAML expands to {total / mib:,.0f} MiB of text, over the "
                       f"{MAX_EXPANDED_BYTES // mib} MiB limit: write the values out, without aliases to large values",
                 *where)


def near_paths(path: Path) -> str:
    """'; did you mean scenarios/llama3-70b.yaml?' for a mistyped path: the names nearest to the missing part
    (the file in its folder, or the first missing folder in its parent), or ''."""
    path = Path(path)
    missing, parent = path, path.parent
    while str(parent) not in ("", ".") and not parent.is_dir() and parent != parent.parent:
        missing, parent = parent, parent.parent
    folder = parent if str(parent) else Path(".")
    try:
        names = [p.name for p in folder.iterdir() if not p.name.startswith(".")]
    except OSError:
        return ""
    close = difflib.get_close_matches(missing.name, names, n=3, cutoff=0.6)
    if not close:
        return ""
    tail = path.relative_to(missing) if missing != path else Path()
    shown = [str(parent / c / tail) if str(tail) != "." else str(parent / c) for c in close]
    return f"; did you mean {' or '.join(shown)}?"


def _fail(name: str, message: str, line: int = 1, column: int = 1) -> InputError:
    return InputError([Problem(name, line, column, "", message)])


def _read_capped(path: Path, name: str) -> bytes:
    """At most MAX_FILE_BYTES + 1 bytes of a regular file; InputError for any other kind of file."""
    try:
        before = os.stat(path)  # never blocks, unlike opening a FIFO
        _check_regular(before, name)
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise _fail(name, "file not found: check the path" + near_paths(path)) from None
    except OSError as exc:
        raise _fail(name, f"cannot read the file: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as fh:
        _check_regular(os.fstat(fh.fileno()), name)
        try:
            return fh.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise _fail(name, f"cannot read the file: {exc.strerror or exc}") from None


def _check_regular(st: os.stat_result, name: str) -> None:
    if stat.S_ISDIR(st.st_mode):
        raise _fail(name, "is a directory, not a YAML file")
    if not stat.S_ISREG(st.st_mode):
        kind = ("a named pipe (FIFO)" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode)
                or stat.S_ISBLK(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
        raise _fail(name, f"is {kind}, not a YAML file: give the path of a regular file")
    if st.st_size > MAX_FILE_BYTES:
        raise _fail(name, f"file is {st.st_size / 1e6:.1f} MB; the limit is {MAX_FILE_BYTES / 1e6:.0f} MB")


def _read_text(path: Path, name: str) -> tuple[str, bytes]:
    """The file as UTF-8 text (and its bytes, for the hash); InputError for anything else.

    The file type and size are checked before reading (a FIFO would block, /dev/zero never ends, a
    sparse file may claim gigabytes), on the opened descriptor (so a file swapped after the check
    is seen), and the read itself stops one byte past the limit whatever the size claimed.
    """
    raw = _read_capped(path, name)
    if len(raw) > MAX_FILE_BYTES:
        raise _fail(name, f"file is larger than {MAX_FILE_BYTES / 1e6:.0f} MB; the limit is {MAX_FILE_BYTES / 1e6:.0f} MB")
    if b"\x00" in raw:
        raise _fail(name, "binary file (contains NUL bytes): expected a YAML text file")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise _fail(name, f"not UTF-8 text (byte 0x{raw[exc.start]:02x}): save the file as UTF-8", line, column) from None
    if not text.strip() or all(not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()):
        raise _fail(name, "empty file: expected a YAML mapping")
    return text, raw


def _parse(text: str, name: str) -> tuple[Any, yaml.Node | None]:
    """(data, node tree) of one YAML document, with the loader's scalar rules and nesting limit:
    read with libyaml's parser when PyYAML has it, and again with the pure-Python one for the error
    when that fails (or always, without libyaml; yaml_loader.py)."""
    fast = yaml_loader.FAST_LOADER
    if fast is not None and yaml_loader.libyaml_agrees(text):
        try:
            return _load(fast(text))
        except Exception:  # an error, or what libyaml reads otherwise: PyYAML reads the text again, below,
            pass  # for its own message and location (and, were the fast path ever to fail, for the data)
    loader = yaml_loader.PyLoader(text)
    loader.name = name
    try:
        return _load(loader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        kind = "" if isinstance(exc, yaml_loader.TooDeep) else "YAML syntax error: "
        raise _fail(name, f"{kind}{exc.problem or exc}", line, col) from None
    except (yaml.YAMLError, RecursionError) as exc:
        raise _fail(name, f"YAML error: {exc}") from None


def _load(loader) -> tuple[Any, yaml.Node | None]:
    try:
        node = loader.get_single_node()
        return (loader.construct_document(node) if node is not None else None), node
    finally:
        loader.dispose()


def read_yaml(path: str | Path, display: str | None = None, allow_list: bool = False) -> Document:
    """Parse one YAML file safely; raise InputError for anything that is not a usable mapping (or, with
    `allow_list`, a list: `fabricplan calibrate`'s runs)."""
    path = Path(path)
    name = display or str(path)
    text, raw = _read_text(path, name)
    data, node = _parse(text, name)
    if node is not None and _expanded_size(node, {}) > MAX_EXPANDED_VALUES:
        raise _fail(name, f"the YAML expands to more than {MAX_EXPANDED_VALUES:,} values through anchors and "
                          "aliases: write the values out instead")
    if node is not None and (too_big := _too_many_bytes(name, node)) is not None:
        raise too_big
    if not isinstance(data, dict) and not (allow_list and isinstance(data, list)):
        kind = "empty" if data is None else type(data).__name__
        raise _fail(name, f"expected a YAML mapping at the top level (got {kind})")
    doc = Document(name, data, node, hashlib.sha256(raw).hexdigest())
    _node_checks(doc, node)
    return doc


# ------------------------------------------------------------------------ pydantic → problems


def _nearest_key(model_cls: type[BaseModel], loc: tuple) -> type[BaseModel] | None:
    """The pydantic model class that owns the last key of `loc` (to suggest a valid key)."""
    cls: type[BaseModel] | None = model_cls
    for key in loc[:-1]:
        if isinstance(key, int) or cls is None:
            continue
        info = cls.model_fields.get(key)
        if info is None:
            return None
        cls = model_in(info.annotation)
    return cls


def model_in(annotation) -> type[BaseModel] | None:
    """The pydantic model inside a field's annotation (`Model`, `Model | None`, `list[Model]`, …), or None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = model_in(arg)
        if found is not None:
            return found
    return None


def validate(doc: Document, model_cls: type[BaseModel], data: Any = None):
    """Validate `doc.data` against `model_cls`; every error becomes a Problem on `doc`."""
    try:
        return model_cls.model_validate(doc.data if data is None else data, context={"strict_scalars": True})
    except ValidationError as exc:
        found = [(_problem_from(doc, model_cls, err), err["type"]) for err in exc.errors(include_url=False)]
        doc.problems.extend(_one_per_place(found))
        return None


def _one_per_place(found: list[tuple[Problem, str]]) -> list[Problem]:
    """One problem per field: a value that fits no branch of a union (`periods: 0` is neither an
    integer ≥ 1 nor a list) gets the branch's error that says most, not "should be a valid list"."""
    places: dict[tuple, list[tuple[Problem, str]]] = {}
    for problem, kind in found:
        places.setdefault((problem.line, problem.column, problem.path), []).append((problem, kind))
    out = []
    for group in places.values():
        telling = [p for p, kind in group if not kind.endswith("_type") and kind != "literal_error"]
        out.append(telling[0] if telling else group[0][0])
    return out


_UNION_TAG = re.compile(r"^(int|float|str|bool|bytes|constrained-.+|function-.+|tagged-union.*)$")
"""pydantic's name of a union branch in an error location (`list[…]` and `dict[…]` have a bracket)."""


def _problem_from(doc: Document, model_cls: type[BaseModel], err: Any) -> Problem:
    # drop pydantic's union-branch tags (e.g. 'list[...]', 'int', 'constrained-float') from the location, not keys
    # that merely start like one (`interval_p10`)
    loc = tuple(k for k in err["loc"] if isinstance(k, int) or not _UNION_TAG.match(str(k)) and "[" not in str(k))
    message = err["msg"]
    if err["type"] == "extra_forbidden":
        owner = _nearest_key(model_cls, loc)
        valid = list(owner.model_fields) if owner else []
        close = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.5)
        message = "unknown key" + (f": did you mean '{close[0]}'?" if close else "")
        if valid:
            message += f" (valid keys: {', '.join(valid)})"
        return doc.problem(loc, message)
    if err["type"] == "missing":
        return doc.problem(loc, "required field is missing: add it")
    if message.startswith("Value error, "):
        message = message[len("Value error, "):]
    head, sep, rest = message.partition(": ")
    if sep and not loc and isinstance(err.get("input"), dict) and head in model_cls.model_fields:
        # a whole-model check names the key it is about ("target: give ..."): point at that key
        return doc.problem(loc + (head,), rest)
    if err["type"] == "too_short" and err.get("input") == []:
        message = "must list at least one value (an empty list does not mean all: leave the key out for that)"
    if err["type"] in ("finite_number",):
        message = "must be a finite number (NaN and infinity are not allowed)"
    return doc.problem(loc, message, err.get("input"))


def raise_if(docs: Iterable[Document]) -> None:
    problems = [p for d in docs for p in d.problems]
    if problems:
        raise InputError(problems)

