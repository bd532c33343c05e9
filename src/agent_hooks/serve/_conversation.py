"""Conversations across turns: which conversation a request belongs to, and its stored pairs.

Clients do not send injected pairs back, so the proxy keeps them per conversation and puts them
back before the hooks run; TTLs and dedupe then see the previous turn. Pure functions over
OpenAI-format dicts, so messages the proxy does not touch pass through exactly as they came.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.state._store import single_call_id

__all__ = ["Pair", "conversation_id", "reapply_pairs", "synthetic_pairs"]

CONVERSATION_HEADER = "x-conversation-id"

Pair = tuple[dict[str, Any], dict[str, Any]]
"""A synthetic pair: the assistant message with its one tool call, then the tool's answer."""


def conversation_id(
    headers: Mapping[str, str],
    user: str | None,
    messages: Sequence[Mapping[str, Any]],
    *,
    named: str | None = None,
) -> str | None:
    """The ``X-Conversation-Id`` header, else ``named``, else ``user`` plus the first user
    message's hash.

    ``named`` is a conversation the body names (Responses: its ``conversation``, or the one
    recorded for its ``previous_response_id``); ``messages`` is the history a dialect read from
    the body. ``None`` when there is none of these: such a request has no stored state, so two
    clients never share one by accident.
    """
    explicit = headers.get(CONVERSATION_HEADER, "").strip()
    if explicit:
        return explicit
    if named:
        return named
    first = _first_user_index(messages)
    if not user or first is None:
        return None
    content = messages[first].get("content")
    text = content if isinstance(content, str) else json.dumps(content, sort_keys=True)
    return f"user:{user}:{hashlib.sha256(text.encode()).hexdigest()[:16]}"


def synthetic_pairs(messages: Sequence[Mapping[str, Any]]) -> list[Pair]:
    """Every synthetic pair in ``messages``, in history order."""
    pairs: list[Pair] = []
    for current, following in itertools.pairwise(messages):
        call_id = single_call_id(current)
        if (
            is_synthetic_call_id(call_id)
            and following.get("role") == "tool"
            and following.get("tool_call_id") == call_id
        ):
            pairs.append((dict(current), dict(following)))
    return pairs


def reapply_pairs(
    messages: Sequence[dict[str, Any]], stored: Sequence[Pair], *, before: bool = False
) -> list[dict[str, Any]]:
    """``messages`` with the stored pairs after the first user message, in stored order.

    Pairs whose call id the client already sent are left out, so a client that does send them
    back sees each once. Without a user message the pairs go at the end. ``before`` puts them
    before every message instead: the upstream holds the earlier turns (Responses'
    ``previous_response_id``), so the stored pairs come before all the request sends.
    """
    if not stored:
        return list(messages)
    sent = _call_ids(messages)
    missing = [
        message for pair in stored if single_call_id(pair[0]) not in sent for message in pair
    ]
    if not missing:
        return list(messages)
    first = _first_user_index(messages)
    at = 0 if before else len(messages) if first is None else first + 1
    return [*messages[:at], *missing, *messages[at:]]


def _first_user_index(messages: Sequence[Any]) -> int | None:
    for index, message in enumerate(messages):
        if isinstance(message, Mapping) and message.get("role") == "user":
            return index
    return None


def _call_ids(messages: Sequence[Mapping[str, Any]]) -> set[str]:
    ids: set[str] = set()
    for message in messages:
        if isinstance(message.get("tool_call_id"), str):
            ids.add(message["tool_call_id"])
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping) and isinstance(call.get("id"), str):
                ids.add(call["id"])
    return ids
