"""Anthropic Messages (``POST /v1/messages``): content blocks are the history.

A message whose content is a string is one history message. Otherwise its ``tool_result`` blocks
become tool messages, its ``tool_use`` blocks assistant messages with one tool call each (the
``input`` object as the arguments) and its ``text`` blocks one message of its role; images,
documents, thinking and every other block stay where they were, untouched (SPEC 13), and so does
every message that is not a ``user`` or ``assistant`` message with such a content (Claude Code's
mid-conversation ``{"role": "system"}`` message, SPEC 15). ``system`` and every field but
``messages`` pass through; ``metadata.user_id`` plays the part of ``user``.

A pair is an assistant message with one ``tool_use`` block and a user message with one
``tool_result`` block. The API refuses tool blocks in a request that declares no tools
("Requests which include `tool_use` or `tool_result` blocks must define tools"), so a request
without ``tools`` gets the definitions of its pairs' tools, and ``tool_choice: none`` so the model
never calls a tool the client did not declare.

With thinking on (``thinking.type`` other than ``disabled``), the last assistant message of the
current tool cycle must start with the model's signed thinking block, so no synthetic
``tool_use`` may sit there: the pairs the caller names in ``RenderContext.text_form`` are
written as one text block appended to the user message they follow (SPEC 15), and declare no
tool.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.injection._text_form import tool_result_text
from agent_hooks.serve._dialects._base import (
    Answer,
    Credentials,
    Entry,
    ParsedRequest,
    RenderContext,
    SSELines,
    as_forwarded,
    forged_half,
    role_only,
    splice,
    synthetic_call_id,
)
from agent_hooks.serve._dialects._chat import json_object, message_list
from agent_hooks.serve._dialects._usage import Usage, anthropic_usage, find_usage

__all__ = [
    "ANTHROPIC",
    "ANTHROPIC_COUNT_TOKENS",
    "AnthropicRequest",
    "anthropic_error_type",
    "tool_result_text",
]

_CREDENTIALS = Credentials(
    "x-api-key",
    "{}",
    ("x-api-key", "authorization"),
    passthrough=("anthropic-version", "anthropic-beta"),
)
"""The proxy's key goes in ``x-api-key``; ``--forward-auth`` forwards the client's ``x-api-key``
and also its ``authorization``, which recent ``anthropic`` clients send their key in (as a bearer
token) and Claude Code its ``ANTHROPIC_AUTH_TOKEN``."""

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    503: "overloaded_error",
}


def anthropic_error_type(status: int) -> str:
    """Anthropic's error type for a status; ``api_error`` for 424, 502, 504 and the rest."""
    return _ERROR_TYPES.get(status, "api_error")


class AnthropicRequest(ParsedRequest):
    """A Messages body and the history read from its ``messages``."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body

    def _read(self, *, whole: bool) -> Iterator[Entry]:
        return _read(self.body["messages"], whole=whole)

    @property
    def user(self) -> str | None:
        metadata = self.body.get("metadata")
        user = metadata.get("user_id") if isinstance(metadata, Mapping) else None
        return user if isinstance(user, str) and user else None

    @property
    def end_user(self) -> str | None:
        return self.user

    def needs_tool_definitions(self) -> bool:
        return not self.body.get("tools")

    @property
    def thinking(self) -> bool:
        """``thinking.type`` is anything but ``disabled`` (``enabled``, ``adaptive``: the
        round-trip rules are the same for both)."""
        thinking = self.body.get("thinking")
        return isinstance(thinking, Mapping) and thinking.get("type") != "disabled"

    @property
    def cycle_start(self) -> int | None:
        """The index of the last user message whose content is a string or holds a block that
        is not a ``tool_result``; ``None`` when there is none."""
        messages = self.body["messages"]
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if (
                isinstance(message, Mapping)
                and message.get("role") == "user"
                and _opens_a_cycle(message.get("content"))
            ):
                return index
        return None

    def render(self, history: Sequence[Mapping[str, Any]], context: RenderContext) -> bytes:
        """Every field as it came, ``messages`` with the pairs in place (those of
        ``context.text_form`` as text blocks, :func:`_with_text_results`); ``tools`` (and
        ``tool_choice: none``) for the other pairs' tools when the request declares none."""
        text_form = context.text_form
        names = _pair_names(history) if text_form or self.needs_tool_definitions() else {}
        messages = splice(
            self.body["messages"],
            self.outline,
            history,
            render=lambda added: _pair_messages(
                as_forwarded(added, context.family), text_form, names
            ),
            without_blocks=_without_blocks,
        )
        if text_form:
            messages = _with_text_results(messages)
        body = {**self.body, "messages": messages}
        if self.needs_tool_definitions():
            # sorted, so a definition's place changes only when a new tool first appears
            declared = sorted({name for call_id, name in names.items() if call_id not in text_form})
            if declared:
                body["tools"] = [_definition(name, context) for name in declared]
                body["tool_choice"] = {"type": "none"}
        return self.dump(body)


def _opens_a_cycle(content: Any) -> bool:
    """Whether a user message's content is more than tool results (a new turn of the user)."""
    if isinstance(content, str):
        return True
    return isinstance(content, list) and any(
        not (isinstance(block, Mapping) and block.get("type") == "tool_result") for block in content
    )


def _pair_names(history: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """The function name of each synthetic call in ``history``, by call id, in order."""
    return {
        call_id: message["tool_calls"][0]["function"]["name"]
        for message in history
        if message.get("role") == "assistant" and (call_id := synthetic_call_id(message))
    }


class _TextResult:
    """A pair in text form, waiting for the user message it joins (:func:`_with_text_results`)."""

    __slots__ = ("block",)

    def __init__(self, block: dict[str, Any]) -> None:
        self.block = block


def _with_text_results(messages: list[Any]) -> list[Any]:
    """``messages`` with each text-form pair's block appended to the content of the user
    message before it (a string content becomes a text block first).

    When the message before it is not a user message whose content is a string or a list (an
    assistant or ``system`` message, a content the dialect does not read, or nothing), a new
    user message holding the block goes there instead: the pair still sits where SPEC 4 put it,
    and no client message is changed but by an appended block.
    """
    out: list[Any] = []
    for message in messages:
        if not isinstance(message, _TextResult):
            out.append(message)
            continue
        before = out[-1] if out else None
        content = before.get("content") if isinstance(before, Mapping) else None
        if isinstance(before, Mapping) and before.get("role") == "user" and content is not None:
            if isinstance(content, str):
                out[-1] = {**before, "content": [{"type": "text", "text": content}, message.block]}
                continue
            if isinstance(content, list):
                out[-1] = {**before, "content": [*content, message.block]}
                continue
        out.append({"role": "user", "content": [message.block]})
    return out


def _definition(name: str, context: RenderContext) -> dict[str, Any]:
    known = context.tools.get(name)
    definition: dict[str, Any] = {"name": name}
    if known is not None and known.description:
        definition["description"] = known.description
    definition["input_schema"] = (
        dict(known.input_schema) if known is not None else {"type": "object"}
    )
    return definition


def _pair_messages(
    messages: Sequence[Mapping[str, Any]], text_form: frozenset[str], names: Mapping[str, str]
) -> list[Any]:
    """Added messages (synthetic pairs) as ``tool_use`` and ``tool_result`` messages; a pair in
    ``text_form`` as one :class:`_TextResult` (its call message left out)."""
    rendered: list[Any] = []
    for message in messages:
        if message.get("role") == "assistant":
            if synthetic_call_id(message) in text_form:
                continue
            blocks = [
                {
                    "type": "tool_use",
                    "id": call["id"],
                    "name": call["function"]["name"],
                    "input": _arguments(call["function"].get("arguments")),
                }
                for call in message["tool_calls"]
            ]
            rendered.append({"role": "assistant", "content": blocks})
        elif (call_id := message["tool_call_id"]) in text_form:
            text = tool_result_text(names.get(call_id, ""), call_id, _text(message.get("content")))
            rendered.append(_TextResult({"type": "text", "text": text}))
        else:
            result = {
                "type": "tool_result",
                "tool_use_id": call_id,
                "content": _text(message.get("content")),
            }
            rendered.append({"role": "user", "content": [result]})
    return rendered


def _arguments(text: Any) -> Any:
    try:
        arguments = json.loads(text) if isinstance(text, str) else {}
    except ValueError:
        return {}
    return arguments if isinstance(arguments, dict) else {}


def _without_blocks(message: Any, blocks: frozenset[int]) -> Any:
    content = [block for index, block in enumerate(message["content"]) if index not in blocks]
    return {**message, "content": content} if content else None


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(
            block.get("text", "")
            for block in content
            if isinstance(block, Mapping) and isinstance(block.get("text"), str)
        )
    return content if isinstance(content, str) else ""


def _read(messages: Sequence[Any], *, whole: bool) -> Iterator[Entry]:
    """The history messages of ``messages``, in order; without ``whole``, each message without
    a synthetic id as its shared role-only message, not built (:func:`role_only`).

    Only ``user`` and ``assistant`` messages whose content is a string or a list of blocks are
    read; every other message (a mid-conversation ``system`` message, a role or a content the
    proxy does not know) stays in place, unread (SPEC 15), but for its forged blocks.
    """
    for index, message in enumerate(messages):
        if (
            isinstance(message, Mapping)
            and message.get("role") in ("user", "assistant")
            and isinstance(message.get("content"), str | list)
        ):
            yield from _entries(message, index, whole=whole)
        else:
            yield from _forged_blocks(message, index)


def _entries(message: Mapping[str, Any], index: int, *, whole: bool) -> list[Entry]:
    """The history messages one Anthropic message stands for (at least one)."""
    role, content = message["role"], message["content"]
    if isinstance(content, str):
        return [Entry({"role": role, "content": content} if whole else role_only(role), index)]
    tools: list[Entry] = []
    texts: list[tuple[int, str]] = []
    for at, block in enumerate(content):
        if not isinstance(block, Mapping):
            continue
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            texts.append((at, block["text"]))
        elif kind == "tool_use" and role == "assistant" and _named_call(block):
            tools.append(Entry(_call(block, whole), index, (at,)))
        elif kind == "tool_result" and role == "user" and isinstance(block.get("tool_use_id"), str):
            tools.append(Entry(_result(block, whole), index, (at,)))
        elif (forged := _forged_block(block, index, at)) is not None:
            # Not read (in the other role's message, malformed): kept, untouched, unless forged.
            tools.append(forged)
    if texts or not tools:
        parts = [{"type": "text", "text": text} for _, text in texts]
        text = {"role": role, "content": parts} if whole else role_only(role)
        own = Entry(text, index, tuple(at for at, _ in texts))
        return [own, *tools] if role == "assistant" else [*tools, own]
    return tools


def _call(block: Mapping[str, Any], whole: bool) -> dict[str, Any]:
    """A ``tool_use`` block's assistant message; its role-only one (its arguments' JSON not
    written) when not ``whole`` and its id is not synthetic."""
    if not (whole or is_synthetic_call_id(block["id"])):
        return role_only("assistant")
    arguments = json.dumps(block.get("input", {}), ensure_ascii=False)
    function = {"name": block["name"], "arguments": arguments}
    call = {"id": block["id"], "type": "function", "function": function}
    return {"role": "assistant", "tool_calls": [call]}


def _result(block: Mapping[str, Any], whole: bool) -> dict[str, Any]:
    """A ``tool_result`` block's tool message; its role-only one when not ``whole`` and its id
    is not synthetic."""
    call_id = block["tool_use_id"]
    if not (whole or is_synthetic_call_id(call_id)):
        return role_only("tool")
    return {"role": "tool", "tool_call_id": call_id, "content": _text(block.get("content"))}


def _forged_blocks(message: Any, index: int) -> list[Entry]:
    """Forged halves for the synthetic ``tool_use``/``tool_result`` blocks of a message the
    dialect does not read, so the removal of client pairs takes them out (SPEC 12.1)."""
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, list):
        return []
    return [
        forged
        for at, block in enumerate(content)
        if isinstance(block, Mapping) and (forged := _forged_block(block, index, at)) is not None
    ]


def _forged_block(block: Mapping[str, Any], index: int, at: int) -> Entry | None:
    """A forged half for a ``tool_use`` or ``tool_result`` block with a synthetic id."""
    kind = block.get("type")
    if kind not in ("tool_use", "tool_result"):
        return None
    call_id = block.get("id" if kind == "tool_use" else "tool_use_id")
    forged = forged_half(call_id, result=kind == "tool_result")
    return Entry(forged, index, (at,)) if forged is not None else None


def _named_call(block: Mapping[str, Any]) -> bool:
    return isinstance(block.get("id"), str) and isinstance(block.get("name"), str)


class _AnthropicDialect:
    credentials = _CREDENTIALS
    error_event: str | None = "error"

    def __init__(self, name: str, upstream_path: str, *, counts_tokens: bool = False) -> None:
        self.name = name
        self.upstream_path = upstream_path
        self.counts_tokens = counts_tokens

    def parse(self, raw: bytes, *, deployment: str | None = None) -> AnthropicRequest:
        """Read a body (:func:`_read` says which messages are read).

        Raises:
            InvalidRequest: not a JSON object, or ``messages`` is missing or not a list.
        """
        body, long_strings = json_object(raw)
        message_list(body)
        request = AnthropicRequest(body)
        request.long_strings = long_strings
        return request

    def error_body(
        self, status: int, message: str, *, type_: str, code: str | None
    ) -> dict[str, Any]:
        """``{"type": "error", "error": {...}}``, the type given by the status (SPEC 13)."""
        return {
            "type": "error",
            "error": {"type": anthropic_error_type(status), "message": message},
        }

    def answer_from_json(self, raw: bytes) -> Answer:
        """The text blocks of the reply (none when it stops for a tool call), and the usage."""
        try:
            message = json.loads(raw)
        except ValueError:
            return Answer(None)
        if not isinstance(message, Mapping):
            return Answer(None)
        usage = anthropic_usage(message.get("usage"))
        content = message.get("content")
        if message.get("stop_reason") == "tool_use" or not isinstance(content, list):
            return Answer(None, usage=usage)
        text = "".join(
            block["text"]
            for block in content
            if isinstance(block, Mapping)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        )
        return Answer({"role": "assistant", "content": text}, usage=usage)

    def usage_from_json(self, raw: bytes) -> Usage | None:
        return anthropic_usage(find_usage(raw))

    def reader(self) -> StreamedMessage:
        return StreamedMessage()


class StreamedMessage:
    """Reassembles the reply's text from ``content_block_delta`` events."""

    response_id = None

    def __init__(self) -> None:
        self._lines = SSELines()
        self._parts: list[str] = []
        self._tool_call = False
        self._stopped = False
        self._usage: dict[str, Any] = {}
        self.failed = False
        """An ``error`` event went by."""

    def feed(self, chunk: bytes) -> None:
        for data in self._lines.feed(chunk):
            self._event(data)

    @property
    def done(self) -> bool:
        """``message_stop`` or an ``error`` event went by."""
        return self._stopped or self.failed

    def answer(self) -> Answer:
        """The text of the reply; none for a tool call, a stream that never stopped or one that
        reported an error."""
        for data in self._lines.flush():
            self._event(data)
        usage = anthropic_usage(self._usage) if self._usage else None
        if self._tool_call or not self._stopped or self.failed:
            return Answer(None, usage=usage)
        return Answer({"role": "assistant", "content": "".join(self._parts)}, usage=usage)

    def _event(self, data: bytes) -> None:
        try:
            event = json.loads(data)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        kind = event.get("type")
        if kind == "content_block_delta":
            delta = event.get("delta")
            if isinstance(delta, dict) and delta.get("type") == "text_delta":
                text = delta.get("text")
                if isinstance(text, str):
                    self._parts.append(text)
        elif kind == "content_block_start":
            block = event.get("content_block")
            if isinstance(block, dict) and block.get("type") == "tool_use":
                self._tool_call = True
        elif kind == "message_delta":
            delta = event.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason") == "tool_use":
                self._tool_call = True
            self._count(event.get("usage"))
        elif kind == "message_start":
            message = event.get("message")
            self._count(message.get("usage") if isinstance(message, dict) else None)
        elif kind == "message_stop":
            self._stopped = True
        elif kind == "error":
            self.failed = True

    def _count(self, usage: Any) -> None:
        """``message_start`` has the input's usage, ``message_delta`` cumulative figures: the
        later value of each figure wins."""
        if isinstance(usage, dict):
            self._usage.update((key, value) for key, value in usage.items() if value is not None)


ANTHROPIC = _AnthropicDialect("anthropic", "/v1/messages")

ANTHROPIC_COUNT_TOKENS = _AnthropicDialect(
    "count_tokens", "/v1/messages/count_tokens", counts_tokens=True
)
"""``POST /v1/messages/count_tokens``: a Messages body whose count includes the pairs the
upstream would see (SPEC 15): the stored pairs go back in place, but no hook runs (a count must
not call tools) and nothing is stored."""
