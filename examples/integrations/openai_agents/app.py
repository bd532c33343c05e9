"""Hooks inside an OpenAI Agents SDK run, with the SDK's ScriptedModel (no key, no network).

    pip install 'agent-hooks-injector[openai-agents]'
    python examples/integrations/openai_agents/app.py

Two turns of one conversation. The SDK does not keep the hooks' pairs, so the adapter keeps them
in a SQLite conversation store under the context's ``conversation_id``: the second turn gets the
time pair back (its TTL is fresh, so ``current_time`` is not called again) and the unchanged
profile replaced in place. The model's inputs are printed.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agents import Agent, RunConfig, Runner, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message
from injector import Module, multiprovider

from agent_hooks import HookRunner, open_app
from agent_hooks.config import ApplicationConfig
from agent_hooks.integrations.openai_agents import AgentHooks
from agent_hooks.state import open_store
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


def show(items: list[Any]) -> None:
    for item in items:
        kind = item.get("type", "message")
        shown = item.get("content") or item.get("output") or item.get("arguments")
        if isinstance(shown, list):  # an assistant message: its text parts
            shown = " ".join(part.get("text", "") for part in shown)
        print(f"  {kind:<21} {item.get('call_id', ''):<40} {shown}")


async def main() -> None:
    set_tracing_disabled(True)
    config = ApplicationConfig.from_file(MANIFEST, preview=True)  # preview on for this app only
    model = ScriptedModel([[assistant_message("Green tea, then.")]] * 2)
    agent = Agent(name="assistant", model=model)
    context = {"conversation_id": "ann-1", "user_id": "ann"}
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{folder}/state.db")
        async with open_app(config, [HostTools()], preview=True) as injector:
            hooks = AgentHooks(injector.get(HookRunner), store=store)
            run_config = RunConfig(call_model_input_filter=hooks.input_filter)
            history: list[Any] = []
            for turn, question in enumerate(["What should I drink?", "And later?"], start=1):
                history.append({"role": "user", "content": question})
                print(f"turn {turn}:")
                result = await Runner.run(
                    agent, history, context=context, run_config=run_config, hooks=hooks.run_hooks
                )
                print("  the model received")
                show(model.calls[-1].input)
                history = result.to_input_list()
        await store.aclose()


if __name__ == "__main__":
    asyncio.run(main())
