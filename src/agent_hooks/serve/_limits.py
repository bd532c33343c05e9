"""What the proxy refuses to read (SPEC 12.1, 16): bodies and headers an attacker can shape.

Each limit answers before the work it would cost: a body past ``--max-body-bytes`` is not read
further (413), nor one that would take the bodies in flight past ``--max-inflight-bytes`` (503),
a history past :data:`MAX_MESSAGES` is refused, and a conversation id must be a short printable
key. Every dialect's route calls these; the body's JSON is read by
:func:`~agent_hooks.serve._json_body.load_json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NoReturn

from agent_hooks.serve._errors import BadRequest, Overloaded, RequestTooLarge

if TYPE_CHECKING:  # the CLI's parser reads the defaults here without loading the web stack
    from starlette.requests import Request
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_INFLIGHT_BYTES",
    "MAX_CONVERSATION_ID_CHARS",
    "MAX_MESSAGES",
    "InflightLimit",
    "check_conversation_header",
    "check_message_count",
    "read_body",
]

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_INFLIGHT_BYTES = 256 * 1024 * 1024
MAX_MESSAGES = 100_000
MAX_CONVERSATION_ID_CHARS = 256
CONVERSATION_HEADER = "x-conversation-id"


async def read_body(request: Request, *, limit: int) -> bytes:
    """The whole body, or :class:`RequestTooLarge` as soon as it would pass ``limit`` bytes.

    A declared ``Content-Length`` over the limit is refused before a byte is read.

    Raises:
        RequestTooLarge: the body is larger than ``limit``.
    """
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        _too_large(limit)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            _too_large(limit)
        chunks.append(chunk)
    return b"".join(chunks)


class InflightLimit:
    """ASGI middleware: the request bodies held at once stay within ``limit`` bytes (SPEC 16).

    A body counts from its first byte until its request's answer is complete (the last byte of a
    stream, the completion hooks after it): until then the proxy holds it in some form (the
    bytes, the parsed history, the body it forwards, the history the completion hooks read).
    A declared ``Content-Length`` is counted whole when the body's first byte is asked for, so
    two large requests cannot both start and both fail half-way; a chunked body counts as it
    comes. A request that would pass the limit gets :class:`Overloaded` from ``receive``, which
    the route answers with a 503 in its dialect's shape, its body read no further.

    The count is kept here, around the whole ASGI call, so no error, disconnect or stream can
    leave bytes counted: whatever happens inside, they are given back when the call returns.
    """

    def __init__(self, app: ASGIApp, *, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.held = 0
        """Bytes of the bodies counted now."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _declared_length(scope)
        counted = received = 0

        async def counting_receive() -> Message:
            nonlocal counted, received
            if declared > counted:  # the body's first byte is wanted: count it whole at once
                self._count(declared - counted)
                counted = declared
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > counted:
                    self._count(received - counted)
                    counted = received
            return message

        try:
            await self.app(scope, counting_receive, send)
        finally:
            self.held -= counted

    def _count(self, size: int) -> None:
        """Raises:
        Overloaded: ``size`` more bytes would pass the limit.
        """
        if self.held + size > self.limit:
            raise Overloaded(
                f"the request bodies in flight would pass {self.limit} bytes"
                " (--max-inflight-bytes); retry shortly"
            )
        self.held += size


def _declared_length(scope: Scope) -> int:
    for name, value in scope["headers"]:
        if name == b"content-length" and value.isdigit():
            return int(value)
    return 0


def check_message_count(count: int) -> None:
    """Raises:
    BadRequest: more than :data:`MAX_MESSAGES` messages (``too_many_messages``).
    """
    if count > MAX_MESSAGES:
        raise BadRequest(
            f"the request has {count} messages; at most {MAX_MESSAGES} are accepted",
            code="too_many_messages",
        )


def check_conversation_header(headers: Mapping[str, str]) -> None:
    """An ``X-Conversation-Id`` that is present must be 1 to 256 printable ASCII characters.

    Raises:
        BadRequest: it is empty, too long or holds other characters (``invalid_conversation_id``).
    """
    value = headers.get(CONVERSATION_HEADER)
    if value is None:
        return
    if not value.strip():
        problem = "is empty"
    elif len(value) > MAX_CONVERSATION_ID_CHARS:
        problem = f"is longer than {MAX_CONVERSATION_ID_CHARS} characters"
    elif not all(" " <= char <= "~" for char in value):
        problem = "holds characters other than printable ASCII"
    else:
        return
    raise BadRequest(f"X-Conversation-Id {problem}", code="invalid_conversation_id")


def _too_large(limit: int) -> NoReturn:
    raise RequestTooLarge(f"the body is larger than {limit} bytes (--max-body-bytes)")
