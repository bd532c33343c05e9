"""Concrete toolsets; all of the package's I/O lives under here."""

from agent_hooks.tools.toolsets._base import Toolset
from agent_hooks.tools.toolsets._factory import build_toolsets
from agent_hooks.tools.toolsets._guard import GuardedTool
from agent_hooks.tools.toolsets._registry import ToolRegistry
from agent_hooks.tools.toolsets.internal import CurrentTimeTool, InternalToolset

__all__ = [
    "CurrentTimeTool",
    "GuardedTool",
    "InternalToolset",
    "ToolRegistry",
    "Toolset",
    "build_toolsets",
]
