"""The hook context (SPEC section 10) built from real OpenAI-format histories."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_hooks.config.diagnostics._template_checks import (
    COMPLETION_CONTEXT,
    REQUEST_START_CONTEXT,
)
from agent_hooks.config.hooks import HookEvent
from agent_hooks.injection._context import hook_context
from agent_hooks.injection._templates import condition_holds, render_arguments
from agent_hooks.messages import Message, Role
from tests._support.strategies import JSON_SCALARS

SYSTEM = {"role": "system", "content": "You are helpful."}
SYNTHETIC_PAIR = [
    {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "ah_0a1b2c3d_6a7b8c",
                "type": "function",
                "function": {"name": "memory_server_get_memories", "arguments": '{"user_id": 7}'},
            }
        ],
    },
    {
        "role": "tool",
        "tool_call_id": "ah_0a1b2c3d_6a7b8c",
        "content": "likes tea",
    },
]


def context(
    history: list[dict[str, Any]],
    event: HookEvent = HookEvent.ON_REQUEST_START,
    **options: Any,
) -> dict[str, Any]:
    messages = [Message.model_validate(message) for message in history]
    options.setdefault("request", None)
    options.setdefault("completion", None)
    return hook_context(event, messages, **options)


def test_every_message_has_the_four_keys_with_null_for_what_was_not_sent() -> None:
    built = context([SYSTEM, {"role": "user", "content": "hi", "name": "ann", "x-vendor": 1}])
    assert built["messages"] == [
        {"role": "system", "content": "You are helpful.", "tool_calls": None, "tool_call_id": None},
        {"role": "user", "content": "hi", "tool_calls": None, "tool_call_id": None},
    ]


def test_multimodal_text_parts_are_joined_with_newlines_and_images_left_out() -> None:
    user = {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is in this picture?"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            {"type": "text", "text": "Be brief."},
        ],
    }
    built = context([SYSTEM, user])
    assert built["last_user_message"]["content"] == "What is in this picture?\nBe brief."
    assert render_arguments({"q": "${last_user_message.content}"}, built) == {
        "q": "What is in this picture?\nBe brief."
    }


def test_a_history_without_a_user_message_has_a_null_last_user_message() -> None:
    built = context([SYSTEM])
    assert built["last_user_message"] is None
    assert condition_holds("last_user_message != null", built) is False


def test_a_synthetic_pair_at_the_end_is_not_the_last_assistant_message() -> None:
    answer = {"role": "assistant", "content": "Tea it is."}
    built = context([SYSTEM, {"role": "user", "content": "tea?"}, answer, *SYNTHETIC_PAIR])
    assert built["last_assistant_message"] == {
        "role": "assistant",
        "content": "Tea it is.",
        "tool_calls": None,
        "tool_call_id": None,
    }
    only_pairs = context([SYSTEM, {"role": "user", "content": "tea?"}, *SYNTHETIC_PAIR])
    assert only_pairs["last_assistant_message"] is None


def test_tool_call_arguments_are_parsed_and_anything_but_a_json_object_becomes_empty() -> None:
    def call(arguments: str) -> dict[str, Any]:
        return {
            "id": f"call_{len(arguments)}",
            "type": "function",
            "function": {"name": "lookup", "arguments": arguments},
        }

    assistant = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            call('{"city": "Oslo"}'),
            call("{city: Oslo"),
            call("[1, 2]"),
            call('"text"'),
            call('{"n": NaN}'),
            call(""),
        ],
    }
    built = context([{"role": "user", "content": "weather?"}, assistant])
    parsed = [entry["function"]["arguments"] for entry in built["messages"][1]["tool_calls"]]
    assert parsed == [{"city": "Oslo"}, {}, {}, {}, {}, {}]
    assert built["messages"][1]["tool_calls"][0] == {
        "id": "call_16",
        "type": "function",
        "function": {"name": "lookup", "arguments": {"city": "Oslo"}},
    }


def test_the_last_user_message_is_the_latest_one() -> None:
    built = context(
        [
            {"role": "user", "content": "first"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "second"},
            *SYNTHETIC_PAIR,
        ]
    )
    assert built["last_user_message"]["content"] == "second"
    assert built["messages"][-1]["tool_call_id"] == "ah_0a1b2c3d_6a7b8c"


def test_request_start_context_has_exactly_its_names_and_an_empty_request_by_default() -> None:
    built = context([SYSTEM])
    assert tuple(built) == REQUEST_START_CONTEXT
    assert built["event"] == "on_request_start"
    assert built["request"] == {}


def test_completion_context_adds_the_counts_zero_when_the_host_did_not_say() -> None:
    built = context([SYSTEM], HookEvent.ON_COMPLETION, request={"user_id": "u7"})
    assert tuple(built) == COMPLETION_CONTEXT
    assert (built["iteration_count"], built["total_tool_calls"]) == (0, 0)
    assert built["request"] == {"user_id": "u7"}
    given = context(
        [SYSTEM], HookEvent.ON_COMPLETION, completion={"iteration_count": 3, "total_tool_calls": 5}
    )
    assert (given["iteration_count"], given["total_tool_calls"]) == (3, 5)


def test_the_context_is_plain_json_data() -> None:
    built = context([SYSTEM, {"role": "user", "content": "hi"}, *SYNTHETIC_PAIR])
    assert type(built["event"]) is str
    assert all(type(entry["role"]) is str for entry in built["messages"])


def test_the_app_clock_is_json_e_now_and_from_now_counts_from_it() -> None:
    context = hook_context(
        HookEvent.ON_REQUEST_START, [], request=None, completion=None, now=1_700_000_000
    )
    assert render_arguments({"at": "${now}", "later": {"$fromNow": "1 hour"}}, context) == {
        "at": "2023-11-14T22:13:20.000Z",
        "later": "2023-11-14T23:13:20.000Z",
    }


def _optional(key: str, values: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``{key: value}`` or ``{}``: a field sent or left out."""
    return st.just({}) | values.map(lambda value: {key: value})


_TEXT = st.text(max_size=6)
_PARTS = st.lists(
    st.fixed_dictionaries({"type": st.sampled_from(["text", "image_url", 3])}).flatmap(
        lambda part: _optional("text", _TEXT | JSON_SCALARS).map(lambda t: {**part, **t})
    )
    | JSON_SCALARS,
    max_size=3,
)
_ARGUMENTS = st.sampled_from(["{}", '{"city": "Oslo"}', "[1]", '"x"', '{"n": NaN}', "{", ""])
_FUNCTIONS = st.none() | st.builds(
    lambda name, arguments: {"name": name, **arguments}, _TEXT, _optional("arguments", _ARGUMENTS)
)
_CALLS = st.builds(
    lambda call_id, kind, function: {"id": call_id, **kind, **function},
    _TEXT,
    _optional("type", st.sampled_from(["function", "custom"])),
    _optional("function", _FUNCTIONS),
)
_MESSAGES = st.builds(
    lambda role, *fields: {"role": role, **{k: v for field in fields for k, v in field.items()}},
    st.sampled_from([role.value for role in Role]),
    _optional("content", st.none() | _TEXT | _PARTS),
    _optional("name", _TEXT),
    _optional("tool_calls", st.none() | st.lists(_CALLS, max_size=2)),
    _optional("tool_call_id", st.none() | _TEXT),
    _optional("x_vendor", JSON_SCALARS),
)


@settings(max_examples=300)
@given(history=st.lists(_MESSAGES, max_size=6), completion=st.booleans())
@pytest.mark.parametrize("event", list(HookEvent))
def test_the_context_of_the_dicts_a_history_validates_from_is_the_context_of_its_models(
    event: HookEvent, history: list[dict[str, Any]], completion: bool
) -> None:
    """The proxy builds the context from its parsed dicts, a host from models (SPEC 16: a model
    per message of a long history would pass 8x its body): hooks see the same either way."""
    options: dict[str, Any] = {
        "request": {"model": "m"},
        "completion": {"iteration_count": 2} if completion else None,
        "now": 0.0,
    }
    from_dicts = hook_context(event, history, **options)
    assert from_dicts == context(history, event, **options)
    assert _kinds(from_dicts) == _kinds(context(history, event, **options))


def _kinds(value: Any) -> Any:
    """``value`` with every scalar replaced by its type: ``==`` alone takes ``1 == 1.0 == True``."""
    if isinstance(value, dict):
        return {key: _kinds(child) for key, child in value.items()}
    if isinstance(value, list):
        return [_kinds(child) for child in value]
    return type(value)
