"""The MCP toolset over streamable HTTP, against the example memory server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_hooks.config.toolsets import McpToolsetConfig
from agent_hooks.errors import ToolError
from agent_hooks.toolsets._mcp_backoff import DEFAULT_SCHEDULE, BackoffSchedule
from agent_hooks.toolsets.mcp import McpToolset
from tests._support.clocks import ManualClock
from tests.servers.processes import MEMORY_SERVER, free_port, running_server

DEADLINE = 30


def _toolset(
    url: str, *, backoff: BackoffSchedule = DEFAULT_SCHEDULE, **overrides: Any
) -> McpToolset:
    config = {
        "name": "memory_server",
        "server": {"transport": "streamable_http", "url": url},
        "timeout_seconds": 10,
        **overrides,
    }
    return McpToolset(McpToolsetConfig.model_validate(config), backoff=backoff)


async def _call(toolset: McpToolset, name: str, **arguments: Any) -> str | None:
    tool = await toolset.find_tool(name)
    assert tool is not None, name
    return await tool.execute(arguments)


async def test_tools_are_listed_and_called_over_streamable_http(memory_http_url: str) -> None:
    with anyio.fail_after(DEADLINE):
        async with _toolset(memory_http_url) as toolset:
            names = {tool.name for tool in await toolset.list_tools()}
            assert {"memory_server_add_memory", "memory_server_get_memories"} <= names
            await _call(toolset, "memory_server_add_memory", user_id="http-user", text="Likes tea.")
            memories = await _call(toolset, "memory_server_get_memories", user_id="http-user")
    assert memories == "- Likes tea."


async def test_an_unreachable_server_is_a_tool_error() -> None:
    async with _toolset(f"http://127.0.0.1:{free_port()}/mcp") as toolset:
        with pytest.raises(ToolError, match="cannot reach the MCP server: ConnectError"):
            await toolset.list_tools()


async def test_a_missing_header_variable_is_a_tool_error_naming_it(
    memory_http_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEST_MCP_TOKEN", raising=False)
    headers = {"Authorization": {"env": "TEST_MCP_TOKEN"}}
    server = {"transport": "streamable_http", "url": memory_http_url, "headers": headers}
    async with _toolset(memory_http_url, server=server) as toolset:
        with pytest.raises(ToolError, match="'TEST_MCP_TOKEN' is not set"):
            await toolset.list_tools()


async def test_a_restarted_server_is_reconnected_on_the_next_call(tmp_path: Path) -> None:
    port = free_port()
    args = [str(MEMORY_SERVER), "--transport", "streamable-http", "--port", str(port)]
    args += ["--db", str(tmp_path / "memories.sqlite3")]
    log = tmp_path / "server.log"
    clock = ManualClock()
    backoff = BackoffSchedule(clock=clock)
    async with _toolset(f"http://127.0.0.1:{port}/mcp", backoff=backoff) as toolset:
        with running_server(args, port=port, log_path=log):
            assert "- Prefers short answers" in (
                await _call(toolset, "memory_server_get_memories", user_id="current") or ""
            )
        with pytest.raises(ToolError):
            await _call(toolset, "memory_server_get_memories", user_id="current")
        clock.advance(backoff.max_seconds)  # past the backoff the failed call started
        with running_server(args, port=port, log_path=log):
            memories = await _call(toolset, "memory_server_get_memories", user_id="current")
    assert memories is not None
    assert memories.startswith("- Prefers short answers")
