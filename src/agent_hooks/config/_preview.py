"""Preview features: manifest fields that exist only when ``ENABLE_PREVIEW_FEATURES`` is on.

A :func:`PreviewField` is marked ``x-preview`` in the schema. With preview off, validation drops
the field's value (with one warning naming it) and the published schema leaves the field out, so
authors never see or rely on a feature the host has not opted into.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import Field
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["PREVIEW_MARKER", "FeatureSettings", "PreviewField", "is_preview_field"]

logger = logging.getLogger("agent_hooks.config")

PREVIEW_MARKER = "x-preview"


class FeatureSettings(BaseSettings):
    """Feature switches read from the environment; build a new one each time it matters."""

    model_config = SettingsConfigDict(extra="ignore", env_ignore_empty=True)

    enable_preview_features: bool = False
    """``ENABLE_PREVIEW_FEATURES``: turn on preview manifest fields and preview DI modules."""


def PreviewField(*, default: None = None, description: str | None = None, **kwargs: Any) -> Any:
    """A ``Field`` that only exists while preview features are on; it must default to ``None``.

    Raises:
        ValueError: when given a default other than ``None``, which gating could not restore.
    """
    if default is not None:
        raise ValueError("a PreviewField must default to None, so gating can switch it off")
    extra = dict(kwargs.pop("json_schema_extra", None) or {})
    extra[PREVIEW_MARKER] = True
    return Field(default=None, description=description, json_schema_extra=extra, **kwargs)


def is_preview_field(field: FieldInfo) -> bool:
    extra = field.json_schema_extra
    return isinstance(extra, dict) and extra.get(PREVIEW_MARKER) is True
