"""LangChain with ``ChatAnthropic`` and ``thinking`` set: the current cycle's pairs are text
(SPEC 15). The fake chat models cannot claim to be Anthropic, so these run ``ChatAnthropic``
against a local upstream that refuses every request breaking Anthropic's rules."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langchain")
pytest.importorskip("langchain_anthropic")

from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool

from agent_hooks.injection._text_form import read_tool_result_text
from agent_hooks.integrations.langchain import AgentHooksMiddleware
from tests.integrations._anthropic_upstream import FINAL, Upstream, anthropic_upstream
from tests.integrations._kit import MEMORY, Kit, hooks_app

ENABLED = {"type": "enabled", "budget_tokens": 1024}


@tool
def weather() -> str:
    """Today's weather."""
    return "sunny"


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with anthropic_upstream() as running:
        yield running


def agent(kit: Kit, upstream: Upstream, thinking: dict[str, Any] | None) -> Any:
    model = ChatAnthropic(  # type: ignore[call-arg]
        model="claude-sonnet-4-6",
        base_url=upstream.base_url,
        api_key="test",
        max_tokens=2048,
        thinking=thinking,
    )
    return create_agent(model, [weather], middleware=[AgentHooksMiddleware(kit.runner)])


def text_blocks(messages: list[BaseMessage]) -> list[tuple[int, Any]]:
    """Every text-form block of the state's human messages, with the message's index."""
    return [
        (index, block)
        for index, message in enumerate(messages)
        if isinstance(message, HumanMessage) and isinstance(message.content, list)
        for block in message.content
        if isinstance(block, dict) and read_tool_result_text(block.get("text", "")) is not None
    ]


def synthetic_uses(body: dict[str, Any]) -> list[str]:
    return [
        block["id"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use" and block["id"].startswith("ah_")
    ]


async def ask(hooked: Any, messages: list[Any], sync: bool) -> dict[str, Any]:
    state = {"messages": messages}
    if sync:
        return await asyncio.to_thread(hooked.invoke, state)  # type: ignore[no-any-return]
    return await hooked.ainvoke(state)  # type: ignore[no-any-return]


@pytest.mark.parametrize("thinking", [ENABLED, {"type": "adaptive"}], ids=["enabled", "adaptive"])
@pytest.mark.parametrize("sync", [False, True], ids=["ainvoke", "invoke"])
async def test_with_thinking_the_pair_is_a_text_block_of_the_human_message(
    upstream: Upstream, thinking: dict[str, Any], sync: bool
) -> None:
    async with hooks_app("memories") as kit:
        state = await ask(agent(kit, upstream, thinking), ["What is the weather?"], sync)
    assert state["messages"][-1].text == FINAL
    assert upstream.violations == [[], []]
    [message] = upstream.bodies[0]["messages"]
    [prompt, block] = message["content"]
    assert prompt == {"type": "text", "text": "What is the weather?"}
    read = read_tool_result_text(block["text"])
    assert read is not None
    assert (read[0], read[2]) == ("memory", MEMORY)
    assert text_blocks(state["messages"]) == [(0, block)]  # kept in the state, as text


async def test_a_second_turn_reads_the_text_pair_back_and_sends_it_unchanged(
    upstream: Upstream,
) -> None:
    async with hooks_app("memories") as kit:
        hooked = agent(kit, upstream, ENABLED)
        first = await ask(hooked, ["What is the weather?"], sync=False)
        second = await ask(hooked, [*first["messages"], "And tomorrow?"], sync=False)
        assert len(kit.tools.memory.calls) == 1  # the TTL is fresh: the hook fires once
    assert all(found == [] for found in upstream.violations)
    turn_one, turn_two = upstream.bodies[1], upstream.bodies[2]
    assert turn_two["messages"][: len(turn_one["messages"])] == turn_one["messages"]
    assert text_blocks(second["messages"]) == text_blocks(first["messages"])


async def test_without_thinking_pairs_stay_tool_calls(upstream: Upstream) -> None:
    async with hooks_app("memories") as kit:
        state = await ask(agent(kit, upstream, None), ["What is the weather?"], sync=False)
    assert all(found == [] for found in upstream.violations)
    assert text_blocks(state["messages"]) == []
    assert len(synthetic_uses(upstream.bodies[0])) == 1


async def test_a_ttl_refresh_replaces_the_text_pair_in_place_still_text(
    upstream: Upstream,
) -> None:
    async with hooks_app("memories") as kit:
        hooked = agent(kit, upstream, ENABLED)
        first = await ask(hooked, ["What is the weather?"], sync=False)
        kit.clock.at += 601
        second = await ask(hooked, [*first["messages"], "And tomorrow?"], sync=False)
        assert len(kit.tools.memory.calls) == 2
    assert all(found == [] for found in upstream.violations)
    [(index, old)] = text_blocks(first["messages"])
    [(again, new)] = text_blocks(second["messages"])
    assert index == again == 0
    assert new != old  # a new id: the TTL is stamped again
    assert not any(synthetic_uses(body) for body in upstream.bodies)
