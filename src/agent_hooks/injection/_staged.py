"""A synthetic injector whose content comes from running a :class:`StagedBaseTool`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agent_hooks.clock import Clock
from agent_hooks.errors import ToolError
from agent_hooks.injection._synthetic import SyntheticToolCallInjector
from agent_hooks.messages import Message
from agent_hooks.tools import StagedBaseTool, StageLevel, ToolCallResultEnricher
from agent_hooks.tools._base import StaticToolSource, ToolSource

__all__ = ["SYNTHETIC_PROBE_CALL_ID", "StagedToolSyntheticInjector"]

SYNTHETIC_PROBE_CALL_ID = "synthetic_injection_probe"
"""The call id a tool sees when it runs for an injection; the injected pair gets its own id."""


class StagedToolSyntheticInjector(SyntheticToolCallInjector):
    """Finds the tool by its final function name and runs it in a hidden stage.

    Raises from :meth:`get_content` when the tool is missing or fails: deciding that a failure
    must not fail the request belongs to the caller (the config-driven hook does exactly that).
    """

    def __init__(
        self,
        tools: ToolSource | Iterable[StagedBaseTool],
        *,
        clock: Clock | None = None,
        ttl_seconds: int | None = None,
        enrichers: Sequence[ToolCallResultEnricher] = (),
    ) -> None:
        super().__init__(clock=clock, ttl_seconds=ttl_seconds, enrichers=enrichers)
        self.tools = tools if isinstance(tools, ToolSource) else StaticToolSource(tools)

    async def get_content(self, messages: Sequence[Message]) -> str | None:
        """Run the tool and return its content.

        Raises:
            ToolError: no tool has the final function name.
            Exception: whatever the tool raised that its fallback did not handle.
        """
        name = self.get_tool_name()
        tool = await self.tools.find_tool(name)
        if tool is None:
            raise ToolError(name, "no such tool is available")
        result = await tool.invoke(
            SYNTHETIC_PROBE_CALL_ID, self.get_arguments(), stage_level=StageLevel.HIDDEN
        )
        return result.content
