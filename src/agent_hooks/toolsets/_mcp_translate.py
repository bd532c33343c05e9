"""The MCP SDK's results and exceptions, translated once into what hooks see.

A result becomes text (a hook injects text); an exception becomes a
:class:`~agent_hooks.errors.ToolError` naming the final tool. Both read SDK types, which are
imported inside the functions: they only run once a session opened, so the SDK is loaded then.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import anyio

from agent_hooks.errors import ToolError, ToolTimeoutError
from agent_hooks.tools._call_context import note
from agent_hooks.toolsets._mcp_session import SessionClosedError, first_error

if TYPE_CHECKING:
    import mcp.types as mcp_types

__all__ = ["connection_lost", "tool_error", "tool_result_content"]


def tool_result_content(result: mcp_types.CallToolResult, tool_name: str) -> str | None:
    """The text parts and embedded text resources joined by newlines; the JSON of the structured
    content when there is no text; ``None`` when the result is empty.

    Images, audio, blob resources and resource links cannot go into a text message: they are left
    out, and the call context notes it (``image content left out``) for the hook's record.

    Raises:
        ToolError: the result is an error (``is_error``; the message quotes the server's text),
            or it holds nothing textual (``tool returned image content only``).
    """
    import mcp.types as mcp_types

    texts: list[str] = []
    left_out: list[str] = []
    for part in result.content:
        match part:
            case mcp_types.TextContent():
                texts.append(part.text)
                continue
            case mcp_types.EmbeddedResource(resource=mcp_types.TextResourceContents() as text):
                texts.append(text.text)
                continue
            case mcp_types.ImageContent():
                kind = "image"
            case mcp_types.AudioContent():
                kind = "audio"
            case _:  # blob resources, resource links
                kind = "resource"
        if kind not in left_out:
            left_out.append(kind)
    if result.is_error:
        details = "\n".join(texts) or "(no details)"
        raise ToolError(tool_name, f"the MCP server reported an error: {details}")
    if texts:
        content = "\n".join(texts)
    elif result.structured_content is not None:
        content = json.dumps(result.structured_content)
    elif left_out:
        raise ToolError(tool_name, f"tool returned {' and '.join(left_out)} content only")
    else:
        return None
    for kind in left_out:
        note(f"{kind} content left out")
    return content


def tool_error(tool_name: str, exc: BaseException, *, timeout_seconds: float) -> ToolError:
    """The one translation of MCP SDK and transport failures into a :class:`ToolError` that
    names ``tool_name``.

    Exception groups (the SDK's task groups wrap failures in them) are reduced to their first
    real error. Header values are never part of the message.
    """
    import httpx2
    import mcp.types as mcp_types
    from mcp import MCPError

    leaf = first_error(exc)
    match leaf:
        case ToolError() if leaf.tool_name == tool_name:
            return leaf
        case ToolTimeoutError():
            return ToolTimeoutError(tool_name, leaf.timeout_seconds)
        case ToolError():
            reason = leaf.reason
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


def connection_lost(exc: BaseException) -> bool:
    """Whether the session is unusable after ``exc`` (an error *reply* leaves it usable)."""
    import httpx2
    import mcp.types as mcp_types
    from mcp import MCPError

    leaf = first_error(exc)
    if isinstance(leaf, MCPError):
        return leaf.code == mcp_types.CONNECTION_CLOSED
    return isinstance(
        leaf,
        (
            OSError,
            httpx2.HTTPError,
            anyio.ClosedResourceError,
            anyio.BrokenResourceError,
            anyio.EndOfStream,
            SessionClosedError,
        ),
    )
