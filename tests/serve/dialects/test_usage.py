"""Reading an answer's usage: the four kinds from each dialect's words, cheaply and safely."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_hooks.serve._dialects import ANTHROPIC, CHAT, RESPONSES, Usage
from agent_hooks.serve._dialects._usage import anthropic_usage, find_usage, openai_usage

CHAT_USAGE = {
    "prompt_tokens": 100,
    "completion_tokens": 7,
    "prompt_tokens_details": {"cached_tokens": 60},
}
OPENAI = Usage(input=40, cached_input=60, output=7)


def test_openai_input_is_the_prompt_less_its_cached_tokens() -> None:
    assert openai_usage(CHAT_USAGE) == OPENAI
    responses = {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 60}}
    assert openai_usage({**responses, "output_tokens": 7}) == OPENAI
    assert openai_usage({"prompt_tokens": 5, "completion_tokens": 1}) == Usage(input=5, output=1)


def test_anthropic_counts_cache_reads_and_writes_beside_the_input() -> None:
    usage = {
        "input_tokens": 40,
        "cache_read_input_tokens": 60,
        "cache_creation_input_tokens": 5,
        "output_tokens": 7,
    }
    assert anthropic_usage(usage) == Usage(40, 60, 5, 7)


@pytest.mark.parametrize(
    "usage",
    [
        None,
        "lots",
        [1],
        {"prompt_tokens": "100", "completion_tokens": True},
        {"prompt_tokens": -1, "completion_tokens": 10**30},
        {"prompt_tokens": 1.5, "prompt_tokens_details": {"cached_tokens": None}},
    ],
)
def test_what_is_not_a_count_counts_nothing(usage: Any) -> None:
    assert openai_usage(usage) in (None, Usage())
    assert anthropic_usage(usage) in (None, Usage())


def test_more_cached_tokens_than_prompt_tokens_leave_no_negative_input() -> None:
    usage = {"prompt_tokens": 5, "prompt_tokens_details": {"cached_tokens": 9}}
    assert openai_usage(usage) == Usage(input=0, cached_input=9)


def test_the_usage_key_is_found_after_the_content_without_parsing_the_body() -> None:
    content = 'a "usage": {"prompt_tokens": 1} quoted in the text'
    answer = {"choices": [{"message": {"content": content}}], "usage": CHAT_USAGE}
    assert find_usage(json.dumps(answer).encode()) == CHAT_USAGE
    assert find_usage(json.dumps(answer, indent=2).encode()) == CHAT_USAGE
    tool_use = {"content": [{"type": "tool_use", "input": {"usage": 3}}], "usage": {"x": 1}}
    assert find_usage(json.dumps(tool_use).encode()) == {"x": 1}


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"<html>busy</html>",
        b'{"choices": [{"message": {"content": "the \\"usage\\" of it"}}]}',
        b'{"type": "usage"}',
        b'{"usage": ',
        b'{"usage": {"prompt_tokens": 1',
        b'{"usage": ' + b"[" * 3000 + b"]" * 3000 + b"}",
        b'{"usage": {"prompt_tokens": 1' + b"0" * 5000 + b"}}",
    ],
)
def test_an_answer_without_a_readable_usage_has_none(raw: bytes) -> None:
    assert find_usage(raw) is None
    assert CHAT.usage_from_json(raw) is None


def test_a_usage_far_before_the_end_of_a_large_answer_is_not_looked_for() -> None:
    raw = json.dumps({"usage": CHAT_USAGE, "content": "x" * 100_000}).encode()
    assert find_usage(raw) is None


def test_each_dialect_reads_the_usage_of_a_json_answer() -> None:
    chat = {"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": CHAT_USAGE}
    raw = json.dumps(chat).encode()
    assert CHAT.answer_from_json(raw).usage == CHAT.usage_from_json(raw) == OPENAI
    call = {"role": "assistant", "tool_calls": [{"id": "c"}]}
    tool_call = json.dumps({**chat, "choices": [{"message": call}]}).encode()
    assert CHAT.answer_from_json(tool_call).usage == OPENAI  # a tool call used tokens too
    response = {
        "id": "resp_1",
        "output": [],
        "usage": {"input_tokens": 3, "output_tokens": 2},
    }
    raw = json.dumps(response).encode()
    expected = Usage(input=3, output=2)
    assert RESPONSES.answer_from_json(raw).usage == RESPONSES.usage_from_json(raw) == expected
    message = {"content": [], "stop_reason": "tool_use", "usage": {"input_tokens": 3}}
    raw = json.dumps(message).encode()
    assert ANTHROPIC.answer_from_json(raw).usage == ANTHROPIC.usage_from_json(raw) == Usage(3)


def _sse(*events: Any, named: bool = False) -> bytes:
    return b"".join(
        (f"event: {e['type']}\n" if named else "").encode()
        + b"data: "
        + json.dumps(e).encode()
        + b"\n\n"
        for e in events
    )


def test_a_streamed_chat_answer_has_its_last_chunks_usage() -> None:
    reader = CHAT.reader()
    delta = {"index": 0, "delta": {"role": "assistant", "content": "hi"}, "finish_reason": None}
    end = {"index": 0, "delta": {}, "finish_reason": "stop"}
    raw = _sse({"choices": [delta]}, {"choices": [end]}, {"choices": [], "usage": CHAT_USAGE})
    for at in range(0, len(raw), 7):  # fed in pieces, as the network delivers
        reader.feed(raw[at : at + 7])
    reader.feed(b"data: [DONE]\n\n")
    answer = reader.answer()
    assert answer.message == {"role": "assistant", "content": "hi"}
    assert answer.usage == OPENAI


def test_a_streamed_response_has_the_completed_responses_usage() -> None:
    reader = RESPONSES.reader()
    response = {"id": "r", "output": [], "usage": {"input_tokens": 9, "output_tokens": 1}}
    reader.feed(_sse({"type": "response.completed", "response": response}, named=True))
    assert reader.answer().usage == Usage(input=9, output=1)


def test_a_streamed_message_has_its_starts_usage_updated_by_its_deltas() -> None:
    reader = ANTHROPIC.reader()
    start = {"input_tokens": 40, "cache_read_input_tokens": 60, "output_tokens": 1}
    delta = {"output_tokens": 7, "cache_read_input_tokens": None}
    reader.feed(
        _sse(
            {"type": "message_start", "message": {"usage": start}},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": delta},
            {"type": "message_stop"},
            named=True,
        )
    )
    assert reader.answer().usage == Usage(input=40, cached_input=60, output=7)


def test_a_stream_without_usage_has_none() -> None:
    reader = ANTHROPIC.reader()
    reader.feed(_sse({"type": "message_stop"}, named=True))
    assert reader.answer().usage is None
    chat = CHAT.reader()
    chat.feed(b"data: [DONE]\n\n")
    assert chat.answer().usage is None
