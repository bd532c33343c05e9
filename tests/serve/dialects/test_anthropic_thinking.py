"""Anthropic with thinking on: no synthetic ``tool_use`` in the current tool cycle (SPEC 15).

With thinking on, the Messages API requires the last assistant message of the current tool
cycle to begin with its signed thinking block ("Expected `thinking` or `redacted_thinking`, but
found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a
thinking block", Kilo-Org/kilocode#5219); "the round-trip rules are identical" for adaptive and
manual thinking. A pair placed in that cycle is written as a text block instead.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_hooks.serve._dialects import ANTHROPIC, ParsedRequest, RenderContext, tool_result_text
from agent_hooks.serve._dialects._base import align
from agent_hooks.state._conversation import collect_pairs
from agent_hooks.testing import run_manifest
from tests._support import pair
from tests.serve.dialects.test_anthropic import (
    ASSISTANT,
    RESULT,
    USER,
    body,
    pair_messages_with_id,
)

ENABLED = {"type": "enabled", "budget_tokens": 1024}
ADAPTIVE = {"type": "adaptive"}
CLIENT_TOOLS = [{"name": "lookup", "input_schema": {"type": "object"}}]


def text_block(tool: str, content: str) -> dict[str, Any]:
    call_id = pair(tool, content)[1]["tool_call_id"]
    return {"type": "text", "text": tool_result_text(tool, call_id, content)}


def text_form_chosen(parsed: ParsedRequest, history: list[dict[str, Any]]) -> frozenset[str]:
    """The added pairs of ``history`` the conversation core forwards in text form, anchored at
    the client item of the message before each (matched to ``parsed`` as the dialect does)."""
    matches = align(parsed.history, history)
    pairs = collect_pairs(
        history,
        item_at=[None if match is None else parsed.outline.item_of[match] for match in matches],
        items=parsed.items,
        reapplied=[],
        text_from=parsed.text_from,
        to_dict=dict,
    )
    return frozenset(entry.call_id for entry in pairs if entry.form == "text")


def sent_with(
    raw: bytes, history: list[dict[str, Any]], text_form: frozenset[str] | None = None
) -> dict[str, Any]:
    """The forwarded body, the pairs in text form chosen as the proxy does (or ``text_form``)."""
    parsed = ANTHROPIC.parse(raw)
    chosen = text_form_chosen(parsed, history) if text_form is None else text_form
    result: dict[str, Any] = json.loads(parsed.render(history, RenderContext(text_form=chosen)))
    return result


@pytest.mark.parametrize(
    ("thinking", "on"),
    [(ENABLED, True), (ADAPTIVE, True), ({"type": "disabled"}, False), (None, False)],
)
def test_thinking_is_on_unless_absent_or_disabled(thinking: Any, on: bool) -> None:
    fields = {} if thinking is None else {"thinking": thinking}
    assert ANTHROPIC.parse(body([USER], **fields)).thinking is on


def tool_use(call_id: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig"},
            {"type": "tool_use", "id": call_id, "name": "lookup", "input": {}},
        ],
    }


def tool_result(call_id: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id}]}


def test_the_cycle_starts_at_the_last_user_message_with_more_than_tool_results() -> None:
    loops = [
        {"role": "user", "content": "hi"},
        tool_use("t1"),
        tool_result("t1"),
        tool_use("t2"),
        tool_result("t2"),
        {"role": "assistant", "content": "done"},
        {"role": "user", "content": [{"type": "text", "text": "again"}]},
        tool_use("t3"),
        tool_result("t3"),
        tool_use("t4"),
        {"role": "user", "content": [*tool_result("t4")["content"], *tool_result("t5")["content"]]},
    ]
    assert ANTHROPIC.parse(body(loops)).cycle_start == 6
    mixed = {"role": "user", "content": [*tool_result("t6")["content"], {"type": "image"}]}
    assert ANTHROPIC.parse(body([*loops, tool_use("t6"), mixed])).cycle_start == 12
    system = {"role": "system", "content": "Reminder"}
    assert ANTHROPIC.parse(body([*loops, system])).cycle_start == 6
    assert ANTHROPIC.parse(body([tool_use("t1"), tool_result("t1")])).cycle_start is None
    assert ANTHROPIC.parse(body([])).cycle_start is None


def test_a_pair_after_a_string_user_message_is_a_text_block_appended_to_it() -> None:
    user = {"role": "user", "content": "What now?", "vendor": 1}
    raw = body([user], thinking=ADAPTIVE)
    sent = sent_with(raw, [ANTHROPIC.parse(raw).history[0], *pair("clock", "12:00")])
    block = text_block("clock", "12:00")
    assert sent["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "What now?"}, block], "vendor": 1}
    ]
    call_id = pair("clock", "12:00")[1]["tool_call_id"]
    assert block["text"] == f'<tool_result tool="clock" id="{call_id}">\n12:00\n</tool_result>'
    # Text-form pairs declare no tool.
    assert "tools" not in sent
    assert "tool_choice" not in sent


def test_a_pair_after_a_block_list_user_message_is_appended_to_its_blocks() -> None:
    raw = body([USER], thinking=ENABLED)
    history = [
        *ANTHROPIC.parse(raw).history,
        *pair("clock", "12:00"),
        *pair("kb", "</tool_result>"),
    ]
    sent = sent_with(raw, history)
    blocks = [text_block("clock", "12:00"), text_block("kb", "</tool_result>")]
    assert sent["messages"] == [{**USER, "content": [*USER["content"], *blocks]}]
    assert "<\\/tool_result>" in blocks[1]["text"]


def test_a_pair_appended_in_a_tool_loop_joins_the_tool_result_message_after_its_results() -> None:
    raw = body([USER, ASSISTANT, RESULT], thinking=ADAPTIVE, tools=CLIENT_TOOLS)
    history = [*ANTHROPIC.parse(raw).history, *pair("clock", "12:00")]
    sent = sent_with(raw, history)
    assert sent["messages"] == [
        USER,
        ASSISTANT,
        {**RESULT, "content": [*RESULT["content"], text_block("clock", "12:00")]},
    ]
    assert sent["tools"] == CLIENT_TOOLS
    assert "tool_choice" not in sent


def test_a_pair_after_a_message_that_is_not_a_user_message_gets_a_user_message_of_its_own() -> None:
    reply = {"role": "assistant", "content": "Hello"}
    system = {"role": "system", "content": "Reminder"}
    raw = body([USER, reply, system], thinking=ENABLED)
    history = [*ANTHROPIC.parse(raw).history, *pair("clock", "12:00"), *pair("kb", "doc")]
    sent = sent_with(raw, history)
    blocks = [text_block("clock", "12:00"), text_block("kb", "doc")]
    # the pairs follow the assistant message (their anchor), before the trailing system message
    assert sent["messages"] == [USER, reply, {"role": "user", "content": blocks}, system]


def test_pairs_before_the_current_cycle_stay_pairs() -> None:
    """A first-time pair goes after the first user message (SPEC 4), before the cycle of the
    latest user message: a ``tool_use`` there is not in the current tool cycle. An ``always``
    pair goes at the end, in the cycle: text. Only the pair's tool is declared."""
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "look it up"},
        tool_use("t1"),
        tool_result("t1"),
    ]
    raw = body(messages, thinking=ADAPTIVE)
    history = ANTHROPIC.parse(raw).history
    early, late = pair("clock", "12:00"), pair("kb", "doc")
    sent = sent_with(raw, [history[0], *early, *history[1:], *late])
    late_result = {**messages[4], "content": [*messages[4]["content"], text_block("kb", "doc")]}
    early_id = early[1]["tool_call_id"]
    assert sent["messages"] == [
        messages[0],
        *pair_messages_with_id("clock", "12:00", early_id),
        *messages[1:4],
        late_result,
    ]
    assert [tool["name"] for tool in sent["tools"]] == ["clock"]
    assert sent["tool_choice"] == {"type": "none"}


async def test_the_hooks_pairs_in_the_current_cycle_are_chosen_for_text_form() -> None:
    manifest = {
        "hooks": [
            {
                "kind": "tool_call",
                "event": "on_request_start",
                "name": "clock",
                "tool_name": "clock",
            },
            {
                "kind": "tool_call",
                "event": "on_request_start",
                "name": "news",
                "tool_name": "news",
                "frequency": "always",
            },
        ]
    }
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello"},
        {"role": "user", "content": "look it up"},
        tool_use("t1"),
        tool_result("t1"),
    ]
    for thinking, expected in ((ADAPTIVE, ["news"]), (ENABLED, ["news"]), (None, [])):
        fields = {} if thinking is None else {"thinking": thinking}
        parsed = ANTHROPIC.parse(body(messages, **fields))
        run = await run_manifest(manifest, parsed.history, tools={"clock": "12:00", "news": "none"})
        by_id = {record.call_id: record.hook for record in run.records}
        chosen = text_form_chosen(parsed, [m.to_openai() for m in run.messages])
        assert sorted(by_id[call_id] for call_id in chosen) == expected


def test_with_no_user_turn_at_all_every_added_pair_is_in_the_cycle() -> None:
    raw = body([tool_use("t1"), tool_result("t1")], thinking=ADAPTIVE)
    parsed = ANTHROPIC.parse(raw)
    clock = pair("clock", "12:00")
    assert text_form_chosen(parsed, [*clock, *parsed.history]) == {clock[1]["tool_call_id"]}
    assert text_form_chosen(parsed, [*parsed.history, *clock]) == {clock[1]["tool_call_id"]}


def test_without_text_form_the_pairs_render_as_before() -> None:
    raw = body([USER], thinking={"type": "disabled"})
    history = [*ANTHROPIC.parse(raw).history, *pair("clock", "12:00")]
    assert text_form_chosen(ANTHROPIC.parse(raw), history) == frozenset()
    sent = sent_with(raw, history)
    call_id = pair("clock", "12:00")[1]["tool_call_id"]
    assert sent["messages"] == [USER, *pair_messages_with_id("clock", "12:00", call_id)]
