"""Conversation ids and putting stored pairs back into a client's history."""

from __future__ import annotations

from typing import Any

from agent_hooks.serve._conversation import conversation_id, reapply_pairs, synthetic_pairs
from tests._support import synthetic_id

SYSTEM = {"role": "system", "content": "be brief"}
USER = {"role": "user", "content": "hello", "x-vendor": 1}


def pair(tool: str, content: str) -> tuple[dict[str, Any], dict[str, Any]]:
    call_id = synthetic_id(tool, {}, content)
    call = {"id": call_id, "type": "function", "function": {"name": tool, "arguments": "{}"}}
    return (
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": content},
    )


def test_the_header_names_the_conversation() -> None:
    assert conversation_id({"x-conversation-id": " c-42 "}, "u1", [USER]) == "c-42"


def test_user_and_first_message_name_it_without_a_header() -> None:
    first = conversation_id({}, "u1", [SYSTEM, USER])
    later = conversation_id({}, "u1", [SYSTEM, USER, {"role": "user", "content": "more"}])
    other_user = conversation_id({}, "u2", [USER])
    assert first is not None
    assert first == later
    assert other_user != first


def test_a_request_with_neither_has_no_conversation() -> None:
    assert conversation_id({}, None, [USER]) is None
    assert conversation_id({}, "u1", [SYSTEM]) is None


def test_synthetic_pairs_are_found_in_order_and_others_ignored() -> None:
    first, second = pair("a", "1"), pair("b", "2")
    ordinary_call = {"id": "call_1", "type": "function", "function": {"name": "x"}}
    history = [
        SYSTEM,
        USER,
        *first,
        {"role": "assistant", "tool_calls": [ordinary_call]},
        {"role": "tool", "tool_call_id": "call_1", "content": "x"},
        *second,
    ]
    assert synthetic_pairs(history) == [first, second]


def test_a_dangling_synthetic_call_is_not_a_pair() -> None:
    assistant, _ = pair("a", "1")
    assert synthetic_pairs([USER, assistant, {"role": "user", "content": "?"}]) == []


def test_stored_pairs_go_after_the_first_user_message_in_stored_order() -> None:
    first, second = pair("a", "1"), pair("b", "2")
    later = {"role": "user", "content": "again"}
    result = reapply_pairs([SYSTEM, USER, later], [first, second])
    assert result == [SYSTEM, USER, *first, *second, later]
    assert result[1] is USER  # untouched messages are passed on as they came


def test_pairs_the_client_sent_back_are_not_added_twice() -> None:
    first, second = pair("a", "1"), pair("b", "2")
    history = [SYSTEM, USER, *first]
    assert reapply_pairs(history, [first, second]) == [SYSTEM, USER, *second, *first]


def test_without_a_user_message_pairs_go_at_the_end() -> None:
    first = pair("a", "1")
    assert reapply_pairs([SYSTEM], [first]) == [SYSTEM, *first]
