"""All toolsets of an app, looked up by final function name, closed together."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any, Self

from agent_hooks.config.toolsets import DEFAULT_TIMEOUT_SECONDS
from agent_hooks.errors import ToolError, UsageError
from agent_hooks.tools import FallbackProcessor, StagedBaseTool, StageReporter
from agent_hooks.tools.toolsets._base import Toolset
from agent_hooks.tools.toolsets._guard import GuardedTool

__all__ = ["ToolRegistry"]

logger = logging.getLogger("agent_hooks.tools")


class _UnreachableTool(StagedBaseTool):
    """Stands for a tool whose toolset could not be reached: running it re-raises why."""

    def __init__(self, name: str, error: ToolError) -> None:
        super().__init__(name=name)
        self.error = error

    async def execute(self, arguments: Mapping[str, Any]) -> str | None:
        raise self.error


class ToolRegistry:
    """A :class:`~agent_hooks.tools.ToolSource` over the app's toolsets.

    Tools come back wrapped in :class:`GuardedTool` (deadline, fallback, host stages). The
    registry owns the toolsets: :meth:`aclose` closes every one, once.

    ``registered_tools`` (the DI list of Python tools, ``current_time`` included) answer by their
    verbatim name when no toolset has the name, as in the seed design where a hook sees every
    registered tool; an ``internal`` toolset adds a timeout, a fallback and a check at start-up.
    """

    def __init__(
        self,
        toolsets: Sequence[Toolset],
        *,
        registered_tools: Sequence[StagedBaseTool] = (),
        stage_reporter: StageReporter | None = None,
    ) -> None:
        self.toolsets = tuple(toolsets)
        self.registered_tools = tuple(registered_tools)
        self._stage_reporter = stage_reporter
        self._guarded: dict[str, StagedBaseTool] = {}
        self._closed = False

    async def find_tool(self, name: str) -> StagedBaseTool | None:
        """The first toolset's tool with this final name, guarded; ``None`` when none has it.

        Raises:
            UsageError: the registry was closed.
            ToolError: a toolset that may own the name could not be reached.
        """
        if self._closed:
            raise UsageError("the tool registry is closed; create a new app to call tools")
        if name in self._guarded:
            return self._guarded[name]
        for toolset in self.toolsets:
            try:
                tool = await toolset.find_tool(name)
            except ToolError as exc:
                if toolset.fallback is None:
                    raise
                # The toolset's fallback covers "cannot reach it" too; not cached, so the next
                # lookup tries the toolset again.
                unreachable = _UnreachableTool(name, exc)
                return self._guard(unreachable, toolset.timeout_seconds, toolset.fallback)
            if tool is not None:
                return self._guard(tool, toolset.timeout_seconds, toolset.fallback, cache=True)
        registered = next((t for t in self.registered_tools if t.name == name), None)
        if registered is not None:
            return self._guard(registered, DEFAULT_TIMEOUT_SECONDS, None, cache=True)
        return None

    def _guard(
        self,
        tool: StagedBaseTool,
        timeout_seconds: float,
        fallback: FallbackProcessor | None,
        *,
        cache: bool = False,
    ) -> StagedBaseTool:
        """``tool`` behind its deadline, fallback and the host's stages; kept when ``cache``."""
        guarded = GuardedTool(
            tool,
            timeout_seconds=timeout_seconds,
            fallback=fallback,
            stage_reporter=self._stage_reporter,
        )
        if cache:
            self._guarded[tool.name] = guarded
        return guarded

    async def aclose(self) -> None:
        """Close every toolset; one failing to close does not keep the others open."""
        if self._closed:
            return
        self._closed = True
        for toolset in self.toolsets:
            try:
                await toolset.aclose()
            except Exception:
                logger.exception("toolset=%s outcome=close_failed", toolset.name)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
