"""One long-lived event loop in a thread of its own, for frameworks that call hooks synchronously.

A sync seam cannot ``asyncio.run`` the hooks per call: every call would open (and close) its own
HTTP clients and MCP sessions. The runner's clients belong to the loop that uses them (SPEC
section 9), so one loop that outlives the calls keeps them warm.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["BackgroundLoop"]

T = TypeVar("T")


class BackgroundLoop:
    """Runs coroutines to completion on a daemon thread's loop, started on first use."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Block until ``coroutine`` finished on the background loop; its exception is raised."""
        return asyncio.run_coroutine_threadsafe(coroutine, self._started()).result()

    def _started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self._name, daemon=True)
                thread.start()
                self._loop = loop
            return self._loop
