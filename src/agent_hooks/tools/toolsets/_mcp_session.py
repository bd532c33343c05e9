"""A long-lived MCP client session owned by one background task, and server stderr routed to logs.

anyio requires a cancel scope to be exited by the task that entered it, and the SDK's transports
and ``ClientSession`` are cancel-scoped context managers. A session shared by many requests
therefore cannot be entered by whichever request happens to come first: :class:`OwnedSession`
gives it a dedicated task that enters the transport and the session, initialises, signals ready,
waits for shutdown and exits, all in that task. Requests only send on the ready session (the SDK
correlates concurrent requests by id).

The owner task is started with :func:`asyncio.create_task` because hosts call us from plain
asyncio code with no task group of ours to spawn into; MCP toolsets therefore need asyncio.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TextIO

import anyio
from mcp.client.session import ClientSession

from agent_hooks.tools import StagedBaseTool

__all__ = ["OwnedSession", "SessionClosedError", "first_error", "stderr_to_log"]

logger = logging.getLogger("agent_hooks.tools.mcp")

_CLOSE_TIMEOUT_SECONDS = 10.0
"""Longest wait for an owner task to shut its server down (the SDK bounds each of its steps)."""

_STDERR_DRAIN_SECONDS = 1.0
"""After the server stopped, how long its last stderr lines may take to reach the log."""

_STDERR_CHUNK_BYTES = 65536

Connector = Callable[[AsyncExitStack], Awaitable[ClientSession]]
"""Enters a transport and an initialised ``ClientSession`` on the given stack."""


class SessionClosedError(Exception):
    """The session was shut down before it became ready."""


class OwnedSession:
    """One MCP ``ClientSession`` and the task that owns it from open to close.

    States: starting (after :meth:`start`), ready (:meth:`wait_ready` returns the client), dead
    (:attr:`dead`: it failed to open, its task ended, or it was retired). A dead session is never
    reused; its toolset opens a new one.
    """

    def __init__(self, connect: Connector, *, setup_timeout: float, label: str) -> None:
        self._connect = connect
        self._setup_timeout = setup_timeout
        self.label = label
        self._ready = anyio.Event()
        self._shutdown = anyio.Event()
        self._client: ClientSession | None = None
        self._error: Exception | None = None
        self._task: asyncio.Task[None] | None = None
        self.tools: list[StagedBaseTool] | None = None
        """The server's tools, listed once and kept for the session's lifetime."""

    def start(self) -> None:
        """Spawn the owner task; returns at once (the connection is made in the background)."""
        self._task = asyncio.create_task(self._own(), name=f"mcp-session-{self.label}")

    @property
    def dead(self) -> bool:
        return self._shutdown.is_set() or (self._task is not None and self._task.done())

    async def wait_ready(self) -> ClientSession:
        """The initialised client, once the owner task has connected.

        Cancelling the wait does not cancel the connection attempt: the next caller waits for
        the same attempt, which the owner bounds by ``setup_timeout``.

        Raises:
            Exception: whatever opening the session raised, untranslated (``TimeoutError`` when
                it ran out of time); the toolset maps it to a ``ToolError``.
        """
        await self._ready.wait()
        if self._client is None:
            raise self._error or SessionClosedError("the MCP session was closed before it opened")
        return self._client

    def retire(self) -> None:
        """Mark the session dead and let its owner shut the server down in the background."""
        self._shutdown.set()

    async def aclose(self) -> None:
        """Retire the session and wait (bounded, shielded from cancellation) for the owner."""
        self.retire()
        task = self._task
        if task is None or task.done():
            return
        with anyio.CancelScope(shield=True):
            await asyncio.wait([task], timeout=_CLOSE_TIMEOUT_SECONDS)
        if not task.done():
            logger.warning("toolset=%s outcome=close_timed_out; cancelling its session", self.label)
            task.cancel()

    async def _own(self) -> None:
        # The owner is the seam between the SDK and its callers: it keeps any error for them.
        try:
            deadline = anyio.current_time() + self._setup_timeout
            with anyio.CancelScope(deadline=deadline) as setup:
                async with AsyncExitStack() as stack:
                    self._client = await self._connect(stack)
                    setup.deadline = math.inf
                    self._ready.set()
                    logger.debug("toolset=%s outcome=session_opened", self.label)
                    await self._shutdown.wait()
            if setup.cancelled_caught and not self._ready.is_set():
                self._error = TimeoutError(
                    f"the MCP session did not open in {self._setup_timeout}s"
                )
        except Exception as exc:
            self._error = exc
            if self._ready.is_set():
                cause = first_error(exc)
                logger.info(
                    "toolset=%s outcome=session_lost reason=%s: %s",
                    self.label,
                    type(cause).__name__,
                    cause,
                )
        finally:
            self._ready.set()
            logger.debug("toolset=%s outcome=session_closed", self.label)


def first_error(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups, which the SDK's task groups raise."""
    while isinstance(exc, BaseExceptionGroup):
        exc = next((e for e in exc.exceptions if isinstance(e, Exception)), exc.exceptions[0])
    return exc


@asynccontextmanager
async def stderr_to_log(label: str) -> AsyncIterator[TextIO]:
    """A pipe to give a child process as its stderr; every line it writes is logged at DEBUG.

    A server's stderr must never reach our own stdout or stderr (the CLI prints JSON there), yet
    its tracebacks are what an operator needs when it crashes, so they go to the log.
    """
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    writer = os.fdopen(write_fd, "w")
    drained = anyio.Event()
    try:
        async with anyio.create_task_group() as pump:
            pump.start_soon(_log_lines, read_fd, label, drained)
            try:
                yield writer
            finally:
                # The child keeps its own copy of the pipe: EOF arrives once it has exited.
                writer.close()
                with anyio.move_on_after(_STDERR_DRAIN_SECONDS, shield=True):
                    await drained.wait()
                pump.cancel_scope.cancel()
    finally:
        writer.close()
        os.close(read_fd)


async def _log_lines(fd: int, label: str, drained: anyio.Event) -> None:
    pending = b""
    try:
        while True:
            await anyio.wait_readable(fd)
            try:
                chunk = os.read(fd, _STDERR_CHUNK_BYTES)
            except BlockingIOError:
                continue
            if not chunk:
                break
            *lines, pending = (pending + chunk).split(b"\n")
            for line in lines:
                _log_line(label, line)
        if pending:
            _log_line(label, pending)
    finally:
        drained.set()


def _log_line(label: str, line: bytes) -> None:
    logger.debug("toolset=%s stderr: %s", label, line.decode("utf-8", "replace").rstrip())
