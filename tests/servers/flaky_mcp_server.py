"""An MCP server that misbehaves on request, for testing the MCP toolset against a real process.

Run as ``python flaky_mcp_server.py`` (stdio). Every start appends the process id to the file
named by ``FLAKY_START_LOG`` (when set), so a test can count how often the server was spawned.
While the file named by ``FLAKY_REFUSE_START`` exists, the server exits at once instead (and
logs ``refused`` there). ``FLAKY_MODE`` picks a misbehaviour at start: ``mute`` never answers
the handshake (and ignores SIGTERM and the end of its stdin), ``garbage`` prints non-JSON lines
on stdout before serving.

``crash_first`` and ``held_first`` crash a shared server under a call in flight: in the first
server of a start log, ``crash_first`` waits until a ``held_first`` call has arrived, then kills
the server; later servers answer both at once.

``crash_in_company`` kills every server it reaches, but first waits (a while) for a
``keep_company`` call to be in flight on the same server, which it takes down with it;
``keep_company`` answers the process id after a second, unless a crash came first.
"""

from __future__ import annotations

import base64
import os
import signal
import sys
import time

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

server = MCPServer("flaky")

_HELD_WAIT_SECONDS = 10.0
"""How long ``crash_first`` waits for a ``held_first`` call before it crashes anyway."""

_first_start = False
"""Whether this process is the first one its start log recorded (set in :func:`main`)."""
_held_arrived: anyio.Event | None = None


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


def _held() -> anyio.Event:
    global _held_arrived
    if _held_arrived is None:
        _held_arrived = anyio.Event()
    return _held_arrived


@server.tool()
async def crash_first() -> str:
    """First server: kills the process once a ``held_first`` call is in flight. Later: answers."""
    if not _first_start:
        return "survived"
    with anyio.move_on_after(_HELD_WAIT_SECONDS):
        await _held().wait()
    os._exit(3)


@server.tool()
async def held_first() -> str:
    """First server: stays in flight until the server dies. Later: the server's process id."""
    if not _first_start:
        return str(os.getpid())
    _held().set()
    await anyio.sleep_forever()
    return "unreachable"


_ALONE_SECONDS = 2.0
"""How long ``crash_in_company`` waits for a ``keep_company`` call before it crashes anyway."""

_company: anyio.Event | None = None


def _company_arrived() -> anyio.Event:
    global _company
    if _company is None:
        _company = anyio.Event()
    return _company


@server.tool()
async def crash_in_company() -> str:
    """Kills the process once a ``keep_company`` call is in flight here (or after a while)."""
    with anyio.move_on_after(_ALONE_SECONDS):
        await _company_arrived().wait()
    os._exit(3)


@server.tool()
async def keep_company() -> str:
    """The server's process id, after a second in flight (long enough to be crashed)."""
    _company_arrived().set()
    await anyio.sleep(1.0)
    return str(os.getpid())


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


@server.tool()
def freeze() -> str:
    """Stops the server process (SIGSTOP) in the middle of the call: it never answers."""
    os.kill(os.getpid(), signal.SIGSTOP)
    return "thawed"


@server.tool()
def garbage(text: str) -> str:
    """Prints lines that are not JSON-RPC on stdout, then answers ``text``."""
    print("this is not json", flush=True)
    print('{"jsonrpc": "2.0", "but": "not a message"}', flush=True)
    return text


_PIXEL = base64.b64encode(b"\x89PNG\r\n").decode()


@server.tool()
def picture() -> CallToolResult:
    """An image only."""
    return CallToolResult(content=[ImageContent(type="image", data=_PIXEL, mime_type="image/png")])


@server.tool()
def mixed() -> CallToolResult:
    """Text, an image, audio, an embedded text resource, a blob resource and a resource link."""
    return CallToolResult(
        content=[
            TextContent(type="text", text="caption"),
            ImageContent(type="image", data=_PIXEL, mime_type="image/png"),
            AudioContent(type="audio", data=_PIXEL, mime_type="audio/wav"),
            EmbeddedResource(
                type="resource",
                resource=TextResourceContents(uri="file:///notes.txt", text="embedded notes"),
            ),
            EmbeddedResource(
                type="resource",
                resource=BlobResourceContents(uri="file:///blob.bin", blob=_PIXEL),
            ),
            ResourceLink(type="resource_link", uri="file:///elsewhere.txt", name="elsewhere"),
        ]
    )


def _log_start(entry: str) -> None:
    start_log = os.environ.get("FLAKY_START_LOG")
    if start_log:
        with open(start_log, "a", encoding="utf-8") as log:
            log.write(f"{entry}\n")


def main() -> None:
    global _first_start
    refuse = os.environ.get("FLAKY_REFUSE_START")
    if refuse and os.path.exists(refuse):
        _log_start("refused")
        print("flaky server refuses to start", file=sys.stderr, flush=True)
        sys.exit(4)
    start_log = os.environ.get("FLAKY_START_LOG", "")
    _first_start = bool(start_log) and not os.path.exists(start_log)
    _log_start(str(os.getpid()))
    print(f"flaky server starting, pid {os.getpid()}", file=sys.stderr, flush=True)
    mode = os.environ.get("FLAKY_MODE", "")
    if mode == "mute":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(60)
    if mode == "garbage":
        print("garbage before the handshake", flush=True)
    server.run("stdio")


if __name__ == "__main__":
    main()
