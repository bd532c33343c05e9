"""A synthetic pair, and where a first-time pair goes in a history.

The rest of the placement rules (replace in place, append) live in :mod:`._index`, which applies
every hook of a run in one pass.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import NamedTuple

from agent_hooks.injection._ids import is_synthetic_call_id, prefixed_call_id
from agent_hooks.injection._trust import SigningKeys
from agent_hooks.messages import FunctionCall, Message, Role, ToolCall
from agent_hooks.tools import ToolCallResult, ToolCallResultEnricher

__all__ = ["PairSpec", "SyntheticPair", "build_pair", "first_time_insert_index"]


class SyntheticPair(NamedTuple):
    """An assistant message with one tool call, and the ``tool`` message that answers it."""

    assistant: Message
    tool: Message

    @property
    def call(self) -> ToolCall:
        calls = self.assistant.tool_calls
        assert calls, "a synthetic pair's assistant message holds its call"
        return calls[0]

    @property
    def function(self) -> FunctionCall | None:
        return self.call.function

    @property
    def call_id(self) -> str:
        return self.call.id


class PairSpec(NamedTuple):
    """What a pair is built from, besides its content: the hook's identity and id rules."""

    tool_name: str
    prefix: str
    """``ah_{i8}_`` of the tool and its identity arguments (the template, when templated)."""
    arguments_text: str
    """The JSON text the assistant call shows: the rendered arguments."""
    checks_content: bool
    """``append_if_changed`` hashes the content into the id; ``always`` a random token, so its
    ids differ on every call."""
    expiry: int | None = None
    function: FunctionCall | None = None
    """The call the assistant message shows, when it is the same on every run (literal
    arguments: ``arguments_text`` as its ``arguments``); built from the fields above otherwise."""


def build_pair(
    spec: PairSpec,
    content: str,
    *,
    keys: SigningKeys | None = None,
    enrichers: Sequence[ToolCallResultEnricher] = (),
) -> SyntheticPair:
    """The assistant call and the enriched tool answer for one injection.

    The id hashes and signs the text the tool message finally holds, after every enricher (SPEC
    section 9): an enricher that changes the content changes the id, so an unchanged enriched
    result is recognised on the next turn. Enrichers see a provisional id of the raw content.

    Raises:
        ValueError: an enricher left content that is not text, or a negative expiry.
        Exception: whatever an enricher raised.
    """
    content = str.__str__(content)  # a str subclass is stored as plain text, as validation does
    token = None if spec.checks_content else secrets.token_hex(16)
    provisional = prefixed_call_id(spec.prefix, token or content, ttl_expiry_seconds=spec.expiry)
    unsigned = provisional
    enriched: Message | None = None
    if enrichers:
        enriched = Message(role=Role.TOOL, tool_call_id=provisional, content=content)
        result = ToolCallResult(content=content, tool_call_id=provisional, tool_name=spec.tool_name)
        for enricher in enrichers:
            enriched = enricher.enrich(enriched, result)
        final = enriched.content
        if not isinstance(final, str):
            kind = type(final).__name__
            raise ValueError(f"an enricher left {kind} content; a tool answer is text")
        content = final
        unsigned = prefixed_call_id(spec.prefix, token or final, ttl_expiry_seconds=spec.expiry)
    function = spec.function or FunctionCall(name=spec.tool_name, arguments=spec.arguments_text)
    call_id = keys.sign(unsigned, function, content) if keys else unsigned  # no key: unsigned
    call = ToolCall(id=call_id, type="function", function=function)
    assistant = Message(role=Role.ASSISTANT, content=None, tool_calls=[call])
    if enriched is None:
        tool_message = Message(role=Role.TOOL, tool_call_id=call_id, content=content)
    elif enriched.tool_call_id != call_id:
        tool_message = enriched.model_copy(update={"tool_call_id": call_id})
    else:
        tool_message = enriched
    return SyntheticPair(assistant=assistant, tool=tool_message)


def first_time_insert_index(
    messages: Sequence[Message], is_synthetic: Callable[[str], bool] = is_synthetic_call_id
) -> int:
    """After the first user message and the synthetic pairs right behind it; else the end.

    Skipping earlier synthetic pairs keeps several first-time hooks in manifest order. Only tool
    messages that answer the synthetic assistant message before them are part of its pair: a
    lone synthetic-looking tool message is not skipped. ``is_synthetic`` tells synthetic call ids
    (:func:`is_synthetic_call_id`, or a caller's memo of it).
    """
    first_user = next((i for i, m in enumerate(messages) if m.role is Role.USER), None)
    if first_user is None:
        return len(messages)
    index = first_user + 1
    while index < len(messages) and _is_synthetic_assistant(messages[index], is_synthetic):
        answered = {call.id for call in messages[index].tool_calls or []}
        index += 1
        while (
            index < len(messages)
            and messages[index].role is Role.TOOL
            and messages[index].tool_call_id in answered
        ):
            index += 1
    return index


def _is_synthetic_assistant(message: Message, is_synthetic: Callable[[str], bool]) -> bool:
    calls = message.tool_calls or []
    return (
        message.role is Role.ASSISTANT
        and bool(calls)
        and all(is_synthetic(call.id) for call in calls)
    )
