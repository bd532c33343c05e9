"""httpx's interface over aiohttp's connection pool: the proxy's transport to a remote upstream.

Why not httpx's own pool: for every request, httpcore's pool walks every pooled connection and
asks the kernel whether it has expired (a ``select``/``poll`` per connection), so its cost grows
with the number of clients: at 32 concurrent clients a quarter to a third of the event loop went
there, and the proxy served fewer requests per second than at one client. aiohttp's connector
hands out idle connections from a per-host deque and reaps expired ones on a timer, so a request
costs the same at 1 or 1,000 clients (``bench/bench_serve.py`` measures both).

The proxy keeps speaking httpx (requests, streamed responses, one exception tree): this module
translates aiohttp's exceptions into httpx's, once, so the 502/504 decisions in ``_upstream``
stay where they are.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import aiohttp
import httpx
from multidict import CIMultiDict

__all__ = ["AiohttpTransport", "translate"]


def translate(exc: BaseException) -> httpx.TransportError:
    """The httpx exception for an aiohttp (or asyncio timeout) failure of one request.

    Timeouts become httpx timeouts (the proxy answers 504), everything else a transport error
    (502): a refused connection, a peer that hung up before or while answering, a malformed
    answer, a body that broke off.
    """
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, aiohttp.ConnectionTimeoutError):
        return httpx.ConnectTimeout(message)
    if isinstance(exc, aiohttp.ServerTimeoutError | asyncio.TimeoutError):
        return httpx.ReadTimeout(message)
    if isinstance(exc, aiohttp.ClientConnectorError):
        return httpx.ConnectError(message)
    if isinstance(exc, aiohttp.ServerDisconnectedError | aiohttp.ClientResponseError):
        return httpx.RemoteProtocolError(message)
    if isinstance(exc, aiohttp.ClientPayloadError | aiohttp.ClientOSError):
        return httpx.ReadError(message)
    return httpx.TransportError(message)


_FAILURES = (aiohttp.ClientError, asyncio.TimeoutError)
"""What aiohttp raises when a request fails (its timeouts are also ``asyncio.TimeoutError``)."""


class AiohttpTransport(httpx.AsyncBaseTransport):
    """An ``httpx.AsyncClient`` transport that sends through one ``aiohttp.ClientSession``.

    The session (and its pool: unbounded, idle connections kept ``keepalive_seconds``) is
    created on the first request, inside the event loop that serves it, and closed by
    :meth:`aclose`. Response bodies are streamed as they arrive, never buffered or decoded.
    """

    def __init__(self, *, keepalive_seconds: float) -> None:
        self._keepalive_seconds = keepalive_seconds
        self._session: aiohttp.ClientSession | None = None

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request`` (its body already in memory) and open the answer as a stream.

        Raises:
            httpx.TransportError: see :func:`translate`.
        """
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=self._keepalive_seconds)
            self._session = aiohttp.ClientSession(connector=connector, auto_decompress=False)
        timeouts = request.extensions.get("timeout", {})
        # httpx has already turned credentials in the URL into a header, as the wire carries
        # them; aiohttp refuses a URL with credentials beside an Authorization header.
        url = request.url.copy_with(userinfo=b"") if request.url.userinfo else request.url
        try:
            response = await self._session.request(
                request.method,
                str(url),
                headers=CIMultiDict(request.headers.multi_items()),
                data=request.content,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(
                    connect=timeouts.get("pool"),
                    sock_connect=timeouts.get("connect"),
                    sock_read=timeouts.get("read"),
                ),
            )
        except _FAILURES as exc:
            raise translate(exc) from exc
        return httpx.Response(
            response.status,
            headers=response.raw_headers,
            stream=_Body(response),
            request=request,
        )

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()


class _Body(httpx.AsyncByteStream):
    """An answer's body, chunk by chunk as the upstream sends it."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except _FAILURES as exc:
            raise translate(exc) from exc

    async def aclose(self) -> None:
        """Hand the connection back when the body was read to its end, else drop it (a client
        that went away: the upstream stops generating at once)."""
        if self._response.content.at_eof():
            self._response.release()
        else:
            self._response.close()
