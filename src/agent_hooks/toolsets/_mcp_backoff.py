"""When an MCP toolset may try to start its server again after a failed start.

A server that cannot start (a missing binary, a crash at start, a handshake that never ends)
would otherwise be spawned again by every hook of every request; each attempt costs a process
and, when it hangs, the hook's whole deadline. After a failure the toolset waits 1 s before the
next attempt, twice as long after each further failure, at most 60 s; one successful start
resets it. Shared by every event loop of the process, so it reads the monotonic clock.
"""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["Backoff"]

FIRST_DELAY_SECONDS = 1.0
MAX_DELAY_SECONDS = 60.0


class Backoff:
    """The retry schedule of one toolset's starts."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._delay = FIRST_DELAY_SECONDS
        self._retry_at = 0.0

    def waiting(self) -> bool:
        """Whether a start now would come too soon after the last failed one."""
        return self._clock() < self._retry_at

    def failed(self) -> float:
        """Record a failed start; returns the seconds until the next attempt."""
        delay = self._delay
        self._retry_at = self._clock() + delay
        self._delay = min(delay * 2, MAX_DELAY_SECONDS)
        return delay

    def succeeded(self) -> None:
        self._delay = FIRST_DELAY_SECONDS
        self._retry_at = 0.0
