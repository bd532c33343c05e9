"""The MCP toolset against real stdio servers that fail in every way we know of.

Each case pins the error a hook would see, that the failure is bounded in time (generously:
these bounds catch hangs, not slowness) and that no server process outlives the toolset.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_hooks.errors import ToolError, ToolTimeoutError
from tests.toolsets.test_mcp import DEADLINE, Flaky, alive, call_after_backoff

TIMEOUT = 5.0
"""The toolsets' ``timeout_seconds`` here: short, so hangs are cut quickly, yet enough for a
server to start (it also bounds the start) on a busy machine."""

SLACK = 3.0
"""What a bounded failure may take beyond its own timeout on a busy machine."""


async def eventually(condition: Callable[[], object], seconds: float) -> None:
    """Wait until ``condition()`` is true, for an outside change no event announces (a file
    written by a child process, a process state); fails after ``seconds``."""
    with anyio.fail_after(seconds):
        while not condition():  # noqa: ASYNC110 - nothing to wait on but the condition
            await anyio.sleep(0.05)


@asynccontextmanager
async def flaky_server(tmp_path: Path, **overrides: Any) -> AsyncIterator[Flaky]:
    """A flaky server's toolset; on leaving, every server it ever started must be gone."""
    server = Flaky(tmp_path, **{"timeout_seconds": TIMEOUT, **overrides})
    try:
        yield server
    finally:
        with anyio.fail_after(DEADLINE):
            await server.toolset.aclose()
    assert [pid for pid in server.starts() if pid != "refused" and alive(pid)] == []


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fails when the block took longer than ``seconds`` (a hang, not a slow machine)."""
    started = time.monotonic()
    yield
    elapsed = time.monotonic() - started
    assert elapsed < seconds, f"took {elapsed:.1f}s, bound {seconds}s"


async def test_a_tool_that_raises_is_an_error_result_and_the_server_stays(tmp_path: Path) -> None:
    async with flaky_server(tmp_path) as server:
        pid = await server.call("whoami")
        with within(TIMEOUT + SLACK), pytest.raises(ToolError) as raised:
            await server.call("fail")
        assert raised.value.reason.startswith("the MCP server reported an error:")
        assert await server.call("whoami") == pid


async def test_a_hanging_call_times_out_and_the_next_call_gets_a_new_server(
    tmp_path: Path,
) -> None:
    async with flaky_server(tmp_path) as server:
        first = await server.call("whoami")
        with within(TIMEOUT + SLACK), pytest.raises(ToolTimeoutError) as raised:
            await server.call("sleep", seconds=60)
        assert (raised.value.tool_name, raised.value.reason) == (
            "flaky_sleep",
            "timed out after 5 seconds",
        )
        second = await server.call("whoami")
        assert second != first


async def test_a_frozen_server_is_abandoned_at_the_timeout_and_replaced(tmp_path: Path) -> None:
    async with flaky_server(tmp_path) as server:
        frozen = await server.call("whoami")
        with within(TIMEOUT + SLACK), pytest.raises(ToolTimeoutError):
            await server.call("freeze")
        replacement = await server.call("whoami")
        assert replacement != frozen
    assert not alive(frozen)


async def test_a_call_cancelled_by_the_callers_deadline_retires_the_session(
    tmp_path: Path,
) -> None:
    async with flaky_server(tmp_path, timeout_seconds=30) as server:
        first = await server.call("whoami")
        with within(0.3 + SLACK), pytest.raises(TimeoutError):
            with anyio.fail_after(0.3):
                await server.call("sleep", seconds=60)
        assert await server.call("whoami") != first


async def test_calls_in_flight_finish_on_a_retired_session(tmp_path: Path) -> None:
    async with flaky_server(tmp_path, timeout_seconds=30) as server:
        await server.call("whoami")

        async def abandoned() -> None:
            with anyio.move_on_after(0.3):
                await server.call("sleep", seconds=60)

        slow, _ = await asyncio.gather(server.call("sleep", seconds=1), abandoned())
        assert slow == "awake"


async def test_a_crash_mid_call_fails_quickly_and_the_next_call_reopens(tmp_path: Path) -> None:
    async with flaky_server(tmp_path) as server:
        first = await server.call("whoami")
        with within(TIMEOUT + SLACK), pytest.raises(ToolError) as raised:
            await server.call("crash")
        assert raised.value.reason.startswith("the MCP server closed the connection")
        assert await server.call("whoami") != first
        assert not alive(first)


async def test_a_server_that_never_answers_the_handshake_is_killed_at_once(
    tmp_path: Path,
) -> None:
    async with flaky_server(tmp_path, env={"FLAKY_MODE": "mute"}) as server:
        with within(TIMEOUT + SLACK), pytest.raises(ToolTimeoutError) as raised:
            await server.toolset.find_tool("flaky_echo")
        assert (raised.value.tool_name, raised.value.reason) == (
            "flaky_echo",
            "timed out after 5 seconds",
        )
        # It ignores SIGTERM and its stdin closing: only an immediate SIGKILL explains this.
        [pid] = server.starts()
        assert not alive(pid)


async def test_a_start_abandoned_at_the_callers_deadline_kills_the_server_and_backs_off(
    tmp_path: Path,
) -> None:
    async with flaky_server(tmp_path, timeout_seconds=30, env={"FLAKY_MODE": "mute"}) as server:
        async with anyio.create_task_group() as caller:
            caller.start_soon(server.toolset.find_tool, "flaky_echo")
            await eventually(server.starts, DEADLINE)  # abandon the start once the server runs
            caller.cancel_scope.cancel()
        [pid] = server.starts()
        # Killed by the session's owner task, off the caller's path.
        await eventually(lambda: not alive(pid), SLACK)
        with within(SLACK), pytest.raises(ToolError) as raised:
            await server.toolset.find_tool("flaky_echo")
        assert (raised.value.tool_name, raised.value.reason) == ("flaky_echo", "backing off")
        assert server.starts() == [pid]


async def test_a_server_that_exits_at_start_backs_off_without_respawning(tmp_path: Path) -> None:
    async with flaky_server(tmp_path) as server:
        server.refuse_marker.touch()
        with within(TIMEOUT + SLACK), pytest.raises(ToolError) as raised:
            await server.call("whoami")
        assert raised.value.tool_name == "flaky_whoami"
        with within(0.5), pytest.raises(ToolError) as raised:
            await server.call("whoami")
        assert raised.value.reason == "backing off"
        assert server.starts() == ["refused"]
        server.refuse_marker.unlink()
        pid = await call_after_backoff(server, "whoami")
        assert server.starts() == ["refused", pid]


async def test_garbage_on_stdout_is_skipped(tmp_path: Path) -> None:
    async with flaky_server(tmp_path, env={"FLAKY_MODE": "garbage"}) as server:
        assert await server.call("garbage", text="still answered") == "still answered"
        assert await server.call("echo", text="and again") == "and again"


async def test_closing_kills_a_frozen_server_within_ten_seconds(tmp_path: Path) -> None:
    server = Flaky(tmp_path, timeout_seconds=30)
    pid = await server.call("whoami")
    freezing = asyncio.create_task(server.call("freeze"))
    await eventually(lambda: _stopped(pid), DEADLINE)
    with within(10):
        await server.toolset.aclose()
    assert not alive(pid)
    with pytest.raises(ToolError):
        await freezing


def _stopped(pid: str) -> bool:
    """Whether the process is in the stopped state (``T`` in ``/proc/PID/stat``)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat.rsplit(")", 1)[1].split()[0] == "T"
