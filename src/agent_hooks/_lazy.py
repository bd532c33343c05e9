"""Packages that re-export their public names without importing them until first use (PEP 562).

``import agent_hooks`` and ``import agent_hooks.config`` sit under every command and every
host, so they import nothing until a name is asked for: the CLI's ``--help`` never builds the
manifest models, and ``validate`` never loads the runtime. Type checkers see the real imports
(the package keeps them under ``if TYPE_CHECKING:``), so nothing changes for them.

The same goes for a seam a lower layer defines and a higher one fills (the seed's injectors run
through the hook runtime, which sits above them): the package root, which every import of a
submodule goes through first, names the module that fills it (:func:`bind_late`), and the lower
layer loads it when first used (:func:`resolve_late`), so no import order is needed of a host.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["bind_late", "lazy_exports", "resolve_late"]


def lazy_exports(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public names live in ``homes``.

    ``homes`` maps each name to the module that defines it; a name is imported on first access
    and then kept in ``namespace`` (the package's globals), so later lookups cost nothing.
    """

    def getattr_(name: str) -> Any:
        try:
            home = homes[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *homes})

    return getattr_, dir_


_late_homes: dict[str, str] = {}
_late_values: dict[str, Any] = {}


def bind_late(name: str, home: str) -> None:
    """Say that module ``home`` defines ``name``, a seam a lower layer looks up by name."""
    _late_homes[name] = home


def resolve_late(name: str) -> Any:
    """``name`` from the module :func:`bind_late` gave it, imported on first use.

    Raises:
        KeyError: nothing bound ``name`` (the package root binds every seam when imported).
    """
    try:
        return _late_values[name]
    except KeyError:
        value = getattr(importlib.import_module(_late_homes[name]), name)
        _late_values[name] = value
        return value
