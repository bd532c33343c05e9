"""Properties of the injection mechanics over generated histories."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_hooks.config import InjectionFrequency
from agent_hooks.messages import Message
from tests._support import ScriptedTool, msg, synthetic_id
from tests.injection.test_synthetic import NOW, Hook

_text = st.text(max_size=12)


@st.composite
def histories(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Raw OpenAI histories mixing plain turns, foreign tool calls and earlier synthetic pairs."""
    items: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 7))):
        kind = draw(st.sampled_from(["system", "user", "assistant", "foreign_call", "synthetic"]))
        if kind in ("system", "user", "assistant"):
            item: dict[str, Any] = {"role": kind, "content": draw(_text)}
            if draw(st.booleans()):
                item["x_vendor"] = draw(st.integers())
            items.append(item)
        else:
            content = draw(st.sampled_from(["A", "B", "C"]))
            if kind == "synthetic":
                tool = draw(st.sampled_from(["memories", "prefs"]))
                expiry = draw(st.none() | st.integers(NOW - 100, NOW + 100))
                call_id = synthetic_id(tool, {}, content, ttl_expiry_seconds=expiry)
            else:
                tool, call_id = "search", f"call_{draw(st.integers(0, 999))}"
            call = {
                "id": call_id,
                "type": "function",
                "function": {"name": tool, "arguments": "{}"},
            }
            items.append({"role": "assistant", "content": None, "tool_calls": [call]})
            items.append({"role": "tool", "tool_call_id": call_id, "content": content})
    return items


hook_settings = st.fixed_dictionaries(
    {
        "tool": st.sampled_from(["memories", "prefs"]),
        "content": st.sampled_from(["A", "B", "C"]),
        "frequency": st.sampled_from(list(InjectionFrequency)),
        "ttl_seconds": st.none() | st.integers(1, 200),
    }
)


def _hook(setup: dict[str, Any]) -> Hook:
    return Hook(
        ScriptedTool(setup["tool"], setup["content"]),
        frequency=setup["frequency"],
        ttl_seconds=setup["ttl_seconds"],
    )


@settings(max_examples=150, deadline=None)
@given(raw=histories(), setup=hook_settings)
def test_transformers_never_mutate_their_input(raw: list[dict[str, Any]], setup: Any) -> None:
    history = [msg(**item) for item in raw]
    before_list = list(history)
    before_dump = copy.deepcopy([m.to_openai() for m in history])
    result = asyncio.run(_hook(setup).transform(history))
    assert history == before_list
    assert all(a is b for a, b in zip(history, before_list, strict=True))
    assert [m.to_openai() for m in history] == before_dump
    assert result is not history


@settings(max_examples=150, deadline=None)
@given(raw=histories(), setup=hook_settings)
def test_append_if_changed_twice_on_its_own_output_adds_nothing(
    raw: list[dict[str, Any]], setup: Any
) -> None:
    setup = {**setup, "frequency": InjectionFrequency.APPEND_IF_CHANGED}
    history = [msg(**item) for item in raw]
    once = asyncio.run(_hook(setup).transform(history))
    twice = asyncio.run(_hook(setup).transform(once))
    assert len(twice) == len(once)
    assert [_without_ids(m) for m in twice] == [_without_ids(m) for m in once]


def _without_ids(message: Message) -> dict[str, Any]:
    dumped = message.to_openai()
    dumped.pop("tool_call_id", None)
    for call in dumped.get("tool_calls") or []:
        call.pop("id", None)
    return dumped
