"""Reading request bodies: only ``messages`` matters to us, everything else passes through."""

from __future__ import annotations

import json

import pytest

from agent_hooks.serve._request import InvalidRequest, parse_chat_request

BODY = {
    "model": "gpt-x",
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "f"}}],
    "temperature": 0.2,
    "vendor_field": {"keep": True},
}


def test_every_field_but_messages_is_forwarded_as_it_came() -> None:
    chat = parse_chat_request(json.dumps(BODY).encode())
    new = [{"role": "user", "content": "changed"}]
    forwarded = json.loads(chat.with_messages(new))
    assert forwarded == {**BODY, "messages": new}
    assert list(forwarded) == list(BODY)


def test_dial_deployment_becomes_the_model_only_when_there_is_none() -> None:
    without = {key: value for key, value in BODY.items() if key != "model"}
    assert parse_chat_request(json.dumps(without).encode(), deployment="d1").model == "d1"
    assert parse_chat_request(json.dumps(BODY).encode(), deployment="d1").model == "gpt-x"
    null_model = {**BODY, "model": None}
    assert parse_chat_request(json.dumps(null_model).encode(), deployment="d1").model == "d1"


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
    with pytest.raises(InvalidRequest) as caught:
        parse_chat_request(raw)
    assert caught.value.code == code
