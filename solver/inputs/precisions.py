"""Precision names (issue 39): the one registry of the numeric formats a catalog value may be keyed by.

A catalog field that differs by precision is a map keyed by name, e.g. `dense_tflops: {bf16: 989, fp8: 1979}`,
`compute_model: {gemm_efficiency: {bf16: 0.51, fp8: 0.49}}`, a stack's `gemm_factor: {bf16: 0.73}`. The names
are the keys of `PRECISIONS`; each names the precision whose value stands in where a map does not give it (None:
none stands in, the map must give it when the field is required):

- `mxfp8` runs on the FP8 tensor cores (its peak and GEMM efficiency are FP8's unless given);
- `fp4` without FP4 tensor cores dequantises the 4-bit weights into BF16 GEMMs (W4A16, as TensorRT-LLM runs MXFP4
  on Hopper): the BF16 values unless given.

Adding a precision (say `fp6`) is one entry here plus the catalog values that differ; the schema accepts the key and
`resolved` gives every map a value for it. An unknown key is a located input error (file:line, exit 2).

This module imports nothing from the package (the schema modules and the physics both read it).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, TypeVar

from pydantic import AfterValidator

PRECISIONS: dict[str, str | None] = {"bf16": None, "fp8": None, "mxfp8": "fp8", "fp4": "bf16"}
"""Precision name → the precision whose value stands in when a map does not give it (None: nothing stands in)."""

V = TypeVar("V")


def known_precision(name: str) -> str:
    """A map key must be a registered precision name."""
    if name not in PRECISIONS:
        raise ValueError(f"unknown precision '{name}' (known: {', '.join(PRECISIONS)}; "
                         "a new precision is one entry of solver/inputs/precisions.py PRECISIONS)")
    return name


PrecisionName = Annotated[str, AfterValidator(known_precision)]
"""A precision name as a map key (validated against `PRECISIONS`)."""


class ByPrecision(dict):
    """A resolved precision map of the physics (`resolved`): a dict that is hashable and read-only, so the frozen
    machine descriptions holding it (perf ComputeParams, Hardware) stay hashable; reads are plain dict reads."""

    __slots__ = ()

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def _read_only(self, *args: object, **kwargs: object) -> None:
        raise TypeError("a resolved precision map is read-only")

    __setitem__ = __delitem__ = update = pop = popitem = clear = setdefault = _read_only  # type: ignore[assignment]

    def __reduce__(self) -> tuple:  # pickle and copy build it whole (the two-process build sends Hardware)
        return (ByPrecision, (dict(self),))


def value_at(values: Mapping[str, V], precision: str) -> V | None:
    """The map's value at a precision, or at the precision standing in for it (PRECISIONS), else None."""
    name: str | None = precision
    while name is not None:
        if name in values:
            return values[name]
        name = PRECISIONS.get(name)
    return None


def resolved(values: Mapping[str, V], default: V | None = None) -> ByPrecision:
    """{every registered precision: its value} (stand-ins filled in; `default` where none; left out when neither)."""
    out: dict[str, V] = {}
    for name in PRECISIONS:
        value = value_at(values, name)
        if value is None:
            value = default
        if value is not None:
            out[name] = value
    return ByPrecision(out)


def missing(values: Mapping[str, object], required: tuple[str, ...] = ("bf16", "fp8")) -> str | None:
    """A message naming the required precisions a map lacks, or None."""
    lacking = [name for name in required if name not in values]
    if not lacking:
        return None
    return f"give {' and '.join(lacking)} (e.g. {{bf16: …, fp8: …}}; a GPU without FP8 cores repeats its BF16 value)"
