"""How the pure injection mechanics scale with history length.

Runs one ``append_if_changed`` hook with an in-process tool (so only our code is timed) over
histories of growing length, in three situations: a first-time insert, an unchanged result
replaced in place, and a fresh TTL that skips the tool. Prints medians and ratios; run it with
``make bench``. Figures vary with the machine: compare ratios, not absolute times.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Mapping, Sequence
from typing import Any

from agent_hooks.clock import FixedClock
from agent_hooks.config import InjectionFrequency
from agent_hooks.injection import StagedToolSyntheticInjector
from agent_hooks.messages import Message
from agent_hooks.tools import StagedBaseTool

NOW = 1_900_000_000
SIZES = (10, 100, 1_000, 10_000)
REPEATS = 7


class ConstantTool(StagedBaseTool):
    name = "memories"

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        return "the user prefers short answers"


class BenchHook(StagedToolSyntheticInjector):
    def __init__(self, ttl_seconds: int | None) -> None:
        super().__init__([ConstantTool()], clock=FixedClock(NOW), ttl_seconds=ttl_seconds)

    def get_tool_name(self) -> str:
        return "memories"

    def get_arguments(self) -> Mapping[str, Any]:
        return {"user_id": "current"}

    def get_frequency(self, messages: Sequence[Message]) -> InjectionFrequency:
        return InjectionFrequency.APPEND_IF_CHANGED


def history(size: int) -> list[Message]:
    roles = ("user", "assistant")
    return [
        Message.model_validate({"role": roles[i % 2], "content": f"turn {i} " + "x" * 80})
        for i in range(size)
    ]


async def median_seconds(hook: BenchHook, messages: list[Message], loops: int) -> float:
    """Median over ``REPEATS`` batches of the mean time of one ``transform`` call."""
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for _ in range(loops):
            await hook.transform(messages)
        samples.append((time.perf_counter() - started) / loops)
    return statistics.median(samples)


async def measure() -> list[tuple[int, float, float, float]]:
    plain = BenchHook(ttl_seconds=None)
    with_ttl = BenchHook(ttl_seconds=3600)
    rows = []
    for size in SIZES:
        base = history(size)
        injected_once = await with_ttl.transform(base)
        loops = max(5, 50_000 // size)
        first = await median_seconds(plain, base, loops)
        replace = await median_seconds(plain, injected_once, loops)
        fresh = await median_seconds(with_ttl, injected_once, loops)
        rows.append((size, first, replace, fresh))
    return rows


def main() -> None:
    rows = asyncio.run(measure())

    print(f"{'messages':>9} {'insert µs':>11} {'replace µs':>11} {'ttl-skip µs':>12} "
          f"{'skip/insert':>12} {'µs/message':>11}")  # fmt: skip
    for size, first, replace, fresh in rows:
        print(
            f"{size:>9} {first * 1e6:>11.1f} {replace * 1e6:>11.1f} {fresh * 1e6:>12.1f} "
            f"{fresh / first:>12.2f} {first * 1e6 / size:>11.3f}"
        )
    smallest, largest = rows[0], rows[-1]
    growth = largest[1] / smallest[1]
    print(
        f"\ninsert time grows {growth:.0f}x for {largest[0] // smallest[0]}x more messages "
        f"(medians of {REPEATS} batches, one event loop)"
    )


if __name__ == "__main__":
    main()
