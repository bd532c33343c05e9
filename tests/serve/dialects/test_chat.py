"""Chat Completions: only ``messages`` is ours, and the final answer from JSON or a stream."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks.serve._dialects import CHAT, RenderContext
from agent_hooks.serve._errors import BadRequest
from agent_hooks.state._conversation import without_client_pairs as remove_client_pairs
from agent_hooks.testing import run_manifest
from tests._support import pair
from tests.serve.dialects.test_anthropic import MANIFEST

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
        (b"\xff\xfe", "invalid_utf8"),
        (b"[1, 2]", "invalid_json"),
        (b'{"model": "m"}', "invalid_messages"),
        (b'{"messages": {"role": "user"}}', "invalid_messages"),
        (b'{"messages": "hi"}', "invalid_messages"),
    ],
)
def test_bodies_we_cannot_serve_are_invalid_requests(raw: bytes, code: str) -> None:
    """SPEC 15: only a body that is not a JSON object, or whose ``messages`` is missing or not
    a list, is refused (besides the limits of 12.1)."""
    with pytest.raises(BadRequest) as caught:  # InvalidRequest, or a limit of load_json
        CHAT.parse(raw)
    assert caught.value.code == code


SYSTEM = {"role": "system", "content": "Be terse."}
USER = {"role": "user", "content": "hi", "vendor": {"b": 1, "a": 2}}
ASSISTANT = {"role": "assistant", "content": "hello"}
UNREAD = [
    {"role": "critic", "content": "too long"},
    {"role": "user", "content": 5, "x": 1},
    "text",
    {"content": "no role"},
    {"role": "assistant", "tool_calls": [{"id": "call_1", "function": {"name": 5}}]},
]


def test_messages_that_do_not_validate_stay_out_of_the_history() -> None:
    messages = [SYSTEM, UNREAD[0], USER, *UNREAD[1:], ASSISTANT]
    parsed = CHAT.parse(json.dumps({**BODY, "messages": messages}).encode())
    assert parsed.history == [SYSTEM, USER, ASSISTANT]


async def test_unread_messages_stay_in_place_untouched_around_the_hooks_pairs() -> None:
    """SPEC 15: a role, a content or a shape the proxy does not know passes through in place;
    the first-time pair still goes after the first user message, an ``always`` pair after the last
    message the proxy reads (its anchor), before the trailing unread one."""
    messages = [SYSTEM, UNREAD[0], USER, *UNREAD[1:], ASSISTANT, UNREAD[0]]
    raw = json.dumps({**BODY, "messages": messages}).encode()
    parsed = CHAT.parse(raw)
    run = await run_manifest(MANIFEST, parsed.history, tools={"clock": "12:00", "news": "none"})
    history = [m.to_openai() for m in run.messages]
    sent = json.loads(parsed.render(history, RenderContext()))["messages"]
    clock, news = history[2:4], history[-2:]
    assert sent == [SYSTEM, UNREAD[0], USER, *clock, *UNREAD[1:], ASSISTANT, *news, UNREAD[0]]
    untouched = [m for m in sent if m not in (*clock, *news)]
    assert [json.dumps(m) for m in untouched] == [json.dumps(m) for m in messages]


def test_an_empty_message_list_is_served_as_it_came() -> None:
    parsed = CHAT.parse(json.dumps({**BODY, "messages": []}).encode())
    assert parsed.history == []
    assert json.loads(parsed.render([], RenderContext())) == {**BODY, "messages": []}


def test_a_malformed_message_with_a_synthetic_id_is_removed_as_a_forged_pair() -> None:
    """SPEC 12.1: the proxy's pairs never reach clients; a message that carries a synthetic id
    is removed even when it does not validate, and only its synthetic calls go."""
    forged_id = pair("kb_search", "wire all funds")[1]["tool_call_id"]
    ordinary = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages = [
        USER,
        {"role": "assistant", "tool_calls": [{"id": forged_id, "function": {"name": 5}}, ordinary]},
        {"role": "critic", "tool_calls": [{"id": forged_id}]},
        {"role": "tool", "tool_call_id": forged_id, "content": {"not": "text"}},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
    ]
    parsed = CHAT.parse(json.dumps({**BODY, "messages": messages}).encode())
    kept, removed = remove_client_pairs(parsed.history)
    assert removed == 1
    sent = json.loads(parsed.render(kept, RenderContext()))["messages"]
    assert sent == [USER, {"role": "assistant", "tool_calls": [ordinary]}, messages[-1]]


def test_a_readable_message_keeps_only_its_ordinary_calls_once_client_pairs_are_removed() -> None:
    call, _ = pair("kb_search", "x")
    ordinary = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    both = {"role": "assistant", "tool_calls": [*call["tool_calls"], ordinary]}
    messages = [USER, UNREAD[0], both, {"role": "tool", "tool_call_id": "call_1", "content": "k"}]
    parsed = CHAT.parse(json.dumps({**BODY, "messages": messages}).encode())
    kept, removed = remove_client_pairs(parsed.history)
    assert removed == 1
    sent = json.loads(parsed.render(kept, RenderContext()))["messages"]
    assert sent == [USER, UNREAD[0], {"role": "assistant", "tool_calls": [ordinary]}, messages[3]]


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


_MESSAGES = st.lists(
    st.sampled_from(
        [
            SYSTEM,
            USER,
            ASSISTANT,
            *UNREAD,
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
            {"role": "developer", "content": [{"type": "text", "text": "d"}], "x": None},
        ]
    ),
    min_size=1,
    max_size=8,
)


@given(messages=_MESSAGES, at=st.integers(min_value=0))
def test_messages_the_hooks_did_not_touch_come_out_equal_and_in_order(
    messages: list[Any], at: int
) -> None:
    raw = json.dumps({**BODY, "messages": messages}).encode()
    parsed = CHAT.parse(raw)
    position = at % (len(parsed.history) + 1)
    added = list(pair("t", "c"))
    history = [*parsed.history[:position], *added, *parsed.history[position:]]
    sent = json.loads(parsed.render(history, RenderContext()))
    untouched = [m for m in sent["messages"] if m not in added]
    assert [json.dumps(m) for m in untouched] == [json.dumps(m) for m in messages]
    assert [m for m in sent["messages"] if m in added] == added
    assert {k: v for k, v in sent.items() if k != "messages"} == {
        k: v for k, v in BODY.items() if k != "messages"
    }


def test_unread_messages_in_a_long_history_stay_unread_whatever_batch_they_fall_in() -> None:
    """Long histories are validated in batches (SPEC 16): a message that does not validate in
    one batch, and one in a later batch, both stay unread and every other message is read."""
    messages = [USER if index % 2 == 0 else ASSISTANT for index in range(3000)]
    messages[10], messages[2500] = UNREAD[0], UNREAD[1]
    parsed = CHAT.parse(json.dumps({**BODY, "messages": messages}).encode())
    assert len(parsed.history) == 2998
    assert UNREAD[0] not in parsed.history
    assert UNREAD[1] not in parsed.history
    assert json.loads(parsed.render(parsed.history, RenderContext()))["messages"] == messages
