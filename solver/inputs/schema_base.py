"""The base of every input model (imported by schema.py and the input modules it references)."""
from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from .strict_types import check_scalar

PosInt = Annotated[int, Field(ge=1)]
Identifier = Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")]
Date = Annotated[str, Field(pattern=r"^\d{4}(-\d{2}){0,2}$")]


class Strict(BaseModel):
    """Base: unknown keys are errors; NaN and infinity are rejected everywhere; validated inputs
    are frozen (a changed copy is made with `model_copy(update=...)`); a field's docstring is its
    description."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, validate_default=True, frozen=True,
                              use_attribute_docstrings=True)

    @field_validator("*", mode="before")
    @classmethod
    def _strict_scalars(cls, value: Any, info: ValidationInfo) -> Any:
        """No boolean or text where a number goes, no number or text for a yes/no, in what is read from
        YAML files (`yaml_safe.validate` sets the context; strict_types.py)."""
        return check_scalar(cls, info.field_name, value) if info.field_name and info.context else value
