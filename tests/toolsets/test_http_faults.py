"""Every way an HTTP tool can fail ends in one line that names the cause and quotes no secret."""

from __future__ import annotations

import base64
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from agent_hooks.config.toolsets import DeploymentToolsetConfig, RestApiToolsetConfig
from agent_hooks.errors import ToolError, ToolTimeoutError
from agent_hooks.tools._call_context import ToolCallContext, call_context
from agent_hooks.toolsets._base import Toolset
from agent_hooks.toolsets.deployment import DeploymentToolset
from agent_hooks.toolsets.rest import RestApiToolset
from tests.servers.fixtures import CHAT_API_KEY, RecordingServer
from tests.servers.processes import free_port

SECRET = "sk-LEAK-7c1d2e3f4a5b6978"
TIMEOUT = 1.0
KEY_ENV = "FAULTS_DIAL_KEY"
TOKEN_ENV = "FAULTS_TOKEN"

REST_TOOLS = [
    {"name": "error", "path": "/status/500"},
    {"name": "missing", "path": "/status/404"},
    {"name": "echo", "path": "/echo-secrets"},
    {"name": "loop", "path": "/loop"},
    {"name": "drip", "path": "/drip"},
    {"name": "big", "path": "/big"},
]
DEPLOYMENTS = ["garbled", "loop", "huge", "endless", "slow", "summarizer"]


def _with_credentials(url: str) -> str:
    return url.replace("http://", f"http://leak:{SECRET}@")


def _rest(base_url: str, headers: dict[str, Any] | None = None) -> RestApiToolset:
    config = {
        "name": "api",
        "base_url": base_url,
        "headers": headers or {},
        "timeout_seconds": TIMEOUT,
        "tools": REST_TOOLS,
    }
    return RestApiToolset(RestApiToolsetConfig.model_validate(config))


def _deployments(endpoint: str, key_env: str = KEY_ENV) -> DeploymentToolset:
    config = {
        "name": "dial",
        "endpoint": endpoint,
        "api_key_env": key_env,
        "timeout_seconds": TIMEOUT,
        "tools": [{"name": name, "deployment": name} for name in DEPLOYMENTS],
    }
    return DeploymentToolset(DeploymentToolsetConfig.model_validate(config))


async def _call(toolset: Toolset, name: str, **arguments: Any) -> str | None:
    tool = await toolset.find_tool(name)
    assert tool is not None
    with anyio.fail_after(TIMEOUT + 2):  # whatever the server does, the call ends in time
        return await tool.execute(arguments)


async def _bytes_streamed(server: RecordingServer) -> list[int]:
    """What the server's streams sent before the client went away (the server waits for them
    to end, bounded)."""
    async with httpx.AsyncClient(timeout=30) as client:
        sent: list[int] = (await client.get(f"{server.url}/_streamed")).json()
        return sent


async def _failure(toolset: Toolset, name: str, **arguments: Any) -> str:
    """The reason of the tool error the call ends in, checked to be one line."""
    with pytest.raises(ToolError) as caught:
        await _call(toolset, name, **arguments)
    reason = caught.value.reason
    assert "\n" not in str(caught.value)
    return reason


@pytest.fixture
async def rest(rest_server: RecordingServer) -> AsyncIterator[RestApiToolset]:
    async with _rest(rest_server.url) as toolset:
        yield toolset


@pytest.fixture
async def dial(
    chat_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[DeploymentToolset]:
    monkeypatch.setenv(KEY_ENV, CHAT_API_KEY)
    async with _deployments(chat_server.url) as toolset:
        yield toolset


@pytest.mark.parametrize(
    ("tool", "reason"),
    [
        ("api_error", r"GET http://127\.0\.0\.1:\d+/status/500 returned HTTP 500: the server"),
        ("api_missing", r"returned HTTP 404: the server says 404 with details$"),
        ("api_loop", r"returned HTTP 302 \(a redirect to /loop, not followed\): \(empty body\)$"),
    ],
)
async def test_a_failing_rest_call_names_the_request_and_the_status(
    rest: RestApiToolset, tool: str, reason: str
) -> None:
    with pytest.raises(ToolError, match=reason):
        await _call(rest, tool)


async def test_an_endless_rest_body_is_read_only_up_to_the_bound(
    rest: RestApiToolset, rest_server: RecordingServer
) -> None:
    with call_context(ToolCallContext(max_content_chars=1_000)):
        text = await _call(rest, "api_big", bytes=0)  # the server never stops sending
    assert text == "x" * 4_000
    [sent] = await _bytes_streamed(rest_server)
    assert sent < 64 * 1024 * 1024  # what socket buffers hold, not the endless body


async def test_a_server_that_drips_bytes_is_stopped_by_the_toolset_timeout(
    rest: RestApiToolset,
) -> None:
    with pytest.raises(ToolTimeoutError, match=r"timed out after 1 seconds"):
        await _call(rest, "api_drip")


async def test_a_refused_connection_is_a_one_line_tool_error() -> None:
    async with _rest(f"http://127.0.0.1:{free_port()}") as toolset:
        reason = await _failure(toolset, "api_error")
    assert "ConnectError" in reason


async def test_a_huge_deployment_answer_is_too_large(dial: DeploymentToolset) -> None:
    assert await _failure(dial, "huge") == "answer too large"


async def test_an_endless_deployment_answer_is_read_only_up_to_the_bound(
    dial: DeploymentToolset, chat_server: RecordingServer
) -> None:
    assert await _failure(dial, "endless") == "answer too large"
    [sent] = await _bytes_streamed(chat_server)
    assert sent < 64 * 1024 * 1024


@pytest.mark.parametrize(
    ("tool", "reason"),
    [
        ("garbled", "not JSON: <html>this is not json</html>"),
        ("loop", "returned HTTP 307 (a redirect to /openai/deployments/loop/chat/completions"),
    ],
)
async def test_a_bad_deployment_answer_is_a_one_line_reason(
    dial: DeploymentToolset, tool: str, reason: str
) -> None:
    assert reason in await _failure(dial, tool)


async def test_one_secret_behind_every_kind_of_reference_never_reaches_logs_or_reasons(
    rest_server: RecordingServer,
    chat_server: RecordingServer,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(TOKEN_ENV, f"  Bearer {SECRET}\n")
    monkeypatch.setenv(KEY_ENV, SECRET)  # a wrong key: the chat server echoes it in its 401
    monkeypatch.setenv("FAULTS_RIGHT_KEY", CHAT_API_KEY)
    headers = {"Authorization": {"env": TOKEN_ENV}, "X-Api-Key": SECRET}
    reasons: list[str] = []

    async with _rest(rest_server.url, headers) as rest:
        for tool in ("api_error", "api_missing", "api_echo", "api_loop", "api_drip"):
            with pytest.raises(ToolError) as caught:
                await _call(rest, tool)
            reasons.append(str(caught.value))
        with call_context(ToolCallContext(max_content_chars=10)):
            await _call(rest, "api_big", bytes=10_000_000)
        for bad in (f"Bearer {SECRET}\x1b", f"Bearer {SECRET}é"):
            monkeypatch.setenv(TOKEN_ENV, bad)
            reasons.append(await _failure(rest, "api_echo"))
    async with _rest(_with_credentials(rest_server.url)) as rest:
        reasons += [await _failure(rest, "api_echo"), await _failure(rest, "api_error")]
    async with _rest(_with_credentials(f"http://127.0.0.1:{free_port()}")) as refused:
        reasons.append(await _failure(refused, "api_error"))

    async with _deployments(chat_server.url) as wrong_key:
        reasons.append(await _failure(wrong_key, "summarizer"))
    async with _deployments(_with_credentials(chat_server.url), "FAULTS_RIGHT_KEY") as dial:
        for tool in ("garbled", "loop", "huge", "slow"):
            with pytest.raises(ToolError) as caught:
                await _call(dial, tool)
            reasons.append(str(caught.value))
    async with _deployments(_with_credentials(f"http://127.0.0.1:{free_port()}")) as refused:
        reasons.append(await _failure(refused, "summarizer"))

    basic = base64.b64encode(f"leak:{SECRET}".encode()).decode()
    fragments = {SECRET[i : i + 8] for i in range(len(SECRET) - 7)} | {basic}
    assert len(reasons) == 16
    assert any("***" in reason for reason in reasons)  # the echoing servers were scrubbed
    assert {"httpx", "httpcore.http11"} <= {record.name for record in caplog.records}
    for text in [*reasons, caplog.text]:
        leaked = sorted(fragment for fragment in fragments if fragment in text)
        assert not leaked, text
