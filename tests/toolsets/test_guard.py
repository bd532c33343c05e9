"""Every tool result passes the guard, which scrubs our own secrets out of it before a hook can
inject it (SPEC section 9): tools that reflect their request, against real servers, driven through
the runner so the assertion is on the history the model would read."""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from agent_hooks import HookEvent, HookOutcome, HookRun, HookRunner, open_app
from agent_hooks.config import ApplicationConfig
from agent_hooks.errors import ToolTimeoutError
from agent_hooks.tools import StagedBaseTool
from agent_hooks.tools._fallback import ErrorMessageStrategy, FallbackProcessor
from agent_hooks.toolsets._guard import GuardedTool
from tests._support import msg
from tests._support.manifests import hook
from tests.servers.fixtures import RecordingServer
from tests.servers.processes import FLAKY_MCP_SERVER

pytestmark = pytest.mark.usefixtures("preview_on")

DEADLINE = 30

HISTORY = [msg(role="user", content="What do you know about me?")]

TOKEN = "sk-live-guard-7c1e5a90b2d4"
"""An API key only this module uses, so nothing else registered it for scrubbing first."""


def echo_api(name: str, base_url: str, headers: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "rest-api",
        "name": name,
        "base_url": base_url,
        "headers": headers,
        "tools": [{"name": "echo", "path": "/echo-headers"}],
    }


async def run(manifest: dict[str, Any]) -> HookRun:
    config = ApplicationConfig.model_validate(manifest)
    with anyio.fail_after(DEADLINE):
        async with open_app(config, preview=True) as injector:
            return await injector.get(HookRunner).run(HookEvent.ON_REQUEST_START, HISTORY)


def tool_contents(result: HookRun) -> list[str]:
    return [m.content for m in result.messages if m.role == "tool" and isinstance(m.content, str)]


async def test_credentials_a_rest_api_echoes_back_are_not_injected(
    rest_server: RecordingServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GUARD_TEST_TOKEN", f"Bearer {TOKEN}")
    address = urlsplit(rest_server.url).netloc
    manifest = {
        "toolsets": [
            echo_api("keyed", rest_server.url, {"Authorization": {"env": "GUARD_TEST_TOKEN"}}),
            echo_api("basic", f"http://guard-user:guard-pass-31f9@{address}", {}),
        ],
        "hooks": [hook("echo", "keyed", {}), hook("echo", "basic", {})],
    }
    result = await run(manifest)
    assert [r.outcome for r in result.records] == [HookOutcome.INJECTED] * 2
    keyed, basic = (json.loads(content) for content in tool_contents(result))
    assert keyed["authorization"] == "***"
    assert basic["authorization"] == "Basic ***"
    sent = [entry["headers"]["authorization"] for entry in rest_server.received()]
    assert sent[0] == f"Bearer {TOKEN}"  # the API itself did get the credentials
    assert sent[1].startswith("Basic ")
    dumped = json.dumps([m.to_openai() for m in result.messages])
    assert TOKEN not in dumped
    assert sent[1].removeprefix("Basic ") not in dumped


async def test_literal_header_values_a_rest_api_echoes_back_are_not_injected(
    rest_server: RecordingServer,
) -> None:
    """SPEC 16: a header value written in the manifest in clear is a secret too (a key pasted
    into it), whole and, for ``Bearer ...``, its token alone."""
    key, token = f"lit-key-{uuid.uuid4().hex}", f"lit-token-{uuid.uuid4().hex}"
    headers = {"api-key": key, "Authorization": f"Bearer {token}"}
    manifest = {
        "toolsets": [echo_api("literal", rest_server.url, headers)],
        "hooks": [hook("echo", "literal", {})],
    }
    result = await run(manifest)
    assert [r.outcome for r in result.records] == [HookOutcome.INJECTED]
    (echoed,) = (json.loads(content) for content in tool_contents(result))
    assert (echoed["api-key"], echoed["authorization"]) == ("***", "***")
    sent = rest_server.received()[0]["headers"]
    assert (sent["api-key"], sent["authorization"]) == (key, f"Bearer {token}")
    dumped = json.dumps([m.to_openai() for m in result.messages])
    assert key not in dumped
    assert token not in dumped


async def test_a_secret_an_mcp_server_quotes_from_its_environment_is_not_injected(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GUARD_TEST_SERVER_KEY", TOKEN)
    server = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(FLAKY_MCP_SERVER)],
        "env": {"UPSTREAM_KEY": {"env": "GUARD_TEST_SERVER_KEY"}},
    }
    manifest = {
        "toolsets": [{"type": "mcp", "name": "flaky", "server": server}],
        "hooks": [hook("getenv", "flaky", {"name": "UPSTREAM_KEY"})],
    }
    result = await run(manifest)
    assert [r.outcome for r in result.records] == [HookOutcome.INJECTED]
    assert tool_contents(result) == ["***"]


# The toolset's own timeout: its timer is set only once a call is still running after its first
# step, and then expires when it would have, counted from the call's start.


class Answers(StagedBaseTool):
    """Answers after yielding to the event loop ``waits`` times (0: at once)."""

    def __init__(self, waits: int) -> None:
        super().__init__(name="answers")
        self.waits = waits

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        for _ in range(self.waits):
            await asyncio.sleep(0)
        return "answer"


class Hangs(StagedBaseTool):
    """Yields once, then never answers."""

    name = "hangs"

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        await asyncio.sleep(0)
        await asyncio.Event().wait()
        return "never"


@pytest.mark.parametrize("waits", [0, 1, 3])
async def test_a_call_that_answers_in_time_is_not_timed_out(waits: int) -> None:
    guarded = GuardedTool(Answers(waits), timeout_seconds=0.05)
    assert await guarded.execute({}) == "answer"


async def test_a_call_still_running_at_the_toolset_timeout_is_a_tool_timeout() -> None:
    guarded = GuardedTool(Hangs(), timeout_seconds=0.1)
    with anyio.fail_after(DEADLINE), pytest.raises(ToolTimeoutError, match=r"after 0\.1 seconds"):
        await guarded.execute({})


async def test_the_toolset_fallback_answers_for_a_call_that_timed_out() -> None:
    fallback = FallbackProcessor([ErrorMessageStrategy("{tool} is slow")])
    guarded = GuardedTool(Hangs(), timeout_seconds=0.1, fallback=fallback)
    with anyio.fail_after(DEADLINE):
        assert await guarded.execute({}) == "hangs is slow"
