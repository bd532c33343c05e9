"""Every rule of ``PROVIDER-RULES.md`` as a check of one request body: pure functions that return
the violations they find, one sentence each, for the scripted upstream to answer with a 400.

The thinking and reasoning rules need what the upstream itself issued (signatures, reasoning item
ids), passed in as :class:`Issued`. Bedrock Converse has no route in ``serve``, so it has no check.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

ANTHROPIC_ID = re.compile(r"[a-zA-Z0-9_-]+")
ANTHROPIC_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
MISTRAL_ID = re.compile(r"[a-zA-Z0-9]{9}")
OPENAI_MAX_ID = 40
MAX_CACHE_BREAKPOINTS = 4
MID_CONVERSATION_SYSTEM_BETA = "mid-conversation-system"
MISTRAL_PREFIXES = ("mistral", "codestral", "magistral", "ministral", "devstral", "pixtral")
THINKING_ON = ("enabled", "adaptive")


@dataclass
class Issued:
    """What the upstream handed out, which must come back unmodified."""

    thoughts: dict[str, str] = field(default_factory=dict)
    """Thinking signature -> the thinking text it signs."""
    reasoning_of: dict[str, str] = field(default_factory=dict)
    """Item id -> the id of the reasoning item it was issued after."""
    encrypted: dict[str, str] = field(default_factory=dict)
    """Reasoning item id -> its encrypted content."""


def model_name(body: Mapping[str, Any]) -> str:
    """The request's model after any ``provider/`` prefix, lower-cased."""
    return str(body.get("model", "")).rsplit("/", 1)[-1].lower()


# -- Chat Completions -------------------------------------------------------------------------


def chat_violations(body: Mapping[str, Any]) -> list[str]:
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    model = model_name(body)
    found = list(_chat_adjacency(messages))
    for call in _chat_calls(messages):
        call_id = str(call.get("id", ""))
        if len(call_id) > OPENAI_MAX_ID:
            found.append(f"chat: tool_calls id {call_id!r} is longer than {OPENAI_MAX_ID}")
    if model.startswith(MISTRAL_PREFIXES):
        found.extend(_mistral_ids(messages))
    if model.startswith("gemini"):
        found.extend(_gemini_signatures(messages))
    return found


def _chat_calls(messages: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for message in messages:
        yield from message.get("tool_calls") or []


def _chat_adjacency(messages: list[dict[str, Any]]) -> Iterator[str]:
    """Each assistant ``tool_calls`` message is followed by one ``tool`` message per id, before
    any other message; a ``tool`` message answers a call of that group."""
    waiting: set[str] = set()
    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in waiting:
                yield f"chat: tool message {index} ({call_id!r}) answers no preceding tool call"
            waiting.discard(call_id)
            continue
        if waiting:
            yield f"chat: message {index} ({role}) comes before the results of {sorted(waiting)}"
            waiting = set()
        if role == "assistant":
            waiting = {str(call.get("id")) for call in message.get("tool_calls") or []}
    if waiting:
        yield f"chat: the history ends before the results of {sorted(waiting)}"


def _mistral_ids(messages: list[dict[str, Any]]) -> Iterator[str]:
    ids = [str(call.get("id")) for call in _chat_calls(messages)]
    ids += [str(m.get("tool_call_id")) for m in messages if m.get("role") == "tool"]
    for call_id in ids:
        if not MISTRAL_ID.fullmatch(call_id):
            yield f"mistral: tool call id {call_id!r} is not 9 characters of [a-zA-Z0-9]"


def _gemini_signatures(messages: list[dict[str, Any]]) -> Iterator[str]:
    """Function calls after the last user message need a thought signature on the first call of
    each assistant message."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    for message in messages[last_user + 1 :]:
        calls = message.get("tool_calls") or []
        if not calls:
            continue
        extra = calls[0].get("extra_content") or {}
        if not (extra.get("google") or {}).get("thought_signature"):
            call_id = calls[0].get("id")
            yield f"gemini: current-turn function call {call_id!r} has no thought signature"


# -- Responses --------------------------------------------------------------------------------

_INPUT_ONLY_TYPES = (
    "reasoning",
    "function_call_output",
    "custom_tool_call_output",
    "item_reference",
)


def responses_violations(body: Mapping[str, Any], issued: Issued) -> list[str]:
    items = body.get("input")
    if not isinstance(items, list):
        return []
    items = [item for item in items if isinstance(item, dict)]
    found: list[str] = []
    calls: set[str] = set()
    for index, item in enumerate(items):
        kind = item.get("type", "message")
        if kind == "function_call":
            calls.add(str(item.get("call_id")))
        if kind == "function_call_output" and str(item.get("call_id")) not in calls:
            found.append(f"responses: function_call_output {item.get('call_id')!r} has no call")
        if kind == "reasoning" and not _follows_reasoning(items[index + 1 : index + 2]):
            found.append(f"responses: reasoning item {index} is not followed by its item")
        sealed = issued.encrypted.get(str(item.get("id")))
        if kind == "reasoning" and sealed is not None and item.get("encrypted_content") != sealed:
            found.append(f"responses: reasoning item {item.get('id')!r} came back modified")
        owner = issued.reasoning_of.get(str(item.get("id")))
        if owner is not None:
            before = items[index - 1] if index else {}
            if before.get("type") != "reasoning" or before.get("id") != owner:
                found.append(f"responses: item {item.get('id')!r} lacks its reasoning {owner!r}")
    return found


def _follows_reasoning(following: list[dict[str, Any]]) -> bool:
    if not following:
        return False
    item = following[0]
    kind = item.get("type", "message")
    if kind == "message":
        return item.get("role") == "assistant"
    return kind not in _INPUT_ONLY_TYPES


# -- Anthropic Messages -----------------------------------------------------------------------


def messages_violations(body: Mapping[str, Any], beta: str, issued: Issued) -> list[str]:
    """``beta`` is the request's ``anthropic-beta`` header (empty when absent)."""
    messages = [m for m in body.get("messages", []) if isinstance(m, dict)]
    found = list(_anthropic_blocks(messages))
    found.extend(_anthropic_adjacency(messages))
    tools = body.get("tools") or []
    for tool in tools:
        name = str(tool.get("name", ""))
        if not ANTHROPIC_NAME.fullmatch(name):
            found.append(f"anthropic: tool name {name!r} does not match [a-zA-Z0-9_-]{{1,64}}")
    if not tools and any(b["type"] in ("tool_use", "tool_result") for b in _blocks(messages)):
        found.append("anthropic: the history holds tool blocks but the request declares no tools")
    system_roles = [i for i, m in enumerate(messages) if m.get("role") == "system"]
    if system_roles and MID_CONVERSATION_SYSTEM_BETA not in beta:
        found.append(f"anthropic: system-role messages {system_roles} without the beta")
    thinking = (body.get("thinking") or {}).get("type")
    if thinking in THINKING_ON:
        found.extend(_anthropic_thinking(messages, issued))
    choice = (body.get("tool_choice") or {}).get("type", "auto")
    if thinking == "enabled" and choice not in ("auto", "none"):
        found.append(f"anthropic: tool_choice {choice!r} with manual thinking")
    breakpoints = _count_cache_control([body.get("tools"), body.get("system"), messages])
    if breakpoints > MAX_CACHE_BREAKPOINTS:
        found.append(f"anthropic: {breakpoints} cache_control breakpoints (at most 4)")
    return found


def _content(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _blocks(messages: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for message in messages:
        yield from _content(message)


def _anthropic_blocks(messages: list[dict[str, Any]]) -> Iterator[str]:
    for block in _blocks(messages):
        if block.get("type") != "tool_use":
            continue
        if not ANTHROPIC_ID.fullmatch(str(block.get("id", ""))):
            yield f"anthropic: tool_use id {block.get('id')!r} does not match [a-zA-Z0-9_-]+"
        if not ANTHROPIC_NAME.fullmatch(str(block.get("name", ""))):
            yield f"anthropic: tool_use name {block.get('name')!r} is not a valid name"


def _anthropic_adjacency(messages: list[dict[str, Any]]) -> Iterator[str]:
    """Each ``tool_use`` is answered in the next message, whose ``tool_result`` blocks come first
    and answer only the uses of the message before it."""
    for index, message in enumerate(messages):
        blocks = _content(message)
        before = _content(messages[index - 1]) if index else []
        uses = {b.get("id") for b in before if b.get("type") == "tool_use"}
        kinds = [b.get("type") for b in blocks]
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        if results and (message.get("role") != "user" or not uses):
            yield f"anthropic: tool_result in message {index} follows no tool_use"
        elif uses and sorted(map(str, uses)) != sorted(map(str, results)):
            expected = sorted(map(str, uses))
            yield f"anthropic: message {index} answers {results}, not the tool_use ids {expected}"
        if results and kinds[: len(results)] != ["tool_result"] * len(results):
            yield f"anthropic: message {index} has content before its tool_result blocks"
    if messages and any(b.get("type") == "tool_use" for b in _content(messages[-1])):
        yield "anthropic: the last message holds a tool_use nobody answered"


def _anthropic_thinking(messages: list[dict[str, Any]], issued: Issued) -> Iterator[str]:
    """The last assistant message of the current tool cycle starts with a thinking block the
    upstream signed."""
    start = 0
    for index, message in enumerate(messages):
        if message.get("role") == "user" and any(
            b.get("type") != "tool_result" for b in _content(message)
        ):
            start = index + 1
    assistants = [m for m in messages[start:] if m.get("role") == "assistant"]
    if not assistants:
        return
    first = (_content(assistants[-1]) or [{}])[0]
    if first.get("type") not in ("thinking", "redacted_thinking"):
        yield (
            f"anthropic: Expected `thinking` or `redacted_thinking`, but found "
            f"`{first.get('type')}`. When `thinking` is enabled, a final `assistant` message "
            "must start with a thinking block"
        )
    elif first.get("type") == "thinking":
        signed = issued.thoughts.get(str(first.get("signature")))
        if signed is None:
            yield f"anthropic: thinking signature never issued: {first.get('signature')!r}"
        elif first.get("thinking") != signed:
            yield "anthropic: Invalid `signature` in `thinking` block (its text was modified)"


def _count_cache_control(value: Any) -> int:
    if isinstance(value, dict):
        own = 1 if value.get("cache_control") else 0
        return own + sum(_count_cache_control(v) for k, v in value.items() if k != "cache_control")
    if isinstance(value, list):
        return sum(_count_cache_control(v) for v in value)
    return 0
