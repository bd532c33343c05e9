"""Hooks inside a DIAL application, driven through the SDK's own ASGI app (no key, no network).

    pip install 'agent-hooks-injector[dial]'
    python examples/integrations/dial/app.py

``AgentHooksChatCompletion`` wraps the app's ``ChatCompletion`` (here a scripted one that prints
what it received and answers). DIAL clients resend whole histories without the hooks' pairs; the
wrapper keeps them in a SQLite store under the caller's API key and ``X-Conversation-Id``, so the
second turn gets the time pair back (its TTL is fresh) and the unchanged profile replaced in place.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import httpx
from aidial_sdk import DIALApp
from aidial_sdk.chat_completion import ChatCompletion, Request, Response
from injector import Module, multiprovider

from agent_hooks import HookRunner, open_app
from agent_hooks.config import ApplicationConfig
from agent_hooks.integrations.dial import AgentHooksChatCompletion
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


class Assistant(ChatCompletion):
    """The DIAL app being wrapped: a scripted one, printing what it was sent."""

    async def chat_completion(self, request: Request, response: Response) -> None:
        print("  the app received")
        for message in request.messages:
            call_id = message.tool_call_id or "".join(c.id for c in message.tool_calls or [])
            print(f"  {message.role.value:<10} {call_id:<40} {message.content}")
        with response.create_single_choice() as choice:
            choice.append_content("Green tea, then.")


async def main() -> None:
    config = ApplicationConfig.from_file(MANIFEST, preview=True)  # preview on for this app only
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"sqlite:///{folder}/state.db")
        async with open_app(config, [HostTools()], preview=True) as injector:
            app = DIALApp()
            hooks = AgentHooksChatCompletion(Assistant(), injector.get(HookRunner), store=store)
            app.add_chat_completion("assistant", hooks)
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://dial") as client:
                headers = {"Api-Key": "dial-key-of-ann", "X-Conversation-Id": "ann-1"}
                messages: list[dict[str, Any]] = []
                for turn, question in enumerate(["What should I drink?", "And later?"], 1):
                    print(f"turn {turn}:")
                    messages.append({"role": "user", "content": question})
                    answer = await client.post(
                        "/openai/deployments/assistant/chat/completions",
                        json={"messages": messages, "user": "ann"},
                        headers=headers,
                    )
                    reply = answer.json()["choices"][0]["message"]
                    messages.append({"role": "assistant", "content": reply["content"]})
        await store.aclose()


if __name__ == "__main__":
    asyncio.run(main())
