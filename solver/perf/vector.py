"""Array-polymorphic arithmetic for the per-layout terms (issue 26): every function of solver/perf that
depends on the data-parallel degree d takes either one d (a plain int, from `evaluate`) or a numpy array of
every allowed d of one layout (the design space), and returns a float or an array alike. One implementation:
the scalar call runs the plain Python operations it always did (same floats, same ints, nothing numpy in a
report); the array call runs the same operations element-wise (IEEE arithmetic is the same, so each element
equals the scalar call at that d to the last bit).

Python's `if`, `max`, `min` and `math.ceil` do not work element-wise: a term that branches or clips on a
quantity that depends on d uses `select`, `maximum`, `minimum`, `ceil` from here instead.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np


def is_array(*values: Any) -> bool:
    """Some value is an array over d."""
    for v in values:
        if type(v) is np.ndarray:
            return True
    return False


def select(condition: Any, if_true: Any, if_false: Any) -> Any:
    """`if_true if condition else if_false`, element-wise when the condition is an array (both sides are then
    evaluated at every d: a side that is not selected must still be computable there)."""
    if type(condition) is np.ndarray:
        return np.where(condition, if_true, if_false)
    return if_true if condition else if_false


def maximum(a: Any, b: Any) -> Any:
    """max(a, b), element-wise over arrays."""
    if type(a) is np.ndarray or type(b) is np.ndarray:
        return np.maximum(a, b)
    return max(a, b)


def minimum(a: Any, b: Any) -> Any:
    """min(a, b), element-wise over arrays."""
    return np.minimum(a, b) if is_array(a, b) else min(a, b)


def ceil(x: Any) -> Any:
    """⌈x⌉ (an int for one value, a float array for an array)."""
    return np.ceil(x) if is_array(x) else math.ceil(x)


def any_positive(x: Any) -> bool:
    """Some element is > 0 (the value itself for one d)."""
    return bool(np.any(x > 0)) if is_array(x) else x > 0


def at(value: Any, j: int) -> Any:
    """The j-th d's element of an array term as a Python number (a scalar term is the same at every d)."""
    if isinstance(value, np.ndarray):
        return value[j].item() if value.ndim else value.item()
    return value
