"""The answers the proxy gives in place of the upstream's: one exception type carries them all.

Every check on the way in (tenant, size, shape) and every upstream failure raises a
:class:`ProxyError` subclass naming the HTTP status, the error ``type`` and ``code`` in OpenAI's
terms; the pipeline turns each into the route's own error shape in one place. Nothing here knows
a dialect.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "BadRequest",
    "Overloaded",
    "ProxyError",
    "RequestTooLarge",
    "Unauthenticated",
    "UpstreamBrokeOff",
    "UpstreamError",
    "UpstreamTimeout",
    "UpstreamUnreachable",
]


class ProxyError(Exception):
    """A request the proxy answers itself; the message is safe to show the client."""

    status = 500
    type_ = "api_error"
    code: str | None = None
    headers: Mapping[str, str] = MappingProxyType({})
    """Sent with the answer (``Retry-After`` on a 503 the client may simply retry)."""

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status


class BadRequest(ProxyError):
    """Input the proxy will not read: 400 ``invalid_request_error``."""

    status = 400
    type_ = "invalid_request_error"


class RequestTooLarge(ProxyError):
    """A body over ``--max-body-bytes``: 413, and the rest of it is never read."""

    status = 413
    type_ = "request_too_large"
    code = "request_too_large"


class Overloaded(ProxyError):
    """The bodies in flight already fill ``--max-inflight-bytes``: 503 until room is free
    (Anthropic's ``overloaded_error``)."""

    status = 503
    type_ = "server_error"
    code = "overloaded"
    # the SDKs (openai, anthropic) retry a 503 and wait what Retry-After says; a second is
    # about what a large body takes to go through
    headers = MappingProxyType({"Retry-After": "1"})


class Unauthenticated(ProxyError):
    """Nobody the proxy can name owns the request: 401."""

    status = 401
    type_ = "authentication_error"


class UpstreamError(ProxyError):
    """No answer from the upstream; ``status`` and ``code`` are what the client is told."""

    status = 502
    type_ = "upstream_error"
    code = "upstream_unreachable"


class UpstreamBrokeOff(UpstreamError):
    """The upstream's answer stopped before its end."""

    code = "upstream_broke_off"


class UpstreamUnreachable(UpstreamError):
    """The upstream could not be reached or broke the connection before answering."""


class UpstreamTimeout(UpstreamError):
    """The upstream did not answer, or its answer stalled, within ``--upstream-timeout``."""

    status = 504
    code = "upstream_timeout"
