"""Marking DI modules as preview features, installed only when ``ENABLE_PREVIEW_FEATURES`` is on."""

from __future__ import annotations

from typing import Any, TypeVar

from injector import Module

__all__ = ["is_preview_module", "preview_module"]

_PREVIEW_ATTRIBUTE = "__agent_hooks_preview__"

ModuleT = TypeVar("ModuleT", bound=type[Module])


def preview_module(cls: ModuleT) -> ModuleT:
    """Class decorator: ``create_injector`` skips this module while preview features are off."""
    setattr(cls, _PREVIEW_ATTRIBUTE, True)
    return cls


def is_preview_module(module: Any) -> bool:
    """Whether ``module`` (a module class or instance) was decorated with :func:`preview_module`."""
    owner = module if isinstance(module, type) else type(module)
    return getattr(owner, _PREVIEW_ATTRIBUTE, False) is True
