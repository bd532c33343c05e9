"""Reading a chat-completions request body: only ``messages`` is ours, the rest passes through.

Pure: bytes in, a :class:`ChatRequest` or an :class:`InvalidRequest` out. The body stays a plain
dict in its original key order so what reaches the upstream differs only in ``messages``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter, ValidationError

from agent_hooks.messages import Message

__all__ = ["ChatRequest", "InvalidRequest", "parse_chat_request"]

_MESSAGES = TypeAdapter(list[Message])


class InvalidRequest(ValueError):
    """The body cannot be served: a 400 ``invalid_request_error`` whose message says why."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ChatRequest:
    """A parsed request: the body as sent (plus ``model`` from DIAL's route) and its messages."""

    body: dict[str, Any]
    messages: list[dict[str, Any]]

    @property
    def stream(self) -> bool:
        return self.body.get("stream") is True

    @property
    def user(self) -> str | None:
        user = self.body.get("user")
        return user if isinstance(user, str) and user else None

    @property
    def model(self) -> str | None:
        model = self.body.get("model")
        return model if isinstance(model, str) and model else None

    def with_messages(self, messages: list[dict[str, Any]]) -> bytes:
        """The body to forward: every field as it came, ``messages`` replaced."""
        return json.dumps({**self.body, "messages": messages}, ensure_ascii=False).encode()


def parse_chat_request(raw: bytes, *, deployment: str | None = None) -> ChatRequest:
    """Parse and check a body; ``deployment`` (DIAL's route) becomes ``model`` when it has none.

    Raises:
        InvalidRequest: not a JSON object, or ``messages`` is not a non-empty list of messages.
    """
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidRequest(f"the body is not JSON: {exc}", code="invalid_json") from exc
    if not isinstance(body, dict):
        raise InvalidRequest("the body must be a JSON object", code="invalid_json")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise InvalidRequest(
            "'messages' must be a non-empty array of messages", code="invalid_messages"
        )
    try:
        _MESSAGES.validate_python(messages)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise InvalidRequest(
            f"'messages.{where}': {first['msg']}", code="invalid_messages"
        ) from exc
    if deployment is not None and not body.get("model"):
        body["model"] = deployment
    return ChatRequest(body=body, messages=messages)
