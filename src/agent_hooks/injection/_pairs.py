"""Pure history mechanics: where a synthetic pair goes, given the history and the new pair.

Every function takes a history and returns a new list; no message is ever changed in place
(messages are frozen models; replacing one means building another with ``model_copy``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_hooks.config.hooks import InjectionFrequency
from agent_hooks.injection._ids import is_synthetic_call_id, ttl_expiry
from agent_hooks.messages import Message, Role, ToolCall

__all__ = [
    "SyntheticPair",
    "find_latest_pair",
    "first_time_insert_index",
    "inject_pair",
    "is_fresh",
]


@dataclass(frozen=True)
class SyntheticPair:
    """An assistant message with one tool call, and the ``tool`` message that answers it."""

    assistant: Message
    tool: Message


@dataclass(frozen=True)
class _Located:
    assistant_index: int | None
    tool_index: int
    tool: Message


def find_latest_pair(messages: Sequence[Message], prefix: str) -> _Located | None:
    """The most recent ``tool`` message whose call id starts with ``prefix``, and its caller."""
    for tool_index in range(len(messages) - 1, -1, -1):
        message = messages[tool_index]
        call_id = message.tool_call_id
        if message.role is Role.TOOL and call_id is not None and call_id.startswith(prefix):
            return _Located(_caller_index(messages, tool_index, call_id), tool_index, message)
    return None


def is_fresh(messages: Sequence[Message], prefix: str, now: float) -> bool:
    """Whether the latest result for ``prefix`` still has a TTL in the future."""
    located = find_latest_pair(messages, prefix)
    if located is None:
        return False
    expiry = ttl_expiry(located.tool.tool_call_id or "")
    return expiry is not None and now < expiry


def first_time_insert_index(messages: Sequence[Message]) -> int:
    """After the first user message and the synthetic pairs right behind it; else the end.

    Skipping earlier synthetic pairs keeps several first-time hooks in manifest order.
    """
    first_user = next((i for i, m in enumerate(messages) if m.role is Role.USER), None)
    if first_user is None:
        return len(messages)
    index = first_user + 1
    while index < len(messages) and _is_synthetic_assistant(messages[index]):
        index += 1
        while (
            index < len(messages)
            and messages[index].role is Role.TOOL
            and is_synthetic_call_id(messages[index].tool_call_id)
        ):
            index += 1
    return index


def inject_pair(
    messages: Sequence[Message],
    pair: SyntheticPair,
    *,
    frequency: InjectionFrequency,
    prefix: str,
) -> list[Message]:
    """The history with ``pair`` placed as SPEC section 4 says."""
    history = list(messages)
    if frequency is InjectionFrequency.ALWAYS:
        return [*history, pair.assistant, pair.tool]
    located = find_latest_pair(history, prefix)
    if located is None:
        index = first_time_insert_index(history)
        return [*history[:index], pair.assistant, pair.tool, *history[index:]]
    if located.tool.content != pair.tool.content:
        return [*history, pair.assistant, pair.tool]
    old_id = located.tool.tool_call_id
    history[located.tool_index] = pair.tool
    if located.assistant_index is not None:
        caller = history[located.assistant_index]
        new_call = pair.assistant.tool_calls[0] if pair.assistant.tool_calls else None
        calls: list[ToolCall] = [
            new_call if call.id == old_id and new_call is not None else call
            for call in caller.tool_calls or []
        ]
        history[located.assistant_index] = caller.model_copy(update={"tool_calls": calls})
    return history


def _caller_index(messages: Sequence[Message], tool_index: int, call_id: str) -> int | None:
    for index in range(tool_index - 1, -1, -1):
        message = messages[index]
        if message.role is Role.ASSISTANT and any(
            call.id == call_id for call in message.tool_calls or []
        ):
            return index
    return None


def _is_synthetic_assistant(message: Message) -> bool:
    calls = message.tool_calls or []
    return (
        message.role is Role.ASSISTANT
        and bool(calls)
        and all(is_synthetic_call_id(call.id) for call in calls)
    )
