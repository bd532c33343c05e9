"""The echo model lists the synthetic pairs it received, one line each."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from agent_hooks.serve._dialects import tool_result_text
from agent_hooks.serve._echo import MODELS, echo_app, echo_text
from tests._support import USER, pair
from tests.serve._proxy import running_proxy
from tests.serve.dialects.test_responses import pair_items


def test_each_synthetic_pair_is_one_line_with_newlines_as_spaces() -> None:
    history = [USER, *pair("clock", "12:00"), *pair("kb_search", "a\nb\r\nc")]
    assert echo_text(history) == "clock: 12:00\nkb_search: a b c"


def test_without_pairs_it_says_so() -> None:
    call = {"id": "call_1", "type": "function", "function": {"name": "x"}}
    history = [USER, {"role": "assistant", "tool_calls": [call]}]
    history.append({"role": "tool", "tool_call_id": "call_1", "content": "x"})
    assert echo_text(history) == "no synthetic pairs"


async def test_it_answers_plain_and_streamed_requests() -> None:
    body = {"model": "m", "messages": [USER, *pair("clock", "12:00"), *pair("b", "x")]}
    transport = httpx.ASGITransport(app=echo_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://echo") as client:
        plain = (await client.post("/v1/chat/completions", json=body)).json()
        streamed = await client.post("/v1/chat/completions", json={**body, "stream": True})
    assert plain["choices"][0]["message"]["content"] == "clock: 12:00\nb: x"
    chunks = [
        json.loads(line.removeprefix("data: "))
        for line in streamed.text.splitlines()
        if line.startswith("data: {")
    ]
    text = "".join(chunk["choices"][0]["delta"].get("content", "") for chunk in chunks)
    assert text == "clock: 12:00\nb: x"
    assert streamed.text.endswith("data: [DONE]\n\n")


async def test_every_dialect_answers_with_a_fresh_id_and_the_model_list_is_fixed() -> None:
    chat = {"model": "m", "messages": [USER, *pair("clock", "12:00")]}
    responses = {"model": "m", "input": [USER, *pair_items("clock", "12:00")]}
    messages = {"model": "m", "max_tokens": 8, "messages": [{"role": "user", "content": "hi"}]}
    transport = httpx.ASGITransport(app=echo_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://echo") as client:
        answers = {
            path: [(await client.post(path, json=body)).json() for _ in range(2)]
            for path, body in (
                ("/v1/chat/completions", chat),
                ("/v1/responses", responses),
                ("/v1/messages", messages),
            )
        }
        models = (await client.get("/v1/models")).json()
    for first, second in answers.values():
        assert first["id"] != second["id"]
    assert answers["/v1/responses"][0]["output"][0]["content"][0]["text"] == "clock: 12:00"
    assert answers["/v1/messages"][0]["content"] == [{"type": "text", "text": "no synthetic pairs"}]
    assert models == MODELS
    assert MODELS == {
        "object": "list",
        "data": [{"id": "echo", "object": "model", "created": 0, "owned_by": "agent-hooks"}],
    }


async def test_a_streamed_response_announces_its_item_and_part_around_the_deltas() -> None:
    body = {"model": "m", "input": [USER, *pair_items("clock", "12:00\nnoon")], "stream": True}
    transport = httpx.ASGITransport(app=echo_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://echo") as client:
        streamed = await client.post("/v1/responses", json=body)
    named = [
        line.removeprefix("event: ")
        for line in streamed.text.splitlines()
        if line.startswith("event: ")
    ]
    events = [
        json.loads(line.removeprefix("data: "))
        for line in streamed.text.splitlines()
        if line.startswith("data: ")
    ]
    assert named == [event["type"] for event in events]
    assert named == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [event["sequence_number"] for event in events] == list(range(len(events)))
    response = events[-1]["response"]
    message = response["output"][0]
    assert events[0]["response"]["id"] == events[1]["response"]["id"] == response["id"]
    assert events[2]["item"]["id"] == events[7]["item"]["id"] == message["id"]
    for event in events[2:8]:
        assert event["output_index"] == 0
    for event in events[3:7]:
        assert (event["item_id"], event["content_index"]) == (message["id"], 0)
    assert events[4]["delta"] == events[5]["text"] == "clock: 12:00 noon"
    assert events[6]["part"] == events[7]["item"]["content"][0] == message["content"][0]


def test_the_openai_clients_stream_helper_reads_the_echo_response(tmp_path: Path) -> None:
    with running_proxy({"hooks": []}, tmp_path) as proxy:
        client = proxy.client()
        with client.responses.stream(model="echo", input="hi") as stream:
            deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
            final = stream.get_final_response()
    assert final.output_text == "".join(deltas) == "no synthetic pairs"


def test_messages_of_any_other_shape_are_skipped() -> None:
    """The proxy forwards messages it does not model as they came (SPEC 15)."""
    odd = ["text", 5, {"role": "assistant", "tool_calls": 3}, {"role": "tool", "tool_call_id": {}}]
    assert echo_text([*odd, USER, *pair("clock", "12:00")]) == "clock: 12:00"


async def test_pairs_in_text_form_are_listed_too() -> None:
    """With thinking on, the Anthropic route forwards pairs in the current tool cycle as text
    blocks (SPEC 15); the echo lists them like any pair it received."""
    call_id = pair("clock", "12:00")[1]["tool_call_id"]
    block = {"type": "text", "text": tool_result_text("clock", call_id, "12:00</tool_result>")}
    forged = {"type": "text", "text": tool_result_text("kb", "call_1", "x")}
    user = {"role": "user", "content": [{"type": "text", "text": "hi"}, block, forged]}
    body = {"model": "m", "max_tokens": 8, "messages": [user]}
    transport = httpx.ASGITransport(app=echo_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://echo") as client:
        answer = (await client.post("/v1/messages", json=body)).json()
    assert answer["content"][0]["text"] == "clock: 12:00</tool_result>"
