"""Concrete toolsets; all of the package's I/O lives under here."""

from agent_hooks.tools.toolsets._base import Toolset
from agent_hooks.tools.toolsets._factory import build_toolsets
from agent_hooks.tools.toolsets._guard import GuardedTool
from agent_hooks.tools.toolsets._registry import ToolOverrides, ToolRegistry, ToolRoute
from agent_hooks.tools.toolsets.deployment import DeploymentTool, DeploymentToolset
from agent_hooks.tools.toolsets.internal import CurrentTimeTool, InternalToolset
from agent_hooks.tools.toolsets.mcp import McpTool, McpToolset
from agent_hooks.tools.toolsets.rest import RestApiToolset, RestTool

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
    "ToolOverrides",
    "ToolRegistry",
    "ToolRoute",
    "Toolset",
    "build_toolsets",
]
