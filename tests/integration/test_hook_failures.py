"""A failing tool never fails the request: one warning naming the hook and the reason, and the
history goes on unchanged (SPEC section 6)."""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_hooks import open_app
from agent_hooks.config import ApplicationConfig
from tests._support.flaky import flaky_server
from tests._support.manifests import hook
from tests.integration._app import HISTORY, run_hooks, tool_pairs, warnings_in
from tests.servers.fixtures import CHAT_API_KEY
from tests.servers.processes import FLAKY_MCP_SERVER

pytestmark = pytest.mark.usefixtures("preview_on")

DEADLINE = 30

Servers = dict[str, str]
Case = Callable[[Servers], tuple[dict[str, Any], dict[str, Any]]]


def _flaky(tool: str, arguments: dict[str, Any] | None = None, **toolset: Any) -> Case:
    server = {"transport": "stdio", "command": sys.executable, "args": [str(FLAKY_MCP_SERVER)]}
    return lambda _: (
        {"type": "mcp", "name": "flaky", "server": server, **toolset},
        hook(name="probe", toolset_name="flaky", tool_name=tool, arguments=arguments or {}),
    )


def _rest(path: str, **toolset: Any) -> Case:
    return lambda servers: (
        {
            "type": "rest-api",
            "name": "api",
            "base_url": servers["rest"],
            "tools": [{"name": "probe_tool", "path": path}],
            **toolset,
        },
        hook(name="probe", toolset_name="api", tool_name="probe_tool"),
    )


def _deployment(deployment: str, key_env: str = "TEST_CHAT_KEY") -> Case:
    return lambda servers: (
        {
            "type": "deployment",
            "name": "dial",
            "endpoint": servers["chat"],
            "api_key_env": key_env,
            "tools": [{"name": "Probe_tool", "deployment": deployment}],
        },
        hook(name="probe", tool_name="Probe_tool"),
    )


MISSING_COMMAND: Case = lambda _: (  # noqa: E731
    {"type": "mcp", "name": "memory", "server": {"transport": "stdio", "command": "no-such-srv"}},
    hook(name="probe", toolset_name="memory", tool_name="get_memories"),
)

CASES: dict[str, tuple[Case, str]] = {
    "mcp server not startable": (MISSING_COMMAND, "cannot start the MCP server"),
    "mcp server crashes mid-call": (_flaky("crash"), "the MCP server closed the connection"),
    "mcp error result": (_flaky("fail"), "reported an error: Error executing tool fail"),
    "mcp call too slow": (
        _flaky("sleep", {"seconds": 5}, timeout_seconds=0.5),
        "timed out after 0.5 seconds",
    ),
    "rest http 500": (_rest("/status/500"), "returned HTTP 500: the server says 500"),
    "rest too slow": (_rest("/slow", timeout_seconds=0.3), "timed out after 0.3 seconds"),
    "deployment malformed json": (_deployment("garbled"), "answer is not JSON"),
    "deployment missing fields": (_deployment("empty"), "no choices[0].message.content"),
    "deployment key not set": (_deployment("summarizer", "TEST_UNSET_KEY"), "'TEST_UNSET_KEY'"),
}


@pytest.mark.parametrize(("case", "reason"), CASES.values(), ids=CASES.keys())
async def test_a_failing_tool_skips_the_injection_with_one_warning(
    case: Case,
    reason: str,
    request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TEST_CHAT_KEY", CHAT_API_KEY)
    monkeypatch.delenv("TEST_UNSET_KEY", raising=False)
    servers = {
        "rest": request.getfixturevalue("rest_server").url,
        "chat": request.getfixturevalue("chat_server").url,
    }
    toolset, probe = case(servers)
    config = ApplicationConfig.from_dict({"toolsets": [toolset], "hooks": [probe]})
    caplog.set_level(logging.INFO)
    with anyio.fail_after(DEADLINE):
        async with open_app(config) as injector:
            result = await run_hooks(injector, HISTORY)
    assert result == list(HISTORY)
    [warning] = warnings_in(caplog)
    message = warning.getMessage()
    assert message.startswith("hook=probe event=on_request_start tool=")
    outcome = "timed_out" if "timed out" in reason else "skipped_error"
    assert f"outcome={outcome} " in message
    assert reason in message


async def test_after_a_crash_the_next_hook_reopens_the_session(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    start_log = tmp_path / "starts.log"
    server = flaky_server(start_log)
    config = ApplicationConfig.from_dict(
        {
            "toolsets": [{"type": "mcp", "name": "flaky", "server": server}],
            "hooks": [
                hook(name="crasher", toolset_name="flaky", tool_name="crash"),
                hook(name="pid", toolset_name="flaky", tool_name="whoami"),
            ],
        }
    )
    caplog.set_level(logging.INFO)
    with anyio.fail_after(DEADLINE):
        async with open_app(config) as injector:
            result = await run_hooks(injector, HISTORY)
    [warning] = warnings_in(caplog)
    assert warning.getMessage().startswith(
        "hook=crasher event=on_request_start tool=flaky_crash outcome=skipped_error"
    )
    _crashed, _crashed_on_retry, reopened = start_log.read_text().split()
    assert tool_pairs(result) == [("flaky_whoami", "{}", reopened)]


class _Waiter(logging.Handler):
    """Sets ``seen`` when a log line contains ``text``: a sync point the product reports."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.seen = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if self.text in record.getMessage():
            self.seen.set()


async def test_a_server_that_died_between_requests_is_reopened_for_the_next_one(
    tmp_path: Path,
) -> None:
    start_log = tmp_path / "starts.log"
    config = ApplicationConfig.from_dict(
        {
            "toolsets": [{"type": "mcp", "name": "flaky", "server": flaky_server(start_log)}],
            "hooks": [hook(name="pid", toolset_name="flaky", tool_name="whoami")],
        }
    )
    mcp_logger = logging.getLogger("agent_hooks.tools.mcp")
    waiter = _Waiter("reason=server_exited")
    mcp_logger.addHandler(waiter)
    previous_level = mcp_logger.level
    mcp_logger.setLevel(logging.INFO)
    try:
        with anyio.fail_after(DEADLINE):
            async with open_app(config) as injector:
                first = tool_pairs(await run_hooks(injector, HISTORY))
                os.kill(int(start_log.read_text().split()[0]), signal.SIGKILL)
                await waiter.seen.wait()  # the session noticed the exit on its own
                second = tool_pairs(await run_hooks(injector, HISTORY))
    finally:
        mcp_logger.removeHandler(waiter)
        mcp_logger.setLevel(previous_level)
    first_pid, second_pid = start_log.read_text().split()
    assert first == [("flaky_whoami", "{}", first_pid)]
    assert second == [("flaky_whoami", "{}", second_pid)]


async def test_a_toolset_fallback_also_covers_a_server_that_cannot_start() -> None:
    toolset, probe = MISSING_COMMAND({})
    fallback = {"kind": "error_message", "template": "{tool} unavailable"}
    config = ApplicationConfig.from_dict(
        {"toolsets": [{**toolset, "fallback": fallback}], "hooks": [probe]}
    )
    async with open_app(config) as injector:
        with anyio.fail_after(DEADLINE):
            result = await run_hooks(injector, HISTORY)
    assert tool_pairs(result) == [("memory_get_memories", "{}", "memory_get_memories unavailable")]
