"""The Responses API: ``input`` items to the history and back, and the answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks.serve._dialects import RESPONSES, InvalidRequest, RenderContext
from agent_hooks.testing import run_manifest
from tests._support import pair
from tests.serve.dialects.test_anthropic import MANIFEST

USER_ITEM = {"role": "user", "content": [{"type": "input_text", "text": "What now?"}]}
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x=="}
CALL = {
    "type": "function_call",
    "id": "fc_1",
    "call_id": "call_1",
    "name": "lookup",
    "arguments": '{"q": 1}',
    "status": "completed",
}
OUTPUT = {"type": "function_call_output", "call_id": "call_1", "output": "found"}
ASSISTANT_ITEM = {
    "type": "message",
    "id": "msg_1",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Hello", "annotations": []}],
}


def body(items: Any, **fields: Any) -> bytes:
    return json.dumps({"model": "gpt-x", "input": items, **fields}).encode()


def forwarded(raw: bytes, history: list[dict[str, Any]], **context: Any) -> dict[str, Any]:
    parsed = RESPONSES.parse(raw)
    result: dict[str, Any] = json.loads(parsed.render(history, RenderContext(**context)))
    return result


def pair_items(tool: str, content: str) -> list[dict[str, Any]]:
    call_id = pair(tool, content)[1]["tool_call_id"]
    return [
        {"type": "function_call", "call_id": call_id, "name": tool, "arguments": "{}"},
        {"type": "function_call_output", "call_id": call_id, "output": content},
    ]


def test_items_map_to_messages_and_other_items_are_not_in_the_history() -> None:
    system = {"role": "system", "content": "be brief"}
    parsed = RESPONSES.parse(body([system, USER_ITEM, REASONING, CALL, OUTPUT, ASSISTANT_ITEM]))
    assert parsed.history == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "What now?"}]},
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": 1}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "found"},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]},
    ]


def test_a_string_input_is_one_user_message_and_stays_a_string_without_pairs() -> None:
    raw = body("What now?", instructions="terse", store=False)
    parsed = RESPONSES.parse(raw)
    assert parsed.history == [{"role": "user", "content": "What now?"}]
    assert forwarded(raw, parsed.history) == json.loads(raw)


def test_with_pairs_a_string_input_becomes_the_user_message_then_the_pairs() -> None:
    raw = body("What now?", instructions="terse")
    user = {"role": "user", "content": "What now?"}
    sent = forwarded(raw, [user, *pair("clock", "12:00")])
    assert sent == {
        "model": "gpt-x",
        "input": [user, *pair_items("clock", "12:00")],
        "instructions": "terse",
    }


def test_a_pair_has_no_id_and_no_status() -> None:
    raw = body([USER_ITEM])
    parsed = RESPONSES.parse(raw)
    sent = forwarded(raw, [*parsed.history, *pair("clock", "12:00")])
    call, output = sent["input"][1:]
    assert set(call) == {"type", "call_id", "name", "arguments"}
    assert set(output) == {"type", "call_id", "output"}
    assert call["call_id"] == output["call_id"]


async def test_the_hooks_first_time_pair_goes_after_the_first_user_item_before_reasoning() -> None:
    items = [USER_ITEM, REASONING, CALL, OUTPUT]
    raw = body(items, tools=[{"type": "function", "name": "lookup"}])
    parsed = RESPONSES.parse(raw)
    manifest = {"hooks": [{"kind": "tool_call", "event": "on_request_start", "tool_name": "clock"}]}
    run = await run_manifest(manifest, parsed.history, tools={"clock": "12:00"})
    history = [message.to_openai() for message in run.messages]
    sent = forwarded(raw, history)
    new = sent["input"][1:3]
    assert sent["input"] == [USER_ITEM, *new, REASONING, CALL, OUTPUT]
    assert new[0]["call_id"] == run.records[0].call_id == new[1]["call_id"]
    assert (new[0]["name"], new[1]["output"]) == ("clock", "12:00")
    assert sent["tools"] == [{"type": "function", "name": "lookup"}]


async def test_roles_items_and_fields_it_does_not_know_stay_in_place_untouched() -> None:
    """SPEC 15: an item of an unknown type, a message of an unknown role or content, and fields
    the proxy does not know pass through in place, unread; the pairs go where SPEC 4 says."""
    unknown = [
        {"type": "message", "role": "critic", "content": "too long"},
        {"role": "user", "content": 3},
        {"type": "compaction", "encrypted_content": "x==", "vendor": [1]},
        "text",
    ]
    user = {**USER_ITEM, "vendor": {"b": 1, "a": 2}}
    items = [unknown[0], user, *unknown[1:], ASSISTANT_ITEM]
    raw = body(items)
    parsed = RESPONSES.parse(raw)
    assert list(parsed.outline.item_of) == [1, 5]
    run = await run_manifest(MANIFEST, parsed.history, tools={"clock": "12:00", "news": "none"})
    sent = forwarded(raw, [message.to_openai() for message in run.messages])["input"]
    clock, news = sent[2:4], sent[-2:]
    assert [item["name"] for item in (clock[0], news[0])] == ["clock", "news"]
    assert sent == [unknown[0], user, *clock, *unknown[1:], ASSISTANT_ITEM, *news]
    assert [json.dumps(item) for item in sent if item not in (*clock, *news)] == [
        json.dumps(item) for item in items
    ]


def test_held_context_forwards_only_what_this_turn_changed() -> None:
    stored, replaced = pair("kb", "old"), pair("clock", "12:00")
    first, appended = pair("new", "1"), pair("kb", "changed")
    raw = body([USER_ITEM], previous_response_id="resp_1")
    user = RESPONSES.parse(raw).history[0]
    # The hooks saw the stored pairs first, replaced one of them, added one after the user
    # message (first time) and appended one (changed content).
    history = [*stored, *replaced, user, *first, *appended]
    unsent = frozenset({stored[1]["tool_call_id"], replaced[1]["tool_call_id"]})
    sent = forwarded(raw, history, unsent=unsent)
    assert sent["input"] == [
        *pair_items("new", "1"),
        USER_ITEM,
        *pair_items("kb", "changed"),
    ]
    assert sent["previous_response_id"] == "resp_1"


@pytest.mark.parametrize("raw", [b"[]", b'{"input": 3}', b'{"input": {"role": "user"}}'])
def test_bodies_that_are_not_responses_requests_are_refused(raw: bytes) -> None:
    with pytest.raises(InvalidRequest):
        RESPONSES.parse(raw)


def test_the_conversation_parameter_and_previous_response_mark_held_context() -> None:
    assert not RESPONSES.parse(body([USER_ITEM])).held
    assert RESPONSES.parse(body([USER_ITEM], conversation={"id": "conv_1"})).named_conversation == (
        "conv_1"
    )
    assert RESPONSES.parse(body([USER_ITEM], conversation="conv_2")).held


RESPONSE = {
    "id": "resp_9",
    "object": "response",
    "output": [
        REASONING,
        ASSISTANT_ITEM,
        {
            **ASSISTANT_ITEM,
            "content": [
                {"type": "output_text", "text": " world"},
                {"type": "refusal", "refusal": "no"},
            ],
        },
    ],
}


def test_the_answer_is_the_text_of_the_message_items() -> None:
    answer = RESPONSES.answer_from_json(json.dumps(RESPONSE).encode())
    assert answer.message == {"role": "assistant", "content": "Hello world"}
    assert answer.response_id == "resp_9"


def test_an_answer_with_a_function_call_is_not_final() -> None:
    response = {**RESPONSE, "output": [ASSISTANT_ITEM, CALL]}
    answer = RESPONSES.answer_from_json(json.dumps(response).encode())
    assert (answer.message, answer.response_id) == (None, "resp_9")


def events(*payloads: dict[str, Any]) -> bytes:
    return b"".join(f"event: {p['type']}\ndata: {json.dumps(p)}\n\n".encode() for p in payloads)


def test_a_stream_names_its_response_early_and_answers_from_response_completed() -> None:
    created = {"type": "response.created", "response": {**RESPONSE, "output": []}}
    delta = {"type": "response.output_text.delta", "delta": "Hel", "item_id": "msg_1"}
    completed = {"type": "response.completed", "response": RESPONSE}
    raw = events(created, delta, completed)
    for size in (1, 9, len(raw)):
        reader = RESPONSES.reader()
        named_at = None
        for at in range(0, len(raw), size):
            reader.feed(raw[at : at + size])
            if named_at is None and reader.response_id is not None:
                named_at = at
        assert named_at is not None
        assert named_at < len(events(created))
        assert reader.answer().message == {"role": "assistant", "content": "Hello world"}


def test_a_stream_without_response_completed_has_no_answer() -> None:
    reader = RESPONSES.reader()
    reader.feed(events({"type": "response.created", "response": {"id": "resp_1"}}))
    assert reader.answer().message is None


_OPAQUE = st.sampled_from(
    [
        REASONING,
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "input_file", "file_id": "f"},
        {"type": "item_reference", "id": "msg_0"},
    ]
)
_READABLE = st.sampled_from(
    [USER_ITEM, ASSISTANT_ITEM, CALL, OUTPUT, {"role": "developer", "content": "x", "z": [1]}]
)


@given(
    items=st.lists(st.one_of(_OPAQUE, _READABLE), min_size=1, max_size=12),
    at=st.integers(min_value=0),
)
def test_items_the_hooks_did_not_touch_come_out_equal_and_in_order(
    items: list[dict[str, Any]], at: int
) -> None:
    raw = body(items, temperature=0.5)
    parsed = RESPONSES.parse(raw)
    position = at % (len(parsed.history) + 1)
    history = [*parsed.history[:position], *pair("t", "c"), *parsed.history[position:]]
    sent = forwarded(raw, history)
    new = pair_items("t", "c")
    untouched = [item for item in sent["input"] if item not in new]
    assert [json.dumps(item) for item in untouched] == [json.dumps(item) for item in items]
    assert [item for item in sent["input"] if item in new] == new
    assert {k: v for k, v in sent.items() if k != "input"} == {"model": "gpt-x", "temperature": 0.5}
    assert list(sent) == ["model", "input", "temperature"]
