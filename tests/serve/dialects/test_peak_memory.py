"""SPEC 16: a request's peak memory is at most 8x its body size. What the proxy builds from a
16 MiB body (the parsed body, the hooks' models, the body it forwards with a pair added) is
measured with ``tracemalloc``, from the body's bytes on: allocation counts, not timings, so a
busy machine does not change the figure. Before the hooks' stand-ins, the bytes parser and the
writer's slices, one 16 MiB string with an emoji peaked at 13x, 100,000 short messages at
10-12x, a 100,000-message tool loop at 17x (chat). A hook that reads the history made a model
per message besides its context (100,000 short messages: 9.1x before the runner, 21x for the
tool loop); its context is now built from the parsed dicts. Before the dialects' outline (a
shared role-only message for each message read by its role alone) and the parser's shared words,
the tool loop stayed at 11.6x in Responses and 13.7x in Anthropic."""

from __future__ import annotations

import asyncio
import gc
import json
import tracemalloc
from typing import Any

import pytest
from pydantic_core import to_json

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


def tool_loop(dialect: Dialect = CHAT) -> list[dict[str, Any]]:
    """An agent's loop of 100,000 messages in ``dialect``'s shape: a tool call, its answer,
    again and again (a chat call message is three objects, an Anthropic one four)."""
    call = {"chat": _chat_call, "responses": _responses_call, "anthropic": _anthropic_call}
    items: list[dict[str, Any]] = [{"role": "user", "content": "fix the tests"}]
    for index in range((MAX_MESSAGES - 1) // 2):
        items += call[dialect.name](f"call_{index:08d}", f"src/m{index}.py", f"{index}: ok")
    return items


def _chat_call(call_id: str, path: str, output: str) -> list[dict[str, Any]]:
    function = {"name": "read_file", "arguments": json.dumps({"path": path})}
    call = {"id": call_id, "type": "function", "function": function}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": output},
    ]


def _responses_call(call_id: str, path: str, output: str) -> list[dict[str, Any]]:
    arguments = json.dumps({"path": path})
    return [
        {"type": "function_call", "call_id": call_id, "name": "read_file", "arguments": arguments},
        {"type": "function_call_output", "call_id": call_id, "output": output},
    ]


def _anthropic_call(call_id: str, path: str, output: str) -> list[dict[str, Any]]:
    use = {"type": "tool_use", "id": call_id, "name": "read_file", "input": {"path": path}}
    result = {"type": "tool_result", "tool_use_id": call_id, "content": output}
    return [
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
    ]


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


@pytest.mark.parametrize("dialect", [CHAT, RESPONSES, ANTHROPIC], ids=lambda d: d.name)
def test_reading_and_writing_a_100_000_message_tool_loop_peaks_within_8x_its_size(
    dialect: Dialect,
) -> None:
    raw = body(dialect, tool_loop(dialect))
    assert len(raw) + peak_of(dialect, raw) <= PEAK_PER_BODY_BYTE * len(raw)


@pytest.mark.usefixtures("preview_on")
@pytest.mark.parametrize(
    "shape",
    [
        many_short_messages,
        pytest.param(
            tool_loop,
            marks=pytest.mark.xfail(
                strict=True,
                reason="10.0x: the parse holds 5.3x, the context's entries (a dict per message,"
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
    allocate (``raw`` itself is not counted), on the history as the proxy reads it: the
    dialect's outline, or with ``runner`` (whose hooks read the history) the whole history; the
    pair is the one ``runner``'s hooks add, as the proxy runs them, when given."""
    gc.collect()
    tracemalloc.start()
    try:
        parsed = dialect.parse(raw)
        read = parsed.outline.messages if runner is None else parsed.history
        given = RunnerInput(read)
        history = [*read, *PAIR]
        if runner is not None:
            event = HookEvent.ON_REQUEST_START
            run = runner.run_hooks(runner.hooks, event, given.models, context_history=read)
            history = given.history(asyncio.run(run).messages)
        forwarded = parsed.render(history, RenderContext())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(given.models) == len(read)
    assert len(history) == len(read) + 2
    assert len(forwarded) > len(to_json(parsed.body))  # the client's fields, and the pairs
    return peak
