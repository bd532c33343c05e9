"""OpenAI-format messages round-trip what a client sends."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks.messages import Message, Role

SAMPLES: list[dict[str, Any]] = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:,"}}]},
    {"role": "user", "content": "hi", "name": "ann", "x_trace": {"id": 7}},
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_1",
                "type": "function",
                "function": {"name": "search", "arguments": '{"q": "x"}'},
                "index": 0,
            }
        ],
        "refusal": None,
    },
    {"role": "tool", "tool_call_id": "call_1", "content": "found"},
    {"role": "developer", "content": "rules"},
]


@pytest.mark.parametrize("raw", SAMPLES)
def test_messages_round_trip_exactly(raw: dict[str, Any]) -> None:
    message = Message.model_validate(raw)
    assert message.to_openai() == raw
    assert message.model_dump(mode="json") == raw
    assert json.loads(message.model_dump_json()) == raw


def test_plain_model_dump_adds_no_nulls_or_defaults() -> None:
    assert Message.model_validate({"role": "user", "content": "hi"}).model_dump() == {
        "role": Role.USER,
        "content": "hi",
    }


def test_custom_tool_calls_are_kept_as_sent() -> None:
    raw = {
        "role": "assistant",
        "tool_calls": [{"id": "c1", "type": "custom", "custom": {"name": "grep", "input": "x"}}],
    }
    assert Message.model_validate(raw).to_openai() == raw


def test_roles_are_an_enum_of_openai_roles() -> None:
    assert Message.model_validate({"role": "tool", "content": "x"}).role is Role.TOOL


def test_keys_come_out_in_the_order_they_came_in() -> None:
    raw = {
        "x_vendor": 1,
        "content": "hi",
        "name": "ann",
        "role": "user",
    }
    message = Message.model_validate(raw)
    assert list(message.to_openai()) == list(raw)
    assert list(json.loads(message.model_dump_json())) == list(raw)


def test_nested_tool_calls_keep_their_key_order() -> None:
    raw = {
        "tool_calls": [
            {"function": {"arguments": "{}", "name": "search"}, "index": 0, "id": "c1"},
        ],
        "role": "assistant",
    }
    dumped = Message.model_validate(raw).to_openai()
    assert json.dumps(dumped) == json.dumps(raw)


def test_fields_set_by_a_copy_come_after_the_sent_ones() -> None:
    message = Message.model_validate({"content": "x", "role": "tool"})
    copied = message.model_copy(update={"tool_call_id": "c1"})
    assert list(copied.to_openai()) == ["content", "role", "tool_call_id"]


def test_key_order_does_not_change_equality() -> None:
    one = Message.model_validate({"role": "user", "content": "hi", "x": 1})
    other = Message.model_validate({"x": 1, "content": "hi", "role": "user"})
    assert one == other
    assert hash(one) == hash(other)


_JSON_SCALARS = st.none() | st.booleans() | st.integers() | st.text(max_size=5)
_KNOWN = {
    "role": st.sampled_from([role.value for role in Role]),
    "content": st.none() | st.text(max_size=5),
    "name": st.text(max_size=5),
    "tool_call_id": st.text(max_size=5),
}


@st.composite
def _raw_messages(draw: st.DrawFn) -> dict[str, Any]:
    known = {key: draw(strategy) for key, strategy in _KNOWN.items() if draw(st.booleans())}
    known["role"] = draw(_KNOWN["role"])
    extra_keys = st.text(min_size=1, max_size=6).filter(lambda key: key not in Message.model_fields)
    extra = draw(st.dictionaries(extra_keys, _JSON_SCALARS, max_size=3))
    items = list({**known, **extra}.items())
    return dict(draw(st.permutations(items)))


@given(_raw_messages())
def test_any_untouched_message_dumps_exactly_as_it_came_in(raw: dict[str, Any]) -> None:
    message = Message.model_validate(raw)
    assert json.dumps(message.to_openai()) == json.dumps(raw)
    assert json.loads(message.model_dump_json()) == raw


SRC = Path(__file__).resolve().parents[1] / "src"


def test_no_module_writes_pydantic_s_private_attributes_or_matches_its_function_names() -> None:
    """SPEC 16: models are built through pydantic's public API (``model_construct`` or
    validation), and schemas are never edited by matching a function's name."""
    private = (
        "__pydantic_fields_set__",
        "__pydantic_extra__",
        "__pydantic_private__",
        '_remember_sent_order"',
    )
    found = [
        f"{path.relative_to(SRC)}: {name}"
        for path in sorted(SRC.rglob("*.py"))
        for name in private
        if name in path.read_text()
    ]
    assert found == []
