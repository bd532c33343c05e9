"""OpenAI-format messages round-trip what a client sends."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from agent_hooks.messages import FunctionCall, Message, Role, ToolCall

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


_BUILT_CASES: list[tuple[type[BaseModel], dict[str, Any]]] = [
    (Message, {"role": Role.TOOL, "tool_call_id": "ah_1", "content": "found"}),
    (Message, {"content": "found", "role": Role.TOOL}),
    (Message, {"role": Role.ASSISTANT, "content": None, "tool_calls": []}),
    (Message, {"role": Role.USER, "content": [{"type": "text", "text": "hi"}], "name": "ann"}),
    (FunctionCall, {"name": "search", "arguments": '{"q": "x"}'}),
    (FunctionCall, {"name": "search"}),
    (ToolCall, {"id": "ah_2", "type": "function", "function": FunctionCall(name="f")}),
    (ToolCall, {"function": None, "id": "c1"}),
]


@pytest.mark.parametrize(("model", "fields"), _BUILT_CASES)
def test_a_built_model_is_the_validated_one(model: type[BaseModel], fields: dict[str, Any]) -> None:
    """``_built`` skips validation for the pairs we build; nothing else may tell them apart."""
    built = model._built(**fields)  # type: ignore[attr-defined]
    validated = model(**fields)
    assert built == validated
    assert _hash(built) == _hash(validated)
    assert list(built.__dict__.items()) == list(validated.__dict__.items())
    assert built.model_fields_set == validated.model_fields_set
    assert built.model_extra == validated.model_extra == {}
    assert repr(built) == repr(validated)
    assert built.model_dump_json() == validated.model_dump_json()
    assert json.dumps(built.model_dump(mode="json")) == json.dumps(validated.to_openai())
    copied, copied_too = (m.model_copy(update={"x_new": 1}) for m in (built, validated))
    assert copied.model_dump_json() == copied_too.model_dump_json()


def _hash(model: BaseModel) -> int | str:
    try:
        return hash(model)
    except TypeError as exc:  # a list field: neither kind hashes
        return str(exc)


def test_building_with_an_unknown_field_fails() -> None:
    with pytest.raises(TypeError, match="x_vendor"):
        Message._built(role=Role.USER, x_vendor=1)
