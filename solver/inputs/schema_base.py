"""The base of every input model (imported by schema.py and the input modules it references)."""
from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

PosInt = Annotated[int, Field(ge=1)]
Identifier = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")]
Date = Annotated[str, Field(pattern=r"^\d{4}(-\d{2}){0,2}$")]


class Strict(BaseModel):
    """Base: unknown keys are errors; NaN and infinity are rejected everywhere; validated inputs
    are frozen (a changed copy is made with `model_copy(update=...)`); a field's docstring is its
    description."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_default=True, frozen=True,
                              use_attribute_docstrings=True)
