"""Chat Completions: only ``messages`` is ours, and the final answer from JSON or a stream."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_hooks.serve._dialects import CHAT, RenderContext
from agent_hooks.serve._errors import BadRequest

BODY = {
    "model": "gpt-x",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "f"}}],
    "temperature": 0.2,
    "vendor_field": {"keep": True},
}


def test_every_field_but_messages_is_forwarded_as_it_came() -> None:
    chat = CHAT.parse(json.dumps(BODY).encode())
    new = [{"role": "user", "content": "changed"}]
    forwarded = json.loads(chat.render(new, RenderContext()))
    assert forwarded == {**BODY, "messages": new}
    assert list(forwarded) == list(BODY)


def test_dial_deployment_becomes_the_model_only_when_there_is_none() -> None:
    without = {key: value for key, value in BODY.items() if key != "model"}
    assert CHAT.parse(json.dumps(without).encode(), deployment="d1").model == "d1"
    assert CHAT.parse(json.dumps(BODY).encode(), deployment="d1").model == "gpt-x"
    null_model = {**BODY, "model": None}
    assert CHAT.parse(json.dumps(null_model).encode(), deployment="d1").model == "d1"


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        (b"{not json", "invalid_json"),
        (b"\xff\xfe", "invalid_json"),
        (b"[1, 2]", "invalid_json"),
        (b'{"model": "m"}', "invalid_messages"),
        (b'{"messages": []}', "invalid_messages"),
        (b'{"messages": [{"content": "no role"}]}', "invalid_messages"),
        (b'{"messages": ["text"]}', "invalid_messages"),
    ],
)
def test_bodies_we_cannot_serve_are_invalid_requests(raw: bytes, code: str) -> None:
    with pytest.raises(BadRequest) as caught:  # InvalidRequest, or a limit of load_json
        CHAT.parse(raw)
    assert caught.value.code == code


def events(*deltas: dict[str, Any], finish: str = "stop") -> bytes:
    chunks = [{"choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks]
    return ("".join(lines) + "data: [DONE]\n\n").encode()


def test_a_plain_answer_is_its_first_choice_message() -> None:
    message = {"role": "assistant", "content": "hi", "refusal": None}
    raw = json.dumps({"choices": [{"index": 0, "message": message}]}).encode()
    assert CHAT.answer_from_json(raw).message == message


def test_a_tool_call_answer_is_not_final() -> None:
    message = {"role": "assistant", "tool_calls": [{"id": "c", "type": "function"}]}
    raw = json.dumps({"choices": [{"message": message}]}).encode()
    assert CHAT.answer_from_json(raw).message is None
    assert CHAT.answer_from_json(b"<html>").message is None


def test_a_stream_is_reassembled_whatever_the_chunk_boundaries() -> None:
    raw = events({"role": "assistant", "content": ""}, {"content": "Hel"}, {"content": "lo\n!"})
    for size in (1, 7, len(raw)):
        streamed = CHAT.reader()
        for start in range(0, len(raw), size):
            streamed.feed(raw[start : start + size])
        assert streamed.answer().message == {"role": "assistant", "content": "Hello\n!"}


def test_a_stream_is_done_once_its_end_went_by() -> None:
    raw = events({"role": "assistant", "content": "Hi"})
    streamed = CHAT.reader()
    streamed.feed(raw[: raw.index(b'"finish_reason": "stop"')])
    assert not streamed.done
    streamed.feed(raw[raw.index(b'"finish_reason": "stop"') :])
    assert streamed.done


def test_a_streamed_tool_call_is_not_final() -> None:
    streamed = CHAT.reader()
    streamed.feed(events({"tool_calls": [{"index": 0, "id": "c"}]}, finish="tool_calls"))
    assert streamed.answer().message is None


def test_other_choices_and_usage_chunks_are_ignored() -> None:
    second = {"choices": [{"index": 1, "delta": {"content": "other"}}]}
    usage = {"choices": [], "usage": {"total_tokens": 3}}
    raw = events({"content": "mine"}) + f"data: {json.dumps(second)}\n\n".encode()
    streamed = CHAT.reader()
    streamed.feed(raw + f"data: {json.dumps(usage)}\n\n".encode())
    assert streamed.answer().message == {"role": "assistant", "content": "mine"}
