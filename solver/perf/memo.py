"""A memo for pure functions of one frozen input object (a workload, a model shape), keyed by the object's
identity: the design space calls them hundreds of thousands of times with the same object, and hashing a frozen
pydantic model (what `functools.lru_cache` does) walks all its fields on every call. Each entry holds the object
itself, so an id is never reused while its entry lives."""
from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

R = TypeVar("R")
MAX_ENTRIES = 64  # distinct objects remembered per function (a sweep's points); then it starts again


def by_identity(fn: Callable[[Any], R]) -> Callable[[Any], R]:
    """`fn(obj)` computed once per object (compared with `is`)."""
    memo: dict[int, tuple[Any, R]] = {}

    @wraps(fn)
    def cached(obj: Any) -> R:
        hit = memo.get(id(obj))
        if hit is not None and hit[0] is obj:
            return hit[1]
        if len(memo) >= MAX_ENTRIES:
            memo.clear()
        value = fn(obj)
        memo[id(obj)] = (obj, value)
        return value

    return cached
