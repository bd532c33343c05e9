"""Shared pydantic settings for everything a manifest author writes."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["StrictModel", "require_in_schema"]


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
