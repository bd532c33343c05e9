"""Events as the host names them, and what a completion hook's silent tool means."""

from __future__ import annotations

import pytest

from agent_hooks import HookEvent, HookOutcome, HookRunner
from tests._support.manifests import hook
from tests.runtime._kit import HISTORY, VersionedTool, app, dumped

pytestmark = pytest.mark.usefixtures("preview_on")


async def test_an_event_given_as_plain_text_runs_the_hooks_of_that_event() -> None:
    tool = VersionedTool("notes")
    runner = app({"hooks": [hook("notes")]}, tool).get(HookRunner)
    run = await runner.run("on_request_start", HISTORY)  # type: ignore[arg-type]
    assert [record.outcome for record in run.records] == [HookOutcome.INJECTED]
    assert tool.calls == 1


async def test_a_completion_tool_that_returns_nothing_has_completed() -> None:
    tool = VersionedTool("store", behaviour="nothing")
    manifest = {"hooks": [{**hook("store"), "event": "on_completion", "on_error": "fail"}]}
    run = await app(manifest, tool).get(HookRunner).run(HookEvent.ON_COMPLETION, HISTORY)
    [record] = run.records
    assert (record.outcome, record.content_chars, record.call_id) == (
        HookOutcome.COMPLETED,
        None,
        None,
    )
    assert dumped(run.messages) == dumped(HISTORY)


async def test_a_request_start_tool_that_returns_nothing_skips_its_injection() -> None:
    tool = VersionedTool("notes", behaviour="nothing")
    run = (
        await app({"hooks": [hook("notes")]}, tool)
        .get(HookRunner)
        .run(HookEvent.ON_REQUEST_START, HISTORY)
    )
    [record] = run.records
    assert (record.outcome, record.reason) == (
        HookOutcome.SKIPPED_ERROR,
        "tool returned no content",
    )
    assert dumped(run.messages) == dumped(HISTORY)
