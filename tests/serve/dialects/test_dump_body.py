"""The dialects write bodies in pieces (SPEC 16), byte for byte as one ``pydantic_core.to_json``
would (JSON without spaces): the upstream sees the same bytes whatever the body's size (SPEC
15), and a client message written again is its bytes as httpx sent them."""

from __future__ import annotations

import json
from typing import Any

import httpx
from hypothesis import given
from hypothesis import strategies as st
from pydantic_core import to_json

from agent_hooks.serve._dialects._base import dump_body
from agent_hooks.serve._json_body import load_json
from tests._support.strategies import JSON_SCALARS

_VALUES = st.recursive(
    JSON_SCALARS, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20
)


@given(st.dictionaries(st.text(), _VALUES | st.lists(_VALUES, max_size=300)))
def test_a_body_is_written_as_to_json_writes_it(body: dict[str, Any]) -> None:
    assert dump_body(body) == to_json(body)
    assert json.loads(dump_body(body)) == body


def test_a_long_history_with_one_emoji_is_written_as_httpx_sends_it() -> None:
    """As the ``openai`` and ``anthropic`` clients send a body (httpx's ``json=``): a client
    message written again is byte for byte as it was sent."""
    messages = [{"role": "user", "content": f"{index} é 中\n\x01"} for index in range(1000)]
    messages[500]["content"] += " 😀"
    body = {"model": "m", "messages": messages, "stream": True, "temperature": 0.7, "n": 2**70}
    sent = httpx.Request("POST", "http://upstream", json=body).read()
    assert dump_body(body) == sent


def test_a_body_with_long_strings_is_written_as_to_json_writes_it() -> None:
    """Long strings are written in slices, the messages holding them a field at a time."""
    long = "x" * 70_000 + "😀"
    messages = [{"role": "user", "content": f"{index} é"} for index in range(200)]
    messages[100] = {"role": "user", "content": [{"type": "text", "text": long}]}
    body = {"model": "m", "messages": messages, "instructions": long, "stream": True}
    raw = to_json(body)
    parsed = load_json(raw)
    assert parsed.long_strings
    assert dump_body(parsed.value, long_strings=parsed.long_strings) == raw
