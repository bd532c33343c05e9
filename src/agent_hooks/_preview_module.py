"""Marking DI modules as preview features, installed only when ``ENABLE_PREVIEW_FEATURES`` is on."""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["is_preview_module", "preview_module"]

_PREVIEW_ATTRIBUTE = "__agent_hooks_preview__"

ModuleT = TypeVar("ModuleT")


def preview_module(module: ModuleT) -> ModuleT:
    """Decorator for a ``Module`` class or a function-style module (``def configure(binder)``):
    ``create_injector`` skips it while preview features are off."""
    setattr(module, _PREVIEW_ATTRIBUTE, True)
    return module


def is_preview_module(module: Any) -> bool:
    """Whether ``module`` (class, instance or function) was marked by :func:`preview_module`."""
    return getattr(module, _PREVIEW_ATTRIBUTE, False) is True
