"""A synthetic pair, and where a first-time pair goes in a history.

The rest of the placement rules (replace in place, append) live in :mod:`._index`, which applies
every hook of a run in one pass.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from agent_hooks.injection._ids import is_synthetic_call_id, prefixed_call_id
from agent_hooks.injection._trust import SigningKeys
from agent_hooks.messages import FunctionCall, Message, Role, ToolCall
from agent_hooks.tools import ToolCallResult, ToolCallResultEnricher

__all__ = ["SyntheticPair", "build_pair", "first_time_insert_index", "new_call_id"]


@dataclass(frozen=True)
class SyntheticPair:
    """An assistant message with one tool call, and the ``tool`` message that answers it."""

    assistant: Message
    tool: Message


def new_call_id(
    prefix: str,
    content: str,
    *,
    checks_content: bool,
    expiry: int | None,
    keys: SigningKeys | None = None,
) -> str:
    """A fresh id for a pair of ``prefix`` carrying ``content`` (signed when there are keys).

    Hooks that compare content hash it into the id; ``always`` hashes a random token instead,
    so its ids differ on every call.

    Raises:
        ValueError: a negative expiry.
    """
    content_key = content if checks_content else secrets.token_hex(16)
    unsigned = prefixed_call_id(prefix, content_key, ttl_expiry_seconds=expiry)
    return (keys or SigningKeys()).sign(unsigned, content)


def build_pair(
    tool_name: str,
    call_id: str,
    content: str,
    arguments_text: str,
    enrichers: Sequence[ToolCallResultEnricher] = (),
) -> SyntheticPair:
    """The assistant call and the enriched tool answer for one injection."""
    function = FunctionCall(name=tool_name, arguments=arguments_text)
    call = ToolCall(id=call_id, type="function", function=function)
    assistant = Message(role=Role.ASSISTANT, content=None, tool_calls=[call])
    tool_message = Message(role=Role.TOOL, tool_call_id=call_id, content=content)
    result = ToolCallResult(tool_call_id=call_id, content=content, tool_name=tool_name)
    for enricher in enrichers:
        tool_message = enricher.enrich(tool_message, result)
    return SyntheticPair(assistant=assistant, tool=tool_message)


def first_time_insert_index(messages: Sequence[Message]) -> int:
    """After the first user message and the synthetic pairs right behind it; else the end.

    Skipping earlier synthetic pairs keeps several first-time hooks in manifest order. Only tool
    messages that answer the synthetic assistant message before them are part of its pair: a
    lone synthetic-looking tool message is not skipped.
    """
    first_user = next((i for i, m in enumerate(messages) if m.role is Role.USER), None)
    if first_user is None:
        return len(messages)
    index = first_user + 1
    while index < len(messages) and _is_synthetic_assistant(messages[index]):
        answered = {call.id for call in messages[index].tool_calls or []}
        index += 1
        while (
            index < len(messages)
            and messages[index].role is Role.TOOL
            and messages[index].tool_call_id in answered
        ):
            index += 1
    return index


def _is_synthetic_assistant(message: Message) -> bool:
    calls = message.tool_calls or []
    return (
        message.role is Role.ASSISTANT
        and bool(calls)
        and all(is_synthetic_call_id(call.id) for call in calls)
    )
