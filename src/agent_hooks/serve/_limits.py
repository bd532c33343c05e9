"""What the proxy refuses to read (SPEC 12.1, 16): bodies, JSON and headers an attacker can shape.

Each limit answers before the work it would cost: a body past ``--max-body-bytes`` is not read
further (413), nor one that would take the bodies in flight past ``--max-inflight-bytes`` (503),
JSON is checked for depth and for numbers no model API accepts while it is parsed, and a
conversation id must be a short printable key. Every dialect's route calls these.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NoReturn

from agent_hooks.serve._errors import BadRequest, Overloaded, RequestTooLarge

if TYPE_CHECKING:  # the CLI's parser reads the defaults here without loading the web stack
    from starlette.requests import Request
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_INFLIGHT_BYTES",
    "MAX_CONVERSATION_ID_CHARS",
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "MAX_MESSAGES",
    "InflightLimit",
    "check_conversation_header",
    "check_message_count",
    "load_json",
    "read_body",
]

DEFAULT_MAX_BODY_BYTES = 16 * 1024 * 1024
DEFAULT_MAX_INFLIGHT_BYTES = 256 * 1024 * 1024
MAX_MESSAGES = 100_000
MAX_DEPTH = 128
MAX_INT_DIGITS = 4300
"""Python's own limit on converting digits to an integer; past it, ``int()`` refuses."""
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


def load_json(raw: bytes) -> Any:
    """``raw`` parsed, refusing what would cost the proxy or confuse the upstream.

    The body is decoded as strict UTF-8 first (a leading byte order mark is skipped, as RFC 8259
    allows): ``json.loads`` on bytes would also take UTF-16 and UTF-32, and decodes with
    ``surrogatepass``, so encoded surrogates (``ED A0 80``) would become strings no UTF-8 body
    sent upstream can hold.

    Raises:
        BadRequest: not UTF-8 (``invalid_utf8``); not JSON (``invalid_json``); nested deeper
            than :data:`MAX_DEPTH` (``too_deep``); ``NaN``/``Infinity`` or a float that
            overflows (``non_finite_number``); an integer of more than :data:`MAX_INT_DIGITS`
            digits (``number_too_large``); a string escaping a lone UTF-16 surrogate
            (``invalid_unicode``), which is not Unicode text either.
    """
    try:
        text = str(raw, "utf-8-sig" if raw.startswith(codecs.BOM_UTF8) else "utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(
            f"the body is not UTF-8: {exc.reason} at byte {exc.start}", code="invalid_utf8"
        ) from exc
    try:
        value = json.loads(
            text,
            object_hook=_same,
            parse_constant=_non_finite,
            parse_float=_float,
            parse_int=_int,
        )
    except RecursionError:
        _too_deep()
    except json.JSONDecodeError as exc:
        raise BadRequest(f"the body is not JSON: {exc}", code="invalid_json") from exc
    _check_depth(value)
    if _SURROGATE_ESCAPE.search(raw):
        _check_surrogates(value)  # only then can a string hold one: most bodies skip the walk
    return value


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


def _check_depth(value: Any) -> None:
    r"""Walk containers level by level, without recursion, keeping only containers at each
    level (the parser makes exact ``dict``\s and ``list``\s: an exact type test is cheapest)."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            _too_deep()
        level = [
            child
            for container in level
            for child in (container.values() if type(container) is dict else container)
            if type(child) is dict or type(child) is list
        ]


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A JSON escape of a UTF-16 surrogate; paired ones decode to one character, lone ones stay."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_surrogates(value: Any) -> None:
    """Every string (keys too) must be Unicode text: a lone surrogate left by the decoder makes
    encoding the forwarded body fail."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str) and _SURROGATE.search(item):
            raise BadRequest(
                "the JSON holds a lone UTF-16 surrogate escape, which is not Unicode text",
                code="invalid_unicode",
            )


def _too_large(limit: int) -> NoReturn:
    raise RequestTooLarge(f"the body is larger than {limit} bytes (--max-body-bytes)")


def _too_deep() -> NoReturn:
    raise BadRequest(f"the JSON is nested deeper than {MAX_DEPTH} levels", code="too_deep")


def _same(value: dict[str, Any]) -> dict[str, Any]:
    """The parser's call for each object: a point where a worker thread parsing a large body
    lets the event loop run (SPEC 16; one call of the C parser holds the GIL throughout, and a
    history of strings gives it no other)."""
    return value


def _non_finite(text: str) -> NoReturn:
    raise BadRequest(f"the JSON holds {text}, which is not a number", code="non_finite_number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadRequest(f"the JSON number {text[:40]} is too large", code="non_finite_number")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BadRequest(
            f"the JSON holds an integer of more than {MAX_INT_DIGITS} digits",
            code="number_too_large",
        )
    return int(text)
