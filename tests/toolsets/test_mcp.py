from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import textwrap
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as mcp_types
import pytest
from mcp import MCPError
from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from agent_hooks.config.toolsets import McpToolsetConfig
from agent_hooks.errors import ToolError, ToolTimeoutError, UsageError
from agent_hooks.tools._call_context import ToolCallContext, call_context
from agent_hooks.toolsets._mcp_backoff import BackoffSchedule
from agent_hooks.toolsets._mcp_session import SessionClosedError
from agent_hooks.toolsets.mcp import McpToolset, tool_error, tool_result_content
from tests._support.clocks import ManualClock
from tests._support.flaky import flaky_server, starts

DEADLINE = 30
"""Seconds; waits the toolset's own timeouts do not bound fail instead of hanging."""


def alive(pid: str | int) -> bool:
    """Whether a process with this id exists (a zombie counts: it was never reaped)."""
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    return True


class Flaky:
    """The flaky test server behind a toolset, and what its start log says."""

    def __init__(
        self, tmp_path: Path, *, env: dict[str, Any] | None = None, **overrides: Any
    ) -> None:
        self.start_log = tmp_path / "starts.log"
        self.refuse_marker = tmp_path / "refuse"
        server = flaky_server(self.start_log, FLAKY_REFUSE_START=str(self.refuse_marker))
        server["env"].update(env or {})
        config = {"name": "flaky", "server": server, "timeout_seconds": 10, **overrides}
        self.backoff = BackoffSchedule(clock=ManualClock())
        """The toolset's restart backoff, on a clock that moves only when a test says so."""
        self.toolset = McpToolset(McpToolsetConfig.model_validate(config), backoff=self.backoff)

    def starts(self) -> list[str]:
        return starts(self.start_log)

    async def call(self, tool: str, **arguments: Any) -> str | None:
        found = await self.toolset.find_tool(f"flaky_{tool}")
        assert found is not None, tool
        return await found.execute(arguments)


@pytest.fixture
async def flaky(tmp_path: Path) -> Any:
    server = Flaky(tmp_path)
    yield server
    with anyio.fail_after(DEADLINE):
        await server.toolset.aclose()


async def test_tools_are_listed_under_the_toolset_prefix(flaky: Flaky) -> None:
    names = {tool.name for tool in await flaky.toolset.list_tools()}
    assert {"flaky_whoami", "flaky_echo", "flaky_crash", "flaky_getenv"} <= names
    echo = await flaky.toolset.find_tool("flaky_echo")
    assert echo is not None
    assert echo.parameters["properties"]["text"]["type"] == "string"


async def test_allowed_tools_limits_what_is_offered(tmp_path: Path) -> None:
    server = Flaky(tmp_path, allowed_tools=["echo", "whoami"])
    async with server.toolset:
        names = sorted(tool.name for tool in await server.toolset.list_tools())
    assert names == ["flaky_echo", "flaky_whoami"]


async def test_hidden_tool_names_are_the_server_tools_allowed_tools_leaves_out(
    tmp_path: Path,
) -> None:
    server = Flaky(tmp_path, allowed_tools=["echo"])
    async with server.toolset:
        hidden = await server.toolset.hidden_tool_names()
        assert await server.toolset.find_tool("flaky_whoami") is None
    assert "whoami" in hidden
    assert "echo" not in hidden
    assert len(server.starts()) == 1


async def test_without_allowed_tools_nothing_is_hidden(flaky: Flaky) -> None:
    assert await flaky.toolset.hidden_tool_names() == ()


async def test_names_outside_the_prefix_are_rejected_without_starting_the_server(
    tmp_path: Path,
) -> None:
    server = Flaky(tmp_path)
    async with server.toolset:
        assert not server.toolset.may_provide("memory_server_get_memories")
        assert await server.toolset.find_tool("memory_server_get_memories") is None
    assert server.starts() == []


async def test_text_parts_are_joined_and_structured_content_is_json(flaky: Flaky) -> None:
    assert await flaky.call("echo", text="hello") == "hello"
    assert await flaky.call("two_parts") == "first\nsecond"
    assert await flaky.call("structured_only") == '{"answer": 42}'


async def test_embedded_text_resources_are_text_and_other_parts_are_noted_as_left_out(
    flaky: Flaky,
) -> None:
    with call_context(ToolCallContext()) as context:
        assert await flaky.call("mixed") == "caption\nembedded notes"
    assert context.notes == [
        "image content left out",
        "audio content left out",
        "resource content left out",
    ]
    with pytest.raises(ToolError) as raised:
        await flaky.call("picture")
    assert (raised.value.tool_name, raised.value.reason) == (
        "flaky_picture",
        "tool returned image content only",
    )


async def test_an_error_result_is_a_tool_error_quoting_the_server(flaky: Flaky) -> None:
    with pytest.raises(ToolError, match="reported an error: Error executing tool fail"):
        await flaky.call("fail")
    assert await flaky.call("echo", text="still fine") == "still fine"


async def test_every_call_shares_one_server_process(flaky: Flaky) -> None:
    pids = {await flaky.call("whoami") for _ in range(5)}
    answers = await asyncio.gather(*(flaky.call("echo", text=str(i)) for i in range(5)))
    assert answers == [str(i) for i in range(5)]
    assert len(pids) == 1
    assert flaky.starts() == list(pids)


async def test_a_crash_mid_call_is_retried_once_then_a_tool_error_and_the_next_call_reopens(
    flaky: Flaky,
) -> None:
    first = await flaky.call("whoami")
    with pytest.raises(ToolError, match="closed the connection"):
        await flaky.call("crash")
    second = await flaky.call("whoami")
    started, _crashed_on_retry, reopened = flaky.starts()
    assert (started, reopened) == (first, second)


async def test_a_failed_reopen_backs_off_then_the_server_is_started_again(flaky: Flaky) -> None:
    await flaky.call("whoami")
    with pytest.raises(ToolError):
        await flaky.call("crash")
    flaky.refuse_marker.touch()
    with pytest.raises(ToolError, match="closed the connection"):
        await flaky.call("whoami")
    with pytest.raises(ToolError, match=r"backing off$"):
        await flaky.call("whoami")
    flaky.refuse_marker.unlink()
    pid = await call_after_backoff(flaky, "whoami")
    assert flaky.starts()[2:] == ["refused", pid]  # the crash was retried on a second server


async def call_after_backoff(flaky: Flaky, tool: str) -> str | None:
    """The answer of a call made once the first backoff delay has passed on the toolset's clock
    (one failed start so far), and not a moment earlier."""
    clock = flaky.backoff.clock
    assert isinstance(clock, ManualClock)
    clock.advance(flaky.backoff.first_seconds / 2)
    with pytest.raises(ToolError, match=r"backing off$"):
        await flaky.call(tool)
    clock.advance(flaky.backoff.first_seconds / 2)
    return await flaky.call(tool)


async def test_env_is_merged_over_the_default_child_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_MEMORY_TOKEN", "from-the-environment")
    monkeypatch.setenv("TEST_NOT_FORWARDED", "parent-only")
    server = Flaky(tmp_path, env={"TOKEN": {"env": "TEST_MEMORY_TOKEN"}})
    async with server.toolset:
        assert await server.call("getenv", name="TOKEN") == "from-the-environment"
        assert await server.call("getenv", name="PATH") == os.environ["PATH"]
        assert await server.call("getenv", name="TEST_NOT_FORWARDED") == ""


async def test_a_missing_env_variable_is_a_tool_error_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TEST_UNSET_TOKEN", raising=False)
    server = Flaky(tmp_path, env={"TOKEN": {"env": "TEST_UNSET_TOKEN"}})
    async with server.toolset:
        with pytest.raises(ToolError, match="'TEST_UNSET_TOKEN' is not set") as raised:
            await server.toolset.find_tool("flaky_echo")
    assert raised.value.tool_name == "flaky_echo"
    assert server.starts() == []


async def test_a_missing_command_is_a_tool_error_naming_it() -> None:
    config = {
        "name": "ghost",
        "server": {"transport": "stdio", "command": "no-such-mcp-server-command"},
    }
    async with McpToolset(McpToolsetConfig.model_validate(config)) as toolset:
        with pytest.raises(
            ToolError, match=r"cannot start the MCP server: .*'no-such-mcp-server-command'"
        ):
            await toolset.list_tools()


async def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    mute = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    config = {
        "name": "mute",
        "timeout_seconds": 0.5,
        "server": {"transport": "stdio", "command": mute[0], "args": mute[1:]},
    }
    with anyio.fail_after(DEADLINE):
        async with McpToolset(McpToolsetConfig.model_validate(config)) as toolset:
            with pytest.raises(ToolTimeoutError, match=r"timed out after 0\.5 seconds"):
                await toolset.list_tools()


async def test_server_stderr_goes_to_the_log_and_not_to_our_output(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG, logger="agent_hooks.tools.mcp")
    server = Flaky(tmp_path)
    async with server.toolset:
        await server.call("whoami")
    # Closing waits for the server's last stderr lines to be logged.
    logged = [r.getMessage() for r in caplog.records if r.name == "agent_hooks.tools.mcp"]
    assert any("stderr: flaky server starting" in line for line in logged)
    captured = capfd.readouterr()
    assert "flaky server starting" not in captured.out + captured.err


async def test_closing_is_idempotent_and_later_use_is_a_usage_error(flaky: Flaky) -> None:
    await flaky.call("whoami")
    await flaky.toolset.aclose()
    await flaky.toolset.aclose()
    with pytest.raises(UsageError, match="'flaky' is closed"):
        await flaky.toolset.list_tools()


def test_each_event_loop_gets_its_own_server_closed_when_that_loop_shuts_down(
    tmp_path: Path,
) -> None:
    server = Flaky(tmp_path)

    async def calls() -> set[str | None]:
        answers = await asyncio.gather(*(server.call("echo", text=str(i)) for i in range(3)))
        assert answers == ["0", "1", "2"]
        return {await server.call("whoami") for _ in range(3)}

    with ThreadPoolExecutor(4) as pool:
        per_loop = list(pool.map(lambda _: asyncio.run(calls()), range(4)))
    assert [len(pids) for pids in per_loop] == [1, 1, 1, 1]
    pids = set().union(*per_loop)
    assert len(pids) == 4
    assert sorted(server.starts()) == sorted(pids)
    assert not any(alive(pid) for pid in server.starts())
    asyncio.run(server.toolset.aclose())


async def test_closing_kills_the_servers_of_event_loops_still_running_elsewhere(
    tmp_path: Path,
) -> None:
    server = Flaky(tmp_path)
    other = asyncio.new_event_loop()
    thread = threading.Thread(target=other.run_forever)
    thread.start()
    try:
        elsewhere = asyncio.run_coroutine_threadsafe(server.call("whoami"), other)
        pid = await asyncio.wrap_future(elsewhere)
        with anyio.fail_after(DEADLINE):
            await server.toolset.aclose()
            while alive(pid):  # noqa: ASYNC110 - reaped by the other loop; no event to await
                await anyio.sleep(0.05)
    finally:
        asyncio.run_coroutine_threadsafe(_finish_tasks(), other).result(timeout=DEADLINE)
        other.call_soon_threadsafe(other.stop)
        thread.join(timeout=DEADLINE)
        other.close()


async def _finish_tasks() -> None:
    """What ``asyncio.run`` does before closing its loop: leftover tasks end, generators close."""
    current = asyncio.current_task()
    await asyncio.gather(*(t for t in asyncio.all_tasks() if t is not current))
    await asyncio.get_running_loop().shutdown_asyncgens()


def test_importing_the_package_does_not_import_the_mcp_sdk() -> None:
    probe = textwrap.dedent(
        """
        import sys
        import agent_hooks
        import agent_hooks.toolsets
        from agent_hooks.config.toolsets import McpToolsetConfig
        config = {"name": "m", "server": {"transport": "stdio", "command": "srv"}}
        agent_hooks.toolsets.McpToolset(McpToolsetConfig.model_validate(config))
        print(sorted(m for m in ("mcp", "mcp_types", "httpx2") if m in sys.modules))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=DEADLINE, check=True
    )
    assert done.stdout.strip() == "[]"


def _text_result(*texts: str, is_error: bool = False) -> mcp_types.CallToolResult:
    content = [mcp_types.TextContent(type="text", text=text) for text in texts]
    return mcp_types.CallToolResult(content=content, is_error=is_error)


def test_an_empty_result_has_no_content() -> None:
    assert tool_result_content(mcp_types.CallToolResult(content=[]), "t") is None


@pytest.mark.parametrize(
    ("part", "kind"),
    [
        (mcp_types.ImageContent(type="image", data="AAAA", mime_type="image/png"), "image"),
        (mcp_types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav"), "audio"),
        (
            mcp_types.EmbeddedResource(
                type="resource",
                resource=mcp_types.BlobResourceContents(uri="file:///b", blob="AAAA"),
            ),
            "resource",
        ),
        (mcp_types.ResourceLink(type="resource_link", uri="file:///r", name="r"), "resource"),
    ],
)
def test_a_result_with_nothing_textual_is_a_tool_error_naming_what_it_held(
    part: mcp_types.ContentBlock, kind: str
) -> None:
    with pytest.raises(ToolError) as raised:
        tool_result_content(mcp_types.CallToolResult(content=[part]), "t")
    assert raised.value.reason == f"tool returned {kind} content only"


def test_structured_content_stands_in_for_left_out_parts_and_says_so() -> None:
    image = mcp_types.ImageContent(type="image", data="AAAA", mime_type="image/png")
    result = mcp_types.CallToolResult(content=[image], structured_content={"answer": 42})
    with call_context(ToolCallContext()) as context:
        assert tool_result_content(result, "t") == '{"answer": 42}'
    assert context.notes == ["image content left out"]


def test_an_error_result_without_text_still_says_it_failed() -> None:
    with pytest.raises(ToolError, match=r"reported an error: \(no details\)"):
        tool_result_content(_text_result(is_error=True), "t")


def test_text_wins_over_structured_content() -> None:
    result = _text_result("a", "b")
    result.structured_content = {"ignored": True}
    assert tool_result_content(result, "t") == "a\nb"


@pytest.mark.parametrize(
    ("exc", "reason"),
    [
        (
            ExceptionGroup(
                "tg", [ExceptionGroup("inner", [MCPError(CONNECTION_CLOSED, "Closed")])]
            ),
            "the MCP server closed the connection (Closed)",
        ),
        (
            MCPError(-32602, "Invalid params"),
            "the MCP server answered with error -32602: Invalid params",
        ),
        (FileNotFoundError(2, "No such file or directory", "srv"), "cannot start the MCP server:"),
        (PermissionError(13, "Permission denied", "srv"), "cannot start the MCP server:"),
        (httpx2.ConnectError("All connection attempts failed"), "cannot reach the MCP server:"),
        (anyio.ClosedResourceError(), "the connection to the MCP server is closed"),
        (anyio.BrokenResourceError(), "the connection to the MCP server is closed"),
        (SessionClosedError("closed early"), "the connection to the MCP server is closed"),
        (RuntimeError("odd"), "RuntimeError: odd"),
    ],
)
def test_sdk_failures_map_to_tool_errors(exc: BaseException, reason: str) -> None:
    error = tool_error("memory_get", exc, timeout_seconds=3)
    assert type(error) is ToolError
    assert error.tool_name == "memory_get"
    assert error.reason.startswith(reason)


@pytest.mark.parametrize(
    "exc",
    [
        TimeoutError(),
        MCPError(REQUEST_TIMEOUT, "Request timed out"),
        ExceptionGroup("g", [TimeoutError()]),
    ],
)
def test_timeouts_map_to_tool_timeout_errors(exc: BaseException) -> None:
    error = tool_error("memory_get", exc, timeout_seconds=3)
    assert isinstance(error, ToolTimeoutError)
    assert error.reason == "timed out after 3 seconds"


def test_a_tool_error_for_the_same_tool_passes_through_unchanged() -> None:
    original = ToolError("memory_get", "environment variable 'X' is not set")
    assert tool_error("memory_get", ExceptionGroup("g", [original]), timeout_seconds=3) is original


def test_a_tool_error_naming_the_toolset_is_renamed_to_the_final_tool() -> None:
    original = ToolError("memory", "environment variable 'X' is not set")
    error = tool_error("memory_get", original, timeout_seconds=3)
    assert (error.tool_name, error.reason) == ("memory_get", original.reason)
    timeout = tool_error("memory_get", ToolTimeoutError("memory", 2), timeout_seconds=3)
    assert isinstance(timeout, ToolTimeoutError)
    assert (timeout.tool_name, timeout.reason) == ("memory_get", "timed out after 2 seconds")
