"""The httpx seam shared by the REST and deployment toolsets.

One :class:`ToolHttpClient` per toolset: an ``httpx.AsyncClient`` is created on the first call
(building an app does no I/O), reused by every call (connection pooling) and closed once. Its
:meth:`ToolHttpClient.send` is the one place that turns httpx outcomes into :class:`ToolError`,
so both toolsets report transport failures and bad statuses the same way, in one line without
secrets. :class:`HttpToolset` is what both toolsets have in common: tools fixed by the manifest,
one client.

Bodies are read as a stream and reading stops past the call's byte bound
(:attr:`ToolCallContext.max_body_bytes`), so a huge answer never sits in memory; the whole call,
body included, is bounded by the toolset's timeout, so a server that drips bytes cannot hold it.
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import re
import threading
import weakref
from collections.abc import AsyncGenerator, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from agent_hooks._scrub import scrub, scrub_http_library_logs, scrubbing_filter
from agent_hooks.errors import ToolError, ToolTimeoutError, UsageError
from agent_hooks.tools import StagedBaseTool
from agent_hooks.tools._call_context import current_call_context
from agent_hooks.toolsets._base import Toolset

if TYPE_CHECKING:  # httpx is imported when a toolset first makes a call, not at start-up
    import httpx

__all__ = ["Body", "HttpToolset", "ToolHttpClient", "excerpt"]

logger = logging.getLogger(__name__)

_EXCERPT_CHARS = 200
"""How much of an error response body a ToolError quotes: enough to diagnose, short for logs."""

_CROSS_LOOP_CLOSE_SECONDS = 5.0
"""Longest wait for another thread's event loop to close the client it owns."""


@dataclass(frozen=True)
class Body:
    """A 2xx response body as text, read up to the call's byte bound."""

    text: str
    cut: bool
    """Reading stopped at the bound: ``text`` is the start of a longer body."""


class _LoopClient(NamedTuple):
    client: httpx.AsyncClient
    lifetime: AsyncGenerator[None, None]


class ToolHttpClient:
    """Lazily created, reusable ``httpx.AsyncClient``s whose failures are tool errors.

    ``timeout_seconds`` bounds each call as a whole (connect, headers and body) and is also the
    transport timeout, so a call cannot hang on a socket even when nobody wraps it in a deadline.
    Redirects are not followed: a redirect would carry the toolset's secret headers to wherever
    it points.

    Pooled connections belong to the event loop that opened them, so each loop gets its own
    client: a host that runs requests in several threads, or ``asyncio.run`` per request, never
    sees "Event loop is closed". Each loop's client is closed by that loop as it shuts down (the
    client is held by an async generator, which ``asyncio.run`` finalises before closing), or by
    :meth:`aclose`, whichever comes first.
    """

    def __init__(self, *, owner: str, timeout_seconds: float, base_url: str = "") -> None:
        self.owner = owner
        self.timeout_seconds = timeout_seconds
        self.base_url = base_url
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClient] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()  # the loops of several threads share the dictionary
        self._closed = False
        scrub_http_library_logs()
        logger.addFilter(scrubbing_filter())

    async def send(
        self,
        method: str,
        url: str,
        *,
        tool_name: str,
        headers: dict[str, str],
        params: dict[str, Any] | None = None,
        json: Any = None,
    ) -> Body:
        """Make one request and return the body of its 2xx response.

        Header values, the query string and URL credentials are never part of an error message,
        and every message is scrubbed of registered secrets.

        Raises:
            UsageError: the client was closed.
            ToolTimeoutError: the response, body included, did not arrive within
                ``timeout_seconds``.
            ToolError: the request failed in transport, or the status is not 2xx (the message
                names the status and quotes the start of the body).
        """
        import httpx

        client = await self._get()
        limit = current_call_context().max_body_bytes
        where = f"{method} {_public_url(self.base_url + url)}"
        try:
            async with asyncio.timeout(self.timeout_seconds):
                request = client.build_request(
                    method, url, headers=headers, params=params, json=json
                )
                where = f"{method} {_public_url(request.url)}"
                response = await client.send(request, stream=True)
                try:
                    content, cut = await _read_at_most(response, limit)
                finally:
                    await response.aclose()
        except (TimeoutError, httpx.TimeoutException) as exc:
            raise ToolTimeoutError(tool_name, self.timeout_seconds) from exc
        except (httpx.HTTPError, httpx.InvalidURL) as exc:
            raise ToolError(tool_name, _one_line(f"{where} failed: {_describe(exc)}")) from exc
        text = _decode(content, response.encoding or "utf-8", cut=cut)
        logger.debug(
            "http_response toolset=%s request=%r status=%d bytes=%d cut=%s",
            self.owner,
            where,
            response.status_code,
            len(content),
            cut,
        )
        if not response.is_success:
            status = f"HTTP {response.status_code}{_redirect_note(response)}"
            reason = f"{where} returned {status}: {excerpt(text, complete=not cut)}"
            raise ToolError(tool_name, _one_line(reason))
        return Body(text, cut)

    async def _get(self) -> httpx.AsyncClient:
        import httpx

        if self._closed:
            raise UsageError(f"the HTTP client of toolset {self.owner!r} is closed")
        loop = asyncio.get_running_loop()
        with self._lock:
            entry = self._clients.get(loop)
            fresh = entry is None
            if entry is None:
                client = httpx.AsyncClient(
                    base_url=self.base_url, timeout=httpx.Timeout(self.timeout_seconds)
                )
                entry = self._clients[loop] = _LoopClient(client, _closed_with_the_loop(client))
        if fresh:
            await anext(entry.lifetime)  # registers the generator with this loop's shutdown
        return entry.client

    async def aclose(self) -> None:
        """Close the pooled connections of every loop; safe to call more than once.

        Clients of other threads' loops are closed by those loops, waited for at most
        :data:`_CROSS_LOOP_CLOSE_SECONDS`; a loop that is not running closes its own client
        when it shuts down.
        """
        self._closed = True
        with self._lock:
            entries = list(self._clients.items())
            self._clients.clear()
        current = asyncio.get_running_loop()
        elsewhere: list[asyncio.Future[None]] = []
        for loop, entry in entries:
            if loop is current:
                await entry.lifetime.aclose()  # its finally closes the client
            elif loop.is_running():
                try:
                    future = asyncio.run_coroutine_threadsafe(entry.lifetime.aclose(), loop)
                except RuntimeError:  # that loop closed meanwhile, and its client with it
                    continue
                elsewhere.append(asyncio.wrap_future(future))
        if elsewhere:
            await asyncio.wait(elsewhere, timeout=_CROSS_LOOP_CLOSE_SECONDS)


async def _closed_with_the_loop(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    """Holds ``client`` open until closed, or until its event loop shuts its generators down."""
    try:
        yield
    finally:
        await client.aclose()


async def _read_at_most(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """The first ``limit`` bytes of the (decompressed) body, and whether there was more."""
    content = bytearray()
    async for chunk in response.aiter_bytes():
        content += chunk
        if len(content) > limit:
            return bytes(content[:limit]), True
    return bytes(content), False


def _decode(content: bytes, encoding: str, *, cut: bool) -> str:
    """``content`` as text; a character split by the cut is dropped rather than mangled."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    return decoder.decode(content, final=not cut)


def _public_url(url: httpx.URL | str) -> str:
    """``url`` without credentials, query or fragment: what a reason may show."""
    import httpx

    try:
        public = httpx.URL(url).copy_with(userinfo=b"", query=None, fragment=None)
    except httpx.InvalidURL:
        return "(an invalid URL)"
    return str(public)


def _redirect_note(response: httpx.Response) -> str:
    if not response.is_redirect:
        return ""
    location = urlsplit(response.headers.get("location", ""))
    target = location._replace(netloc=location.netloc.rpartition("@")[2], query="", fragment="")
    return f" (a redirect to {target.geturl() or '?'}, not followed)"


def _describe(exc: Exception) -> str:
    detail = str(exc)
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__


def _one_line(text: str) -> str:
    """``text`` scrubbed of secrets, on one line."""
    return " ".join(scrub(text).split())


_LAST_WORD = re.compile(r"\S+\Z")


def excerpt(text: str, *, complete: bool = True) -> str:
    """The start of ``text`` on one line, secrets scrubbed, for error messages (``(empty body)``
    when blank).

    Scrubbing comes before cutting, so the cut cannot split a secret into something the scrubber
    no longer recognises. For the same reason the last word of an incomplete body (``complete``
    false: the read stopped at a bound) is left out: it may be the start of a secret.
    """
    if not complete:
        text = _LAST_WORD.sub("", text)
    flat = " ".join(scrub(text).split())
    if not flat:
        return "(empty body)" if complete else "(one word too long to quote)"
    if len(flat) <= _EXCERPT_CHARS:
        return flat
    return flat[:_EXCERPT_CHARS] + "..."


class HttpToolset(Toolset):
    """Tools declared in the manifest (so listing them needs no I/O) sharing one HTTP client."""

    def __init__(self, name: str, *, timeout_seconds: float, base_url: str = "") -> None:
        super().__init__(name, timeout_seconds=timeout_seconds)
        self.http = ToolHttpClient(owner=name, timeout_seconds=timeout_seconds, base_url=base_url)
        self._tools: dict[str, StagedBaseTool] = {}

    def _offer(self, tools: Iterable[StagedBaseTool]) -> None:
        """Make ``tools`` available by final name (the first of two equal names wins)."""
        for tool in tools:
            self._tools.setdefault(tool.name, tool)

    def may_provide(self, final_name: str) -> bool:
        return final_name in self._tools

    async def list_tools(self) -> list[StagedBaseTool]:
        return list(self._tools.values())

    async def aclose(self) -> None:
        await self.http.aclose()
