"""The tool contract: what a hook calls, whatever sits behind the tool.

The public names are SPEC section 2's list. The layers above import the rest (the call context,
stage reporters, fallback processing, tool sources) from their private modules. Concrete toolsets
(MCP, REST, deployments, internal) live in :mod:`agent_hooks.toolsets`.
"""

from agent_hooks._toolnames import sanitize_toolname
from agent_hooks.tools._base import StagedBaseTool, ToolCallResult, ToolCallResultEnricher
from agent_hooks.tools._fallback import ErrorMessageStrategy, FallbackStrategy
from agent_hooks.tools._stages import StageLevel

__all__ = [
    "ErrorMessageStrategy",
    "FallbackStrategy",
    "StageLevel",
    "StagedBaseTool",
    "ToolCallResult",
    "ToolCallResultEnricher",
    "sanitize_toolname",
]
