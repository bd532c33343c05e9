"""An MCP server that misbehaves on request, for testing the MCP toolset against a real process.

Run as ``python flaky_mcp_server.py`` (stdio). Every start appends the process id to the file
named by ``FLAKY_START_LOG`` (when set), so a test can count how often the server was spawned.
While the file named by ``FLAKY_REFUSE_START`` exists, the server exits at once instead (and
logs ``refused`` there).
"""

from __future__ import annotations

import os
import sys

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

server = MCPServer("flaky")


@server.tool()
def whoami() -> str:
    """The server's process id."""
    return str(os.getpid())


@server.tool()
def echo(text: str) -> str:
    """The text, unchanged."""
    return text


@server.tool()
def getenv(name: str) -> str:
    """The value of an environment variable of the server process ("" when unset)."""
    return os.environ.get(name, "")


@server.tool()
def crash() -> str:
    """Kills the server process in the middle of the call."""
    os._exit(3)


@server.tool()
async def sleep(seconds: float) -> str:
    """Answers after ``seconds``."""
    await anyio.sleep(seconds)
    return "awake"


@server.tool()
def fail() -> str:
    """Raises, which the server reports as an error result."""
    raise RuntimeError("the flaky tool failed on purpose")


@server.tool()
def structured_only() -> CallToolResult:
    """A result with structured content and no text."""
    return CallToolResult(content=[], structured_content={"answer": 42})


@server.tool()
def two_parts() -> CallToolResult:
    """A result with two text parts."""
    return CallToolResult(
        content=[TextContent(type="text", text="first"), TextContent(type="text", text="second")]
    )


def _log_start(entry: str) -> None:
    start_log = os.environ.get("FLAKY_START_LOG")
    if start_log:
        with open(start_log, "a", encoding="utf-8") as log:
            log.write(f"{entry}\n")


def main() -> None:
    refuse = os.environ.get("FLAKY_REFUSE_START")
    if refuse and os.path.exists(refuse):
        _log_start("refused")
        print("flaky server refuses to start", file=sys.stderr, flush=True)
        sys.exit(4)
    _log_start(str(os.getpid()))
    print(f"flaky server starting, pid {os.getpid()}", file=sys.stderr, flush=True)
    server.run("stdio")


if __name__ == "__main__":
    main()
