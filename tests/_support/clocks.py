"""Clocks a test moves itself, so nothing waits out a real delay."""

from __future__ import annotations


class ManualClock:
    """Monotonic seconds that move only when the test calls :meth:`advance`."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def __call__(self) -> float:
        return self.seconds

    def advance(self, seconds: float) -> None:
        self.seconds += seconds
