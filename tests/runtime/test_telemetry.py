"""Spans for runs and hooks, read back through the OpenTelemetry SDK's in-memory exporter."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from typing import Any

import anyio
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from agent_hooks import HookFailedError, HookOutcome, HookRunRecord
from agent_hooks.config import HookEvent
from agent_hooks.runtime._telemetry import record_hook_span, run_span
from agent_hooks.testing import ToolAnswer, run_manifest
from tests._support.manifests import CLOCK, hook

OUTCOMES = [
    "injected",
    "replaced",
    "completed",
    "skipped_fresh",
    "skipped_condition",
    "skipped_error",
    "timed_out",
]
FAILED = {"skipped_error", "timed_out"}


def record(
    outcome: str = "injected", *, hook: str = "h", tool: str = "t", reason: str | None = None
) -> HookRunRecord:
    return HookRunRecord(
        hook=hook,
        event=HookEvent.ON_REQUEST_START,
        tool=tool,
        outcome=HookOutcome(outcome),
        reason=reason,
        latency_ms=12.5,
        content_chars=None,
        call_id=None,
    )


@cache
def exporter() -> InMemorySpanExporter:
    """One exporter on the process's SDK provider (a global can be set only once per process)."""
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        trace.set_tracer_provider(TracerProvider())
        provider = trace.get_tracer_provider()
    assert isinstance(provider, TracerProvider)
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return memory


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    memory = exporter()
    memory.clear()
    yield memory
    memory.clear()


def named(memory: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [span for span in memory.get_finished_spans() if span.name == name]


def test_hook_spans_are_children_of_the_run_span(spans: InMemorySpanExporter) -> None:
    with run_span(HookEvent.ON_REQUEST_START):
        for hook in ("memories", "clock"):
            record_hook_span(record(hook=hook), start_time_ns=1_000, end_time_ns=2_000)

    [run] = named(spans, "agent_hooks.run")
    hooks = named(spans, "agent_hooks.hook")
    assert run.attributes == {"agent_hooks.event": "on_request_start"}
    assert [span.attributes["agent_hooks.hook"] for span in hooks if span.attributes] == [
        "memories",
        "clock",
    ]
    assert run.context is not None
    for span in hooks:
        assert span.parent is not None
        assert span.parent.span_id == run.context.span_id
        assert span.context is not None
        assert span.context.trace_id == run.context.trace_id


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_a_hook_span_carries_the_record_and_is_an_error_only_for_failures(
    spans: InMemorySpanExporter, outcome: str
) -> None:
    done = record(outcome, hook="hooks[0]", tool="memory_server_get_memories")
    with run_span(HookEvent.ON_COMPLETION):
        record_hook_span(done, start_time_ns=5_000, end_time_ns=17_500)

    [span] = named(spans, "agent_hooks.hook")
    assert span.attributes == {
        "agent_hooks.hook": "hooks[0]",
        "agent_hooks.tool": "memory_server_get_memories",
        "agent_hooks.outcome": outcome,
        "agent_hooks.latency_ms": 12.5,
    }
    assert (span.start_time, span.end_time) == (5_000, 17_500)
    expected = StatusCode.ERROR if outcome in FAILED else StatusCode.UNSET
    assert span.status.status_code == expected
    [run] = named(spans, "agent_hooks.run")
    assert run.status.status_code == StatusCode.UNSET


def test_a_reason_never_reaches_a_span(spans: InMemorySpanExporter) -> None:
    reason = "the MCP server reported an error: no memories for 'my secret diagnosis'"
    with run_span(HookEvent.ON_REQUEST_START):
        record_hook_span(record("skipped_error", reason=reason), start_time_ns=1, end_time_ns=2)

    for span in spans.get_finished_spans():
        texts = [str(value) for value in (span.attributes or {}).values()]
        texts += [span.status.description or ""]
        texts += [str(event.attributes) for event in span.events]
        assert not any("diagnosis" in text for text in texts)


def test_a_failed_run_is_an_error_with_the_runners_message(spans: InMemorySpanExporter) -> None:
    class HookFailed(Exception):
        pass

    def failing_run() -> None:
        with run_span(HookEvent.ON_REQUEST_START) as run:
            run.fail("hook 'memories' failed")
            raise HookFailed("hook 'memories' failed: quoted body")

    with pytest.raises(HookFailed):
        failing_run()

    [span] = named(spans, "agent_hooks.run")
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == "hook 'memories' failed"
    assert span.events == ()


def test_an_unexpected_error_marks_the_run_span_with_its_type_only(
    spans: InMemorySpanExporter,
) -> None:
    with pytest.raises(RuntimeError), run_span(HookEvent.ON_REQUEST_START):
        raise RuntimeError("user said: my secret diagnosis")

    [span] = named(spans, "agent_hooks.run")
    assert span.status.status_code == StatusCode.ERROR
    assert span.status.description == "RuntimeError"
    assert span.events == ()


def test_a_tracer_provider_installed_after_import_is_used() -> None:
    """No SDK at import time, then the host installs one: spans appear from then on."""
    script = """
from agent_hooks.runtime._telemetry import record_hook_span, run_span
from agent_hooks.config import HookEvent
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agent_hooks import HookOutcome, HookRunRecord

record = HookRunRecord(
    "h", HookEvent.ON_REQUEST_START, "t", HookOutcome.TIMED_OUT, None, 1.0, None, None
)
with run_span(HookEvent.ON_REQUEST_START) as run:  # no SDK: a no-op that still works
    record_hook_span(record, start_time_ns=1, end_time_ns=2)
    run.fail("hook 'h' failed")
memory = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(memory))
trace.set_tracer_provider(provider)
with run_span(HookEvent.ON_REQUEST_START):
    record_hook_span(record, start_time_ns=1, end_time_ns=2)
print(sorted(span.name for span in memory.get_finished_spans()))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "['agent_hooks.hook', 'agent_hooks.run']"
    assert done.stderr == ""


# Through the runner: every outcome, and no argument, content or user text in any span.

SECRETS = ("SECRET-ARG", "SECRET-CONTENT", "SECRET-USER-TEXT", "SECRET-REQUEST", "SECRET-BODY")


def runner_manifest(*, on_error: str = "skip") -> dict[str, Any]:
    return {
        "toolsets": [CLOCK],
        "hooks": [
            hook("recall", name="recall", arguments={"q": "SECRET-ARG", "who": "${request.user}"}),
            hook("recall", name="gated", condition="request.user == 'nobody'"),
            hook("broken", name="broken", on_error=on_error),
            hook("slow", name="slow", timeout_seconds=0.2),
            hook(name="clock", refresh_condition={"kind": "ttl", "ttl_minutes": 5}),
            hook("recall", name="after", event="on_completion"),
        ],
    }


def broken(arguments: dict[str, Any]) -> str:
    raise RuntimeError("server said: SECRET-BODY")


async def slow(arguments: dict[str, Any]) -> str:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")


TOOLS: dict[str, ToolAnswer] = {"recall": "SECRET-CONTENT", "broken": broken, "slow": slow}
HISTORY = [{"role": "user", "content": "SECRET-USER-TEXT"}]
REQUEST = {"user": "SECRET-REQUEST"}


async def run_twice_and_complete() -> None:
    first = await run_manifest(runner_manifest(), HISTORY, tools=TOOLS, request=REQUEST, now=1e9)
    await run_manifest(runner_manifest(), first.messages, tools=TOOLS, request=REQUEST, now=1e9)
    await run_manifest(runner_manifest(), HISTORY, tools=TOOLS, event="on_completion")


def outcomes_by_run(memory: InMemorySpanExporter) -> list[tuple[str, list[tuple[str, str]]]]:
    """Each run span's event, with its children's (hook, outcome), in the order they ended."""
    runs = named(memory, "agent_hooks.run")
    hooks = named(memory, "agent_hooks.hook")
    found = []
    for run in runs:
        assert run.context is not None
        assert run.attributes is not None
        children = [
            (str(span.attributes["agent_hooks.hook"]), str(span.attributes["agent_hooks.outcome"]))
            for span in hooks
            if span.parent is not None
            and span.parent.span_id == run.context.span_id
            and span.attributes is not None
        ]
        found.append((str(run.attributes["agent_hooks.event"]), children))
    return found


async def test_each_run_has_one_span_with_one_child_per_hook_and_its_outcome(
    spans: InMemorySpanExporter,
) -> None:
    await run_twice_and_complete()

    assert outcomes_by_run(spans) == [
        (
            "on_request_start",
            [
                ("recall", "injected"),
                ("gated", "skipped_condition"),
                ("broken", "skipped_error"),
                ("slow", "timed_out"),
                ("clock", "injected"),
            ],
        ),
        (
            "on_request_start",
            [
                ("recall", "replaced"),
                ("gated", "skipped_condition"),
                ("broken", "skipped_error"),
                ("slow", "timed_out"),
                ("clock", "skipped_fresh"),
            ],
        ),
        ("on_completion", [("after", "completed")]),
    ]
    assert len(named(spans, "agent_hooks.hook")) == 11


async def test_hook_spans_through_the_runner_carry_the_record_and_error_status(
    spans: InMemorySpanExporter,
) -> None:
    await run_manifest(runner_manifest(), HISTORY, tools=TOOLS, request=REQUEST, now=1e9)

    by_hook = {
        span.attributes["agent_hooks.hook"]: span
        for span in named(spans, "agent_hooks.hook")
        if span.attributes is not None
    }
    recall = by_hook["recall"]
    assert recall.attributes is not None
    assert recall.attributes["agent_hooks.tool"] == "recall"
    assert isinstance(recall.attributes["agent_hooks.latency_ms"], float)
    assert {hook: span.status.status_code for hook, span in by_hook.items()} == {
        "recall": StatusCode.UNSET,
        "gated": StatusCode.UNSET,
        "broken": StatusCode.ERROR,
        "slow": StatusCode.ERROR,
        "clock": StatusCode.UNSET,
    }
    [run] = named(spans, "agent_hooks.run")
    assert run.status.status_code == StatusCode.UNSET


async def test_no_argument_content_request_or_user_text_reaches_any_span(
    spans: InMemorySpanExporter,
) -> None:
    await run_twice_and_complete()

    for span in spans.get_finished_spans():
        texts = [str(span.attributes), span.status.description or "", span.name]
        texts += [f"{event.name} {event.attributes}" for event in span.events]
        leaked = [secret for secret in SECRETS for text in texts if secret in text]
        assert leaked == [], f"{span.name} shows {leaked}"


async def test_a_hook_failing_the_run_marks_the_run_span_as_an_error(
    spans: InMemorySpanExporter,
) -> None:
    with pytest.raises(HookFailedError):
        await run_manifest(runner_manifest(on_error="fail"), HISTORY, tools=TOOLS, now=1e9)

    [run] = named(spans, "agent_hooks.run")
    assert run.status.status_code == StatusCode.ERROR
    assert "SECRET" not in (run.status.description or "")
