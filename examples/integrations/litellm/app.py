"""Hooks inside the LiteLLM proxy, served in process, its model LiteLLM's own ``mock_response``.

    pip install 'agent-hooks-injector[litellm]'
    python examples/integrations/litellm/app.py

A deployment names the callback in its proxy config (``config.yaml`` beside this file:
``callbacks: agent_hooks.integrations.litellm.handler``, built from ``AGENT_HOOKS_MANIFEST``).
This script builds the callback in Python instead, so the manifest can use the host's own tools,
and sends two turns of one session (``x-litellm-session-id``) through the proxy. Clients resend
whole histories without the hooks' pairs; the callback keeps them in a SQLite store under the
caller's key and the session, so the second turn gets the time pair back (its TTL is fresh) and
the unchanged profile replaced in place. A second callback prints what the model received.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price list from the network
os.environ.setdefault("LITELLM_MASTER_KEY", "sk-example-master-key")

import httpx
import litellm
from injector import Module, multiprovider
from litellm.integrations.custom_logger import CustomLogger

from agent_hooks import HookRunner, open_app
from agent_hooks.config import ApplicationConfig
from agent_hooks.integrations.litellm import AgentHooksCallback
from agent_hooks.state import open_store
from agent_hooks.tools import StagedBaseTool

HERE = Path(__file__).resolve().parent
MANIFEST = HERE.parent / "manifest.json"


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


class ShowModelInput(CustomLogger):
    """Prints the messages as the proxy hands them to the model."""

    def log_pre_api_call(self, model: Any, messages: Any, kwargs: Any) -> None:
        print("  the model received")
        for message in messages:
            call_id = message.get("tool_call_id") or "".join(
                call["id"] for call in message.get("tool_calls") or []
            )
            print(f"  {message['role']:<10} {call_id:<40} {message.get('content')}")


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        config_file = Path(folder) / "config.yaml"
        text = (HERE / "config.yaml").read_text()  # the same proxy config, minus `handler`
        config_file.write_text(text.split("litellm_settings:")[0])
        os.environ["CONFIG_FILE_PATH"] = str(config_file)
        from litellm.proxy import proxy_server

        config = ApplicationConfig.from_file(MANIFEST, preview=True)  # preview on for this app
        store = open_store(f"sqlite:///{folder}/state.db")
        async with (
            open_app(config, [HostTools()], preview=True) as injector,
            proxy_server.app.router.lifespan_context(proxy_server.app),
        ):
            hooks = AgentHooksCallback(
                injector.get(HookRunner),
                store=store,
                # The master key's user is "default_user_id"; this example's user is the body's.
                request=lambda key, data: {
                    "conversation_id": data.get("litellm_session_id"),
                    "user_id": data.get("user"),
                },
            )
            litellm.callbacks.extend([hooks, ShowModelInput()])
            transport = httpx.ASGITransport(app=proxy_server.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://proxy") as client:
                headers = {
                    "Authorization": f"Bearer {os.environ['LITELLM_MASTER_KEY']}",
                    "x-litellm-session-id": "ann-1",
                }
                messages: list[dict[str, Any]] = []
                for turn, question in enumerate(["What should I drink?", "And later?"], 1):
                    print(f"turn {turn}:")
                    messages.append({"role": "user", "content": question})
                    body = {"model": "scripted", "messages": messages, "user": "ann"}
                    answer = await client.post("/v1/chat/completions", json=body, headers=headers)
                    reply = answer.json()["choices"][0]["message"]
                    messages.append({"role": "assistant", "content": reply["content"]})
        await store.aclose()


if __name__ == "__main__":
    asyncio.run(main())
