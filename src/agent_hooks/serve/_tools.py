"""What the model is told about the hooks' tools, for dialects that must declare them.

Anthropic refuses tool blocks in a request without tool definitions, so the proxy declares the
tools of the pairs it forwards (SPEC 13): name, description and input schema, looked up where the
hook's tool lives (the registry's one resolution path). The tool was usually resolved by its hook
a moment ago; a lookup that fails or takes longer than :data:`LOOKUP_SECONDS` leaves the tool
described by its name and ``{"type": "object"}`` only. Found definitions are kept for the
process's life (a manifest's tools do not change while it is served).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable

from agent_hooks import HookRunner
from agent_hooks.errors import AgentHooksError
from agent_hooks.serve._dialects import ToolDefinition
from agent_hooks.toolsets import ToolRegistry

__all__ = ["LOOKUP_SECONDS", "ToolCatalog"]

logger = logging.getLogger("agent_hooks.serve")

LOOKUP_SECONDS = 2.0
"""Longest a request waits for the definitions of its pairs' tools."""


class ToolCatalog:
    """Definitions of the manifest's tools by final name; shared by every request."""

    def __init__(self, runner: HookRunner | None, registry: ToolRegistry) -> None:
        """``runner`` is ``None`` while preview features are off (no hooks, no pairs)."""
        self._routes = {
            hook.tool: registry.route(hook.tool, toolset_name=hook.config.toolset_name)
            for hook in (runner.hooks if runner is not None else ())
        }
        self._registry = registry
        self._known: dict[str, ToolDefinition] = {}

    async def definitions(self, names: Iterable[str]) -> dict[str, ToolDefinition]:
        """A definition for each name; unknown tools get the bare one."""
        wanted = list(dict.fromkeys(names))
        missing = [name for name in wanted if name not in self._known and name in self._routes]
        if missing:
            try:
                async with asyncio.timeout(LOOKUP_SECONDS):
                    for name in missing:
                        await self._look_up(name)
            except TimeoutError:
                logger.warning("tool definitions not found in time; tools declared by name")
        return {name: self._known.get(name, ToolDefinition(name)) for name in wanted}

    async def _look_up(self, name: str) -> None:
        try:
            tool = (await self._registry.resolve(self._routes[name])).inner
        except AgentHooksError as exc:
            logger.warning("tool %s declared by name only: %s", name, exc)
            return
        self._known[name] = ToolDefinition(name, tool.description, tool.parameters)
