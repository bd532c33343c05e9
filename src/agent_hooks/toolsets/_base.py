"""A toolset: a named group of tools behind one connection (or none), with a lifecycle.

Toolsets open their connections lazily, on the first call that needs them, and close them in
:meth:`Toolset.aclose`; nothing happens at construction, so building an injector is free.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType
from typing import Self

from agent_hooks.tools import StagedBaseTool
from agent_hooks.tools._fallback import FallbackProcessor

__all__ = ["Toolset"]


class Toolset(ABC):
    """Tools under one name; each tool's ``name`` is already its final function name."""

    def __init__(
        self, name: str, *, timeout_seconds: float, fallback: FallbackProcessor | None = None
    ) -> None:
        self.name = name
        self.timeout_seconds = timeout_seconds
        self.fallback = fallback

    @abstractmethod
    async def list_tools(self) -> list[StagedBaseTool]:
        """Every tool this toolset offers (may connect to find out).

        Raises:
            ToolError: the toolset cannot be reached.
        """

    def may_provide(self, final_name: str) -> bool:
        """A cheap check that lets lookups skip toolsets that cannot own ``final_name``."""
        return True

    async def find_tool(self, final_name: str) -> StagedBaseTool | None:
        if not self.may_provide(final_name):
            return None
        return next((t for t in await self.list_tools() if t.name == final_name), None)

    async def aclose(self) -> None:
        """Release connections; safe to call more than once."""
        return None

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"
