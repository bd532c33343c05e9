"""The dialects write bodies in pieces (SPEC 16), byte for byte as one
``json.dumps`` would: the upstream sees the same bytes either way (SPEC 15)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agent_hooks.serve._dialects._base import dump_body
from agent_hooks.serve._json_body import load_json
from tests._support.strategies import JSON_SCALARS

_VALUES = st.recursive(
    JSON_SCALARS, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20
)


@given(st.dictionaries(st.text(), _VALUES | st.lists(_VALUES, max_size=300)))
def test_a_body_is_written_as_json_dumps_writes_it(body: dict[str, Any]) -> None:
    assert dump_body(body) == json.dumps(body, ensure_ascii=False).encode()


def test_a_long_history_with_one_emoji_is_written_as_json_dumps_writes_it() -> None:
    messages = [{"role": "user", "content": f"{index} é 中"} for index in range(1000)]
    messages[500]["content"] += " 😀"
    body = {"model": "m", "messages": messages, "stream": True}
    assert dump_body(body) == json.dumps(body, ensure_ascii=False).encode()


def test_a_body_with_long_strings_is_written_as_json_dumps_writes_it() -> None:
    """Long strings are written in slices, the messages holding them a field at a time."""
    long = "x" * 70_000 + "😀"
    messages = [{"role": "user", "content": f"{index} é"} for index in range(200)]
    messages[100] = {"role": "user", "content": [{"type": "text", "text": long}]}
    body = {"model": "m", "messages": messages, "instructions": long, "stream": True}
    raw = json.dumps(body, ensure_ascii=False).encode()
    parsed = load_json(raw)
    assert parsed.long_strings
    assert dump_body(parsed.value, long_strings=parsed.long_strings) == raw
