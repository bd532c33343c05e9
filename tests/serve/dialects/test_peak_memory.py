"""SPEC 16: a request's peak memory is at most 8x its body size. What the proxy builds from a
16 MiB body (the parsed body, the hooks' models, the body it forwards with a pair added) is
measured with ``tracemalloc``, from the body's bytes on: allocation counts, not timings, so a
busy machine does not change the figure. Before the hooks' stand-ins, the bytes parser and the
writer's slices, one 16 MiB string with an emoji peaked at 13x, 100,000 short messages at
10-12x, a 100,000-message tool loop at 17x (chat). A hook that reads the history made a model
per message besides its context (100,000 short messages: 9.1x before the runner, 21x for the
tool loop); its context is now built from the parsed dicts."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from typing import Any

import pytest

from agent_hooks import HookEvent, HookRunner
from agent_hooks.serve._dialects import ANTHROPIC, CHAT, RESPONSES, Dialect, RenderContext
from agent_hooks.serve._limits import MAX_MESSAGES
from agent_hooks.serve._runner_input import RunnerInput
from tests._support import pair
from tests._support.manifests import hook
from tests.runtime._kit import VersionedTool, app

BODY_BYTES = 16 * 1024 * 1024
PEAK_PER_BODY_BYTE = 8
MESSAGE_BYTES = 4096
PAIR = pair("clock", "noon")


def many_messages() -> list[dict[str, Any]]:
    """Thousands of 4 KiB messages, as a long agent history has."""
    count = BODY_BYTES // (MESSAGE_BYTES + 40)
    return [
        {
            "role": "user" if index % 2 == 0 else "assistant",
            "content": f"{index:06d} " + "x" * (MESSAGE_BYTES - 7),
        }
        for index in range(count)
    ]


def one_string() -> list[dict[str, Any]]:
    """One message holding almost the whole body, in non-ASCII text (a Python string of it
    takes up to four bytes a character)."""
    return [{"role": "user", "content": "é" * (BODY_BYTES // 2 - 100)}]


def one_string_with_an_emoji() -> list[dict[str, Any]]:
    """One message holding almost the whole body, ASCII but for one emoji at its end: a Python
    string of it takes four bytes a character throughout."""
    return [{"role": "user", "content": "x" * (BODY_BYTES - 200) + "\U0001f600"}]


def many_short_messages() -> list[dict[str, Any]]:
    """As many messages as a request may hold, about 160 bytes each: each costs its Python
    objects, a few times its JSON."""
    return [
        {"role": "user" if index % 2 == 0 else "assistant", "content": f"{index:06d} " + "x" * 120}
        for index in range(MAX_MESSAGES - 10)
    ]


def tool_loop() -> list[dict[str, Any]]:
    """An agent's loop of 100,000 messages: a tool call, its answer, again and again (a call
    message is three objects)."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "fix the tests"}]
    for index in range((MAX_MESSAGES - 1) // 2):
        call_id = f"call_{index:08d}"
        function = {"name": "read_file", "arguments": json.dumps({"path": f"src/m{index}.py"})}
        call = {"id": call_id, "type": "function", "function": function}
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": f"{index}: ok"})
    return messages


def body(dialect: Dialect, messages: list[dict[str, Any]]) -> bytes:
    fields = (
        {"input": messages} if dialect is RESPONSES else {"max_tokens": 8, "messages": messages}
    )
    return json.dumps({"model": "m", **fields}, ensure_ascii=False).encode()


@pytest.mark.parametrize("dialect", [CHAT, RESPONSES, ANTHROPIC], ids=lambda d: d.name)
@pytest.mark.parametrize(
    "shape",
    [many_messages, one_string, one_string_with_an_emoji, many_short_messages],
    ids=lambda s: s.__name__,
)
def test_reading_validating_and_writing_a_16_mib_body_peaks_within_8x_its_size(
    dialect: Dialect, shape: Any
) -> None:
    raw = body(dialect, shape())
    assert len(raw) + peak_of(dialect, raw) <= PEAK_PER_BODY_BYTE * len(raw)


def test_reading_and_writing_a_100_000_message_tool_loop_peaks_within_8x_its_size() -> None:
    """Chat only: Responses and Anthropic bodies are read into a second history, in chat's
    shape, beside their own items (docs/decisions.md)."""
    raw = body(CHAT, tool_loop())
    assert len(raw) + peak_of(CHAT, raw) <= PEAK_PER_BODY_BYTE * len(raw)


@pytest.mark.usefixtures("preview_on")
@pytest.mark.parametrize(
    "shape",
    [
        many_short_messages,
        pytest.param(
            tool_loop,
            marks=pytest.mark.xfail(
                strict=True,
                reason="10.8x: the parse holds 6.2x, the context's entries (a dict per message,"
                " three more and the parsed arguments per call) 3.6x (docs/decisions.md)",
            ),
        ),
    ],
    ids=lambda s: s.__name__,
)
def test_a_hook_reading_the_history_keeps_a_chat_body_within_8x_its_size(shape: Any) -> None:
    """The proxy's path: the runner gets stand-ins, its hook's context the parsed dicts."""
    raw = body(CHAT, shape())
    reading = hook(tool_name="alpha", arguments={"q": "${last_user_message.content}"})
    runner = app({"hooks": [reading]}, VersionedTool("alpha")).get(HookRunner)
    assert len(raw) + peak_of(CHAT, raw, runner) <= PEAK_PER_BODY_BYTE * len(raw)


def peak_of(dialect: Dialect, raw: bytes, runner: HookRunner | None = None) -> int:
    """The peak of what reading ``raw``, the hooks' models and writing it back with a pair
    allocate (``raw`` itself is not counted); the pair is the one ``runner``'s hooks add, as the
    proxy runs them, when given."""
    gc.collect()
    tracemalloc.start()
    try:
        parsed = dialect.parse(raw)
        given = RunnerInput(parsed.history)
        history = [*parsed.history, *PAIR]
        if runner is not None:
            event = HookEvent.ON_REQUEST_START
            run = runner.run_hooks(
                runner.hooks, event, given.models, context_history=parsed.history
            )
            history = given.history(asyncio.run(run).messages)
        forwarded = parsed.render(history, RenderContext())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(given.models) == len(parsed.history)
    assert len(history) == len(parsed.history) + 2
    assert len(forwarded) > len(raw)
    return peak
