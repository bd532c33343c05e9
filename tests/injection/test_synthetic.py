"""SPEC section 4, rule by rule, on the injector classes (no DI, no I/O)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from agent_hooks.clock import FixedClock
from agent_hooks.config import InjectionFrequency
from agent_hooks.injection import StagedToolSyntheticInjector, SyntheticToolCallInjector
from agent_hooks.injection._ids import call_id_prefix, ttl_expiry
from agent_hooks.messages import Message, Role
from agent_hooks.runtime import HookFailedError
from agent_hooks.tools import StagedBaseTool
from tests._support import ScriptedTool, msg

NOW = 1_800_000_000


class Hook(StagedToolSyntheticInjector):
    """The smallest concrete injector: a fixed tool, arguments and frequency."""

    def __init__(
        self,
        tool: StagedBaseTool,
        *,
        frequency: InjectionFrequency = InjectionFrequency.APPEND_IF_CHANGED,
        arguments: Mapping[str, Any] | None = None,
        ttl_seconds: int | None = None,
        now: float = NOW,
    ) -> None:
        super().__init__([tool], clock=FixedClock(now), ttl_seconds=ttl_seconds)
        self.tool_name = tool.name
        self.frequency = frequency
        self.arguments = dict(arguments or {})

    def get_tool_name(self) -> str:
        return self.tool_name

    def get_arguments(self) -> Mapping[str, Any]:
        return self.arguments

    def get_frequency(self, messages: Sequence[Message]) -> InjectionFrequency:
        return self.frequency


def conversation() -> list[Message]:
    return [
        msg(role="system", content="be brief"),
        msg(role="user", content="hello"),
        msg(role="assistant", content="hi there"),
        msg(role="user", content="what's new?"),
    ]


def pair_at(messages: Sequence[Message], index: int) -> tuple[Message, Message]:
    assistant, tool = messages[index], messages[index + 1]
    assert assistant.role is Role.ASSISTANT
    assert tool.role is Role.TOOL
    assert assistant.tool_calls is not None
    assert assistant.tool_calls[0].id == tool.tool_call_id
    return assistant, tool


async def test_always_appends_the_pair_at_the_end_every_time_with_different_ids() -> None:
    hook = Hook(ScriptedTool("memories", "same"), frequency=InjectionFrequency.ALWAYS)
    once = await hook.transform(conversation())
    twice = await hook.transform(once)
    assert len(once) == 6
    assert len(twice) == 8
    _, first = pair_at(twice, 4)
    _, second = pair_at(twice, 6)
    assert first.content == second.content == "same"
    assert first.tool_call_id != second.tool_call_id


async def test_first_time_pair_goes_right_after_the_first_user_message() -> None:
    result = await Hook(ScriptedTool("prefs", "dark mode")).transform(conversation())
    assert [m.role for m in result] == [
        Role.SYSTEM, Role.USER, Role.ASSISTANT, Role.TOOL, Role.ASSISTANT, Role.USER,
    ]  # fmt: skip
    assistant, tool = pair_at(result, 2)
    assert tool.content == "dark mode"
    assert assistant.tool_calls is not None
    assert assistant.tool_calls[0].function.name == "prefs"


async def test_first_time_pair_goes_at_the_end_without_a_user_message() -> None:
    history = [msg(role="system", content="be brief")]
    result = await Hook(ScriptedTool("prefs", "x")).transform(history)
    assert len(result) == 3
    pair_at(result, 1)


async def test_several_first_time_hooks_keep_manifest_order() -> None:
    history = conversation()
    for name in ("first", "second", "third"):
        history = await Hook(ScriptedTool(name, f"{name} result")).transform(history)
    names = [
        m.tool_calls[0].function.name for m in history if m.role is Role.ASSISTANT and m.tool_calls
    ]
    assert names == ["first", "second", "third"]
    assert history[1].content == "hello"
    assert history[8].content == "hi there"


async def test_unchanged_content_is_replaced_in_place_with_a_new_id() -> None:
    tool = ScriptedTool("prefs", "dark mode")
    hook = Hook(tool, frequency=InjectionFrequency.APPEND_IF_CHANGED)
    first = await hook.transform(conversation())
    # A later turn: the conversation goes on after the injected pair.
    later = [*first, msg(role="assistant", content="noted"), msg(role="user", content="and?")]
    hook_later = Hook(tool, ttl_seconds=60, now=NOW + 5)
    second = await hook_later.transform(later)
    assert len(second) == len(later)
    _old_assistant, old_tool = pair_at(later, 2)
    _new_assistant, new_tool = pair_at(second, 2)
    assert new_tool.content == old_tool.content
    assert new_tool.tool_call_id != old_tool.tool_call_id
    assert new_tool.tool_call_id is not None
    assert ttl_expiry(new_tool.tool_call_id) == NOW + 5 + 60
    assert second[4:] == later[4:]
    assert second[:2] == later[:2]


async def test_changed_content_is_appended_at_the_end_and_the_old_pair_kept() -> None:
    tool = ScriptedTool("prefs", "dark mode", "light mode")
    hook = Hook(tool)
    first = await hook.transform(conversation())
    second = await hook.transform(first)
    assert len(second) == len(first) + 2
    assert second[: len(first)] == first
    _, appended = pair_at(second, len(first))
    assert appended.content == "light mode"


async def test_content_going_a_b_a_ends_with_a_appended_last() -> None:
    hook = Hook(ScriptedTool("prefs", "A", "B", "A"))
    history = conversation()
    for _ in range(3):
        history = await hook.transform(history)
    tool_contents = [m.content for m in history if m.role is Role.TOOL]
    assert tool_contents == ["A", "B", "A"]
    assert history[-1].content == "A"


async def test_same_tool_with_other_arguments_is_a_different_pair() -> None:
    tool = ScriptedTool("memories", "m")
    history = await Hook(tool, arguments={"user_id": "a"}).transform(conversation())
    history = await Hook(tool, arguments={"user_id": "b"}).transform(history)
    assert len([m for m in history if m.role is Role.TOOL]) == 2


async def test_call_ids_stay_under_64_characters_and_arguments_are_json_text() -> None:
    arguments = {"user_id": "current", "limit": 10}
    name = "x" * 64
    hook = Hook(ScriptedTool(name, "c"), arguments=arguments, ttl_seconds=3600)
    result = await hook.transform(conversation())
    assistant, tool = pair_at(result, 2)
    assert tool.tool_call_id is not None
    assert len(tool.tool_call_id) < 64
    assert assistant.tool_calls is not None
    assert json.loads(assistant.tool_calls[0].function.arguments) == arguments
    assert tool.tool_call_id.startswith(call_id_prefix(name, arguments))


async def test_fresh_ttl_skips_the_tool_call_and_returns_the_history_unchanged() -> None:
    tool = ScriptedTool("prefs", "dark mode", "light mode")
    first = await Hook(tool, ttl_seconds=600, now=NOW).transform(conversation())
    second = await Hook(tool, ttl_seconds=600, now=NOW + 599).transform(first)
    assert second == first
    assert len(tool.calls) == 1


async def test_expired_ttl_calls_the_tool_again() -> None:
    tool = ScriptedTool("prefs", "dark mode", "light mode")
    first = await Hook(tool, ttl_seconds=600, now=NOW).transform(conversation())
    second = await Hook(tool, ttl_seconds=600, now=NOW + 600).transform(first)
    assert len(tool.calls) == 2
    assert second[-1].content == "light mode"
    assert second[-1].tool_call_id is not None
    assert ttl_expiry(second[-1].tool_call_id) == NOW + 1200


async def test_pair_without_ttl_segment_counts_as_expired() -> None:
    tool = ScriptedTool("prefs", "dark mode")
    first = await Hook(tool).transform(conversation())
    second = await Hook(tool, ttl_seconds=600).transform(first)
    assert len(tool.calls) == 2
    assert len(second) == len(first)
    assert second[3].tool_call_id is not None
    assert ttl_expiry(second[3].tool_call_id) == NOW + 600


async def test_ttl_gates_always_hooks_too() -> None:
    tool = ScriptedTool("news", "n")
    hook = Hook(tool, frequency=InjectionFrequency.ALWAYS, ttl_seconds=60)
    first = await hook.transform(conversation())
    assert await hook.transform(first) == first
    assert len(tool.calls) == 1


async def test_content_none_skips_the_injection() -> None:
    history = conversation()
    assert await Hook(ScriptedTool("t", None)).transform(history) == history


async def test_a_missing_tool_skips_the_injection_with_a_warning_naming_the_tool(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Elsewhere(Hook):
        def get_tool_name(self) -> str:
            return "not_registered"

    history = conversation()
    with caplog.at_level("WARNING", logger="agent_hooks.hooks"):
        assert await Elsewhere(ScriptedTool("t", "c")).transform(history) == history
    assert "outcome=skipped_error" in caplog.text
    assert "not_registered" in caplog.text


async def test_an_injector_that_asks_to_fail_raises_hook_failed_error_naming_the_tool() -> None:
    class Strict(Hook):
        on_error = "fail"

        def get_tool_name(self) -> str:
            return "not_registered"

    with pytest.raises(HookFailedError, match="'Strict' failed: no such tool") as caught:
        await Strict(ScriptedTool("t", "c")).transform(conversation())
    assert caught.value.failures[0].tool == "not_registered"


async def test_untouched_messages_come_out_exactly_as_they_came_in() -> None:
    raw = [
        {"role": "system", "content": "s", "vendor_field": {"a": 1}},
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "name": "ann"},
        {"role": "assistant", "content": "ok", "refusal": None},
    ]
    history = [Message.model_validate(item) for item in raw]
    result = await Hook(ScriptedTool("t", "c")).transform(history)
    dumped = [m.to_openai() for m in result]
    assert dumped[:2] == raw[:2]
    assert dumped[-1] == raw[2]


async def test_transformers_do_not_mutate_their_input_list() -> None:
    history = conversation()
    snapshot = list(history)
    await Hook(ScriptedTool("t", "c"), frequency=InjectionFrequency.ALWAYS).transform(history)
    assert history == snapshot


async def test_base_injector_works_with_any_content_source() -> None:
    class Static(SyntheticToolCallInjector):
        def get_tool_name(self) -> str:
            return "note"

        async def get_content(self, messages: Sequence[Message]) -> str | None:
            return "remember the milk"

    result = await Static().transform(conversation())
    assert result[3].content == "remember the milk"


HOST_SCRIPT = """
import asyncio
from agent_hooks.injection import SyntheticToolCallInjector
from agent_hooks.messages import Message

class Weather(SyntheticToolCallInjector):
    def get_tool_name(self):
        return "weather"

    async def get_content(self, messages):
        return "sunny"

result = asyncio.run(Weather().transform([Message(role="user", content="hi")]))
print([m.role.value for m in result], result[-1].content)
"""


def test_a_host_subclass_runs_after_importing_only_the_injector_class() -> None:
    """SPEC 16: ``from agent_hooks.injection import SyntheticToolCallInjector`` alone, in a fresh
    process, is enough; nothing else needs importing first."""
    done = subprocess.run(
        [sys.executable, "-c", HOST_SCRIPT], capture_output=True, text=True, timeout=60
    )
    assert done.stderr == ""
    assert done.stdout.strip() == "['user', 'assistant', 'tool'] sunny"
