"""OpenAI Agents SDK runs with the adapter, driven by the SDK's own ``ScriptedModel``."""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, RunConfig, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call
from pydantic import BaseModel

from agent_hooks import HookFailedError
from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.integrations.openai_agents import AgentHooks
from agent_hooks.state import ConversationStore, open_store
from tests.integrations._kit import MEMORY, hooks_app

ANSWER = "You like green tea."

set_tracing_disabled(True)


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[ConversationStore]:
    opened = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    yield opened
    await opened.aclose()


def answers(*texts: str) -> ScriptedModel:
    return ScriptedModel([[assistant_message(text)] for text in texts])


async def run(
    hooks: AgentHooks, model: ScriptedModel, question: str, context: Any = None, **agent: Any
) -> Any:
    return await Runner.run(
        Agent(name="assistant", model=model, **agent),
        question,
        context=context,
        run_config=RunConfig(call_model_input_filter=hooks.input_filter),
        hooks=hooks.run_hooks,
    )


def pairs_in(items: list[Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [
        (call, answer)
        for call, answer in itertools.pairwise(items)
        if call.get("type") == "function_call"
        and answer.get("type") == "function_call_output"
        and is_synthetic_call_id(call["call_id"])
        and answer["call_id"] == call["call_id"]
    ]


async def test_the_pair_reaches_the_model_right_after_the_question_as_responses_items() -> None:
    model = answers(ANSWER)
    async with hooks_app("memories") as kit:
        result = await run(AgentHooks(kit.runner), model, "What do I like?")
    assert result.final_output == ANSWER
    question, call, answer = model.calls[0].input
    assert question == {"content": "What do I like?", "role": "user"}
    assert call == {
        "type": "function_call",
        "call_id": call["call_id"],
        "name": "memory",
        "arguments": "{}",
    }
    assert answer == {"type": "function_call_output", "call_id": call["call_id"], "output": MEMORY}
    assert is_synthetic_call_id(call["call_id"])


async def test_a_second_turn_with_a_store_does_not_call_the_ttl_tool_again(
    store: ConversationStore,
) -> None:
    model = answers(ANSWER, ANSWER)
    context = {"conversation_id": "c1"}
    async with hooks_app("memories") as kit:
        hooks = AgentHooks(kit.runner, store=store)
        first = await run(hooks, model, "What do I like?", context)
        later = [*first.to_input_list(), {"role": "user", "content": "And what else?"}]
        await Runner.run(
            Agent(name="assistant", model=model),
            later,
            context=context,
            run_config=RunConfig(call_model_input_filter=hooks.input_filter),
            hooks=hooks.run_hooks,
        )
        assert len(kit.tools.memory.calls) == 1
    first_pairs, second_pairs = (pairs_in(call.input) for call in model.calls)
    assert second_pairs == first_pairs
    assert model.calls[1].input[1:3] == list(first_pairs[0])  # after the first question


async def test_within_one_run_the_pairs_are_kept_between_model_calls() -> None:
    @function_tool
    def lookup(topic: str) -> str:
        """Looks a topic up."""
        return f"notes on {topic}"

    model = ScriptedModel(
        [[function_call("lookup", {"topic": "tea"}, call_id="call_1")], [assistant_message(ANSWER)]]
    )
    async with hooks_app("memories") as kit:
        context = {"user_id": "u7"}
        hooks = AgentHooks(kit.runner)
        result = await run(hooks, model, "What do I like?", context, tools=[lookup])
        assert len(kit.tools.memory.calls) == 1
    assert result.final_output == ANSWER
    first, second = (call.input for call in model.calls)
    assert pairs_in(second) == pairs_in(first)
    assert [item.get("call_id") for item in second[3:]] == ["call_1", "call_1"]


async def test_on_completion_receives_the_final_answer_and_the_context() -> None:
    async with hooks_app("audit") as kit:
        context = {"conversation_id": "c1", "user_id": "u7"}
        await run(AgentHooks(kit.runner), answers(ANSWER), "What do I like?", context)
        [call] = kit.tools.audit.calls
    assert call == {"answer": ANSWER, "request": {"conversation_id": "c1", "user_id": "u7"}}


async def test_a_structured_output_reaches_on_completion_as_its_json() -> None:
    class Verdict(BaseModel):
        likes: str

    model = answers(json.dumps({"likes": "tea"}))
    async with hooks_app("audit") as kit:
        await run(AgentHooks(kit.runner), model, "What do I like?", output_type=Verdict)
        [call] = kit.tools.audit.calls
    assert json.loads(call["answer"]) == {"likes": "tea"}


async def test_the_request_context_reaches_a_template() -> None:
    class Context:
        user_id = "u7"

    model = answers(ANSWER)
    async with hooks_app("profile") as kit:
        await run(AgentHooks(kit.runner), model, "Who am I?", Context())
        assert kit.tools.profile.calls == [{"user": "u7"}]
    [(_, answer)] = pairs_in(model.calls[0].input)
    assert json.loads(answer["output"]) == {"user": "u7"}


async def test_a_failing_hook_does_not_fail_the_run() -> None:
    model = answers(ANSWER)
    async with hooks_app("broken", "memories") as kit:
        result = await run(AgentHooks(kit.runner), model, "What do I like?")
    assert result.final_output == ANSWER
    assert [call["name"] for call, _ in pairs_in(model.calls[0].input)] == ["memory"]


async def test_on_error_fail_raises_hook_failed_error_out_of_the_run() -> None:
    model = answers(ANSWER)
    async with hooks_app("strict") as kit:
        with pytest.raises(HookFailedError) as caught:
            await run(AgentHooks(kit.runner), model, "What do I like?")
    assert caught.value.hook == "strict"
    assert model.calls == ()
