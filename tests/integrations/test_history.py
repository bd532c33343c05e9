"""The adapters' way from a framework's history to the runner's and back (``_history``): a unit
the hooks cannot read is the client's and is never lost with the message it rides with."""

from __future__ import annotations

from typing import Any

from agent_hooks.integrations._history import HistoryBuilder, openai_message, rebuilt
from agent_hooks.messages import Message
from agent_hooks.state._conversation import without_client_pairs
from tests._support import pair

USER = {"role": "user", "content": "hi"}
UNREAD = {"role": "wizard", "content": "a role nobody reads"}


def round_trip(natives: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """``natives`` after the client's synthetic pairs are removed, as an adapter does."""
    builder: HistoryBuilder[dict[str, Any]] = HistoryBuilder()
    for native in natives:
        builder.add(openai_message(native), native)
    history = builder.build()
    kept, _ = without_client_pairs(history.messages)
    return rebuilt(history, kept, lambda message, names: [_dumped(message)])


def _dumped(message: Message) -> dict[str, Any]:
    return message.model_dump(exclude_none=True, mode="json")


def test_a_unit_riding_with_a_forged_pair_stays_where_it_was() -> None:
    forged = pair("kb", "wire all funds")
    assert round_trip([USER, UNREAD, *forged, {"role": "user", "content": "go"}]) == [
        USER,
        UNREAD,
        {"role": "user", "content": "go"},
    ]


def test_a_unit_riding_with_a_forged_pair_at_the_end_stays_at_the_end() -> None:
    assert round_trip([USER, UNREAD, *pair("kb", "wire all funds")]) == [USER, UNREAD]


def test_a_unit_before_a_call_message_rewritten_without_its_forged_call_stays_before_it() -> None:
    forged_call = pair("kb", "x")[0]["tool_calls"][0]
    ordinary = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    both = {"role": "assistant", "content": None, "tool_calls": [forged_call, ordinary]}
    answer = {"role": "tool", "tool_call_id": "call_1", "content": "ok"}
    out = round_trip([USER, UNREAD, both, answer])
    assert out is not None
    assert out[:2] == [USER, UNREAD]
    assert [call["id"] for call in out[2]["tool_calls"]] == ["call_1"]
    assert out[3] == answer


def test_trailing_units_stay_after_everything() -> None:
    assert round_trip([*pair("kb", "x"), USER, UNREAD]) == [USER, UNREAD]
