"""LangChain v1 agents with the middleware, driven by LangChain's own fake chat model."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from agent_hooks import HookFailedError
from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.integrations.langchain import AgentHooksMiddleware
from tests.integrations._kit import MEMORY, hooks_app

ANSWER = "You like green tea."


class RecordingModel(GenericFakeChatModel):
    """LangChain's generic fake chat model, keeping the messages of every call."""

    received: list[list[BaseMessage]]

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


def model() -> RecordingModel:
    answers: Iterator[AIMessage] = iter([AIMessage(ANSWER) for _ in range(5)])
    return RecordingModel(messages=answers, received=[])


def pairs_in(messages: list[BaseMessage]) -> list[tuple[AIMessage, ToolMessage]]:
    return [
        (current, following)
        for current, following in itertools.pairwise(messages)
        if isinstance(current, AIMessage)
        and isinstance(following, ToolMessage)
        and current.tool_calls
        and is_synthetic_call_id(following.tool_call_id)
    ]


def thread(name: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": name}}


async def test_the_pair_reaches_the_model_right_after_the_question_with_matching_ids() -> None:
    fake = model()
    question = HumanMessage("What do I like?", id="q1", name="ann")
    async with hooks_app("memories") as kit:
        agent = create_agent(fake, [], middleware=[AgentHooksMiddleware(kit.runner)])
        result = await agent.ainvoke({"messages": [question]})
    assert result["messages"][-1].content == ANSWER
    sent, call, answer = fake.received[0]
    assert (sent.id, sent.name, sent.content) == ("q1", "ann", "What do I like?")
    assert isinstance(call, AIMessage)
    assert isinstance(answer, ToolMessage)
    [tool_call] = call.tool_calls
    assert tool_call["id"] == answer.tool_call_id
    assert is_synthetic_call_id(answer.tool_call_id)
    assert (tool_call["name"], answer.name, answer.content) == ("memory", "memory", MEMORY)


async def test_a_second_turn_within_the_ttl_does_not_call_the_tool_again() -> None:
    fake = model()
    async with hooks_app("memories") as kit:
        agent = create_agent(
            fake, [], middleware=[AgentHooksMiddleware(kit.runner)], checkpointer=InMemorySaver()
        )
        await agent.ainvoke({"messages": [HumanMessage("What do I like?")]}, thread("t1"))
        await agent.ainvoke({"messages": [HumanMessage("And what else?")]}, thread("t1"))
        assert len(kit.tools.memory.calls) == 1
    first, second = fake.received
    assert len(pairs_in(second)) == 1
    assert pairs_in(second)[0][1].tool_call_id == pairs_in(first)[0][1].tool_call_id


def test_the_sync_invoke_runs_the_hooks_on_one_background_loop() -> None:
    import asyncio

    async def scenario() -> None:
        fake = model()
        async with hooks_app("memories", "audit") as kit:
            agent = create_agent(
                fake,
                [],
                middleware=[AgentHooksMiddleware(kit.runner)],
                checkpointer=InMemorySaver(),
            )
            for question in ("What do I like?", "And what else?"):
                messages = {"messages": [HumanMessage(question)]}
                await asyncio.to_thread(agent.invoke, messages, thread("t1"))
            assert len(kit.tools.memory.calls) == 1
            assert [call["answer"] for call in kit.tools.audit.calls] == [ANSWER, ANSWER]
        assert len(pairs_in(fake.received[1])) == 1

    asyncio.run(scenario())


async def test_on_completion_receives_the_final_answer_and_the_thread() -> None:
    async with hooks_app("audit") as kit:
        agent = create_agent(
            model(), [], middleware=[AgentHooksMiddleware(kit.runner)], checkpointer=InMemorySaver()
        )
        await agent.ainvoke({"messages": [HumanMessage("What do I like?")]}, thread("t9"))
        [call] = kit.tools.audit.calls
    assert call["answer"] == ANSWER
    assert call["request"] == {"conversation_id": "t9"}


async def test_the_request_context_reaches_a_template() -> None:
    fake = model()
    async with hooks_app("profile") as kit:
        agent = create_agent(fake, [], middleware=[AgentHooksMiddleware(kit.runner)])
        await agent.ainvoke({"messages": [HumanMessage("Who am I?")]}, context={"user_id": "u7"})
        assert kit.tools.profile.calls == [{"user": "u7"}]
    [(_, answer)] = pairs_in(fake.received[0])
    assert json.loads(str(answer.content)) == {"user": "u7"}


async def test_a_failing_hook_does_not_fail_the_run() -> None:
    fake = model()
    async with hooks_app("broken", "memories") as kit:
        agent = create_agent(fake, [], middleware=[AgentHooksMiddleware(kit.runner)])
        result = await agent.ainvoke({"messages": [HumanMessage("What do I like?")]})
    assert result["messages"][-1].content == ANSWER
    assert [pair[1].name for pair in pairs_in(fake.received[0])] == ["memory"]


async def test_nothing_is_rewritten_when_the_hooks_change_nothing() -> None:
    fake = model()
    question = HumanMessage("What do I like?", id="q1")
    async with hooks_app("broken") as kit:
        agent = create_agent(fake, [], middleware=[AgentHooksMiddleware(kit.runner)])
        result = await agent.ainvoke({"messages": [question]})
    assert [m.id for m in result["messages"][:1]] == ["q1"]
    assert fake.received[0] == [question]


async def test_on_error_fail_raises_hook_failed_error_out_of_the_agent() -> None:
    fake = model()
    async with hooks_app("strict") as kit:
        agent = create_agent(fake, [], middleware=[AgentHooksMiddleware(kit.runner)])
        with pytest.raises(HookFailedError) as caught:
            await agent.ainvoke({"messages": [HumanMessage("What do I like?")]})
    assert caught.value.hook == "strict"
    assert fake.received == []
