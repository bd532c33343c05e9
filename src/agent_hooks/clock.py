"""The app clock: a DI binding, so hosts and tests decide what "now" is.

TTL decisions and the built-in ``current_time`` tool read the clock instead of ``time.time()``,
which is what lets ``agent-hooks run --now`` replay a request as of any moment.
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "FixedClock", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """Tells the current time as Unix seconds."""

    def now(self) -> float: ...


class SystemClock:
    """The wall clock."""

    def now(self) -> float:
        return time.time()


class FixedClock:
    """A clock that always answers the same instant (``--now``, tests)."""

    def __init__(self, at: float) -> None:
        self.at = at

    def now(self) -> float:
        return self.at

    def __repr__(self) -> str:
        return f"FixedClock({self.at!r})"
