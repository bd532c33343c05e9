"""Concrete toolsets; all of the package's I/O lives under here."""

from agent_hooks.toolsets._base import Toolset
from agent_hooks.toolsets._factory import ReusedToolsets, build_toolsets
from agent_hooks.toolsets._guard import GuardedTool
from agent_hooks.toolsets._registry import (
    ToolOverrides,
    ToolRegistry,
    ToolRoute,
    close_toolsets,
)
from agent_hooks.toolsets.deployment import DeploymentTool, DeploymentToolset
from agent_hooks.toolsets.internal import CurrentTimeTool, InternalToolset
from agent_hooks.toolsets.mcp import McpTool, McpToolset
from agent_hooks.toolsets.rest import RestApiToolset, RestTool

__all__ = [
    "CurrentTimeTool",
    "DeploymentTool",
    "DeploymentToolset",
    "GuardedTool",
    "InternalToolset",
    "McpTool",
    "McpToolset",
    "RestApiToolset",
    "RestTool",
    "ReusedToolsets",
    "ToolOverrides",
    "ToolRegistry",
    "ToolRoute",
    "Toolset",
    "build_toolsets",
    "close_toolsets",
]
