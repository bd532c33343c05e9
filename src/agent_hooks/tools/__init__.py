"""The tool contract: what a hook calls, whatever sits behind the tool.

Concrete toolsets (MCP, REST, deployments, internal) live in :mod:`agent_hooks.toolsets`.
"""

from agent_hooks._toolnames import MAX_TOOL_NAME_LENGTH, sanitize_toolname
from agent_hooks.tools._base import (
    StagedBaseTool,
    StaticToolSource,
    ToolCallResult,
    ToolCallResultEnricher,
    ToolSource,
)
from agent_hooks.tools._call_context import (
    ToolCallContext,
    call_context,
    current_call_context,
    note,
)
from agent_hooks.tools._fallback import ErrorMessageStrategy, FallbackProcessor, FallbackStrategy
from agent_hooks.tools._stages import NullStageReporter, StageLevel, StageReporter

__all__ = [
    "MAX_TOOL_NAME_LENGTH",
    "ErrorMessageStrategy",
    "FallbackProcessor",
    "FallbackStrategy",
    "NullStageReporter",
    "StageLevel",
    "StageReporter",
    "StagedBaseTool",
    "StaticToolSource",
    "ToolCallContext",
    "ToolCallResult",
    "ToolCallResultEnricher",
    "ToolSource",
    "call_context",
    "current_call_context",
    "note",
    "sanitize_toolname",
]
