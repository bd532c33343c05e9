"""The tool contract: what a hook calls, whatever sits behind the tool.

The public names are SPEC section 2's list. The layers above import the rest (the call context,
stage reporters, fallback processing, tool sources) from their private modules. Concrete toolsets
(MCP, REST, deployments, internal) live in :mod:`agent_hooks.toolsets`.
"""

from agent_hooks._toolnames import sanitize_toolname
from agent_hooks.tools._base import (
    StagedBaseTool,
    StaticToolSource,
    ToolCallResult,
    ToolCallResultEnricher,
    ToolSource,
)
from agent_hooks.tools._call_context import ToolCallContext, call_context
from agent_hooks.tools._fallback import ErrorMessageStrategy, FallbackStrategy
from agent_hooks.tools._stages import StageLevel, StageReporter

# SPEC section 2's list, plus five names that leave once their last importers name the private
# modules (pending, see PENDING in tests/test_exports.py): runtime/_runner.py imports StageReporter,
# ToolCallContext and call_context, injection/_staged.py StaticToolSource and ToolSource.
__all__ = [
    "ErrorMessageStrategy",
    "FallbackStrategy",
    "StageLevel",
    "StageReporter",
    "StagedBaseTool",
    "StaticToolSource",
    "ToolCallContext",
    "ToolCallResult",
    "ToolCallResultEnricher",
    "ToolSource",
    "call_context",
    "sanitize_toolname",
]
