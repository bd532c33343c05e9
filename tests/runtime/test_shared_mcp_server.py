"""Hooks that share one MCP server: a hook that crashes it does not take the others' calls in
flight with it; each such call is tried once more on a fresh server of its own, within the hook's
deadline (SPEC sections 8 and 16). Driven through the runner against the real flaky test server
over stdio."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from agent_hooks import HookOutcome
from agent_hooks.messages import Message
from tests._support.flaky import flaky_toolset, starts
from tests._support.manifests import hook
from tests.runtime._kit import Recorder, gone, opened, run_once

pytestmark = pytest.mark.usefixtures("preview_on")

DEADLINE = 30
"""Seconds; bounds the whole test so a regression fails instead of hanging."""


def tool_answers(messages: list[Message]) -> dict[str, str | None]:
    """The content of each tool message, keyed by the function its call named."""
    names = {
        call.id: call.function.name for message in messages for call in message.tool_calls or ()
    }
    return {names[m.tool_call_id]: m.content for m in messages if m.tool_call_id in names}


async def test_a_call_in_flight_when_a_sibling_crashes_the_server_is_served_by_a_fresh_one(
    tmp_path: Path,
) -> None:
    start_log = tmp_path / "starts.log"
    recorder = Recorder()
    manifest = {
        "toolsets": [flaky_toolset("flaky", start_log)],
        "hooks": [
            hook("crash_first", name="crasher", toolset_name="flaky", timeout_seconds=20),
            hook("held_first", name="sibling", toolset_name="flaky", timeout_seconds=20),
        ],
    }
    with anyio.fail_after(DEADLINE):
        async with opened(manifest, observers=[recorder]) as injector:
            run = await run_once(injector)
    assert [(r.hook, r.outcome, r.reason) for r in run.records] == [
        ("crasher", HookOutcome.INJECTED, None),
        ("sibling", HookOutcome.INJECTED, None),
    ]
    assert recorder.records == run.records
    _, *fresh = starts(start_log)
    answers = tool_answers(run.messages)
    assert answers["flaky_crash_first"] == "survived"
    assert answers["flaky_held_first"] in fresh
    assert len(fresh) == 2  # each retry on a server of its own


async def test_a_call_that_kills_every_server_is_tried_on_two_and_then_skipped(
    tmp_path: Path,
) -> None:
    start_log = tmp_path / "starts.log"
    manifest = {
        "toolsets": [flaky_toolset("flaky", start_log)],
        "hooks": [hook("crash", name="crasher", toolset_name="flaky", timeout_seconds=20)],
    }
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            run = await run_once(injector)
    [record] = run.records
    assert record.outcome == HookOutcome.SKIPPED_ERROR
    assert record.reason is not None
    assert record.reason.startswith("the MCP server closed the connection")
    assert len(starts(start_log)) == 2
    assert tool_answers(run.messages) == {}


async def test_a_call_that_crashes_its_retry_server_too_does_not_take_a_siblings_retry_with_it(
    tmp_path: Path,
) -> None:
    start_log = tmp_path / "starts.log"
    manifest = {
        "toolsets": [flaky_toolset("flaky", start_log)],
        "hooks": [
            hook("crash_in_company", name="crasher", toolset_name="flaky", timeout_seconds=20),
            hook("keep_company", name="sibling", toolset_name="flaky", timeout_seconds=20),
        ],
    }
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            for _ in range(2):  # the toolset serves the next request as well
                before = len(starts(start_log))
                run = await run_once(injector)
                crasher, sibling = run.records
                assert (crasher.outcome, sibling.outcome) == (
                    HookOutcome.SKIPPED_ERROR,
                    HookOutcome.INJECTED,
                ), (crasher.reason, sibling.reason)
                assert crasher.reason is not None
                assert crasher.reason.startswith("the MCP server closed the connection")
                shared, *retries = starts(start_log)[before:]
                assert len(retries) == 2  # a server of its own for each retry
                answers = tool_answers(run.messages)
                assert list(answers) == ["flaky_keep_company"]
                assert answers["flaky_keep_company"] in retries
                for pid in (shared, *retries):  # the retries' servers stop: none is left behind
                    await gone(int(pid))
