"""Aligning the hooks' history with the one they were given, and splicing items back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from agent_hooks.serve._dialects import ANTHROPIC, RESPONSES
from agent_hooks.serve._dialects._base import (
    Entry,
    SSELines,
    align,
    is_role_only,
    read_by_role,
    reads_more_than_role,
    splice,
)
from tests._support import USER, pair

ASSISTANT = {"role": "assistant", "content": "hi"}


def render(messages: list[Mapping[str, Any]]) -> list[Any]:
    return [("new", message.get("role")) for message in messages]


def test_ordinary_messages_align_by_order_and_synthetic_ones_only_as_the_very_message() -> None:
    """A pair with the id of one the client sent (a stored pair re-applied) is the proxy's own,
    added: matched, the client's item would go upstream as the client wrote it (SPEC 12.1)."""
    kept, dropped, added = pair("a", "1"), pair("b", "2"), pair("c", "3")
    same_ids = [dict(message) for message in dropped]
    before = [USER, *kept, *dropped, ASSISTANT]
    after = [USER, *added, *kept, *same_ids, ASSISTANT]
    assert align(before, after) == [0, None, None, 1, 2, None, None, 5]


def test_untouched_items_are_copied_dropped_ones_left_out_and_added_ones_rendered() -> None:
    forged = pair("f", "x")
    items = ["user", "reasoning", "call", "answer", "assistant"]
    entries = [
        Entry(USER, 0),
        Entry(forged[0], 2),
        Entry(forged[1], 3),
        Entry(ASSISTANT, 4),
    ]
    added = pair("clock", "12:00")
    out = splice(
        items,
        read_by_role(entries),
        [USER, *added, ASSISTANT],
        render=render,
        without_blocks=lambda item, blocks: item,
    )
    # The reasoning item stays with the item after it, behind the pair added before that item.
    assert out == ["user", ("new", "assistant"), ("new", "tool"), "reasoning", "assistant"]


def test_pairs_appended_at_the_end_follow_the_last_kept_item_not_trailing_unread_ones() -> None:
    """A pair follows the item it is anchored at (the kept message before it): re-applied next
    turn, when the client's later messages come after the trailing item, it is in the same place."""
    items = ["user", "web_search_call"]
    added = pair("clock", "12:00")
    out = splice(
        items,
        read_by_role([Entry(USER, 0)]),
        [USER, *added],
        render=render,
        without_blocks=lambda item, blocks: item,
    )
    assert out == ["user", ("new", "assistant"), ("new", "tool"), "web_search_call"]


def test_an_item_that_lost_some_blocks_is_rebuilt_and_one_left_empty_is_dropped() -> None:
    forged = pair("f", "x")
    items: list[Any] = [["text", "tool_use"], ["tool_result"]]
    entries = [
        Entry(ASSISTANT, 0, (0,)),
        Entry(forged[0], 0, (1,)),
        Entry(forged[1], 1, (0,)),
    ]

    def without(item: list[str], blocks: frozenset[int]) -> list[str] | None:
        left = [block for index, block in enumerate(item) if index not in blocks]
        return left or None

    out = splice(items, read_by_role(entries), [ASSISTANT], render=render, without_blocks=without)
    assert out == [["text"]]


def test_sse_data_lines_are_found_whatever_the_chunk_boundaries() -> None:
    raw = b'event: x\ndata: {"a": 1}\r\n\ndata: [DONE]\n\ndata:{"b":2}'
    for size in (1, 5, len(raw)):
        lines = SSELines()
        found = [d for at in range(0, len(raw), size) for d in lines.feed(raw[at : at + size])]
        assert [*found, *lines.flush()] == [b'{"a": 1}', b'{"b":2}']


def test_the_outline_is_the_history_with_messages_read_by_role_alone_shared() -> None:
    """Unless a hook reads the history, a message without a synthetic-looking id is read by its
    role alone (SPEC 16): the outline has one shared role-only message for it, and every other
    message as the whole history has it, from the same items."""
    forged = pair("clock", "12:00")[1]["tool_call_id"]
    responses = {
        "input": [
            {"role": "user", "content": "hi"},
            {"type": "reasoning", "summary": []},
            {"type": "function_call", "call_id": "call_1", "name": "ls", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "a"},
            {"type": "function_call_output", "call_id": forged, "output": "b"},
        ]
    }
    use = {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}
    anthropic = {
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [{"type": "text", "text": "so"}, use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": forged}]},
        ]
    }
    for dialect, body in ((RESPONSES, responses), (ANTHROPIC, anthropic)):
        parsed = dialect.parse(json.dumps(body).encode())
        outline, history = parsed.outline.messages, parsed.history
        assert len(outline) == len(history)
        for read, whole in zip(outline, history, strict=True):
            if reads_more_than_role(whole):
                assert read == whole
            else:
                assert is_role_only(read)
                assert read == {"role": whole["role"]}
        assert [reads_more_than_role(m) for m in history] == [False, False, False, True]
