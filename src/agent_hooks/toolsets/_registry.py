"""All toolsets of an app: where each hook's tool lives, and closing them together.

A hook's tool is resolved to exactly one place (SPEC section 3, "Tool routing"). With a
``toolset_name`` only that toolset is asked, so a broken or slow sibling never affects the hook.
Without one, the verbatim name is looked up among the tools the manifest declares (internal,
deployment and REST toolsets, in manifest order), then in the MCP toolsets whose name is a prefix
of it (longest first; one that fails to start does not hide the tool in another), then among the
Python tools registered through DI. Which toolsets to ask is decided once per hook, when the app
is built (:meth:`ToolRegistry.route`); asking them happens per call (:meth:`ToolRegistry.resolve`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Self

from agent_hooks._toolnames import sanitize_toolname
from agent_hooks.config.toolsets import DEFAULT_TIMEOUT_SECONDS
from agent_hooks.errors import ToolError, ToolNotFoundError, UsageError
from agent_hooks.tools import StagedBaseTool
from agent_hooks.tools._fallback import FallbackProcessor
from agent_hooks.toolsets._base import Toolset
from agent_hooks.toolsets._guard import GuardedTool
from agent_hooks.toolsets.internal import InternalToolset
from agent_hooks.toolsets.mcp import McpToolset

__all__ = ["ToolOverrides", "ToolRegistry", "ToolRoute", "close_toolsets"]

logger = logging.getLogger("agent_hooks.tools")


@dataclass(frozen=True)
class ToolOverrides:
    """Tools that answer for a final name before any toolset is asked (the test kit's seam).

    A replaced tool never starts its toolset's server. Bound in DI; empty by default.
    """

    tools: Mapping[str, StagedBaseTool] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolRoute:
    """Where one hook's tool is looked for, decided once when the app is built."""

    final_name: str
    toolsets: tuple[Toolset, ...]
    registered: StagedBaseTool | None = None
    override: StagedBaseTool | None = None
    toolset_name: str | None = None

    @property
    def answers_at_once(self) -> bool:
        """Whether every tool that may answer on this route never waits (no server, no HTTP, no
        host code that could ignore a cancel): such a call needs no task of its own to be given
        up at its deadline."""
        if self.override is not None:
            return self.override.answers_at_once
        return (self.registered is None or self.registered.answers_at_once) and all(
            isinstance(toolset, InternalToolset) and toolset.answers_at_once(self.final_name)
            for toolset in self.toolsets
        )


class _UnreachableTool(StagedBaseTool):
    """Stands for a tool whose toolset could not be reached: running it re-raises why."""

    def __init__(self, name: str, error: ToolError) -> None:
        super().__init__(name=name)
        self.error = error

    async def execute(self, arguments: Mapping[str, Any]) -> str | None:
        raise self.error


class ToolRegistry:
    """The app's toolsets and registered tools; owns the toolsets and closes them once."""

    def __init__(
        self,
        toolsets: Sequence[Toolset],
        *,
        registered_tools: Sequence[StagedBaseTool] = (),
        overrides: ToolOverrides | None = None,
    ) -> None:
        self.toolsets = tuple(toolsets)
        self.registered_tools = tuple(registered_tools)
        self.overrides = overrides or ToolOverrides()
        self._guarded: dict[tuple[int, str], GuardedTool] = {}
        self._closed = False

    def route(self, final_name: str, *, toolset_name: str | None = None) -> ToolRoute:
        """Which toolsets may answer for ``final_name``, in the order they are asked."""
        override = self.overrides.tools.get(final_name)
        if toolset_name is not None:
            named = tuple(t for t in self.toolsets if t.name == toolset_name)
            return ToolRoute(final_name, named, override=override, toolset_name=toolset_name)
        declared = [
            t for t in self.toolsets if not isinstance(t, McpToolset) and t.may_provide(final_name)
        ]
        servers = sorted(
            (
                t
                for t in self.toolsets
                if isinstance(t, McpToolset)
                and final_name.startswith(sanitize_toolname(f"{t.name}_"))
            ),
            key=lambda t: len(sanitize_toolname(t.name)),
            reverse=True,
        )
        registered = next((t for t in self.registered_tools if t.name == final_name), None)
        return ToolRoute(final_name, (*declared, *servers), registered, override)

    async def resolve(self, route: ToolRoute) -> GuardedTool:
        """The tool for ``route``, behind its toolset's deadline and fallback.

        Raises:
            UsageError: the registry was closed.
            ToolError: no place on the route has the tool, or the place that may have it
                cannot be reached (the error names the final tool).
        """
        if self._closed:
            raise UsageError("the tool registry is closed; create a new app to call tools")
        name = route.final_name
        if route.override is not None:
            return GuardedTool(route.override, timeout_seconds=DEFAULT_TIMEOUT_SECONDS)
        failures: list[ToolError] = []
        for toolset in route.toolsets:
            cached = self._guarded.get((id(toolset), name))
            if cached is not None:
                return cached
            try:
                tool = await toolset.find_tool(name)
            except ToolError as exc:
                error = exc if exc.tool_name == name else ToolError(name, exc.reason)
                if toolset.fallback is not None:
                    # The toolset's fallback covers "cannot reach it" too; not cached, so the
                    # next call tries the toolset again.
                    return self._guard(_UnreachableTool(name, error), toolset, toolset.fallback)
                failures.append(error)
                continue
            if tool is not None:
                guarded = self._guard(tool, toolset, toolset.fallback)
                self._guarded[(id(toolset), name)] = guarded
                return guarded
        if route.registered is not None:
            return GuardedTool(route.registered, timeout_seconds=DEFAULT_TIMEOUT_SECONDS)
        if failures:
            raise failures[0]
        if route.toolset_name is not None:
            raise ToolNotFoundError(name, f"toolset {route.toolset_name!r} has no such tool")
        raise ToolNotFoundError(name, "no such tool is available")

    async def find_tool(self, name: str) -> GuardedTool | None:
        """The tool a hook without ``toolset_name`` would call by this verbatim name.

        Raises:
            UsageError: the registry was closed.
            ToolError: a toolset that may own the name could not be reached.
        """
        try:
            return await self.resolve(self.route(name))
        except ToolNotFoundError:
            return None

    @staticmethod
    def _guard(
        tool: StagedBaseTool, toolset: Toolset, fallback: FallbackProcessor | None
    ) -> GuardedTool:
        return GuardedTool(tool, timeout_seconds=toolset.timeout_seconds, fallback=fallback)

    async def aclose(self) -> None:
        """Close every toolset at once; one failing to close does not keep the others open."""
        if self._closed:
            return
        self._closed = True
        await close_toolsets(self.toolsets)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


async def close_toolsets(toolsets: Iterable[Toolset]) -> None:
    """Close ``toolsets`` at once; one failing to close does not keep the others open."""
    await asyncio.gather(*(_close(toolset) for toolset in toolsets))


async def _close(toolset: Toolset) -> None:
    try:
        await toolset.aclose()
    except Exception:
        logger.exception("toolset=%s outcome=close_failed", toolset.name)
