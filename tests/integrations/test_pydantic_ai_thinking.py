"""Pydantic AI with an Anthropic model that thinks: the current cycle's pairs are text (SPEC 15).

``FunctionModel`` cannot claim to be Anthropic, so these run Pydantic AI's own ``AnthropicModel``
against a local upstream that refuses every request breaking Anthropic's rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")
pytest.importorskip("anthropic")

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, UserPromptPart
from pydantic_ai.models.anthropic import AnthropicModel
from pydantic_ai.providers.anthropic import AnthropicProvider

from agent_hooks.injection._text_form import read_tool_result_text, tool_result_text
from agent_hooks.integrations._text_pairs import ARGUMENTS_KEY
from agent_hooks.integrations.pydantic_ai import AgentHooksCapability
from tests.integrations._anthropic_upstream import FINAL, Upstream, anthropic_upstream
from tests.integrations._kit import MEMORY, Kit, hooks_app

ENABLED = {"anthropic_thinking": {"type": "enabled", "budget_tokens": 1024}}
TTL_SECONDS = 600


@pytest.fixture
def upstream() -> Iterator[Upstream]:
    with anthropic_upstream() as running:
        yield running


def agent(
    kit: Kit, upstream: Upstream, settings: dict[str, Any], model_name: str = "claude-sonnet-4-6"
) -> Agent[None, str]:
    provider = AnthropicProvider(api_key="test", base_url=upstream.base_url)
    model = AnthropicModel(model_name, provider=provider)
    built = Agent(model, capabilities=[AgentHooksCapability(kit.runner)], model_settings=settings)

    @built.tool_plain
    def weather() -> str:
        return "sunny"

    return built


def text_parts(messages: list[ModelMessage]) -> list[tuple[int, UserPromptPart]]:
    """Every text-form part of the history, with the index of its request."""
    return [
        (index, part)
        for index, message in enumerate(messages)
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
        and isinstance(part.content, str)
        and read_tool_result_text(part.content) is not None
    ]


def tool_uses(body: dict[str, Any]) -> list[str]:
    return [
        block["id"]
        for message in body["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_use"
    ]


@pytest.mark.parametrize(
    "settings",
    [ENABLED, {"anthropic_thinking": {"type": "adaptive"}}, {"thinking": True}],
    ids=["enabled", "adaptive", "unified"],
)
async def test_with_thinking_the_pair_is_a_text_block_of_the_prompt_it_follows(
    upstream: Upstream, settings: dict[str, Any]
) -> None:
    async with hooks_app("memories") as kit:
        result = await agent(kit, upstream, settings).run("What is the weather?")
    assert result.output == FINAL
    assert upstream.violations == [[], []]  # the call of the weather tool, then the answer
    first = upstream.bodies[0]["messages"]
    assert len(first) == 1
    [prompt, block] = first[0]["content"]
    assert prompt["text"] == "What is the weather?"
    read = read_tool_result_text(block["text"])
    assert read is not None
    assert read[0] == "memory"
    assert read[2] == MEMORY
    assert tool_uses(upstream.bodies[1]) == [upstream.bodies[1]["messages"][1]["content"][1]["id"]]
    [(index, part)] = text_parts(result.all_messages())  # kept in the history, as text
    assert index == 0
    assert part.content == tool_result_text("memory", read[1], MEMORY)


async def test_a_model_that_thinks_by_default_gets_the_text_form(upstream: Upstream) -> None:
    async with hooks_app("memories") as kit:
        result = await agent(kit, upstream, {}, "claude-sonnet-5").run("What is the weather?")
    assert "thinking" not in upstream.bodies[0]  # omitted: the model thinks unless told not to
    [(index, _)] = text_parts(result.all_messages())
    assert index == 0


async def test_a_second_turn_reads_the_text_pair_back_and_sends_it_unchanged(
    upstream: Upstream,
) -> None:
    async with hooks_app("memories") as kit:
        hooked = agent(kit, upstream, ENABLED)
        first = await hooked.run("What is the weather?")
        second = await hooked.run("And tomorrow?", message_history=first.all_messages())
        assert len(kit.tools.memory.calls) == 1  # the TTL is fresh: the hook fires once
    assert all(found == [] for found in upstream.violations)
    turn_one, turn_two = upstream.bodies[1], upstream.bodies[2]
    assert turn_two["messages"][: len(turn_one["messages"])] == turn_one["messages"]
    assert text_parts(second.all_messages()) == text_parts(first.all_messages())


async def test_a_ttl_refresh_replaces_the_text_pair_in_place_still_text(
    upstream: Upstream,
) -> None:
    async with hooks_app("memories") as kit:
        hooked = agent(kit, upstream, ENABLED)
        first = await hooked.run("What is the weather?")
        kit.clock.at += TTL_SECONDS + 1
        second = await hooked.run("And tomorrow?", message_history=first.all_messages())
        assert len(kit.tools.memory.calls) == 2
    assert all(found == [] for found in upstream.violations)
    [(index, old)] = text_parts(first.all_messages())
    [(again, new)] = text_parts(second.all_messages())
    assert index == again == 0
    assert new.content != old.content  # a new id: the TTL is stamped again
    assert not any(tool_uses(body) and "ah_" in str(tool_uses(body)) for body in upstream.bodies)


async def test_a_pair_before_the_current_cycle_stays_a_pair(upstream: Upstream) -> None:
    async with hooks_app("memories") as kit:
        first = await agent(kit, upstream, {}).run("What is the weather?")
        second = await agent(kit, upstream, ENABLED).run(
            "And tomorrow?", message_history=first.all_messages()
        )
    assert all(found == [] for found in upstream.violations)
    synthetic = [i for i in tool_uses(upstream.bodies[0]) if i.startswith("ah_")]
    assert len(synthetic) == 1
    assert synthetic[0] in tool_uses(upstream.bodies[-1])  # still a tool_use, before the cycle
    assert text_parts(second.all_messages()) == []


async def test_without_thinking_pairs_stay_tool_calls(upstream: Upstream) -> None:
    async with hooks_app("memories") as kit:
        result = await agent(kit, upstream, {}).run("What is the weather?")
    assert all(found == [] for found in upstream.violations)
    assert text_parts(result.all_messages()) == []
    assert isinstance(result.all_messages()[1], ModelResponse)


async def test_a_signed_text_pair_still_verifies_on_the_next_turn(
    upstream: Upstream, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_HOOKS_SIGNING_KEY", "test-key")
    async with hooks_app("notes") as kit:
        hooked = agent(kit, upstream, ENABLED)
        first = await hooked.run("What is the weather?")
        second = await hooked.run("And tomorrow?", message_history=first.all_messages())
        assert len(kit.tools.profile.calls) == 1  # its arguments came back: the pair verified
    assert "_s" in str(text_parts(first.all_messages())[0][1].content)
    assert text_parts(second.all_messages()) == text_parts(first.all_messages())
    request = second.all_messages()[0]
    assert isinstance(request, ModelRequest)
    assert request.metadata is not None
    assert list(request.metadata[ARGUMENTS_KEY].values()) == ['{"topic": "weather"}']
