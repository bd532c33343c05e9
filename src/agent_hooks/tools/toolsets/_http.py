"""The httpx seam shared by the REST and deployment toolsets.

One :class:`ToolHttpClient` per toolset: the ``httpx.AsyncClient`` is created on the first call
(building an app does no I/O), reused by every call (connection pooling) and closed once. Its
:meth:`ToolHttpClient.send` is the one place that turns httpx outcomes into :class:`ToolError`,
so both toolsets report transport failures and bad statuses the same way. :class:`HttpToolset`
is what both toolsets have in common: tools fixed by the manifest, one client.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Iterable
from typing import Any

import httpx

from agent_hooks.errors import ToolError, ToolTimeoutError, UsageError
from agent_hooks.tools import StagedBaseTool
from agent_hooks.tools.toolsets._base import Toolset

__all__ = ["HttpToolset", "ToolHttpClient", "excerpt"]

_EXCERPT_CHARS = 200
"""How much of an error response body a ToolError quotes: enough to diagnose, short for logs."""


class ToolHttpClient:
    """A lazily created, reusable ``httpx.AsyncClient`` whose failures are tool errors.

    ``timeout_seconds`` is also the transport timeout (connect, read, write, pool), so a call
    cannot hang on a socket even when nobody wraps it in a deadline.

    Pooled connections belong to the event loop that opened them. A host that runs each request
    in its own loop (``asyncio.run`` per request) gets a fresh client in each new loop instead of
    "Event loop is closed", and each loop's client is closed by that loop as it shuts down: the
    client is held by an async generator, which ``asyncio.run`` finalises before closing.
    """

    def __init__(self, *, owner: str, timeout_seconds: float, base_url: str = "") -> None:
        self.owner = owner
        self.timeout_seconds = timeout_seconds
        self.base_url = base_url
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lifetime: AsyncGenerator[None, None] | None = None
        self._closed = False

    async def send(
        self,
        method: str,
        url: str,
        *,
        tool_name: str,
        headers: dict[str, str],
        params: dict[str, Any] | None = None,
        json: Any = None,
    ) -> httpx.Response:
        """Make one request and return a 2xx response.

        Header values are never part of an error message; neither is the query string.

        Raises:
            UsageError: the client was closed.
            ToolTimeoutError: the server did not answer within ``timeout_seconds``.
            ToolError: the request failed in transport, or the status is not 2xx (the message
                names the status and quotes the start of the body).
        """
        client = await self._get()
        request = client.build_request(method, url, headers=headers, params=params, json=json)
        where = f"{method} {request.url.copy_with(query=None)}"
        try:
            response = await client.send(request)
        except httpx.TimeoutException as exc:
            raise ToolTimeoutError(tool_name, self.timeout_seconds) from exc
        except httpx.HTTPError as exc:
            reason = f"{where} failed: {type(exc).__name__}: {exc}"
            raise ToolError(tool_name, reason) from exc
        if not response.is_success:
            reason = f"{where} returned HTTP {response.status_code}: {excerpt(response.text)}"
            raise ToolError(tool_name, reason)
        return response

    async def _get(self) -> httpx.AsyncClient:
        if self._closed:
            raise UsageError(f"the HTTP client of toolset {self.owner!r} is closed")
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            client = httpx.AsyncClient(
                base_url=self.base_url, timeout=httpx.Timeout(self.timeout_seconds)
            )
            lifetime = _closed_with_the_loop(client)
            await anext(lifetime)  # registers the generator with this loop's shutdown
            self._client, self._loop, self._lifetime = client, loop, lifetime
        return self._client

    async def aclose(self) -> None:
        """Close the pooled connections; safe to call more than once."""
        self._closed = True
        lifetime, self._lifetime, self._client = self._lifetime, None, None
        if lifetime is not None and self._loop is asyncio.get_running_loop():
            await lifetime.aclose()  # its finally closes the client
        # A client of an earlier loop was closed by that loop's shutdown.


async def _closed_with_the_loop(client: httpx.AsyncClient) -> AsyncGenerator[None, None]:
    """Holds ``client`` open until closed, or until its event loop shuts its generators down."""
    try:
        yield
    finally:
        await client.aclose()


def excerpt(text: str) -> str:
    """The start of ``text`` on one line, for error messages (``(empty body)`` when blank)."""
    flat = " ".join(text.split())
    if not flat:
        return "(empty body)"
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
