"""The base of every input model (imported by schema.py and the input modules it references)."""
from __future__ import annotations

import ast
import calendar
import contextlib
import functools
import hashlib
import importlib.util
import inspect
import json
import linecache
import os
import sys
from pathlib import Path
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from .strict_types import check_scalar

PosInt = Annotated[int, Field(ge=1)]
Identifier = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")]


def real_date(value: str) -> str:
    """A YYYY, YYYY-MM or YYYY-MM-DD date that is on the calendar: month 01–12, day within its month (2027-02-29 is
    not; issue 47s: month 13 was accepted)."""
    parts = [int(x) for x in value.split("-")]
    if len(parts) > 1 and not 1 <= parts[1] <= 12:
        raise ValueError(f"{value!r} is not a date: month {parts[1]:02d} is not 01–12 (YYYY, YYYY-MM or YYYY-MM-DD)")
    if len(parts) > 2:
        days = calendar.monthrange(parts[0], parts[1])[1]
        if not 1 <= parts[2] <= days:
            raise ValueError(f"{value!r} is not a date: {calendar.month_name[parts[1]]} {parts[0]} has days 01–{days}")
    return value


Date = Annotated[str, Field(pattern=r"^\d{4}(-\d{2}){0,2}$"), AfterValidator(real_date)]

INPUT_CONFIG = ConfigDict(extra="forbid", allow_inf_nan=False, validate_default=True, frozen=True, defer_build=True)
"""Every input model's configuration. `defer_build` only holds pydantic's build back until `Described` has set
the fields' descriptions; `Described` then builds the validator at once, as pydantic would have. (Building each
on first use instead was measured: a solve then builds 18 of the 50, but a parent no longer reuses its
children's schemas, and import plus load cost the same 0.26 s CPU.)"""


class _AttributeDocstrings(ast.NodeVisitor):
    """pydantic's rule: a string statement right after `name: annotation` documents `name`."""

    def __init__(self) -> None:
        self.target: str | None = None
        self.attrs: dict[str, str] = {}
        self.previous: type[ast.AST] | None = None

    def visit(self, node: ast.AST) -> Any:
        result = super().visit(node)
        self.previous = type(node)
        return result

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if isinstance(node.target, ast.Name):
            self.target = node.target.id

    def visit_Expr(self, node: ast.Expr) -> None:
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) and self.previous is ast.AnnAssign:
            if self.target:
                self.attrs[self.target] = inspect.cleandoc(node.value.value)
            self.target = None


@functools.cache
def _docstrings_in(filename: str) -> dict[str, list[dict[str, str]]]:
    """{class name: the attribute docstrings of each class statement of that name} of a source file, which is
    parsed once (and its syntax tree dropped); kept beside the file's bytecode (`_docstrings_cache`)."""
    source = "".join(linecache.getlines(filename))
    digest = hashlib.sha1(source.encode("utf-8", "surrogatepass")).hexdigest()
    cache = _docstrings_cache(filename)
    found = _read_docstrings(cache, digest)
    if found is not None:
        return found
    found = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ClassDef):
            visitor = _AttributeDocstrings()
            visitor.visit(node)
            found.setdefault(node.name, []).append(visitor.attrs)
    _write_docstrings(cache, digest, found)
    return found


DOCSTRINGS_CACHE_SCHEMA = 1


def _docstrings_cache(filename: str) -> Path | None:
    """Where a source file's attribute docstrings are kept between processes: beside its bytecode, in
    `__pycache__/<module>.<python tag>.docstrings.json` (issue speed: parsing the input modules' source took about
    0.025 s of every command's start). None where Python keeps no bytecode for it."""
    try:
        pyc = importlib.util.cache_from_source(filename)
    except (NotImplementedError, ValueError):
        return None
    return Path(pyc).with_suffix(".docstrings.json")


def _read_docstrings(cache: Path | None, digest: str) -> dict[str, list[dict[str, str]]] | None:
    """The kept docstrings when they were read off this very source (its SHA-1), else None."""
    if cache is None:
        return None
    try:
        kept = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(kept, dict) or kept.get("schema") != DOCSTRINGS_CACHE_SCHEMA or kept.get("source_sha1") != digest:
        return None
    classes = kept.get("classes")
    return classes if isinstance(classes, dict) else None


def _write_docstrings(cache: Path | None, digest: str, found: dict[str, list[dict[str, str]]]) -> None:
    """Keep the docstrings for the next process, as Python keeps bytecode: not when it writes none
    (PYTHONDONTWRITEBYTECODE), atomically (a temporary file renamed), and silently not where it cannot."""
    if cache is None or sys.dont_write_bytecode:
        return
    text = json.dumps({"schema": DOCSTRINGS_CACHE_SCHEMA, "source_sha1": digest, "classes": found})
    tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
    try:
        cache.parent.mkdir(exist_ok=True)
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, cache)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


def attribute_docstrings(cls: type) -> dict[str, str]:
    """{field: docstring} of the class statement that made `cls` (none when its source cannot be read, or
    when its module has two classes of its name)."""
    try:
        filename = inspect.getsourcefile(cls)
    except TypeError:  # a class without a source file
        return {}
    statements = _docstrings_in(filename).get(cls.__name__, []) if filename else []
    return dict(statements[0]) if len(statements) == 1 else {}


class Described(BaseModel):
    """A field's docstring is its description (what pydantic's `use_attribute_docstrings` does, with the
    same rule, but reading each module's source once instead of finding, tokenising and parsing every
    class's source anew: about 0.04 s CPU of every command's start, measured on the issue-26 VM)."""

    model_config = ConfigDict(defer_build=True)

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        docs = attribute_docstrings(cls)
        for name, info in cls.__pydantic_fields__.items():
            if info.description is None and name in docs:
                info.description = docs[name]
        cls.model_rebuild(force=True, raise_errors=False)  # now, with the descriptions (INPUT_CONFIG)


class Strict(Described):
    """Base: unknown keys are errors; NaN and infinity are rejected everywhere; validated inputs
    are frozen (a changed copy is made with `model_copy(update=...)`); a field's docstring is its
    description."""

    model_config = INPUT_CONFIG

    @field_validator("*", mode="before")
    @classmethod
    def _strict_scalars(cls, value: Any, info: ValidationInfo) -> Any:
        """No boolean or text where a number goes, no number or text for a yes/no, in what is read from
        YAML files (`yaml_safe.validate` sets the context; strict_types.py)."""
        return check_scalar(cls, info.field_name, value) if info.field_name and info.context else value
