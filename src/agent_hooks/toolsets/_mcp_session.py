"""A long-lived MCP client session owned by one background task, and server stderr routed to logs.

anyio requires a cancel scope to be exited by the task that entered it, and the SDK's transports
and ``ClientSession`` are cancel-scoped context managers. A session shared by many requests
therefore cannot be entered by whichever request happens to come first: :class:`OwnedSession`
gives it a dedicated task that enters the transport and the session, initialises, signals ready,
waits for shutdown and exits, all in that task. Requests only send on the ready session (the SDK
correlates concurrent requests by id).

Callers are cancelled at any await (a hook's deadline), so the session decides on their behalf:
- a start nobody waits for any more is abandoned, and a start that fails or runs out of time has
  its server killed at once (no grace period); either way the toolset's backoff counts a failure;
- a call that was abandoned or timed out retires the session: no new calls, the ones in flight
  may finish (bounded), then the server is asked to exit and killed if it does not.
All of that happens in the owner task; no caller ever waits for a server to go away.

The owner task is started with :func:`asyncio.create_task` because hosts call us from plain
asyncio code with no task group of ours to spawn into; MCP toolsets therefore need asyncio.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple, TextIO, TypeVar

import anyio

from agent_hooks._scrub import scrub
from agent_hooks.tools import StagedBaseTool
from agent_hooks.toolsets._mcp_backoff import Backoff
from agent_hooks.toolsets._mcp_stdio import ChildServer

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

__all__ = [
    "Connection",
    "OwnedSession",
    "SessionClosedError",
    "ToolListing",
    "first_error",
    "stderr_to_log",
]

logger = logging.getLogger("agent_hooks.tools.mcp")

_T = TypeVar("_T")

CLOSE_TIMEOUT_SECONDS = 10.0
"""Longest wait for an owner task to shut its server down before it is killed."""

_EXIT_GRACE_SECONDS = 2.0
"""How long a server asked to exit (stdin closed) may take before it is killed."""

_STDERR_DRAIN_SECONDS = 1.0
"""After the server stopped, how long its last stderr lines may take to reach the log."""

_STDERR_CHUNK_BYTES = 65536


class Connection(NamedTuple):
    """An entered, not yet initialised ``ClientSession`` and its server process (stdio only)."""

    client: ClientSession
    server: ChildServer | None


Connector = Callable[[AsyncExitStack], Awaitable[Connection]]
"""Enters a transport and a ``ClientSession`` on the given stack."""


class SessionClosedError(Exception):
    """The session was shut down (or its start abandoned) before it became ready."""


@dataclass(frozen=True)
class ToolListing:
    """The server's tools as offered (``allowed_tools`` applied) and the names left out."""

    tools: tuple[StagedBaseTool, ...]
    hidden: tuple[str, ...]


class OwnedSession:
    """One MCP ``ClientSession`` and the task that owns it from open to close.

    States: starting (after :meth:`start`), ready (:meth:`wait_ready` returns the client), dead
    (:attr:`dead`: it failed to open, its task ended, or it was retired). A dead session is never
    reused; its toolset opens a new one. Belongs to the event loop that created it.
    """

    def __init__(
        self, connect: Connector, *, timeout_seconds: float, label: str, backoff: Backoff
    ) -> None:
        self._connect = connect
        self._timeout_seconds = timeout_seconds
        self.label = label
        self._backoff = backoff
        self.loop = asyncio.get_running_loop()
        self._scope = anyio.CancelScope(deadline=anyio.current_time() + timeout_seconds)
        self._ready = anyio.Event()
        self._shutdown = anyio.Event()
        self._idle = anyio.Event()
        self._idle.set()
        self._in_flight = 0
        self._waiters = 0
        self._drain = True
        self._start_settled = False
        self._client: ClientSession | None = None
        self._server: ChildServer | None = None
        self._error: Exception | None = None
        self._task: asyncio.Task[None] | None = None
        self.listing: ToolListing | None = None
        """The server's tools, listed once and kept for the session's lifetime."""
        self.listing_lock = anyio.Lock()

    def start(self) -> asyncio.Task[None]:
        """Spawn the owner task; returns at once (the connection is made in the background)."""
        self._task = asyncio.create_task(self._own(), name=f"mcp-session-{self.label}")
        return self._task

    @property
    def dead(self) -> bool:
        return self._shutdown.is_set() or (self._task is not None and self._task.done())

    async def wait_ready(self) -> ClientSession:
        """The initialised client, once the owner task has connected.

        When the last waiter gives up (its deadline cancelled the wait) before the session is
        ready, the start is abandoned: nobody would use a session that opens later.

        Raises:
            Exception: whatever opening the session raised, untranslated (``TimeoutError`` when
                it ran out of time); the toolset maps it to a ``ToolError``.
        """
        self._waiters += 1
        try:
            await self._ready.wait()
        finally:
            self._waiters -= 1
            if self._waiters == 0 and not self._ready.is_set():
                self.abandon()
        if self._client is None:
            raise self._error or SessionClosedError("the MCP session was closed before it opened")
        return self._client

    async def run(self, request: Callable[[ClientSession], Awaitable[_T]]) -> _T:
        """Send one request on the ready session; a cancelled caller retires the session, whose
        state after a half-sent request nobody can vouch for."""
        assert self._client is not None, "run() before wait_ready()"
        if self._in_flight == 0:
            self._idle = anyio.Event()
        self._in_flight += 1
        try:
            return await request(self._client)
        except anyio.get_cancelled_exc_class():
            self.retire("call_abandoned")
            raise
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()

    def retire(self, why: str) -> None:
        """Take no new calls; the owner lets calls in flight finish, then stops the server."""
        if not self._shutdown.is_set():
            logger.info("toolset=%s outcome=session_retired reason=%s", self.label, why)
        self._shutdown.set()

    def abandon(self) -> None:
        """Stop now: kill the server without a grace period and cut calls in flight short.

        An abandoned start counts as a failed one at once, so the next call backs off instead
        of spawning a second server while this one is still being reaped.
        """
        if not self._ready.is_set():
            self._start_failed("the start was abandoned")
        self._stop_draining()
        if self._server is not None:
            self._server.kill()
        self._scope.cancel()

    def abandon_from_another_thread(self) -> None:
        """:meth:`abandon` for a session of another thread's event loop (at the toolset's close):
        the kill happens now, the owner task winds down on its own loop."""
        if self._server is not None:
            self._server.kill()
        with contextlib.suppress(RuntimeError):  # that loop is already closed
            self.loop.call_soon_threadsafe(self.abandon)

    async def aclose(self) -> None:
        """Stop the server politely (a start under way: at once), or kill it when that takes
        too long; never raises."""
        if self._ready.is_set():
            self._stop_draining()
        else:
            self.abandon()
        task = self._task
        if task is None or task.done():
            return
        with anyio.CancelScope(shield=True):
            await asyncio.wait([task], timeout=CLOSE_TIMEOUT_SECONDS - _EXIT_GRACE_SECONDS)
            if not task.done():
                logger.warning("toolset=%s outcome=close_timed_out; killing", self.label)
                self.abandon()
                await asyncio.wait([task], timeout=_EXIT_GRACE_SECONDS)

    async def _own(self) -> None:
        # The owner is the seam between the SDK and its callers: it keeps any error for them.
        started = False
        try:
            with self._scope:
                async with AsyncExitStack() as stack:
                    # Leaving the stack kills the server at once; only a session that started
                    # asks it to exit first (below).
                    client, self._server = await self._connect(stack)
                    await client.initialize()
                    self._scope.deadline = math.inf
                    self._client, started = client, True
                    self._start_settled = True
                    self._backoff.succeeded()
                    self._ready.set()
                    logger.debug("toolset=%s outcome=session_opened", self.label)
                    await self._until_retired_or_gone()
                    await self._drained()
                    if self._server is not None:
                        await self._server.stop(_EXIT_GRACE_SECONDS)
            if self._scope.cancelled_caught and not started:
                if anyio.current_time() >= self._scope.deadline:
                    self._error = TimeoutError(
                        f"the MCP session did not open in {self._timeout_seconds}s"
                    )
                else:
                    self._error = SessionClosedError("the start of the MCP session was abandoned")
        except Exception as exc:
            self._error = exc
            if started:
                cause = first_error(exc)
                logger.info(
                    "toolset=%s outcome=session_lost reason=%s: %s",
                    self.label,
                    type(cause).__name__,
                    cause,
                )
        finally:
            self._shutdown.set()
            self._ready.set()
            if not started:
                self._start_failed(first_error(self._error) if self._error else "cancelled")
            logger.debug("toolset=%s outcome=session_closed", self.label)

    async def _until_retired_or_gone(self) -> None:
        """Until the session is retired, or its server closed its output (it exited or
        crashed): a dead server's session retires at once, so the next call opens a new one
        instead of failing on the old one first."""
        server = self._server
        if server is None:
            await self._shutdown.wait()
            return

        async def watch() -> None:
            await server.output_closed.wait()
            self.retire("server_exited")

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            await self._shutdown.wait()
            group.cancel_scope.cancel()

    def _start_failed(self, reason: object) -> None:
        """Count a failed start for the toolset's backoff, once, as soon as it is known."""
        if self._start_settled:
            return
        self._start_settled = True
        retry_in = self._backoff.failed()
        logger.info(
            "toolset=%s outcome=start_failed reason=%r retry_in_s=%g", self.label, reason, retry_in
        )

    def _stop_draining(self) -> None:
        self._drain = False
        self._shutdown.set()
        self._idle.set()

    async def _drained(self) -> None:
        """Wait (bounded by the call timeout) for the calls in flight when retired."""
        with anyio.move_on_after(self._timeout_seconds):
            while self._drain and self._in_flight:
                await self._idle.wait()


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
    text = scrub(line.decode("utf-8", "replace").rstrip())  # a server may print its own secrets
    logger.debug("toolset=%s stderr: %s", label, text)
