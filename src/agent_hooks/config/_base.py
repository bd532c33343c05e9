"""Shared pydantic settings for everything a manifest author writes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

__all__ = ["JsonInt", "JsonNumber", "StrictModel", "require_in_schema", "whole_float_to_int"]


class StrictModel(BaseModel):
    """Unknown keys are errors and attribute docstrings become schema descriptions."""

    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


def require_in_schema(*names: str) -> Callable[[dict[str, Any]], None]:
    """Mark fields required in the JSON schema although Python gives them a default.

    Discriminators (``type``, ``transport``, ``kind``) have defaults so Python code can build a
    model without them, but a manifest must spell them out: the discriminated union refuses data
    without its tag. Marking them required keeps the editor schema and the validator in agreement.
    """

    def extend(schema: dict[str, Any]) -> None:
        required: list[str] = schema.setdefault("required", [])
        for name in names:
            if name not in required:
                required.insert(0, name)

    return extend


def whole_float_to_int(value: object) -> object:
    """``60.0`` → ``60``: JSON Schema counts a number without a fraction as an integer."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JsonInt = Annotated[int, Field(strict=True), BeforeValidator(whole_float_to_int)]
"""An integer as JSON Schema counts them: ``60`` and ``60.0``, never ``"60"`` or ``true``, so
the validator and the published schema (``"type": "integer"``) accept the same manifests."""

JsonNumber = Annotated[float, Field(strict=True, allow_inf_nan=False)]
"""A JSON number (integer or not), never ``"30"`` or ``true``, as the schema's ``"number"``;
finite (``1e400`` overflows to infinity, which no JSON number means)."""
