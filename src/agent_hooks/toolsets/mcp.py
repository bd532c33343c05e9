"""MCP servers as toolsets (``mcp``), over stdio or streamable HTTP, with the official SDK client.

One session per toolset per event loop: opened on the first lookup or call (never when the app is
built), shared by every hook and request of that loop, closed with the loop or by
:meth:`McpToolset.aclose`. A session that dies (the server crashed, the connection dropped) or
whose call was abandoned is replaced on the next call, and a request that was in flight when its
server died is sent once more on a session of its own (:meth:`McpToolset._on_live_session`); a
toolset whose server fails to start backs off (:mod:`._mcp_backoff`). Tools are listed once per
session.
Every SDK and transport exception is translated into a :class:`~agent_hooks.errors.ToolError` in
one place, :func:`tool_error`.

The SDK (``mcp``, ``httpx2``) is imported when a session first opens, so an app that declares MCP
toolsets, and ``import agent_hooks``, cost nothing until a hook needs a server.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, TypeVar, assert_never

from agent_hooks._reasons import reason_for
from agent_hooks._scrub import register_url, scrub_http_library_logs
from agent_hooks.config.toolsets import (
    McpToolsetConfig,
    StdioServerConfig,
    StreamableHttpServerConfig,
)
from agent_hooks.errors import ToolError, ToolTimeoutError, UsageError
from agent_hooks.tools import StagedBaseTool, sanitize_toolname
from agent_hooks.toolsets._base import Toolset
from agent_hooks.toolsets._mcp_backoff import DEFAULT_SCHEDULE, Backoff, BackoffSchedule
from agent_hooks.toolsets._mcp_loops import LoopSessions
from agent_hooks.toolsets._mcp_session import (
    Connection,
    OwnedSession,
    ToolListing,
    stderr_to_log,
)
from agent_hooks.toolsets._mcp_stdio import stdio_transport
from agent_hooks.toolsets._mcp_translate import (
    connection_lost,
    tool_error,
    tool_result_content,
)
from agent_hooks.toolsets._secrets import resolve_secrets

if TYPE_CHECKING:
    import mcp.types as mcp_types
    from mcp.client.session import ClientSession

__all__ = ["McpTool", "McpToolset", "tool_error", "tool_result_content"]

_T = TypeVar("_T")

logger = logging.getLogger("agent_hooks.tools.mcp")

BACKING_OFF = "backing off"
"""The reason of calls refused while a toolset waits to retry a failed start."""

_SSE_READ_TIMEOUT_SECONDS = 300.0
"""HTTP read timeout: a server may keep its event stream quiet this long. Request deadlines come
from the session's read timeout (the toolset's ``timeout_seconds``), not from this."""

_MAX_TOOL_PAGES = 100
"""Guards the tool listing against a server whose pagination cursor never ends."""


class McpTool(StagedBaseTool):
    """One tool of an MCP server, under its final name ``{toolset}_{tool}`` (sanitised)."""

    def __init__(self, toolset: McpToolset, tool: mcp_types.Tool) -> None:
        super().__init__(
            name=sanitize_toolname(f"{toolset.name}_{tool.name}"),
            description=tool.description or "",
            parameters=tool.input_schema,
        )
        self.server_tool_name = tool.name
        self._toolset = toolset

    async def execute(self, arguments: Mapping[str, Any]) -> str | None:
        """Raises:
        ToolError: the server is unreachable, the call failed, or the result is an error.
        UsageError: the toolset was closed.
        """
        return await self._toolset.call_tool(self.server_tool_name, arguments, final_name=self.name)


class McpToolset(Toolset):
    """The tools of one MCP server, reached through one lazily opened session per event loop."""

    def __init__(
        self, config: McpToolsetConfig, *, backoff: BackoffSchedule = DEFAULT_SCHEDULE
    ) -> None:
        """``backoff``: when to start the server again after a failed start (1 s doubling to
        60 s on the monotonic clock unless a test moves its own clock)."""
        super().__init__(config.name, timeout_seconds=config.timeout_seconds)
        self.config = config
        if isinstance(config.server, StreamableHttpServerConfig):
            register_url(config.server.url)  # credentials in the URL are secrets too
            scrub_http_library_logs()
        self._prefix = sanitize_toolname(f"{config.name}_")
        self._sessions = LoopSessions()
        self._backoff = Backoff(backoff)
        self._closed = False

    def may_provide(self, final_name: str) -> bool:
        """Only names under this toolset's prefix, so lookups never start unrelated servers."""
        return final_name.startswith(self._prefix)

    async def list_tools(self) -> list[StagedBaseTool]:
        """The server's tools (only ``allowed_tools`` when set), listed once per session.

        Raises:
            ToolError: naming the toolset: the server cannot be started or reached, the toolset
                is backing off, or the listing failed.
            UsageError: the toolset was closed.
        """
        return list((await self._listing(self.name)).tools)

    async def find_tool(self, final_name: str) -> StagedBaseTool | None:
        """The tool with this final name; ``None`` when the server has no such tool.

        Raises:
            ToolError: naming ``final_name``: the server cannot be started or reached, the
                toolset is backing off, or the listing failed.
            UsageError: the toolset was closed.
        """
        if not self.may_provide(final_name):
            return None
        listing = await self._listing(final_name)
        return next((tool for tool in listing.tools if tool.name == final_name), None)

    async def hidden_tool_names(self) -> tuple[str, ...]:
        """Server tool names that ``allowed_tools`` leaves out (listed on the same session), so a
        check can say "exists but not allowed" rather than "no such tool".

        Raises:
            ToolError: as for :meth:`list_tools`.
            UsageError: the toolset was closed.
        """
        return (await self._listing(self.name)).hidden

    async def call_tool(
        self, server_tool_name: str, arguments: Mapping[str, Any], *, final_name: str
    ) -> str | None:
        """Call a server tool on this loop's session and return its text content.

        Raises:
            ToolError: the server cannot be reached, the toolset is backing off, the call failed,
                or the server reported an error result (``is_error``).
            UsageError: the toolset was closed.
        """
        result = await self._on_live_session(
            final_name,
            lambda session: self._request(
                session, final_name, lambda c: c.call_tool(server_tool_name, dict(arguments))
            ),
        )
        return tool_result_content(result, final_name)

    async def aclose(self) -> None:
        """Close every session (bounded; no server process outlives it); later calls raise
        ``UsageError``. Safe to call more than once."""
        self._closed = True
        await self._sessions.aclose()

    async def _listing(self, tool_name: str) -> ToolListing:
        return await self._on_live_session(
            tool_name, lambda session: self._list_on(session, tool_name)
        )

    async def _list_on(self, session: OwnedSession, tool_name: str) -> ToolListing:
        async with session.listing_lock:
            if session.listing is None:
                found = await self._request(session, tool_name, _list_all_tools)
                allowed = self.config.allowed_tools
                session.listing = ToolListing(
                    tools=tuple(
                        McpTool(self, tool)
                        for tool in found
                        if allowed is None or tool.name in allowed
                    ),
                    hidden=tuple(
                        tool.name
                        for tool in found
                        if allowed is not None and tool.name not in allowed
                    ),
                )
            return session.listing

    async def _ready_session(self, tool_name: str) -> OwnedSession:
        """This loop's session, opened (or replaced, when it died or was retired) for this call.

        Raises:
            ToolError: naming ``tool_name``: the session cannot be opened, or the toolset is
                backing off after a failed start.
            UsageError: the toolset was closed.
        """
        if self._closed:
            raise UsageError(f"MCP toolset {self.name!r} is closed; create a new app")
        session = self._sessions.current()
        if session is None or session.dead:
            session = await self._new_session(tool_name, shared=True)
        return await self._opened(session, tool_name)

    async def _new_session(self, tool_name: str, *, shared: bool) -> OwnedSession:
        """A session started for this loop; ``shared``: the one every call of the loop uses.

        Raises:
            ToolError: naming ``tool_name``: the toolset is backing off after a failed start.
        """
        if self._backoff.waiting():
            raise ToolError(tool_name, BACKING_OFF)
        session = OwnedSession(
            self._connect,
            timeout_seconds=self.timeout_seconds,
            label=self.name,
            backoff=self._backoff,
        )
        await self._sessions.install(session, current=shared)
        return session

    async def _opened(self, session: OwnedSession, tool_name: str) -> OwnedSession:
        """``session`` once it is ready.

        Raises:
            ToolError: naming ``tool_name``: the session could not be opened.
        """
        try:
            await session.wait_ready()
        except Exception as exc:
            raise tool_error(tool_name, exc, timeout_seconds=self.timeout_seconds) from exc
        return session

    async def _on_live_session(
        self, tool_name: str, operation: Callable[[OwnedSession], Awaitable[_T]]
    ) -> _T:
        """``operation`` on this loop's session, and once more on a session of its own when the
        server died while it was in flight.

        A server shared by many hooks may be crashed by one of them; the others' requests were
        in flight on the same connection and fail with it through no fault of their own, and
        nothing tells the crashing request apart from its victims. So each of them is retried
        once on a new server of its own (SPEC sections 8 and 16): a request that kills every
        server it reaches fails on its second server too, alone, and cannot take another
        request's retry with it. The retry's session is retired as soon as the retry is over (its
        owner stops the server in the background); the loop's next call opens a new shared
        session. The retry runs inside the caller's deadline and the toolset's timeout: a hook
        never waits past them for it.

        Raises:
            ToolError: as for :meth:`_ready_session` and :meth:`_request`; when the second
                server died as well, the error of that second try.
            UsageError: the toolset was closed.
        """
        try:
            return await operation(await self._ready_session(tool_name))
        except _ConnectionLostError as gone:
            if self._closed:  # the toolset's close cut the request short: nothing to retry on
                raise gone.error from gone.__cause__
            logger.info(
                "toolset=%s tool=%s outcome=retrying_on_a_fresh_session reason=%s",
                self.name,
                tool_name,
                reason_for(gone.error),
            )
        retry = await self._new_session(tool_name, shared=False)
        try:
            return await operation(await self._opened(retry, tool_name))
        except _ConnectionLostError as gone:
            raise gone.error from gone.__cause__
        finally:
            retry.retire("retry_over")

    async def _request(
        self,
        session: OwnedSession,
        tool_name: str,
        request: Callable[[ClientSession], Awaitable[_T]],
    ) -> _T:
        """Run one request; a lost connection or a timeout retires the session, so the next call
        gets a new one.

        Raises:
            ToolError: the request failed (translated by :func:`tool_error`).
            _ConnectionLostError: the connection was lost while the request was in flight.
        """
        try:
            return await session.run(request)
        except Exception as exc:
            error = tool_error(tool_name, exc, timeout_seconds=self.timeout_seconds)
            if isinstance(error, ToolTimeoutError):
                session.retire("call_timed_out")
            elif connection_lost(exc):
                session.retire("connection_lost")
                raise _ConnectionLostError(error) from exc
            raise error from exc

    async def _connect(self, stack: AsyncExitStack) -> Connection:
        """Runs in the session's owner task: the transport, then the (uninitialised) session."""
        await _import_sdk_off_the_loop()
        server = self.config.server
        match server:
            case StdioServerConfig():
                return await self._connect_stdio(stack, server)
            case StreamableHttpServerConfig():
                return await self._connect_http(stack, server)
            case _:
                assert_never(server)

    async def _connect_stdio(self, stack: AsyncExitStack, server: StdioServerConfig) -> Connection:
        from mcp.client.session import ClientSession
        from mcp.client.stdio import get_default_environment

        env = resolve_secrets(server.env, tool_name=self.name, for_child_env=True)
        errlog = await stack.enter_async_context(stderr_to_log(self.name))
        read, write, process = await stack.enter_async_context(
            stdio_transport(
                server.command,
                server.args,
                env=get_default_environment() | env,
                cwd=server.cwd,
                errlog=errlog,
                label=self.name,
            )
        )
        client = ClientSession(read, write, read_timeout_seconds=self.timeout_seconds)
        return Connection(await stack.enter_async_context(client), process)

    async def _connect_http(
        self, stack: AsyncExitStack, server: StreamableHttpServerConfig
    ) -> Connection:
        import httpx2
        from mcp.client.session import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        http = await stack.enter_async_context(
            httpx2.AsyncClient(
                headers=resolve_secrets(server.headers, tool_name=self.name),
                timeout=httpx2.Timeout(self.timeout_seconds, read=_SSE_READ_TIMEOUT_SECONDS),
            )
        )
        read, write = await stack.enter_async_context(
            streamable_http_client(server.url, http_client=http)
        )
        client = ClientSession(read, write, read_timeout_seconds=self.timeout_seconds)
        return Connection(await stack.enter_async_context(client), None)


class _ConnectionLostError(Exception):
    """A request's connection was lost while it was in flight; carries the error to raise when
    the request is not tried again."""

    def __init__(self, error: ToolError) -> None:
        super().__init__(str(error))
        self.error = error


_SDK_MODULES = (
    "mcp.types",
    "mcp.client.session",
    "mcp.client.stdio",
    "mcp.client.streamable_http",
    "httpx2",
)


async def _import_sdk_off_the_loop() -> None:
    """Import the MCP SDK in a worker thread the first time a session opens.

    The SDK (and the web stack behind it) takes about a second to import; on the event loop that
    second would stall every other request and hook of the process.
    """
    if all(name in sys.modules for name in _SDK_MODULES):
        return
    await asyncio.to_thread(lambda: [importlib.import_module(name) for name in _SDK_MODULES])


async def _list_all_tools(client: ClientSession) -> list[mcp_types.Tool]:
    import mcp.types as mcp_types

    tools: list[mcp_types.Tool] = []
    params: mcp_types.PaginatedRequestParams | None = None
    for _ in range(_MAX_TOOL_PAGES):
        page = await client.list_tools(params=params)
        tools.extend(page.tools)
        if page.next_cursor is None:
            break
        params = mcp_types.PaginatedRequestParams(cursor=page.next_cursor)
    return tools
