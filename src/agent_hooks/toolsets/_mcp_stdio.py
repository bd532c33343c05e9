"""The stdio transport of MCP toolsets: a server child process we can kill at once.

The SDK's ``stdio_client`` keeps its process to itself and always stops it politely (close stdin,
wait, SIGTERM, wait, SIGKILL: seconds for a server that hangs). A server that never finished its
handshake, or whose start nobody waits for any more, must go at once, and a frozen server must not
hold a toolset's shutdown for seconds. So we spawn the server ourselves, in its own process group,
and hand the SDK's ``ClientSession`` the same pair of message streams the SDK transport would.

Leaving the transport kills the whole process group without a grace period and reaps it; a polite
stop (:meth:`ChildServer.stop`) is a separate step the session owner takes first when it can.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TextIO

import anyio

from agent_hooks._scrub import scrub

if TYPE_CHECKING:
    from anyio.abc import ByteReceiveStream, Process
    from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
    from mcp.shared.message import SessionMessage

__all__ = ["ChildServer", "stdio_transport"]

logger = logging.getLogger("agent_hooks.tools.mcp")

_REAP_TIMEOUT_SECONDS = 2.0
"""After SIGKILL, how long the event loop may take to notice the exit; only an unkillable process
(stuck in the kernel) runs this out."""

_EXIT_POLL_SECONDS = 0.01


class ChildServer:
    """An MCP server process, leader of its own process group (its pid is the group id)."""

    def __init__(self, process: Process) -> None:
        self.process = process
        self.pid = process.pid
        self.output_closed = anyio.Event()
        """Set when the server's stdout ends: it exited, crashed or closed its side."""

    def kill(self) -> None:
        """SIGKILL the server and everything it started; safe from any thread, any time."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)

    async def stop(self, grace_seconds: float) -> None:
        """Close the server's stdin (the MCP way to ask it to exit), wait up to ``grace_seconds``,
        then kill it. Shielded: a cancelled caller still gets its server stopped."""
        try:
            with anyio.CancelScope(shield=True):
                with contextlib.suppress(OSError, anyio.BrokenResourceError):
                    if self.process.stdin is not None:
                        await self.process.stdin.aclose()
                await self.exited(grace_seconds)
        finally:
            self.kill()

    async def exited(self, timeout_seconds: float) -> bool:
        """Whether the process exited within ``timeout_seconds``.

        Polls ``returncode`` rather than awaiting ``wait()``, which also waits for the pipes to
        close and so hangs on a grandchild that inherited them.
        """
        with anyio.move_on_after(timeout_seconds):
            while self.process.returncode is None:  # noqa: ASYNC110 - no event to wait on
                await anyio.sleep(_EXIT_POLL_SECONDS)
        return self.process.returncode is not None


@asynccontextmanager
async def stdio_transport(
    command: str,
    args: list[str],
    *,
    env: Mapping[str, str],
    cwd: str | None,
    errlog: TextIO,
    label: str,
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
        ChildServer,
    ]
]:
    """Spawn the server and yield ``(read, write, server)``; leaving kills and reaps it.

    Raises:
        OSError: the command cannot be started (missing, not executable, bad ``cwd``).
    """
    # Shielded: a cancellation landing after the fork but before we hold the process would
    # leave a server nobody kills.
    with anyio.CancelScope(shield=True):
        process = await anyio.open_process(
            [command, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
        )
    server = ChildServer(process)
    logger.debug("toolset=%s outcome=server_spawned pid=%d", label, server.pid)
    from mcp.shared.message import SessionMessage

    inbound_send, inbound = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as pumps:
            assert process.stdout is not None
            pumps.start_soon(_pump_stdout, process.stdout, inbound_send, server, label)
            pumps.start_soon(_pump_stdin, server, outbound_receive, inbound_send)
            try:
                yield inbound, outbound, server
            finally:
                pumps.cancel_scope.cancel()
    finally:
        server.kill()
        with anyio.CancelScope(shield=True):
            if await server.exited(_REAP_TIMEOUT_SECONDS):
                await process.aclose()
            else:  # stuck in the kernel: waiting for it could take forever
                logger.warning("toolset=%s outcome=server_survived_kill pid=%d", label, server.pid)
            for stream in (inbound, inbound_send, outbound, outbound_receive):
                await stream.aclose()


async def _pump_stdout(
    stdout: ByteReceiveStream,
    sink: MemoryObjectSendStream[SessionMessage | Exception],
    server: ChildServer,
    label: str,
) -> None:
    """Server stdout lines to JSON-RPC messages; end of output closes ``sink`` and tells
    ``server.output_closed``."""
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    pending = b""
    async with sink:
        with contextlib.suppress(
            anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError
        ):
            async for chunk in stdout:
                *lines, pending = (pending + chunk).split(b"\n")
                for line in lines:
                    if not line.strip():
                        continue
                    try:
                        message = jsonrpc_message_adapter.validate_json(line)
                    except ValueError:
                        # Not ours to interpret (a stray print); the exchange goes on without it.
                        text = line.decode("utf-8", "replace").rstrip()
                        logger.debug(
                            "toolset=%s stdout line is not JSON-RPC: %s", label, scrub(text)
                        )
                        continue
                    await sink.send(SessionMessage(message))
    server.output_closed.set()


async def _pump_stdin(
    server: ChildServer,
    source: MemoryObjectReceiveStream[SessionMessage],
    inbound: MemoryObjectSendStream[SessionMessage | Exception],
) -> None:
    """Messages to the server's stdin, one JSON line each."""
    stdin = server.process.stdin
    assert stdin is not None
    try:
        async with source:
            async for message in source:
                data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await stdin.send(data.encode() + b"\n")
    except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
        # The server stopped reading: end the inbound stream so pending requests fail now
        # instead of waiting for their timeout.
        await inbound.aclose()
