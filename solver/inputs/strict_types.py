"""Strict scalar types for every input model (issue 27): a number field takes a YAML number, a
yes/no field a YAML boolean — never `true` where a number goes (pydantic would read it as 1), a
quoted `'3'`, or `1_0` (YAML 1.2 has no digit separators; pydantic's `int()` would read 10).

pydantic's own strict mode is not used: it would also refuse `4e3` for an integer field (a number
the YAML 1.2 core schema reads as 4000.0) and lists where a tuple is declared. `Strict` in
schema.py calls `check_scalar` before each field is validated, so the error is located at the field.
"""
from __future__ import annotations

import functools
import types
import typing
from typing import Any

_NUMBER, _BOOL, _OTHER = "number", "boolean", "other"


def _kinds(annotation: Any) -> set[str]:
    """What scalar kinds an annotation accepts: number, boolean, or other (text, models, anything)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _kinds(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return set().union(*(_kinds(a) for a in typing.get_args(annotation)))
    if origin is typing.Literal:
        values = typing.get_args(annotation)
        return {_NUMBER} if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values) else {_OTHER}
    if annotation is type(None):
        return set()
    if annotation is bool:
        return {_BOOL}
    if annotation in (int, float):
        return {_NUMBER}
    return {_OTHER}


def _item_annotation(annotation: Any) -> Any | None:
    """The element type of a list or tuple annotation (None for anything else)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _item_annotation(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        items = [i for a in typing.get_args(annotation) if (i := _item_annotation(a)) is not None]
        return items[0] if len(items) == 1 else None
    if origin in (list, tuple):
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        return args[0] if len(args) == 1 else None
    return None


@functools.lru_cache(maxsize=4096)
def _wanted(model_cls: type, field_name: str) -> tuple[str | None, str | None]:
    """(the scalar kind the field wants, the kind each of its list items wants); None = no check."""
    info = model_cls.model_fields.get(field_name)  # type: ignore[attr-defined]
    if info is None:
        return None, None
    kinds = _kinds(info.annotation)
    item = _item_annotation(info.annotation)
    item_kinds = _kinds(item) if item is not None else set()
    one = next(iter(kinds)) if len(kinds) == 1 and _OTHER not in kinds else None
    each = next(iter(item_kinds)) if len(item_kinds) == 1 and _OTHER not in item_kinds else None
    return one, each


def _wrong(kind: str, value: Any) -> str | None:
    """Why `value` is not a YAML scalar of `kind` (None when it is, or is not a scalar at all)."""
    if kind == _NUMBER:
        if isinstance(value, bool):
            return f"must be a number, not the boolean {str(value).lower()}"
        if isinstance(value, str) and _reads_as_number(value):  # other text: pydantic's "valid number" error
            return (f"must be a number, not the text {value!r}: write it without quotes (and without _ between "
                    "digits)")
    elif kind == _BOOL and not isinstance(value, bool) and isinstance(value, (int, float, str)):
        return f"must be true or false, not {value!r}"
    return None


def _reads_as_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_scalar(model_cls: type, field_name: str, value: Any) -> Any:
    """`value` unchanged if it is of the kind the field wants; else ValueError saying what is wrong."""
    one, each = _wanted(model_cls, field_name)
    if one is not None and (why := _wrong(one, value)):
        raise ValueError(why)
    if each is not None and isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            if why := _wrong(each, item):
                raise ValueError(f"item {index + 1} {why}")
    return value
