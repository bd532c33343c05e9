"""From manifest toolset declarations to live (unopened) toolsets, or to live ones taken over."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import assert_never

from agent_hooks.config.toolsets import (
    DeploymentToolsetConfig,
    ErrorMessageFallbackConfig,
    InternalToolsetConfig,
    McpToolsetConfig,
    RestApiToolsetConfig,
    ToolsetConfig,
)
from agent_hooks.errors import ConfigError, ConfigIssue
from agent_hooks.tools import ErrorMessageStrategy, StagedBaseTool
from agent_hooks.tools._fallback import FallbackProcessor
from agent_hooks.toolsets._base import Toolset
from agent_hooks.toolsets.deployment import DeploymentToolset
from agent_hooks.toolsets.internal import InternalToolset
from agent_hooks.toolsets.mcp import McpToolset
from agent_hooks.toolsets.rest import RestApiToolset

__all__ = ["ReusedToolsets", "build_toolsets", "fallback_processor"]


@dataclass(frozen=True)
class ReusedToolsets:
    """Live toolsets a new app takes over from an app it replaces, each with the declaration it
    was built from. Bound in DI; empty by default.

    ``agent-hooks serve`` reloads its manifest into a new app: a toolset whose declaration did
    not change is the same object in the new app, so its MCP sessions and HTTP clients (and a
    server's warm state) survive the reload. A changed declaration gets a new toolset.
    """

    built: tuple[tuple[ToolsetConfig, Toolset], ...] = ()

    def find(self, config: ToolsetConfig) -> Toolset | None:
        """The live toolset built from a declaration equal to ``config``, if any."""
        return next((toolset for declared, toolset in self.built if declared == config), None)


def build_toolsets(
    configs: Sequence[ToolsetConfig],
    *,
    internal_tools: Sequence[StagedBaseTool],
    reused: ReusedToolsets | None = None,
) -> list[Toolset]:
    """One toolset per declaration, in manifest order; nothing is opened yet (MCP sessions and
    HTTP clients open on first use). A declaration ``reused`` holds unchanged gets that live
    toolset instead of a new one.

    Raises:
        ConfigError: a declaration cannot be honoured (every problem, not just the first).
    """
    toolsets: list[Toolset] = []
    issues: list[ConfigIssue] = []
    for index, config in enumerate(configs):
        live = reused.find(config) if reused is not None else None
        if live is not None:
            toolsets.append(live)
            continue
        try:
            toolsets.append(_build(config, f"toolsets[{index}]", internal_tools))
        except ConfigError as exc:
            issues.extend(exc.issues)
    if issues:
        raise ConfigError(issues)
    return toolsets


def fallback_processor(config: ErrorMessageFallbackConfig | None) -> FallbackProcessor | None:
    if config is None:
        return None
    return FallbackProcessor([ErrorMessageStrategy(config.template)])


def _build(config: ToolsetConfig, path: str, internal_tools: Sequence[StagedBaseTool]) -> Toolset:
    match config:
        case InternalToolsetConfig():
            toolset: Toolset = InternalToolset(config, internal_tools, path=path)
        case McpToolsetConfig():
            toolset = McpToolset(config)
        case RestApiToolsetConfig():
            toolset = RestApiToolset(config)
        case DeploymentToolsetConfig():
            toolset = DeploymentToolset(config)
        case _:
            assert_never(config)
    toolset.fallback = fallback_processor(config.fallback)
    return toolset
