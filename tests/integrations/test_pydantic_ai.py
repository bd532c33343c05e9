"""Pydantic AI runs with the capability, driven by Pydantic AI's own ``FunctionModel``."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass

import pytest

pytest.importorskip("pydantic_ai")

from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_hooks import HookFailedError
from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.integrations.pydantic_ai import AgentHooksCapability
from tests.integrations._kit import MEMORY, hooks_app

ANSWER = "You like green tea."


@dataclass
class Model:
    """Pydantic AI's function model, keeping what it received on every call."""

    answer: str = ANSWER
    received: list[list[ModelMessage]] | None = None

    def __post_init__(self) -> None:
        self.received = []

    def function_model(self) -> FunctionModel:
        def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            assert self.received is not None
            self.received.append(list(messages))
            return ModelResponse(parts=[TextPart(self.answer)])

        return FunctionModel(respond)


def pairs_in(messages: list[ModelMessage]) -> list[tuple[ToolCallPart, ToolReturnPart]]:
    """Every synthetic call part with the return part of the message right after it."""
    found = []
    for current, following in itertools.pairwise(messages):
        if not isinstance(current, ModelResponse) or not isinstance(following, ModelRequest):
            continue
        for call in current.parts:
            if isinstance(call, ToolCallPart) and is_synthetic_call_id(call.tool_call_id):
                answer = following.parts[0]
                assert isinstance(answer, ToolReturnPart)
                found.append((call, answer))
    return found


async def test_the_pair_reaches_the_model_right_after_the_prompt_with_matching_ids() -> None:
    model = Model()
    async with hooks_app("memories") as kit:
        agent = Agent(model.function_model(), capabilities=[AgentHooksCapability(kit.runner)])
        result = await agent.run("What do I like?")
    assert result.output == ANSWER
    assert model.received is not None
    prompt, call, answer = model.received[0]
    assert isinstance(prompt, ModelRequest)
    assert isinstance(prompt.parts[0], UserPromptPart)
    assert prompt.parts[0].content == "What do I like?"
    assert isinstance(call, ModelResponse)
    assert isinstance(answer, ModelRequest)
    [(call_part, answer_part)] = pairs_in(model.received[0])
    assert call_part.tool_name == answer_part.tool_name == "memory"
    assert call_part.tool_call_id == answer_part.tool_call_id
    assert answer_part.content == MEMORY
    assert pairs_in(result.all_messages()) == [(call_part, answer_part)]  # kept in the history


async def test_a_second_turn_within_the_ttl_does_not_call_the_tool_again() -> None:
    model = Model()
    async with hooks_app("memories") as kit:
        agent = Agent(model.function_model(), capabilities=[AgentHooksCapability(kit.runner)])
        first = await agent.run("What do I like?")
        second = await agent.run("And what else?", message_history=first.all_messages())
        assert len(kit.tools.memory.calls) == 1
    assert model.received is not None
    assert len(pairs_in(model.received[1])) == 1
    assert pairs_in(second.all_messages()) == pairs_in(first.all_messages())


async def test_messages_the_hooks_do_not_touch_come_back_as_the_same_objects() -> None:
    model = Model()
    async with hooks_app("memories") as kit:
        agent = Agent(model.function_model(), capabilities=[AgentHooksCapability(kit.runner)])
        first = await agent.run("What do I like?")
        history = first.all_messages()
        await agent.run("And what else?", message_history=history)
    assert model.received is not None
    assert all(sent is kept for sent, kept in zip(model.received[1], history, strict=False))


async def test_on_completion_receives_the_final_answer_and_the_run_context() -> None:
    async with hooks_app("audit") as kit:
        agent = Agent(Model().function_model(), capabilities=[AgentHooksCapability(kit.runner)])
        result = await agent.run("What do I like?", deps={"user_id": "u7"})
        [call] = kit.tools.audit.calls
    assert call["answer"] == ANSWER
    assert call["request"] == {"conversation_id": result.conversation_id, "user_id": "u7"}


async def test_a_structured_output_reaches_on_completion_as_its_json() -> None:
    class Verdict(BaseModel):
        likes: str

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        [tool] = info.output_tools
        return ModelResponse(parts=[ToolCallPart(tool.name, {"likes": "tea"})])

    async with hooks_app("audit") as kit:
        agent = Agent(
            FunctionModel(respond),
            output_type=Verdict,
            capabilities=[AgentHooksCapability(kit.runner)],
        )
        await agent.run("What do I like?")
        [call] = kit.tools.audit.calls
    assert json.loads(call["answer"]) == {"likes": "tea"}


async def test_the_request_context_reaches_a_template() -> None:
    model = Model()
    async with hooks_app("profile") as kit:
        agent = Agent(model.function_model(), capabilities=[AgentHooksCapability(kit.runner)])
        await agent.run("Who am I?", deps={"user_id": "u7"})
        assert kit.tools.profile.calls == [{"user": "u7"}]
    assert model.received is not None
    [(_, answer)] = pairs_in(model.received[0])
    assert json.loads(answer.model_response_str()) == {"user": "u7"}


async def test_a_custom_request_callable_is_given_the_run_context() -> None:
    async with hooks_app("profile") as kit:
        capability = AgentHooksCapability(
            kit.runner, request=lambda ctx: {"user_id": f"from {ctx.prompt}"}
        )
        await Agent(Model().function_model(), capabilities=[capability]).run("Who am I?")
        assert kit.tools.profile.calls == [{"user": "from Who am I?"}]


async def test_a_failing_hook_does_not_fail_the_run() -> None:
    model = Model()
    async with hooks_app("broken", "memories") as kit:
        agent = Agent(model.function_model(), capabilities=[AgentHooksCapability(kit.runner)])
        result = await agent.run("What do I like?")
    assert result.output == ANSWER
    assert model.received is not None
    assert [call.tool_name for call, _ in pairs_in(model.received[0])] == ["memory"]


async def test_a_failing_request_callable_costs_the_hooks_not_the_run() -> None:
    def broken_request(ctx: object) -> dict[str, str]:
        raise LookupError("no user")

    model = Model()
    async with hooks_app("memories") as kit:
        capability = AgentHooksCapability(kit.runner, request=broken_request)
        result = await Agent(model.function_model(), capabilities=[capability]).run("Hi")
        assert kit.tools.memory.calls == []
    assert result.output == ANSWER


async def test_on_error_fail_raises_hook_failed_error_out_of_the_run() -> None:
    model = Model()
    async with hooks_app("strict") as kit:
        agent = Agent(model.function_model(), capabilities=[AgentHooksCapability(kit.runner)])
        with pytest.raises(HookFailedError) as caught:
            await agent.run("What do I like?")
    assert caught.value.hook == "strict"
    assert model.received == []
