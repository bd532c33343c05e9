"""When an MCP toolset may try to start its server again after a failed start.

A server that cannot start (a missing binary, a crash at start, a handshake that never ends)
would otherwise be spawned again by every hook of every request; each attempt costs a process
and, when it hangs, the hook's whole deadline. After a failure the toolset waits 1 s before the
next attempt, twice as long after each further failure, at most 60 s (SPEC section 9); one
successful start resets it. Shared by every event loop of the process, so it reads a monotonic
clock. The schedule is a value a toolset is given, so tests can move its clock instead of
sleeping through the delays.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["DEFAULT_SCHEDULE", "Backoff", "BackoffSchedule"]


@dataclass(frozen=True)
class BackoffSchedule:
    """The delays between failed starts, and the clock they are measured on."""

    first_seconds: float = 1.0
    """Wait after the first failed start."""
    max_seconds: float = 60.0
    """Longest wait: each further failure doubles the wait up to this."""
    clock: Callable[[], float] = time.monotonic
    """Monotonic seconds; a test passes one it moves itself."""


DEFAULT_SCHEDULE = BackoffSchedule()


class Backoff:
    """The retry state of one toolset's starts, following its schedule."""

    def __init__(self, schedule: BackoffSchedule = DEFAULT_SCHEDULE) -> None:
        self._schedule = schedule
        self._delay = schedule.first_seconds
        self._retry_at = 0.0

    def waiting(self) -> bool:
        """Whether a start now would come too soon after the last failed one."""
        return self._schedule.clock() < self._retry_at

    def failed(self) -> float:
        """Record a failed start; returns the seconds until the next attempt."""
        delay = self._delay
        self._retry_at = self._schedule.clock() + delay
        self._delay = min(delay * 2, self._schedule.max_seconds)
        return delay

    def succeeded(self) -> None:
        self._delay = self._schedule.first_seconds
        self._retry_at = 0.0
