"""Chat Completions (``POST /v1/chat/completions``): the history is the body's ``messages``.

Only ``messages`` is ours; every other field passes through in its original key order. The final
answer is the first choice's assistant message, read from the JSON or reassembled from the
stream's deltas; an answer that asks for a tool call is not final.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from agent_hooks.messages import Message
from agent_hooks.serve._dialects._base import (
    OPENAI_CREDENTIALS,
    RELAYED_MESSAGES,
    Answer,
    InvalidRequest,
    ParsedRequest,
    RenderContext,
    SSELines,
    as_forwarded,
)
from agent_hooks.serve._dialects._usage import Usage, find_usage, openai_usage
from agent_hooks.serve._limits import check_message_count, load_json

__all__ = ["CHAT", "ChatRequest"]


class ChatRequest(ParsedRequest):
    """A chat-completions body (plus ``model`` from DIAL's route) and its messages."""

    def __init__(
        self, body: dict[str, Any], messages: list[dict[str, Any]], models: list[Message]
    ) -> None:
        self.body = body
        self.history = messages
        self.models = models

    @property
    def user(self) -> str | None:
        user = self.body.get("user")
        return user if isinstance(user, str) and user else None

    def render(self, history: Sequence[Mapping[str, Any]], context: RenderContext) -> bytes:
        """Every field as it came, ``messages`` replaced by the hooks' history (its pairs as
        the model family takes them)."""
        messages = list(as_forwarded(history, context.family))
        return json.dumps({**self.body, "messages": messages}, ensure_ascii=False).encode()


class _ChatDialect:
    name = "chat"
    counts_tokens = False
    credentials = OPENAI_CREDENTIALS
    upstream_path = "/v1/chat/completions"

    def parse(self, raw: bytes, *, deployment: str | None = None) -> ChatRequest:
        """Parse and check a body; ``deployment`` (DIAL's route) becomes ``model`` when it has
        none.

        Raises:
            InvalidRequest: not a JSON object, or ``messages`` is not a non-empty list of
                messages.
        """
        body = json_object(raw)
        messages = message_list(body)
        try:
            models: list[Message] = RELAYED_MESSAGES.validate_python(messages)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise InvalidRequest(
                f"'messages.{where}': {first['msg']}", code="invalid_messages"
            ) from exc
        request = ChatRequest(body, messages, models)
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


def json_object(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object, read within the limits of :func:`load_json`.

    Raises:
        BadRequest: it is not JSON, or beyond those limits (SPEC 12.1).
        InvalidRequest: it is not an object.
    """
    body = load_json(raw)
    if not isinstance(body, dict):
        raise InvalidRequest("the body must be a JSON object", code="invalid_json")
    return body


def message_list(body: Mapping[str, Any]) -> list[Any]:
    """The body's ``messages`` (Chat Completions and Anthropic Messages alike).

    Raises:
        InvalidRequest: ``messages`` is not a non-empty list.
        BadRequest: more than 100,000 of them (SPEC 12.1).
    """
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest(
            "'messages' must be a non-empty array of messages", code="invalid_messages"
        )
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
