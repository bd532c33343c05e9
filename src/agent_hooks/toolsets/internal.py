"""Python tools registered by the host through DI, and the built-in ``current_time``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from agent_hooks.clock import Clock
from agent_hooks.config.diagnostics._suggest import did_you_mean, quoted_list
from agent_hooks.config.toolsets import InternalToolsetConfig
from agent_hooks.errors import ConfigError, ConfigIssue
from agent_hooks.tools import StagedBaseTool
from agent_hooks.toolsets._base import Toolset

__all__ = ["CurrentTimeTool", "InternalToolset"]


class CurrentTimeTool(StagedBaseTool):
    """The current time from the app clock, ISO-8601 in UTC (``2026-11-26T06:13:08Z``)."""

    name = "current_time"
    description = "The current date and time in UTC, ISO-8601."
    answers_at_once = True

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        moment = datetime.fromtimestamp(self.clock.now(), tz=UTC)
        return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


class InternalToolset(Toolset):
    """The registered tools a manifest selected by name; names are used verbatim."""

    def __init__(
        self,
        config: InternalToolsetConfig,
        registered: Sequence[StagedBaseTool],
        *,
        path: str = "toolsets[?]",
    ) -> None:
        """Raises:
        ConfigError: the manifest names a tool nobody registered.
        """
        super().__init__(config.name, timeout_seconds=config.timeout_seconds)
        by_name = {tool.name: tool for tool in reversed(registered)}
        issues = [
            ConfigIssue(
                f"{path}.tools[{index}]",
                f"no internal tool named {name!r} is registered"
                f"{did_you_mean(name, by_name)} (registered: {quoted_list(sorted(by_name))})",
            )
            for index, name in enumerate(config.tools)
            if name not in by_name
        ]
        if issues:
            raise ConfigError(issues)
        self._tools = [by_name[name] for name in config.tools]

    def may_provide(self, final_name: str) -> bool:
        return any(tool.name == final_name for tool in self._tools)

    def answers_at_once(self, final_name: str) -> bool:
        """Whether the tool this toolset has under ``final_name`` (if any) never waits."""
        return all(tool.answers_at_once for tool in self._tools if tool.name == final_name)

    async def list_tools(self) -> list[StagedBaseTool]:
        return list(self._tools)
