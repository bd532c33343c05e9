"""HTTP to the model behind the proxy: aiohttp's pool for a remote upstream, the echo model in
process, one :class:`UpstreamAnswer` from either.

Why aiohttp and not httpx: for every request, httpcore's pool walks every pooled connection and
asks the kernel whether it has expired (a ``select``/``poll`` per connection), so its cost grows
with the number of clients: at 32 concurrent clients a quarter to a third of the event loop went
there, and the proxy served fewer requests per second than at one client. aiohttp's connector
hands out idle connections from a per-host deque and reaps expired ones on a timer, so a request
costs the same at 1 or 1,000 clients. aiohttp is spoken directly, not under httpx's client: the
request and response objects, URL merging and cookie handling httpx adds around a transport were
another tenth of the proxy's CPU per request (``bench/bench_serve.py`` measures both).

Failures are told apart here, once, as the client is told them: a timeout is
:class:`UpstreamTimeout` (504); no connection, or one broken before the status line,
:class:`UpstreamUnreachable` (502); a body that breaks off :class:`UpstreamBrokeOff` (502).
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from typing import Protocol

import aiohttp
import httpx
from yarl import URL

from agent_hooks.serve._echo import echo_app
from agent_hooks.serve._errors import (
    UpstreamBrokeOff,
    UpstreamError,
    UpstreamTimeout,
    UpstreamUnreachable,
)

__all__ = ["AiohttpTransport", "EchoTransport", "UpstreamAnswer", "UpstreamTransport"]

_ECHO_BASE_URL = "http://echo.invalid"
_FAILURES = (aiohttp.ClientError, asyncio.TimeoutError)
"""What aiohttp raises when a request fails (its timeouts are also ``asyncio.TimeoutError``)."""


class UpstreamAnswer:
    """The upstream's status and headers; the body is still to come, chunk by chunk or whole.

    Whoever opened it closes it (:meth:`aclose`): a body read to its end hands the connection
    back, an unfinished one drops it, so the upstream stops generating at once.
    """

    __slots__ = ("_chunks", "_close", "headers", "status_code")

    def __init__(
        self,
        status_code: int,
        headers: Mapping[str, str],
        chunks: AsyncGenerator[bytes, None],
        close: Callable[[], Awaitable[None]],
    ) -> None:
        self.status_code = status_code
        self.headers = headers
        """Case-insensitive, as the upstream sent them."""
        self._chunks = chunks
        self._close = close

    @property
    def is_success(self) -> bool:
        return 200 <= self.status_code < 300

    def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body as it arrives.

        Raises:
            UpstreamTimeout: the body stalled for the upstream timeout.
            UpstreamBrokeOff: the connection broke before the body's end.
        """
        return self._chunks

    async def aread(self) -> bytes:
        """The rest of the body, whole (raises as :meth:`aiter_bytes`)."""
        return b"".join([chunk async for chunk in self._chunks])

    async def aclose(self) -> None:
        await self._chunks.aclose()
        await self._close()


class UpstreamTransport(Protocol):
    """Sends one request to the upstream and opens its answer; raises :class:`UpstreamError`."""

    async def request(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None
    ) -> UpstreamAnswer: ...

    async def aclose(self) -> None: ...


class AiohttpTransport:
    """A remote upstream at ``base_url``, through one ``aiohttp.ClientSession``.

    The session (and its pool: unbounded, idle connections kept ``keepalive_seconds``) is
    created on the first request, inside the event loop that serves it, and closed by
    :meth:`aclose`. Credentials in ``base_url`` go as a basic ``Authorization`` header (they
    win over any other), never in the request line. Every phase (the pool, connecting, each
    read) is bounded by ``timeout_seconds``; answers are streamed, never buffered or decoded.
    """

    def __init__(self, base_url: str, *, timeout_seconds: float, keepalive_seconds: float) -> None:
        url = URL(base_url.rstrip("/"))
        self._basic_auth: str | None = None
        if url.user is not None or url.password is not None:
            userinfo = f"{url.user or ''}:{url.password or ''}".encode()
            self._basic_auth = "Basic " + base64.b64encode(userinfo).decode()  # RFC 7617
            url = url.with_user(None)
        self._base_url = str(url)
        self._timeout = aiohttp.ClientTimeout(
            total=None,
            connect=timeout_seconds,
            sock_connect=timeout_seconds,
            sock_read=timeout_seconds,
        )
        self._keepalive_seconds = keepalive_seconds
        self._session: aiohttp.ClientSession | None = None

    async def request(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None
    ) -> UpstreamAnswer:
        """Raises:
        UpstreamTimeout: no answer in time.
        UpstreamUnreachable: no connection, or it broke before the status line.
        """
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=self._keepalive_seconds)
            self._session = aiohttp.ClientSession(
                connector=connector, auto_decompress=False, timeout=self._timeout
            )
        if self._basic_auth is not None:
            headers = {**headers, "authorization": self._basic_auth}
        try:
            response = await self._session.request(
                method, self._base_url + path, headers=headers, data=body, allow_redirects=False
            )
        except _FAILURES as exc:
            raise _failure(exc, answering=False) from exc
        return UpstreamAnswer(
            response.status, response.headers, _chunks(response), _closer(response)
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


async def _chunks(response: aiohttp.ClientResponse) -> AsyncGenerator[bytes, None]:
    try:
        async for chunk in response.content.iter_any():
            yield chunk
    except _FAILURES as exc:
        raise _failure(exc, answering=True) from exc


def _closer(response: aiohttp.ClientResponse) -> Callable[[], Awaitable[None]]:
    async def close() -> None:
        """Hand the connection back when the body was read to its end, else drop it (a client
        that went away: the upstream stops generating at once)."""
        if response.content.at_eof():
            response.release()
        else:
            response.close()

    return close


def _failure(exc: BaseException, *, answering: bool) -> UpstreamError:
    """What the client is told for an aiohttp (or asyncio timeout) failure: before the status
    line (``answering`` false) or while the body came."""
    kind = type(exc).__name__
    timed_out = isinstance(exc, asyncio.TimeoutError)  # aiohttp's timeouts are ones too
    if answering:
        if timed_out:
            return UpstreamTimeout(f"the upstream's answer stalled ({kind})")
        return UpstreamBrokeOff(f"the upstream's answer broke off ({kind})")
    if timed_out:
        return UpstreamTimeout(f"the upstream did not answer in time ({kind})")
    return UpstreamUnreachable(f"the upstream cannot be reached ({kind})")


class EchoTransport:
    """The echo model (SPEC 13), answered in process through httpx's ASGI transport."""

    def __init__(self) -> None:
        self._client = httpx.AsyncClient(
            base_url=_ECHO_BASE_URL, transport=httpx.ASGITransport(app=echo_app())
        )

    async def request(
        self, method: str, path: str, headers: dict[str, str], body: bytes | None
    ) -> UpstreamAnswer:
        request = self._client.build_request(method, path, headers=headers, content=body)
        response = await self._client.send(request, stream=True)
        return UpstreamAnswer(
            response.status_code, response.headers, _echo_chunks(response), response.aclose
        )

    async def aclose(self) -> None:
        await self._client.aclose()


async def _echo_chunks(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    try:
        async for chunk in response.aiter_bytes():
            yield chunk
    except httpx.HTTPError as exc:  # the echo model failed mid-answer: a bug of ours
        raise UpstreamBrokeOff(f"the echo model's answer broke off ({type(exc).__name__})") from exc
