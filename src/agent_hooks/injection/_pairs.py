"""A synthetic pair, and where a first-time pair goes in a history.

The rest of the placement rules (replace in place, append) live in :mod:`._index`, which applies
every hook of a run in one pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.messages import Message, Role

__all__ = ["SyntheticPair", "first_time_insert_index"]


@dataclass(frozen=True)
class SyntheticPair:
    """An assistant message with one tool call, and the ``tool`` message that answers it."""

    assistant: Message
    tool: Message


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
