"""The history index (one pass per run) and its one splice: where each decision puts its pair."""

from __future__ import annotations

from typing import Any

import pytest

from agent_hooks.injection._ids import call_id_prefix
from agent_hooks.injection._index import HistoryIndex, Placement
from agent_hooks.injection._pairs import PairSpec, SyntheticPair, build_pair
from agent_hooks.injection._trust import SigningKeys, TrustRules, remove_unverified
from agent_hooks.messages import Message
from tests._support import msg, pair, synthetic_id

NOW = 1_700_000_000
RULES = TrustRules(now=NOW, check_content=True)
NO_KEYS = SigningKeys()


def new_pair(tool: str, content: str, **arguments: Any) -> SyntheticPair:
    call_id = synthetic_id(tool, arguments, content)
    call = {"id": call_id, "type": "function", "function": {"name": tool, "arguments": "{}"}}
    return SyntheticPair(
        assistant=msg(role="assistant", content=None, tool_calls=[call]),
        tool=msg(role="tool", tool_call_id=call_id, content=content),
    )


def old_pair(tool: str, content: str, **arguments: Any) -> list[Message]:
    pair = new_pair(tool, content, **arguments)
    return [pair.assistant, pair.tool]


def contents(messages: list[Message]) -> list[Any]:
    return [m.content for m in messages]


def test_pairs_are_grouped_by_prefix_and_a_lone_tool_message_has_no_caller() -> None:
    lone = msg(role="tool", tool_call_id=synthetic_id("notes", {}, "L"), content="L")
    history = [
        msg(role="user", content="u"),
        *old_pair("notes", "A"),
        lone,
        *old_pair("prefs", "P"),
    ]
    index = HistoryIndex(history)

    notes = index.state(call_id_prefix("notes", {})).candidates
    assert [(c.content, c.caller is not None) for c in notes] == [("A", True), ("L", False)]
    assert [c.content for c in index.state(call_id_prefix("prefs", {})).candidates] == ["P"]
    assert index.state(call_id_prefix("notes", {"other": 1})).candidates == []


def test_the_latest_trusted_candidate_skips_newer_ones_that_do_not_count() -> None:
    lone = msg(role="tool", tool_call_id=synthetic_id("notes", {}, "L"), content="L")
    edited = old_pair("notes", "B")
    edited[1] = edited[1].model_copy(update={"content": "edited"})
    index = HistoryIndex([*old_pair("notes", "A"), *edited, lone])

    latest = index.state(call_id_prefix("notes", {})).latest_trusted(RULES, NO_KEYS)
    assert latest is not None
    assert latest.content == "A"


def test_a_history_without_decisions_splices_to_an_equal_new_list() -> None:
    history = [msg(role="user", content="u"), *old_pair("notes", "A")]
    spliced = HistoryIndex(history).splice()
    assert spliced == history
    assert spliced is not history


def test_first_time_pairs_go_after_the_first_user_message_in_hook_order() -> None:
    history = [msg(role="system", content="s"), msg(role="user", content="u"), msg(role="user")]
    index = HistoryIndex(history)
    for hook, tool in ((2, "c"), (0, "a"), (1, "b")):  # decided out of order
        state = index.state(call_id_prefix(tool, {}))
        index.decide(state, hook=hook, pair=new_pair(tool, tool), placement=Placement.INSERT)

    assert contents(index.splice()) == ["s", "u", None, "a", None, "b", None, "c", None]


def test_without_a_user_message_first_time_pairs_go_at_the_end() -> None:
    index = HistoryIndex([msg(role="system", content="s")])
    state = index.state(call_id_prefix("a", {}))
    index.decide(state, hook=0, pair=new_pair("a", "a"), placement=Placement.INSERT)
    assert contents(index.splice()) == ["s", None, "a"]


def test_appended_pairs_go_at_the_end_after_inserted_ones_in_hook_order() -> None:
    history = [msg(role="user", content="u"), msg(role="assistant", content="x")]
    index = HistoryIndex(history)
    decisions = ((1, "b", Placement.APPEND), (0, "a", Placement.APPEND), (2, "c", Placement.INSERT))
    for hook, tool, placement in decisions:
        state = index.state(call_id_prefix(tool, {}))
        index.decide(state, hook=hook, pair=new_pair(tool, tool), placement=placement)

    assert contents(index.splice()) == ["u", None, "c", "x", None, "a", None, "b"]


def test_replacing_an_old_pair_swaps_only_its_call_in_a_shared_assistant_message() -> None:
    old_id = synthetic_id("notes", {}, "A")
    calls = [
        {"id": "call_1", "type": "function", "function": {"name": "search"}},
        {"id": old_id, "type": "function", "function": {"name": "notes", "arguments": "{}"}},
    ]
    history = [
        msg(role="user", content="u"),
        msg(role="assistant", content="both", tool_calls=calls, x_vendor=1),
        msg(role="tool", tool_call_id="call_1", content="found"),
        msg(role="tool", tool_call_id=old_id, content="A"),
    ]
    index = HistoryIndex(history)
    state = index.state(call_id_prefix("notes", {}))
    target = state.latest_trusted(RULES, NO_KEYS)
    refreshed = new_pair("notes", "A", fresh=False)  # another id, same content
    index.decide(state, hook=0, pair=refreshed, placement=Placement.REPLACE, target=target)

    spliced = index.splice()
    assert len(spliced) == len(history)
    assert spliced[1].to_openai() == {
        "role": "assistant",
        "content": "both",
        "tool_calls": [calls[0], refreshed.assistant.to_openai()["tool_calls"][0]],
        "x_vendor": 1,
    }
    assert spliced[3] == refreshed.tool
    assert spliced[:1] + spliced[2:3] == history[:1] + history[2:3]


def test_a_later_hook_of_the_same_prefix_replaces_a_pair_added_in_this_run_in_its_slot() -> None:
    history = [msg(role="user", content="u"), msg(role="assistant", content="x")]
    index = HistoryIndex(history)
    state = index.state(call_id_prefix("notes", {}))
    index.decide(state, hook=0, pair=new_pair("notes", "A"), placement=Placement.INSERT)
    target = state.latest_trusted(RULES, NO_KEYS)
    second = new_pair("notes", "A", again=True)
    index.decide(state, hook=1, pair=second, placement=Placement.REPLACE, target=target)

    spliced = index.splice()
    assert spliced == [history[0], second.assistant, second.tool, history[1]]


def test_deciding_a_pair_with_an_ordinary_id_or_replacing_nothing_is_refused() -> None:
    index = HistoryIndex([msg(role="user", content="u")])
    state = index.state(call_id_prefix("notes", {}))
    ordinary = SyntheticPair(
        assistant=msg(role="assistant", tool_calls=[{"id": "call_1", "type": "function"}]),
        tool=msg(role="tool", tool_call_id="call_1", content="x"),
    )
    with pytest.raises(ValueError, match="not a synthetic call id"):
        index.decide(state, hook=0, pair=ordinary, placement=Placement.APPEND)
    with pytest.raises(ValueError, match="needs the pair to replace"):
        index.decide(state, hook=0, pair=new_pair("notes", "A"), placement=Placement.REPLACE)


def test_pairs_whose_signatures_were_checked_count_as_when_checked_again() -> None:
    """The runner tells the index that ``remove_unverified`` already checked every signature
    (it keeps only pairs that verify); the index then trusts exactly the same pairs."""
    keys = SigningKeys(("k-one",))
    prefix = call_id_prefix("notes", {})
    spec = PairSpec("notes", prefix, "{}", checks_content=True, expiry=NOW + 60)
    signed = build_pair(spec, "A", keys=keys)
    stale = build_pair(spec._replace(expiry=NOW - 60), "B", keys=keys)
    forged = build_pair(spec, "C", keys=SigningKeys(("k-other",)))
    history = [
        msg(role="user", content="u"),
        *(m for pair in (signed, stale, forged) for m in (pair.assistant, pair.tool)),
    ]
    kept, removed = remove_unverified(history, keys)
    assert removed == 1

    for rules in (RULES, TrustRules(now=NOW, ttl_seconds=60), TrustRules(now=NOW + 3600)):
        latest = [
            HistoryIndex(kept, signatures_checked=checked)
            .state(spec.prefix)
            .latest_trusted(rules, keys)
            for checked in (True, False)
        ]
        assert latest[0] is not None
        assert latest[1] is not None
        assert latest[0]._replace(verified=False) == latest[1]
        assert latest[0].content == "B"


def test_a_kept_index_decides_freshness_at_every_time_as_its_pairs_do() -> None:
    """An index kept across requests (serve's stored pairs) remembers when its pairs were
    found fresh; asked at any other time it answers as the pairs themselves do: fresh until the
    expiry, and not before the pair was stamped, where its expiry looks forged."""
    expiry = NOW + 120
    stamped = [msg(**m) for m in pair("notes", "A", ttl_expiry_seconds=expiry)]
    index = HistoryIndex(stamped)
    prefix = call_id_prefix("notes", {})
    state = index.state(prefix)
    for now in [NOW, NOW + 119, NOW - 3600, NOW + 60, NOW + 120, NOW - 1, NOW + 500, NOW]:
        rules = TrustRules(now, 120, True)
        assert index.fresh_until(prefix, rules, NO_KEYS) == state.fresh_until(rules, NO_KEYS), now
    assert [
        index.fresh_until(prefix, TrustRules(now, 120, True), NO_KEYS)
        for now in (NOW - 3600, NOW, NOW + 119, NOW + 120)
    ] == [None, expiry, expiry, None]
