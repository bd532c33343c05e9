"""Where a request's CPU-heavy steps run: on the event loop for a small body, in a worker thread
for a large one (SPEC 16: parsing a large body does not stall other requests)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio

__all__ = ["OFF_LOOP_BYTES", "Work"]

_T = TypeVar("_T")


OFF_LOOP_BYTES = 1024 * 1024
"""Bodies from this size are parsed, validated and rendered in a worker thread, so the event
loop serves other requests meanwhile (SPEC 16). Smaller ones stay inline: in the server the
hand-off and the GIL's back and forth cost more than the isolated 0.1 ms (a 626 KB, 5,000-message
body: 30 ms a request in a thread, 22 ms inline, bench_serve's long-history row), and a 1 MiB body
holds the loop about 20 ms, within SPEC 16's 10x of another client's latency."""


class Work:
    """Runs a request's CPU-heavy steps (parse, validate, render): inline for a small body, in a
    worker thread for one of :data:`OFF_LOOP_BYTES` or more."""

    def __init__(self, body_size: int) -> None:
        self.off_loop = body_size >= OFF_LOOP_BYTES

    async def run(self, step: Callable[[], _T]) -> _T:
        if self.off_loop:
            return await anyio.to_thread.run_sync(step)
        return step()
