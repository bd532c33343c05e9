"""The test kit: a manifest run once with replaced tools, a fixed clock and a request context."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import anyio
import pytest

from agent_hooks import HookEvent, HookFailedError
from agent_hooks.messages import Message
from agent_hooks.testing import run_manifest
from tests._support.manifests import hook

HISTORY = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "What do you remember about me?"},
]

NO_SUCH_SERVER = {
    "type": "mcp",
    "name": "memory",
    "server": {"transport": "stdio", "command": "/nonexistent/agent-hooks-test-server"},
}
"""An MCP toolset whose server cannot start: a hook on it works only if nothing starts it."""


def manifest(
    *hooks: dict[str, Any], toolsets: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {"toolsets": [NO_SUCH_SERVER] if toolsets is None else toolsets, "hooks": list(hooks)}


def tool_answers(messages: list[Message]) -> list[Any]:
    return [m.content for m in messages if m.role == "tool"]


async def test_a_fixed_string_replaces_the_tool_and_no_server_is_started() -> None:
    run = await run_manifest(
        manifest(hook("recall", "memory")), HISTORY, tools={"memory_recall": "- likes tea"}
    )

    assert [(r.hook, r.tool, r.outcome) for r in run.records] == [
        ("hooks[0]", "memory_recall", "injected")
    ]
    assert tool_answers(run.messages) == ["- likes tea"]
    assert len(run.messages) == len(HISTORY) + 2


async def test_a_function_gets_the_rendered_arguments() -> None:
    seen: list[dict[str, Any]] = []

    def recall(arguments: dict[str, Any]) -> str:
        seen.append(arguments)
        return f"memories of {arguments['user_id']}"

    run = await run_manifest(
        manifest(hook("recall", "memory", arguments={"user_id": "${request.user}", "n": 3})),
        HISTORY,
        tools={"memory_recall": recall},
        request={"user": "u7"},
    )

    assert seen == [{"user_id": "u7", "n": 3}]
    assert tool_answers(run.messages) == ["memories of u7"]


async def test_an_async_function_may_replace_a_tool() -> None:
    async def recall(arguments: dict[str, Any]) -> str:
        await anyio.lowlevel.checkpoint()
        return "async memories"

    run = await run_manifest(
        manifest(hook("recall", "memory")), HISTORY, tools={"memory_recall": recall}
    )
    assert tool_answers(run.messages) == ["async memories"]


async def test_a_tool_no_hook_uses_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"'memory_recal'.*did you mean 'memory_recall'\?"):
        await run_manifest(manifest(hook("recall", "memory")), HISTORY, tools={"memory_recal": "x"})


async def test_a_tool_name_far_from_every_hooks_tool_lists_them() -> None:
    with pytest.raises(ValueError, match=r"'weather'.*\(hooks use: 'memory_recall'\)"):
        await run_manifest(manifest(hook("recall", "memory")), HISTORY, tools={"weather": "x"})


async def test_now_fixes_the_clock_of_the_built_in_time_tool_and_the_ttl() -> None:
    clock_manifest = {
        "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
        "hooks": [
            {
                "kind": "tool_call",
                "event": "on_request_start",
                "tool_name": "current_time",
                "refresh_condition": {"kind": "ttl", "ttl_minutes": 10},
            }
        ],
    }
    first = await run_manifest(clock_manifest, HISTORY, now=1_700_000_000)
    fresh = await run_manifest(clock_manifest, first.messages, now=1_700_000_000 + 9 * 60)

    assert tool_answers(first.messages) == ["2023-11-14T22:13:20Z"]
    assert first.records[0].call_id is not None
    assert first.records[0].call_id.endswith(f"_t{1_700_000_000 + 600:08x}")
    assert [r.outcome for r in fresh.records] == ["skipped_fresh"]
    assert fresh.messages == first.messages


async def test_the_hooks_timeout_applies_to_a_replaced_tool() -> None:
    async def never(arguments: dict[str, Any]) -> str:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    started = time.monotonic()
    run = await run_manifest(
        manifest(hook("recall", "memory", timeout_seconds=0.5)),
        HISTORY,
        tools={"memory_recall": never},
    )

    assert [r.outcome for r in run.records] == ["timed_out"]
    assert run.messages == [Message.model_validate(m) for m in HISTORY]
    assert time.monotonic() - started < 0.5 + 2.0


async def test_a_blocking_function_is_abandoned_at_the_hooks_deadline() -> None:
    release = threading.Event()

    def blocking(arguments: dict[str, Any]) -> str:
        release.wait(timeout=30)
        return "too late"

    try:
        run = await run_manifest(
            manifest(hook("recall", "memory", timeout_seconds=0.5)),
            HISTORY,
            tools={"memory_recall": blocking},
        )
    finally:
        release.set()
    assert [r.outcome for r in run.records] == ["timed_out"]


async def test_a_raising_function_is_a_failing_tool() -> None:
    def broken(arguments: dict[str, Any]) -> str:
        raise RuntimeError("database is locked")

    run = await run_manifest(
        manifest(hook("recall", "memory", name="recall")), HISTORY, tools={"memory_recall": broken}
    )

    [record] = run.records
    assert (record.hook, record.outcome) == ("recall", "skipped_error")
    assert record.reason is not None
    assert "database is locked" in record.reason


async def test_a_failing_hook_with_on_error_fail_raises() -> None:
    def broken(arguments: dict[str, Any]) -> str:
        raise RuntimeError("database is locked")

    with pytest.raises(HookFailedError):
        await run_manifest(
            manifest(hook("recall", "memory", on_error="fail")),
            HISTORY,
            tools={"memory_recall": broken},
        )


async def test_a_function_answering_something_else_than_text_fails_the_hook() -> None:
    run = await run_manifest(
        manifest(hook("recall", "memory")),
        HISTORY,
        tools={"memory_recall": lambda a: 42},  # type: ignore[dict-item]
    )

    [record] = run.records
    assert record.outcome == "skipped_error"
    assert record.reason is not None
    assert "int, not str" in record.reason


async def test_an_unreplaced_tool_still_runs_for_real() -> None:
    run = await run_manifest(manifest(hook("recall", "memory")), HISTORY)

    [record] = run.records
    assert record.outcome == "skipped_error"
    assert record.reason is not None
    assert "cannot start the MCP server" in record.reason


async def test_preview_is_on_for_the_app_only(preview_off: None) -> None:
    run = await run_manifest(
        manifest(hook("recall", "memory")), HISTORY, tools={"memory_recall": "x"}
    )

    assert [r.outcome for r in run.records] == ["injected"]
    assert os.environ["ENABLE_PREVIEW_FEATURES"] == "false"


async def test_a_completion_event_runs_only_completion_hooks_and_injects_nothing() -> None:
    calls: list[str] = []

    def save(arguments: dict[str, Any]) -> str:
        calls.append(arguments["q"])
        return "ok"

    completion_hook = hook("save", "memory", event="on_completion", arguments={"q": "${event}"})
    run = await run_manifest(
        manifest(hook("recall", "memory"), completion_hook),
        HISTORY,
        tools={"memory_recall": "unused", "memory_save": save},
        event="on_completion",
    )

    assert [(r.tool, r.outcome) for r in run.records] == [("memory_save", "completed")]
    assert calls == ["on_completion"]
    assert run.messages == [Message.model_validate(m) for m in HISTORY]


async def test_a_host_tool_named_by_an_internal_toolset_can_be_provided_by_the_test() -> None:
    internal = {"type": "internal", "name": "host", "tools": ["lookup_user"]}
    run = await run_manifest(
        {
            "toolsets": [internal],
            "hooks": [{**hook("lookup_user", "memory"), "toolset_name": None}],
        },
        HISTORY,
        tools={"lookup_user": "u7: admin"},
        event=HookEvent.ON_REQUEST_START,
    )
    assert tool_answers(run.messages) == ["u7: admin"]
