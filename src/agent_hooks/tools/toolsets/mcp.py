"""MCP servers as toolsets (``mcp``), over stdio or streamable HTTP, with the official SDK client.

One session per toolset per process: opened on the first lookup or call (never when the app is
built), shared by every hook and request, closed by :meth:`McpToolset.aclose`. A session that
dies (the server crashed, the connection dropped) is replaced on the next call, once per call.
Tools are listed once per session. Every SDK and transport exception is translated into a
:class:`~agent_hooks.errors.ToolError` in one place, :func:`tool_error`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AsyncExitStack
from typing import Any, TypeVar, assert_never

import anyio
import httpx2
import mcp.types as mcp_types
from mcp import MCPError
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from agent_hooks.config.toolsets import (
    McpToolsetConfig,
    StdioServerConfig,
    StreamableHttpServerConfig,
)
from agent_hooks.errors import ToolError, ToolTimeoutError, UsageError
from agent_hooks.tools import StagedBaseTool, sanitize_toolname
from agent_hooks.tools.toolsets._base import Toolset
from agent_hooks.tools.toolsets._mcp_session import (
    OwnedSession,
    SessionClosedError,
    first_error,
    stderr_to_log,
)
from agent_hooks.tools.toolsets._secrets import resolve_secrets

__all__ = ["McpTool", "McpToolset", "tool_error", "tool_result_content"]

_T = TypeVar("_T")

_SSE_READ_TIMEOUT_SECONDS = 300.0
"""HTTP read timeout: a server may keep its event stream quiet this long. Request deadlines come
from the session's read timeout (the toolset's ``timeout_seconds``), not from this."""

_CONNECTION_FAILURES = (
    OSError,
    httpx2.HTTPError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    SessionClosedError,
)
"""Failures after which a session cannot carry another request."""

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
    """The tools of one MCP server, reached through one shared, lazily opened session."""

    def __init__(self, config: McpToolsetConfig) -> None:
        super().__init__(config.name, timeout_seconds=config.timeout_seconds)
        self.config = config
        self._prefix = sanitize_toolname(f"{config.name}_")
        self._session: OwnedSession | None = None
        self._lock = anyio.Lock()
        self._closed = False

    def may_provide(self, final_name: str) -> bool:
        """Only names under this toolset's prefix, so lookups never start unrelated servers."""
        return final_name.startswith(self._prefix)

    async def list_tools(self) -> list[StagedBaseTool]:
        """The server's tools (only ``allowed_tools`` when set), listed once per session.

        Raises:
            ToolError: the server cannot be started or reached, or the listing failed.
            UsageError: the toolset was closed.
        """
        session, client = await self._ready_session(self.name)
        if session.tools is None:
            listing = await self._request(session, client, self.name, _list_all_tools)
            allowed = self.config.allowed_tools
            session.tools = [
                McpTool(self, tool) for tool in listing if allowed is None or tool.name in allowed
            ]
        return list(session.tools)

    async def call_tool(
        self, server_tool_name: str, arguments: Mapping[str, Any], *, final_name: str
    ) -> str | None:
        """Call a server tool on the shared session and return its text content.

        Raises:
            ToolError: the server cannot be reached, the call failed, or the server reported an
                error result (``is_error``).
            UsageError: the toolset was closed.
        """
        session, client = await self._ready_session(final_name)
        result = await self._request(
            session, client, final_name, lambda c: c.call_tool(server_tool_name, dict(arguments))
        )
        return tool_result_content(result, final_name)

    async def aclose(self) -> None:
        """Shut the server session down (bounded); later calls raise ``UsageError``."""
        async with self._lock:
            self._closed = True
            session, self._session = self._session, None
            if session is not None:
                await session.aclose()

    async def _ready_session(self, tool_name: str) -> tuple[OwnedSession, ClientSession]:
        """The current session, opened (or reopened once, when it died) for this call.

        Raises:
            ToolError: the session cannot be opened.
            UsageError: the toolset was closed.
        """
        async with self._lock:
            if self._closed:
                raise UsageError(f"MCP toolset {self.name!r} is closed; create a new app")
            session = self._session
            if session is None or session.dead:
                if session is not None:
                    await session.aclose()  # reap the dead server before starting another
                session = OwnedSession(
                    self._connect, setup_timeout=self.timeout_seconds, label=self.name
                )
                session.start()
                self._session = session
        try:
            return session, await session.wait_ready()
        except Exception as exc:
            raise tool_error(tool_name, exc, timeout_seconds=self.timeout_seconds) from exc

    async def _request(
        self,
        session: OwnedSession,
        client: ClientSession,
        tool_name: str,
        request: Callable[[ClientSession], Awaitable[_T]],
    ) -> _T:
        """Run one request; a lost connection retires the session so the next call reopens it.

        Raises:
            ToolError: the request failed (translated by :func:`tool_error`).
        """
        try:
            return await request(client)
        except Exception as exc:
            if _connection_lost(exc):
                session.retire()
            raise tool_error(tool_name, exc, timeout_seconds=self.timeout_seconds) from exc

    async def _connect(self, stack: AsyncExitStack) -> ClientSession:
        """Runs in the session's owner task: transport, then session, then the handshake."""
        server = self.config.server
        match server:
            case StdioServerConfig():
                params = StdioServerParameters(
                    command=server.command,
                    args=server.args,
                    env=resolve_secrets(server.env, tool_name=self.name),
                    cwd=server.cwd,
                )
                errlog = await stack.enter_async_context(stderr_to_log(self.name))
                read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            case StreamableHttpServerConfig():
                http = await stack.enter_async_context(
                    httpx2.AsyncClient(
                        headers=resolve_secrets(server.headers, tool_name=self.name),
                        timeout=httpx2.Timeout(
                            self.timeout_seconds, read=_SSE_READ_TIMEOUT_SECONDS
                        ),
                    )
                )
                read, write = await stack.enter_async_context(
                    streamable_http_client(server.url, http_client=http)
                )
            case _:
                assert_never(server)
        session = await stack.enter_async_context(
            ClientSession(read, write, read_timeout_seconds=self.timeout_seconds)
        )
        await session.initialize()
        return session


async def _list_all_tools(client: ClientSession) -> list[mcp_types.Tool]:
    tools: list[mcp_types.Tool] = []
    params: mcp_types.PaginatedRequestParams | None = None
    for _ in range(_MAX_TOOL_PAGES):
        page = await client.list_tools(params=params)
        tools.extend(page.tools)
        if page.next_cursor is None:
            break
        params = mcp_types.PaginatedRequestParams(cursor=page.next_cursor)
    return tools


def tool_result_content(result: mcp_types.CallToolResult, tool_name: str) -> str | None:
    """The text parts joined by newlines; the JSON of the structured content when there is no
    text; ``None`` when there is neither.

    Raises:
        ToolError: the result is an error (``is_error``); the message quotes the server's text.
    """
    texts = [part.text for part in result.content if isinstance(part, mcp_types.TextContent)]
    if result.is_error:
        details = "\n".join(texts) or "(no details)"
        raise ToolError(tool_name, f"the MCP server reported an error: {details}")
    if texts:
        return "\n".join(texts)
    if result.structured_content is not None:
        return json.dumps(result.structured_content)
    return None


def tool_error(tool_name: str, exc: BaseException, *, timeout_seconds: float) -> ToolError:
    """The one translation of MCP SDK and transport failures into a :class:`ToolError`.

    Exception groups (the SDK's task groups wrap failures in them) are reduced to their first
    real error. Header values are never part of the message.
    """
    leaf = first_error(exc)
    match leaf:
        case ToolError():
            return leaf
        case TimeoutError():
            return ToolTimeoutError(tool_name, timeout_seconds)
        case MCPError() if leaf.code == mcp_types.REQUEST_TIMEOUT:
            return ToolTimeoutError(tool_name, timeout_seconds)
        case MCPError() if leaf.code == mcp_types.CONNECTION_CLOSED:
            reason = f"the MCP server closed the connection ({leaf.message})"
        case MCPError():
            reason = f"the MCP server answered with error {leaf.code}: {leaf.message}"
        case FileNotFoundError() | PermissionError() | NotADirectoryError():
            reason = f"cannot start the MCP server: {leaf}"
        case httpx2.HTTPError():
            reason = f"cannot reach the MCP server: {type(leaf).__name__}: {leaf}"
        case (
            SessionClosedError()
            | anyio.ClosedResourceError()
            | anyio.BrokenResourceError()
            | anyio.EndOfStream()
        ):
            reason = "the connection to the MCP server is closed"
        case _:
            reason = f"{type(leaf).__name__}: {leaf}"
    return ToolError(tool_name, reason)


def _connection_lost(exc: BaseException) -> bool:
    """Whether the session is unusable after ``exc`` (an error *reply* leaves it usable)."""
    leaf = first_error(exc)
    if isinstance(leaf, MCPError):
        return leaf.code == mcp_types.CONNECTION_CLOSED
    return isinstance(leaf, _CONNECTION_FAILURES)
