"""OpenAI-format messages round-trip what a client sends."""

from __future__ import annotations

import json
from typing import Any

import pytest

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
