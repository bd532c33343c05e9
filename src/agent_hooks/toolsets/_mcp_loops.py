"""Each event loop's MCP sessions, closed with that loop or with the toolset.

A host may run one app from several threads, each with its own event loop (``asyncio.run`` per
request, a thread pool of loops). A session's streams and owner task belong to the loop that
opened it, so every loop gets its own session. Sessions of a loop are closed when that loop
shuts down: an async generator holds them, and ``asyncio.run`` finalises async generators before
it closes the loop (after cancelling leftover tasks, owner tasks included, which kills their
servers). The toolset's close covers the rest: its own loop's sessions are closed politely,
those of other, still running loops are killed from here.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncGenerator

import anyio

from agent_hooks.toolsets._mcp_session import OwnedSession

__all__ = ["LoopSessions"]


class LoopSessions:
    """The current session of each event loop, and every session whose owner is still running."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._current: dict[asyncio.AbstractEventLoop, OwnedSession] = {}
        self._live: set[OwnedSession] = set()
        self._finalisers: dict[asyncio.AbstractEventLoop, AsyncGenerator[None, None]] = {}

    def current(self) -> OwnedSession | None:
        """The running loop's session, dead or alive; ``None`` when it has none."""
        return self._current.get(asyncio.get_running_loop())

    async def install(self, session: OwnedSession, *, current: bool = True) -> None:
        """Start ``session``, closed with its loop or the toolset; ``current``: it becomes the
        running loop's session (a retry's session is nobody else's)."""
        loop = session.loop
        with self._lock:
            if current:
                self._current[loop] = session
            self._live.add(session)
            new_loop = loop not in self._finalisers
        task = session.start()
        task.add_done_callback(lambda _: self._forget(session))
        if new_loop:
            finaliser = self._closed_with_the_loop(loop)
            self._finalisers[loop] = finaliser
            await anext(finaliser)  # registers the generator with the loop's shutdown

    async def aclose(self) -> None:
        """Close every session: this loop's politely and concurrently, other loops' by kill."""
        loop = asyncio.get_running_loop()
        with self._lock:
            others = [s for s in self._live if s.loop is not loop]
            finaliser = self._finalisers.pop(loop, None)
        for session in others:
            session.abandon_from_another_thread()
        if finaliser is not None:
            await finaliser.aclose()  # its finally closes this loop's sessions
        else:
            await self._close_loop(loop)

    def _forget(self, session: OwnedSession) -> None:
        with self._lock:
            self._live.discard(session)
            if self._current.get(session.loop) is session:
                del self._current[session.loop]

    async def _close_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            sessions = [s for s in self._live if s.loop is loop]
        async with anyio.create_task_group() as closing:
            for session in sessions:
                closing.start_soon(session.aclose)

    async def _closed_with_the_loop(
        self, loop: asyncio.AbstractEventLoop
    ) -> AsyncGenerator[None, None]:
        try:
            yield
        finally:
            with self._lock:
                self._finalisers.pop(loop, None)
            await self._close_loop(loop)
