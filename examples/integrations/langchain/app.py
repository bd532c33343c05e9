"""Hooks inside a LangChain v1 agent, with LangChain's fake chat model (no key, no network).

    pip install 'agent-hooks-injector[langchain]'
    python examples/integrations/langchain/app.py

Two turns on one checkpointed thread: the first injects the time and the user's profile after the
question; the second keeps the time pair (its TTL is fresh, so ``current_time`` is not called
again) and replaces the unchanged profile in place. The model prints what it received.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from injector import Module, multiprovider
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langgraph.checkpoint.memory import InMemorySaver

from agent_hooks import HookRunner, open_app
from agent_hooks.config import ApplicationConfig
from agent_hooks.integrations.langchain import AgentHooksMiddleware
from agent_hooks.tools import StagedBaseTool

MANIFEST = Path(__file__).resolve().parents[1] / "manifest.json"


class UserProfile(StagedBaseTool):
    """The host's own tool: what it knows about a user."""

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        return f"{arguments['user']} prefers short answers and green tea"


class LogAnswer(StagedBaseTool):
    """Runs after the answer (on_completion): here it only prints it."""

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        print(f"  on_completion saw the answer: {arguments['answer']!r}")
        return "logged"


class HostTools(Module):
    @multiprovider
    def tools(self) -> list[StagedBaseTool]:
        return [UserProfile(name="user_profile"), LogAnswer(name="log_answer")]


class ShowingModel(GenericFakeChatModel):
    """LangChain's fake chat model, printing what it was sent."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        for message in messages:
            call_id = getattr(message, "tool_call_id", "") or "".join(
                call["id"] or "" for call in getattr(message, "tool_calls", [])
            )
            print(f"  {type(message).__name__:<13} {call_id:<46} {message.content}")
        return super()._generate(messages, *args, **kwargs)


async def main() -> None:
    config = ApplicationConfig.from_file(MANIFEST, preview=True)  # preview on for this app only
    async with open_app(config, [HostTools()], preview=True) as injector:
        hooks = AgentHooksMiddleware(injector.get(HookRunner))
        model = ShowingModel(messages=iter([AIMessage("Green tea, then.")] * 2))
        agent = create_agent(model, [], middleware=[hooks], checkpointer=InMemorySaver())
        thread = {"configurable": {"thread_id": "ann-1"}}
        for turn, question in enumerate(["What should I drink?", "And later?"], start=1):
            print(f"turn {turn}: the model received")
            await agent.ainvoke(
                {"messages": [{"role": "user", "content": question}]},
                thread,
                context={"user_id": "ann"},
            )


if __name__ == "__main__":
    asyncio.run(main())
