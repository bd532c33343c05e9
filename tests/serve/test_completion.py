"""Reading the final answer back from plain and streamed upstream answers."""

from __future__ import annotations

import json
from typing import Any

from agent_hooks.serve._completion import StreamedAnswer, answer_from_json


def events(*deltas: dict[str, Any], finish: str = "stop") -> bytes:
    chunks = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def test_a_plain_answer_is_its_first_choice_message() -> None:
    message = {"role": "assistant", "content": "hi", "refusal": None}
    raw = json.dumps({"choices": [{"index": 0, "message": message}]}).encode()
    assert answer_from_json(raw) == message


def test_a_tool_call_answer_is_not_final() -> None:
    message = {"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]}
    assert answer_from_json(json.dumps({"choices": [{"message": message}]}).encode()) is None
    assert answer_from_json(b"<html>") is None


def test_a_stream_is_reassembled_whatever_the_chunk_boundaries() -> None:
    raw = events({"role": "assistant", "content": ""}, {"content": "Hel"}, {"content": "lo\n!"})
    for size in (1, 7, len(raw)):
        streamed = StreamedAnswer()
        for start in range(0, len(raw), size):
            streamed.feed(raw[start : start + size])
        assert streamed.message() == {"role": "assistant", "content": "Hello\n!"}


def test_a_streamed_tool_call_is_not_final() -> None:
    streamed = StreamedAnswer()
    streamed.feed(events({"tool_calls": [{"index": 0, "id": "c"}]}, finish="tool_calls"))
    assert streamed.message() is None


def test_other_choices_and_usage_chunks_are_ignored() -> None:
    second = {"choices": [{"index": 1, "delta": {"content": "other"}}]}
    usage = {"choices": [], "usage": {"total_tokens": 3}}
    raw = events({"content": "mine"}) + f"data: {json.dumps(second)}\n\n".encode()
    streamed = StreamedAnswer()
    streamed.feed(raw + f"data: {json.dumps(usage)}\n\n".encode())
    assert streamed.message() == {"role": "assistant", "content": "mine"}
