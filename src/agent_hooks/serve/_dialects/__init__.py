"""The APIs ``serve`` speaks, each read into the hooks' history and written back (SPEC 13).

One module per dialect; what they share (the request, answer and error contract, and the splice
that writes pairs back without touching anything else) is in ``_base``.
"""

from agent_hooks.serve._dialects._anthropic import (
    ANTHROPIC,
    ANTHROPIC_COUNT_TOKENS,
    tool_result_text,
)
from agent_hooks.serve._dialects._base import (
    OPENAI_CREDENTIALS,
    RELAYED_MESSAGES,
    Answer,
    AnswerReader,
    Credentials,
    Dialect,
    InvalidRequest,
    ParsedRequest,
    RenderContext,
    ToolDefinition,
    is_role_only,
    reads_more_than_role,
    synthetic_call_id,
    validate_messages,
)
from agent_hooks.serve._dialects._chat import CHAT
from agent_hooks.serve._dialects._responses import RESPONSES, ResponsesRequest
from agent_hooks.serve._dialects._usage import Usage

__all__ = [
    "ANTHROPIC",
    "ANTHROPIC_COUNT_TOKENS",
    "CHAT",
    "OPENAI_CREDENTIALS",
    "RELAYED_MESSAGES",
    "RESPONSES",
    "Answer",
    "AnswerReader",
    "Credentials",
    "Dialect",
    "InvalidRequest",
    "ParsedRequest",
    "RenderContext",
    "ResponsesRequest",
    "ToolDefinition",
    "Usage",
    "is_role_only",
    "reads_more_than_role",
    "synthetic_call_id",
    "tool_result_text",
    "validate_messages",
]
