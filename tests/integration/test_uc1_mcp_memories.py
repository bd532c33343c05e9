"""UC-1: memories from an MCP server injected at the end of every request."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import open_app
from agent_hooks.config import ApplicationConfig
from tests._support import msg
from tests._support.flaky import flaky_server
from tests._support.manifests import hook
from tests.integration._app import HISTORY, run_hooks, tool_pairs
from tests.servers.processes import MEMORY_SERVER

pytestmark = pytest.mark.usefixtures("preview_on")

SEEDED = (
    "- Prefers short answers with a concrete example.\n"
    "- Works on the agent-hooks project, in Python 3.11."
)
UC1_HOOK = hook(
    name="user-memories",
    toolset_name="memory_server",
    tool_name="get_memories",
    arguments={"user_id": "current"},
    frequency="always",
)


@pytest.fixture(params=["stdio", "streamable_http"])
def memory_server(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    if request.param == "stdio":
        return {
            "transport": "stdio",
            "command": sys.executable,
            "args": [str(MEMORY_SERVER)],
            "env": {"MEMORY_SERVER_DB": str(tmp_path / "memories.sqlite3")},
        }
    url: str = request.getfixturevalue("memory_http_url")
    return {"transport": "streamable_http", "url": url}


async def test_memories_are_appended_on_every_request(memory_server: dict[str, Any]) -> None:
    config = ApplicationConfig.from_dict(
        {
            "toolsets": [{"type": "mcp", "name": "memory_server", "server": memory_server}],
            "hooks": [UC1_HOOK],
        }
    )
    async with open_app(config) as injector:
        first = await run_hooks(injector, HISTORY)
        followup = [
            *first,
            msg(role="assistant", content="Noted."),
            msg(role="user", content="More?"),
        ]
        second = await run_hooks(injector, followup)
    assert first[:2] == list(HISTORY)
    assert tool_pairs(first) == [("memory_server_get_memories", '{"user_id": "current"}', SEEDED)]
    assert second[: len(followup)] == followup
    assert tool_pairs(second[len(followup) :]) == tool_pairs(first)
    assert second[-2].tool_calls != first[-2].tool_calls  # "always" stamps a fresh call id


async def test_many_requests_spawn_the_stdio_server_once(tmp_path: Path) -> None:
    start_log = tmp_path / "starts.log"
    server = flaky_server(start_log)
    config = ApplicationConfig.from_dict(
        {
            "toolsets": [{"type": "mcp", "name": "flaky", "server": server}],
            "hooks": [
                hook(name="pid", toolset_name="flaky", tool_name="whoami", frequency="always"),
                hook(toolset_name="flaky", tool_name="echo", arguments={"text": "hi"}),
            ],
        }
    )
    async with open_app(config) as injector:
        results = [tool_pairs(await run_hooks(injector, HISTORY)) for _ in range(5)]
    pids = {pairs[0][2] for pairs in results}
    assert start_log.read_text().split() == list(pids)
    assert all(
        [name for name, _, _ in pairs] == ["flaky_whoami", "flaky_echo"] for pairs in results
    )
    assert results[0][1] == ("flaky_echo", '{"text": "hi"}', "hi")
