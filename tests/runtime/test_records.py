"""One record per hook per run, each outcome from a real scenario, as SPEC section 8 describes
it; observers see every record in manifest order; ``on_error: fail`` raises after the others."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_hooks import HookEvent, HookFailedError, HookOutcome, HookRunner, HookRunRecord
from agent_hooks.messages import Message
from tests._support.flaky import flaky_toolset
from tests._support.manifests import hook
from tests.integration._app import tool_pairs
from tests.runtime._kit import HISTORY, Recorder, opened, run_once
from tests.servers.fixtures import RecordingServer

pytestmark = pytest.mark.usefixtures("preview_on")

DEADLINE = 30
PREFERENCES = '{"user_id":"current","language":"en-GB","units":"metric"}'
"""What the test REST API answers on ``/preferences``."""


def api(server: RecordingServer) -> dict[str, Any]:
    return {
        "type": "rest-api",
        "name": "api",
        "base_url": server.url,
        "tools": [{"name": "prefs", "path": "/preferences"}, {"name": "slow", "path": "/slow"}],
    }


def tool_message(messages: list[Message], call_id: str | None) -> Message:
    [message] = [m for m in messages if m.tool_call_id == call_id]
    return message


async def test_a_first_pair_is_injected_and_the_same_content_next_time_is_replaced(
    rest_server: RecordingServer,
) -> None:
    manifest = {"toolsets": [api(rest_server)], "hooks": [hook("prefs", toolset_name="api")]}
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            first = await run_once(injector)
            second = await run_once(injector, first.messages)

    [injected] = first.records
    assert (injected.hook, injected.event, injected.tool) == (
        "hooks[0]",
        "on_request_start",
        "api_prefs",
    )
    assert (injected.outcome, injected.reason) == (HookOutcome.INJECTED, None)
    assert injected.content_chars == len(PREFERENCES)
    assert tool_message(first.messages, injected.call_id).content == PREFERENCES
    assert injected.latency_ms >= 0

    [replaced] = second.records
    assert (replaced.outcome, replaced.reason) == (HookOutcome.REPLACED, None)
    assert replaced.content_chars == len(PREFERENCES)
    assert replaced.call_id == injected.call_id  # same content, no TTL: the same id again
    assert len(second.messages) == len(first.messages)


async def test_a_fresh_ttl_pair_skips_the_call(rest_server: RecordingServer) -> None:
    ttl = {"kind": "ttl", "ttl_minutes": 5}
    manifest = {
        "toolsets": [api(rest_server)],
        "hooks": [hook("prefs", name="prefs", toolset_name="api", refresh_condition=ttl)],
    }
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            first = await run_once(injector)
            second = await run_once(injector, first.messages)

    assert first.records[0].call_id is not None
    assert first.records[0].call_id.endswith(f"_t{1_700_000_000 + 300:08x}")
    [fresh] = second.records
    assert (fresh.hook, fresh.outcome, fresh.reason) == ("prefs", HookOutcome.SKIPPED_FRESH, None)
    assert (fresh.content_chars, fresh.call_id) == (None, None)
    assert second.messages == first.messages
    assert len(rest_server.received()) == 1


async def test_a_completion_hook_that_ran_is_completed_and_injects_nothing(tmp_path: Path) -> None:
    echo = {
        "kind": "tool_call",
        "event": "on_completion",
        "toolset_name": "flaky",
        "tool_name": "echo",
        "arguments": {"text": "answered"},
    }
    manifest = {"toolsets": [flaky_toolset("flaky", tmp_path / "starts.log")], "hooks": [echo]}
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            run = await injector.get(HookRunner).run(
                HookEvent.ON_COMPLETION,
                HISTORY,
                completion={"iteration_count": 1, "total_tool_calls": 0},
            )

    [record] = run.records
    assert (record.event, record.outcome, record.reason) == (
        "on_completion",
        HookOutcome.COMPLETED,
        None,
    )
    assert (record.content_chars, record.call_id) == (len("answered"), None)
    assert run.messages == list(HISTORY)


async def test_a_failing_tool_is_skipped_error_with_its_reason(tmp_path: Path) -> None:
    manifest = {
        "toolsets": [flaky_toolset("flaky", tmp_path / "starts.log")],
        "hooks": [hook("fail", name="broken", toolset_name="flaky")],
    }
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            run = await run_once(injector)

    [record] = run.records
    assert record.outcome == HookOutcome.SKIPPED_ERROR
    assert record.failed
    assert record.reason is not None
    assert "the MCP server reported an error" in record.reason
    assert "\n" not in record.reason
    assert (record.content_chars, record.call_id) == (None, None)
    assert run.messages == list(HISTORY)


async def test_a_slow_endpoint_is_timed_out_with_the_hook_deadline_as_reason(
    rest_server: RecordingServer,
) -> None:
    slow = hook("slow", toolset_name="api", arguments={"seconds": 5}, timeout_seconds=0.3)
    manifest = {"toolsets": [api(rest_server)], "hooks": [slow]}
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            run = await run_once(injector)

    [record] = run.records
    assert (record.outcome, record.reason) == (
        HookOutcome.TIMED_OUT,
        "hook timed out after 0.3 seconds",
    )
    assert record.failed
    assert (record.content_chars, record.call_id) == (None, None)


async def test_content_over_the_limit_is_cut_and_the_record_says_so(
    rest_server: RecordingServer, caplog: pytest.LogCaptureFixture
) -> None:
    manifest = {
        "toolsets": [api(rest_server)],
        # 20: under the body's 57 characters, and 4 x 20 bytes reads the whole body
        "hooks": [hook("prefs", toolset_name="api", max_content_chars=20)],
    }
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            run = await run_once(injector)

    [record] = run.records
    assert record.outcome == HookOutcome.INJECTED
    assert record.content_chars == len(PREFERENCES)
    assert record.reason is not None
    assert "cut at 20" in record.reason
    cut = PREFERENCES[:20] + "\n[truncated at 20 characters]"
    assert tool_message(run.messages, record.call_id).content == cut
    assert any(
        r.levelno == logging.WARNING and "hook=hooks[0]" in r.message for r in caplog.records
    )


async def test_a_body_cut_at_the_byte_bound_is_named_in_the_reason(
    rest_server: RecordingServer,
) -> None:
    manifest = {
        "toolsets": [api(rest_server)],
        # 10: 4 x 10 bytes stop the read inside the body's 57 characters
        "hooks": [hook("prefs", toolset_name="api", max_content_chars=10)],
    }
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            run = await run_once(injector)

    [record] = run.records
    assert record.outcome == HookOutcome.INJECTED
    assert record.reason is not None
    assert "body not read past 40 bytes" in record.reason
    cut = PREFERENCES[:10] + "\n[truncated at 10 characters]"
    assert tool_message(run.messages, record.call_id).content == cut


async def test_observers_get_every_record_in_manifest_order_and_a_raising_one_is_ignored(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class Exploding:
        def on_record(self, record: HookRunRecord) -> None:
            raise RuntimeError("observer bug")

    before, after = Recorder(), Recorder()
    manifest = {
        "toolsets": [flaky_toolset("flaky", tmp_path / "starts.log")],
        "hooks": [
            hook("sleep", name="slow", toolset_name="flaky", arguments={"seconds": 0.3}),
            hook("fail", name="broken", toolset_name="flaky"),
            hook("echo", name="quick", toolset_name="flaky", arguments={"text": "hi"}),
        ],
    }
    caplog.set_level(logging.INFO)
    with anyio.fail_after(DEADLINE):
        async with opened(manifest, observers=[before, Exploding(), after]) as injector:
            run = await run_once(injector)

    assert [r.hook for r in run.records] == ["slow", "broken", "quick"]
    assert before.records == run.records
    assert after.records == run.records
    failures = [r for r in caplog.records if "outcome=observer_failed" in r.message]
    assert len(failures) == 3
    assert all("observer=Exploding" in r.message for r in failures)
    logged = [r.message for r in caplog.records if r.name == "agent_hooks.hooks"]
    assert [m.split()[0] for m in logged if m.startswith("hook=")] == [
        "hook=slow",
        "hook=broken",
        "hook=quick",
    ]
    assert tool_pairs(run.messages) == [
        ("flaky_sleep", '{"seconds": 0.3}', "awake"),
        ("flaky_echo", '{"text": "hi"}', "hi"),
    ]


async def test_on_error_fail_raises_after_the_other_hooks_finished(
    tmp_path: Path, rest_server: RecordingServer
) -> None:
    recorder = Recorder()
    manifest = {
        "toolsets": [flaky_toolset("flaky", tmp_path / "starts.log"), api(rest_server)],
        "hooks": [
            hook("fail", name="must", toolset_name="flaky", on_error="fail"),
            hook("slow", name="later", toolset_name="api", arguments={"seconds": 0.5}),
            hook("fail", name="optional", toolset_name="flaky", arguments={"again": 1}),
        ],
    }
    with anyio.fail_after(DEADLINE):
        async with opened(manifest, observers=[recorder]) as injector:
            with pytest.raises(HookFailedError) as raised:
                await run_once(injector)

    error = raised.value
    assert error.hook == "must"
    assert [r.hook for r in error.failures] == ["must"]
    assert str(error).startswith("hook 'must' failed: ")
    outcomes = [(r.hook, r.outcome) for r in error.run.records]
    assert outcomes == [
        ("must", HookOutcome.SKIPPED_ERROR),
        ("later", HookOutcome.INJECTED),
        ("optional", HookOutcome.SKIPPED_ERROR),
    ]
    assert tool_pairs(error.run.messages) == [("api_slow", '{"seconds": 0.5}', "finally")]
    assert recorder.records == error.run.records
