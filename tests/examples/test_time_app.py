"""examples/time-app: the request time, injected once and reused for ten minutes."""

from __future__ import annotations

from agent_hooks.testing import run_manifest
from tests.examples._examples import history, manifest

NOW = 1_700_000_000  # 2023-11-14T22:13:20Z


async def test_the_time_is_injected_after_the_question() -> None:
    run = await run_manifest(manifest("time-app"), history("time-app"), now=NOW)
    assert [m.content for m in run.messages[2:]] == [None, "2023-11-14T22:13:20Z"]


async def test_the_time_is_reused_for_ten_minutes() -> None:
    first = await run_manifest(manifest("time-app"), history("time-app"), now=NOW)
    later = await run_manifest(manifest("time-app"), first.messages, now=NOW + 9 * 60)
    assert [r.outcome for r in later.records] == ["skipped_fresh"]


async def test_after_ten_minutes_the_new_time_is_appended() -> None:
    first = await run_manifest(manifest("time-app"), history("time-app"), now=NOW)
    later = await run_manifest(manifest("time-app"), first.messages, now=NOW + 11 * 60)
    assert [m.content for m in later.messages[-2:]] == [None, "2023-11-14T22:24:20Z"]
