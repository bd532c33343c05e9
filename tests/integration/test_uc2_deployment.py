"""UC-2: a chat-completion deployment tool, looked up by its verbatim name."""

from __future__ import annotations

import pytest

from agent_hooks import open_app
from agent_hooks.config import ApplicationConfig
from tests._support.manifests import hook
from tests.integration._app import HISTORY, run_hooks, tool_pairs
from tests.servers.fixtures import CHAT_API_KEY, RecordingServer

pytestmark = pytest.mark.usefixtures("preview_on")


async def test_the_deployment_answer_is_injected_under_its_verbatim_name(
    chat_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DIAL_API_KEY", CHAT_API_KEY)
    config = ApplicationConfig.from_dict(
        {
            "toolsets": [
                {
                    "type": "deployment",
                    "name": "dial",
                    "endpoint": chat_server.url,
                    "api_key_env": "DIAL_API_KEY",
                    "tools": [{"name": "My_Summarizer_tool", "deployment": "summarizer"}],
                }
            ],
            "hooks": [
                hook(
                    tool_name="My_Summarizer_tool",
                    arguments={"topic": "the user"},
                    frequency="always",
                )
            ],
        }
    )
    async with open_app(config) as injector:
        result = await run_hooks(injector, HISTORY)
    assert result[:2] == list(HISTORY)
    assert tool_pairs(result) == [
        ("My_Summarizer_tool", '{"topic": "the user"}', 'summarizer read {"topic": "the user"}')
    ]
    [record] = chat_server.received()
    assert record["raw_path"] == "/openai/deployments/summarizer/chat/completions"
    assert record["headers"]["api-key"] == CHAT_API_KEY
