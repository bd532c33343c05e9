"""The proxy's message validator: exactly what ``Message.model_validate`` gives, in one call."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from agent_hooks.messages import Message
from agent_hooks.serve._dialects._base import RELAYED_MESSAGES

HISTORY: list[dict[str, Any]] = [
    {"content": "Be terse.", "role": "system", "x_vendor": {"b": 2, "a": 1}},
    {"role": "user", "content": [{"type": "text", "text": "Hi"}], "name": "ada"},
    {
        "tool_calls": [
            {
                "function": {"arguments": '{"q": 1}', "name": "lookup"},
                "type": "function",
                "id": "c1",
            },
            {"id": "c2", "type": "custom", "custom": {"name": "grep", "input": "x"}},
        ],
        "role": "assistant",
        "content": None,
        "refusal": None,
    },
    {"role": "tool", "tool_call_id": "c1", "content": "found"},
]


def test_the_models_equal_what_message_validation_gives() -> None:
    assert RELAYED_MESSAGES.validate_python(HISTORY) == [
        Message.model_validate(message) for message in HISTORY
    ]


def test_a_relayed_message_dumps_in_the_order_the_client_sent() -> None:
    """It is ``Message``'s own validation: a message the hooks rewrite keeps the client's order."""
    assistant = RELAYED_MESSAGES.validate_python(HISTORY)[2]
    assert list(assistant.to_openai()) == list(HISTORY[2])
    assert assistant.to_openai() == HISTORY[2]


@pytest.mark.parametrize(
    "bad",
    [
        {"role": "robot", "content": "hi"},
        {"role": "assistant", "tool_calls": [{"type": "function"}]},
        {"role": "assistant", "tool_calls": [{"id": "c", "function": {"arguments": "{}"}}]},
    ],
)
def test_errors_are_pydantic_s_with_the_same_locations(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError) as relayed:
        RELAYED_MESSAGES.validate_python([bad])
    with pytest.raises(ValidationError) as validated:
        Message.model_validate(bad)
    assert [error["loc"][1:] for error in relayed.value.errors()] == [
        error["loc"] for error in validated.value.errors()
    ]
