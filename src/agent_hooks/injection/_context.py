"""The hook context: what a hook's JSON-e ``arguments`` and ``condition`` can read (SPEC 10).

Built once per run from the history the runner received, before any hook of the run changed it.
Messages are reduced to one plain-JSON shape, so a template never has to care whether a host sent
text or multimodal parts, or whether a field was left out: every message has ``role``,
``content``, ``tool_calls`` and ``tool_call_id``, null when absent.

The history is models or the chat-shaped dicts they validate from, read alike: the proxy builds
the context straight from its parsed dicts (SPEC 16: a model per message of a long history would
pass 8x the body; the entries share the dicts' strings), a host passes models.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from jsone.shared import stringDate

from agent_hooks.config.hooks import HookEvent
from agent_hooks.messages import Message

__all__ = ["hook_context"]

_Call = tuple[str, str, tuple[str, str] | None]
"""A tool call as the context reads it: id, type, and the function's name and arguments text."""


def hook_context(
    event: HookEvent,
    messages: Sequence[Message | Mapping[str, Any]],
    *,
    request: Mapping[str, Any] | None,
    completion: Mapping[str, Any] | None,
    now: float | None = None,
) -> dict[str, Any]:
    """The context of every hook of ``event`` in one run.

    ``messages`` are models, or dicts that validate as :class:`Message` (every dialect's history
    does): a dict is read with a model's defaults, so both give the same context.
    ``request`` is the host's object (``{}`` when none); ``completion`` gives
    ``iteration_count`` and ``total_tool_calls`` for ``on_completion`` (0 when not given).
    ``now`` (Unix seconds, the app clock) becomes JSON-e's ``now``, which ``fromNow`` also
    counts from, so ``--now`` and a fixed clock fix templates' time too.
    """
    entries = [
        _model_entry(message) if isinstance(message, Message) else _dict_entry(message)
        for message in messages
    ]
    last_user: dict[str, Any] | None = None
    last_assistant: dict[str, Any] | None = None
    for entry in reversed(entries):
        role = entry["role"]
        if last_user is None and role == "user":
            last_user = entry
        if last_assistant is None and role == "assistant" and not entry["tool_calls"]:
            last_assistant = entry  # a tool-calling turn (a synthetic pair too) is no answer
        if last_user is not None and last_assistant is not None:
            break
    context: dict[str, Any] = {
        "event": event.value,
        "messages": entries,
        "last_user_message": last_user,
        "last_assistant_message": last_assistant,
        "request": dict(request or {}),
    }
    if now is not None:
        context["now"] = stringDate(datetime.fromtimestamp(now, tz=UTC))
    if event == HookEvent.ON_COMPLETION:
        counts = completion or {}
        context["iteration_count"] = counts.get("iteration_count") or 0
        context["total_tool_calls"] = counts.get("total_tool_calls") or 0
    return context


def _model_entry(message: Message) -> dict[str, Any]:
    calls = message.tool_calls
    return _entry(
        message.role.value,
        message.content,
        None
        if calls is None
        else [
            (
                call.id,
                call.type,
                None if call.function is None else (call.function.name, call.function.arguments),
            )
            for call in calls
        ],
        message.tool_call_id,
    )


def _dict_entry(message: Mapping[str, Any]) -> dict[str, Any]:
    """The entry of a dict that validates as :class:`Message`, with the models' defaults for
    what it leaves out (a call's ``type`` ``"function"``, a function's ``arguments`` ``"{}"``)."""
    calls = message.get("tool_calls")
    return _entry(
        message["role"],
        message.get("content"),
        None
        if calls is None
        else [
            (
                call["id"],
                call.get("type", "function"),
                None
                if (function := call.get("function")) is None
                else (function["name"], function.get("arguments", "{}")),
            )
            for call in calls
        ],
        message.get("tool_call_id"),
    )


def _entry(
    role: str, content: str | list[Any] | None, calls: list[_Call] | None, call_id: str | None
) -> dict[str, Any]:
    """The one place an entry is built, from what either adapter above read."""
    return {
        "role": role,
        "content": _text(content),
        "tool_calls": None if calls is None else [_tool_call(*call) for call in calls],
        "tool_call_id": call_id,
    }


def _text(content: str | list[Any] | None) -> str | None:
    """Text content as is; multimodal content as its text parts joined by newlines."""
    if content is None or isinstance(content, str):
        return content
    return "\n".join(
        part["text"]
        for part in content
        if isinstance(part, dict)
        and part.get("type") == "text"
        and isinstance(part.get("text"), str)
    )


def _tool_call(call_id: str, type_: str, function: tuple[str, str] | None) -> dict[str, Any]:
    return {
        "id": call_id,
        "type": type_,
        "function": None
        if function is None
        else {"name": function[0], "arguments": _arguments(function[1])},
    }


def _arguments(text: str) -> dict[str, Any]:
    """The arguments object a model sent as JSON text; ``{}`` when it is not a JSON object."""
    try:
        value = _DECODER.decode(text)
    except (ValueError, RecursionError):  # not JSON, or nested beyond what json can read
        return {}
    return value if isinstance(value, dict) else {}


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
"""One decoder for all calls: ``json.loads`` with an option builds a new one each time."""
