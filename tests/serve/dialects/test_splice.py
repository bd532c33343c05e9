"""Aligning the hooks' history with the one they were given, and splicing items back."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_hooks.serve._dialects import ANTHROPIC, RESPONSES, RenderContext
from agent_hooks.serve._dialects._anthropic import _read as anthropic_entries
from agent_hooks.serve._dialects._base import (
    Entry,
    SSELines,
    align,
    is_role_only,
    read_by_role,
    reads_more_than_role,
    splice,
)
from agent_hooks.serve._dialects._responses import _entries as responses_entries
from tests._support import USER, pair, synthetic_id

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


_ID = st.sampled_from(["call_1", synthetic_id("clock", {}, "noon"), 3, None])
_ROLE = st.sampled_from(["user", "assistant", "system", "developer", "tool", "x"])
_TEXT = st.sampled_from(["hi", "", None, 1])
_PARTS = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["input_text", "text", "image"]), "text": _TEXT}
    ),
    max_size=2,
)
_CONTENT = _TEXT | _PARTS
_RESPONSES_ITEM = st.one_of(
    st.fixed_dictionaries({"role": _ROLE, "content": _CONTENT}),
    st.fixed_dictionaries({"type": st.just("message"), "role": _ROLE, "content": _CONTENT}),
    st.fixed_dictionaries(
        {"type": st.just("function_call"), "call_id": _ID, "name": _TEXT, "arguments": _TEXT}
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("function_call_output"),
            "call_id": _ID,
            "output": _CONTENT,
            "status": st.just("completed"),
        }
    ),
    st.just({"type": "reasoning", "summary": []}),
)
_BLOCK = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": _TEXT}),
    st.fixed_dictionaries(
        {"type": st.just("tool_use"), "id": _ID, "name": _TEXT, "input": st.just({"q": 1})}
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_result"), "tool_use_id": _ID, "content": _CONTENT}
    ),
    st.just({"type": "image"}),
)
_ANTHROPIC_MESSAGE = st.fixed_dictionaries(
    {"role": _ROLE, "content": _TEXT | st.lists(_BLOCK, max_size=3)}
)


@settings(max_examples=300, deadline=None)
@given(
    items=st.lists(_RESPONSES_ITEM, max_size=6), messages=st.lists(_ANTHROPIC_MESSAGE, max_size=6)
)
def test_the_outline_is_the_history_with_messages_read_by_role_alone_shared(
    items: list[dict[str, Any]], messages: list[dict[str, Any]]
) -> None:
    """Unless a hook reads the history, a message without a synthetic-looking id is read by its
    role alone (SPEC 16): the outline has one shared role-only message for it, and every other
    message is the whole history's very object, from the same items and blocks (the dialects'
    readers skip building what the outline does not keep). Either, given back as it was read,
    gives the body back."""
    whole_readings = (
        ("input", RESPONSES, items, responses_entries(items, whole=True)),
        ("messages", ANTHROPIC, messages, anthropic_entries(messages, whole=True)),
    )
    for field, dialect, sent, whole_entries in whole_readings:
        parsed = dialect.parse(json.dumps({field: sent}).encode())
        assert parsed.outline == read_by_role(whole_entries)
        outline, history = parsed.outline.messages, parsed.history
        for read in (outline, history):
            assert json.loads(parsed.render(read, RenderContext()))[field] == sent
        history_first = dialect.parse(json.dumps({field: sent}).encode())
        assert history_first.history == history  # the outline then comes from the same reading
        assert history_first.outline == parsed.outline
        assert len(outline) == len(history)
        for read, whole in zip(outline, history, strict=True):
            if reads_more_than_role(whole):
                assert read is whole
            else:
                assert is_role_only(read)
                assert read == {"role": whole["role"]}
