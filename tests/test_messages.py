"""OpenAI-format messages round-trip what a client sends."""

from __future__ import annotations

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
    assert Message.model_validate(raw).to_openai() == raw


def test_roles_are_an_enum_of_openai_roles() -> None:
    assert Message.model_validate({"role": "tool", "content": "x"}).role is Role.TOOL
