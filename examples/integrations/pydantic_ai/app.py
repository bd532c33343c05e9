"""Hooks inside a Pydantic AI agent, with Pydantic AI's FunctionModel (no key, no network).

    pip install 'agent-hooks-injector[pydantic-ai]'
    python examples/integrations/pydantic_ai/app.py

Two turns of one conversation: the first injects the time and the user's profile after the
question; the second keeps the time pair (its TTL is fresh, so ``current_time`` is not called
again) and replaces the unchanged profile in place. The model prints what it received.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from injector import Module, multiprovider
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agent_hooks import HookRunner, open_app
from agent_hooks.config import ApplicationConfig
from agent_hooks.integrations.pydantic_ai import AgentHooksCapability
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


def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A scripted model that shows what it was sent."""
    for message in messages:
        for part in message.parts:
            call_id = getattr(part, "tool_call_id", "")
            shown = getattr(part, "content", None) or getattr(part, "args", "")
            print(f"  {type(part).__name__:<15} {call_id:<42} {shown}")
    return ModelResponse(parts=[TextPart("Green tea, then.")])


async def main() -> None:
    config = ApplicationConfig.from_file(MANIFEST, preview=True)  # preview on for this app only
    async with open_app(config, [HostTools()], preview=True) as injector:
        hooks = AgentHooksCapability(injector.get(HookRunner))
        agent = Agent(FunctionModel(model), capabilities=[hooks])
        print("turn 1: the model received")
        first = await agent.run("What should I drink?", deps={"user_id": "ann"})
        print("turn 2: the model received")
        await agent.run("And later?", deps={"user_id": "ann"}, message_history=first.all_messages())


if __name__ == "__main__":
    asyncio.run(main())
