"""Chat Completions (``POST /v1/chat/completions``): the history is the body's ``messages``.

Each message that validates as a :class:`~agent_hooks.messages.Message` is a history message;
any other (a role, a content or a shape the proxy does not know) stays where it was, untouched,
unread by the hooks (SPEC 15). Only ``messages`` is ours; every other field passes through in
its original key order. The final answer is the first choice's assistant message, read from the
JSON or reassembled from the stream's deltas; an answer that asks for a tool call is not final.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from agent_hooks.serve._dialects._base import (
    OPENAI_CREDENTIALS,
    Answer,
    Entry,
    InvalidMessages,
    InvalidRequest,
    Outline,
    ParsedRequest,
    RenderContext,
    SSELines,
    align,
    as_forwarded,
    check_messages,
    forged_half,
    splice,
)
from agent_hooks.serve._dialects._usage import Usage, find_usage, openai_usage
from agent_hooks.serve._families import Family
from agent_hooks.serve._json_body import load_json
from agent_hooks.serve._limits import check_message_count

__all__ = ["CHAT", "ChatRequest"]


class ChatRequest(ParsedRequest):
    """A chat-completions body (plus ``model`` from DIAL's route) and its messages.

    When every message validates (the common case) the history is ``messages`` itself and is
    written back whole. Otherwise the outline says which messages the hooks read: a message
    that does not validate (a role or a content the proxy does not know) has no history message
    and stays in place, untouched, unless it carries a synthetic id (then a forged half stands
    for it, so the removal of client pairs takes it out, SPEC 12.1). Validating tells only which
    messages are read: the models are not kept (the hooks get theirs from
    :class:`~agent_hooks.serve._runner_input.RunnerInput`).
    """

    def __init__(
        self, body: dict[str, Any], messages: list[Any], outline: Outline | None = None
    ) -> None:
        self.body = body
        self.whole = outline is None
        """Every message was read: the history is ``messages``, written back whole."""
        self._outline = outline or Outline(messages, range(len(messages)), {})
        self._history = self._outline.messages  # the client's own messages: nothing to build

    @property
    def user(self) -> str | None:
        user = self.body.get("user")
        return user if isinstance(user, str) and user else None

    def render(self, history: Sequence[Mapping[str, Any]], context: RenderContext) -> bytes:
        """Every field as it came, ``messages`` replaced by the hooks' history (its pairs as the
        model family takes them), with the messages the hooks could not read back in their
        places."""
        if self.whole:
            messages = list(as_forwarded(history, context.family))
        else:
            messages = self._spliced(history, context.family)
        return self.dump({**self.body, "messages": messages})

    def _spliced(self, history: Sequence[Mapping[str, Any]], family: Family) -> list[Any]:
        # A kept message goes as the hooks returned it: the removal of client pairs may have
        # taken a synthetic call out of it (a new dict), which the client's item still holds.
        before = self.outline
        items = list(self.items)
        matches = align(before.messages, history)
        for message, match in zip(history, matches, strict=True):
            if match is not None and match not in before.blocks:
                items[before.item_of[match]] = message
        return splice(
            items,
            before,
            history,
            render=lambda added: list(as_forwarded(added, family)),
            without_blocks=_without_calls,
            matches=matches,
        )


def _without_calls(message: Any, calls: frozenset[int]) -> Any:
    """An unread message less its forged tool calls (``calls`` are their positions); ``None``
    when nothing is left, as the conversation core's ``without_client_pairs`` does for a message
    it reads."""
    remaining = [call for at, call in enumerate(message["tool_calls"]) if at not in calls]
    if remaining:
        return {**message, "tool_calls": remaining}
    if not message.get("content"):
        return None
    return {key: value for key, value in message.items() if key != "tool_calls"}


def _forged_entries(message: Any, index: int) -> list[Entry]:
    """Forged halves for an unread message that carries synthetic ids: its ``tool_call_id``
    (the whole message), else each synthetic entry of its ``tool_calls``."""
    if not isinstance(message, Mapping):
        return []
    forged = forged_half(message.get("tool_call_id"), result=True)
    if forged is not None:
        return [Entry(forged, index)]
    calls = message.get("tool_calls")
    if not isinstance(calls, list):
        return []
    return [
        Entry(half, index, (at,))
        for at, call in enumerate(calls)
        if isinstance(call, Mapping)
        and (half := forged_half(call.get("id"), result=False)) is not None
    ]


def _partly_read(body: dict[str, Any], messages: list[Any], unread: set[int]) -> ChatRequest:
    """The request when some messages do not validate (``unread``, and any other that does
    not): those stay unread, in place."""
    while True:
        read = [index for index in range(len(messages)) if index not in unread]
        try:
            check_messages([messages[index] for index in read])
        except InvalidMessages as again:
            unread |= {read[at] for at in again.failing}
        else:
            break
    entries: list[Entry] = []
    for index, message in enumerate(messages):
        if index not in unread:
            entries.append(Entry(message, index))
        else:
            entries += _forged_entries(message, index)
    partial = Outline(
        [entry.message for entry in entries],
        [entry.item for entry in entries],
        {at: entry.blocks for at, entry in enumerate(entries) if entry.blocks},
    )
    return ChatRequest(body, messages, partial)


class _ChatDialect:
    name = "chat"
    counts_tokens = False
    error_event: str | None = None
    credentials = OPENAI_CREDENTIALS
    upstream_path = "/v1/chat/completions"

    def parse(self, raw: bytes, *, deployment: str | None = None) -> ChatRequest:
        """Parse and check a body; ``deployment`` (DIAL's route) becomes ``model`` when it has
        none.

        Messages that do not validate are kept in place, unread (SPEC 15).

        Raises:
            InvalidRequest: not a JSON object, or ``messages`` is not a list.
        """
        body, long_strings = json_object(raw)
        messages = message_list(body)
        try:
            check_messages(messages)
        except InvalidMessages as exc:
            request = _partly_read(body, messages, exc.failing)
        else:
            request = ChatRequest(body, messages)
        request.long_strings = long_strings
        if deployment is not None and not body.get("model"):
            body["model"] = deployment
            request.edited = True
        return request

    def error_body(
        self, status: int, message: str, *, type_: str, code: str | None
    ) -> dict[str, Any]:
        return openai_error(message, type_=type_, code=code)

    def answer_from_json(self, raw: bytes) -> Answer:
        """The first choice's assistant message (none for a tool call or an unreadable body),
        and the usage."""
        try:
            body = json.loads(raw)
        except ValueError:
            return Answer(None)
        usage = openai_usage(body.get("usage")) if isinstance(body, dict) else None
        try:
            message = body["choices"][0]["message"]
        except (KeyError, IndexError, TypeError):
            return Answer(None, usage=usage)
        if (
            not isinstance(message, dict)
            or message.get("tool_calls")
            or message.get("function_call")
        ):
            return Answer(None, usage=usage)
        return Answer(message, usage=usage)

    def usage_from_json(self, raw: bytes) -> Usage | None:
        return openai_usage(find_usage(raw))

    def reader(self) -> StreamedChat:
        return StreamedChat()


def json_object(raw: bytes) -> tuple[dict[str, Any], bool]:
    """The body as a JSON object, read within the limits of :func:`load_json`, and its long
    strings' mark (:attr:`ParsedRequest.long_strings`).

    Raises:
        BadRequest: it is not JSON, or beyond those limits (SPEC 12.1).
        InvalidRequest: it is not an object.
    """
    body, long_strings = load_json(raw)
    if not isinstance(body, dict):
        raise InvalidRequest("the body must be a JSON object", code="invalid_json")
    return body, long_strings


def message_list(body: Mapping[str, Any]) -> list[Any]:
    """The body's ``messages`` (Chat Completions and Anthropic Messages alike).

    An empty list is served: whether it is a valid request is the upstream's call (SPEC 15).

    Raises:
        InvalidRequest: ``messages`` is missing or not a list.
        BadRequest: more than 100,000 of them (SPEC 12.1).
    """
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise InvalidRequest("'messages' must be an array of messages", code="invalid_messages")
    check_message_count(len(messages))
    return messages


def openai_error(message: str, *, type_: str, code: str | None) -> dict[str, Any]:
    """OpenAI's error shape (Chat Completions and Responses alike)."""
    return {"error": {"message": message, "type": type_, "code": code}}


class StreamedChat:
    """Collects the first choice's deltas from the stream's events."""

    response_id = None

    def __init__(self) -> None:
        self._lines = SSELines()
        self._parts: list[str] = []
        self._role = "assistant"
        self._tool_call = False
        self._finished = False
        self._usage: Any = None
        self.failed = False
        """An ``{"error": ...}`` event went by."""

    @property
    def done(self) -> bool:
        """``[DONE]`` went by, the first choice's finish reason, or an error event."""
        return self._finished or self._lines.done or self.failed

    def feed(self, chunk: bytes) -> None:
        for data in self._lines.feed(chunk):
            self._event(data)

    def answer(self) -> Answer:
        """The reassembled assistant message; none for a tool call, or an answer that did not
        complete (no end, or an error event)."""
        for data in self._lines.flush():
            self._event(data)
        usage = openai_usage(self._usage)
        if self._tool_call or not self.done or self.failed:
            return Answer(None, usage=usage)
        return Answer({"role": self._role, "content": "".join(self._parts)}, usage=usage)

    def _event(self, data: bytes) -> None:
        try:
            event = json.loads(data)
            if isinstance(event, dict) and event.get("error") is not None:
                self.failed = True
                return
            if isinstance(event, dict) and event.get("usage") is not None:
                self._usage = event["usage"]  # the last chunk's (stream_options.include_usage)
            choices = event["choices"]
            choice = next(c for c in choices if isinstance(c, dict) and c.get("index", 0) == 0)
        except (ValueError, KeyError, TypeError, StopIteration):
            return  # usage-only chunks and other choices say nothing about the first answer
        if choice.get("finish_reason") is not None:
            self._finished = True
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        if delta.get("tool_calls") or delta.get("function_call"):
            self._tool_call = True
        if choice.get("finish_reason") in ("tool_calls", "function_call"):
            self._tool_call = True
        if isinstance(delta.get("role"), str):
            self._role = delta["role"]
        if isinstance(delta.get("content"), str):
            self._parts.append(delta["content"])


CHAT = _ChatDialect()
