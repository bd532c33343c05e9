"""An MCP server whose tools take required and typed parameters, for checking hook arguments.

Run as ``python typed_mcp_server.py`` (stdio). The input schemas are what ``MCPServer`` derives
from the signatures: required names, integer bounds, enums, arrays and a nested model (``$ref``
into ``$defs``). ``strict`` comes with a hand-written draft-04 schema that forbids unknown keys.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp.types import Tool
from pydantic import BaseModel, Field

server = MCPServer("typed")


class Window(BaseModel):
    """A slice of results."""

    offset: int = 0
    limit: Annotated[int, Field(ge=1, le=50)] = 10


@server.tool()
def search(query: str, max_count: Annotated[int, Field(ge=1, le=100)] = 5) -> str:
    """Find up to ``max_count`` notes matching ``query``."""
    return f"{max_count} results for {query}"


@server.tool()
def tag(name: str, tags: list[str], level: Literal["low", "high"] = "low") -> str:
    """Tag a note."""
    return f"{name}: {', '.join(tags)} ({level})"


@server.tool()
def page(query: str, window: Window) -> str:
    """A window of results."""
    return f"{query}[{window.offset}:{window.offset + window.limit}]"


STRICT_SCHEMA: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "type": "object",
    "properties": {
        "mode": {"type": "string"},
        # Draft 4's boolean form: "below 5". Draft 2020-12 would call this schema invalid.
        "level": {"type": "integer", "maximum": 5, "exclusiveMaximum": True},
    },
    "required": ["mode"],
    "additionalProperties": False,
}


@server.tool()
def strict(mode: str, level: int = 0) -> str:
    """Accepts ``mode`` and ``level`` and nothing else (its schema is replaced below)."""
    return f"{mode} {level}"


async def _list_tools() -> list[Tool]:
    """The derived tools, with ``strict``'s schema replaced by the hand-written draft-04 one."""
    tools = await original_list_tools()
    return [
        tool.model_copy(update={"input_schema": STRICT_SCHEMA}) if tool.name == "strict" else tool
        for tool in tools
    ]


original_list_tools = server.list_tools
server.list_tools = _list_tools  # type: ignore[method-assign]

if __name__ == "__main__":
    server.run("stdio")
