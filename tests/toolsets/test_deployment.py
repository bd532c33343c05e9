from __future__ import annotations

import json

import pytest

from agent_hooks.config.toolsets import DeploymentToolsetConfig
from agent_hooks.errors import ToolError, ToolTimeoutError
from agent_hooks.toolsets.deployment import DeploymentToolset, answer_content
from tests.servers.fixtures import CHAT_API_KEY, RecordingServer

KEY_ENV = "TEST_DIAL_API_KEY"


def _toolset(endpoint: str, *, timeout_seconds: float = 5) -> DeploymentToolset:
    config = DeploymentToolsetConfig(
        name="dial",
        endpoint=endpoint,
        api_key_env=KEY_ENV,
        timeout_seconds=timeout_seconds,
        tools=[
            {"name": "My_Summarizer_tool", "deployment": "summarizer"},
            {"name": "broken", "deployment": "broken"},
            {"name": "slow", "deployment": "slow"},
        ],
    )
    return DeploymentToolset(config)


async def _call(toolset: DeploymentToolset, name: str, **arguments: object) -> str | None:
    tool = await toolset.find_tool(name)
    assert tool is not None
    return await tool.execute(arguments)


async def test_tools_keep_their_declared_names() -> None:
    async with _toolset("http://127.0.0.1:1") as toolset:
        assert [t.name for t in await toolset.list_tools()] == [
            "My_Summarizer_tool",
            "broken",
            "slow",
        ]
        assert not toolset.may_provide("dial_My_Summarizer_tool")


async def test_a_call_posts_one_user_message_with_the_json_arguments(
    chat_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, CHAT_API_KEY)
    async with _toolset(chat_server.url + "/") as toolset:
        answer = await _call(toolset, "My_Summarizer_tool", text="long text", max_words=5)
    assert answer == 'summarizer read {"text": "long text", "max_words": 5}'
    [record] = chat_server.received()
    assert record["method"] == "POST"
    assert record["raw_path"] == "/openai/deployments/summarizer/chat/completions"
    assert record["headers"]["api-key"] == CHAT_API_KEY
    assert record["body"] == {
        "messages": [{"role": "user", "content": json.dumps({"text": "long text", "max_words": 5})}]
    }


async def test_a_missing_key_variable_is_a_tool_error_naming_it(
    chat_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    async with _toolset(chat_server.url) as toolset:
        with pytest.raises(ToolError, match=f"'{KEY_ENV}' is not set"):
            await _call(toolset, "My_Summarizer_tool")
    assert chat_server.received() == []


async def test_a_wrong_key_is_a_tool_error_that_does_not_quote_the_key(
    chat_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, "wrong-key-value")
    async with _toolset(chat_server.url) as toolset:
        with pytest.raises(ToolError, match="HTTP 401") as caught:
            await _call(toolset, "My_Summarizer_tool")
    assert "wrong-key-value" not in str(caught.value)


async def test_a_server_error_is_a_tool_error_with_the_status(
    chat_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, CHAT_API_KEY)
    async with _toolset(chat_server.url) as toolset:
        with pytest.raises(ToolError, match="HTTP 500: upstream model failed"):
            await _call(toolset, "broken")


async def test_a_slow_deployment_times_out(
    chat_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, CHAT_API_KEY)
    async with _toolset(chat_server.url, timeout_seconds=0.2) as toolset:
        with pytest.raises(ToolTimeoutError, match=r"timed out after 0\.2 seconds"):
            await _call(toolset, "slow")


def test_the_answer_is_the_first_choice_message_content() -> None:
    body = {"choices": [{"message": {"role": "assistant", "content": "hello"}}]}
    assert answer_content(json.dumps(body), tool_name="t") == "hello"


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("<html>not json</html>", "not JSON: <html>not json</html>"),
        ('{"choices": []}', "no choices[0].message.content"),
        ('{"choices": [{"message": {}}]}', "no choices[0].message.content"),
        ('["a list"]', "no choices[0].message.content"),
        ('{"choices": [{"message": {"content": null}}]}', "content is NoneType, not text"),
    ],
)
def test_a_malformed_answer_is_a_tool_error(body: str, reason: str) -> None:
    with pytest.raises(ToolError) as caught:
        answer_content(body, tool_name="t")
    assert reason in str(caught.value)
