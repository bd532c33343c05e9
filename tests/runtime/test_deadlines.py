"""A hook's ``timeout_seconds`` bounds everything it waits for, against real servers that hang
(SPEC section 8): a run returns within ``max(timeout_seconds) + 0.5 s``. The bounds asserted here
add generous slack for a busy machine; speed itself is measured in bench/."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import HookOutcome, HookRun
from tests._support.flaky import flaky_toolset, starts
from tests._support.manifests import hook
from tests.runtime._kit import HISTORY, gone, opened, run_once
from tests.servers.processes import SERVERS

pytestmark = pytest.mark.usefixtures("preview_on")

GRACE = 0.5
"""What SPEC section 8 allows past a hook's deadline."""
SLACK = 2.0
"""For the machine: a busy 2-core runner may lag the event loop by this much."""


def silent_api(url: str) -> dict[str, Any]:
    """A REST toolset on a server that accepts the request and never answers."""
    return {
        "type": "rest-api",
        "name": "api",
        "base_url": url,
        "timeout_seconds": 30,
        "tools": [{"name": "lookup", "path": "/lookup"}],
    }


def mute_toolset(start_log: Path) -> dict[str, Any]:
    """An MCP stdio toolset whose server starts at once and never answers ``initialize``."""
    server = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(SERVERS / "runtime_mute_server.py"), str(start_log)],
    }
    return {"type": "mcp", "name": "mute", "server": server}


async def timed_run(manifest: dict[str, Any]) -> tuple[HookRun, float]:
    """One run of ``manifest``'s hooks, and how long ``run`` took (the app's close excluded)."""
    async with opened(manifest) as injector:
        started = time.monotonic()
        run = await run_once(injector)
        return run, time.monotonic() - started


async def test_a_hanging_rest_endpoint_is_abandoned_at_the_hook_deadline(silent_url: str) -> None:
    manifest = {
        "toolsets": [silent_api(silent_url)],
        "hooks": [hook("lookup", name="prefs", toolset_name="api", timeout_seconds=0.5)],
    }
    run, elapsed = await timed_run(manifest)

    assert elapsed < 0.5 + GRACE + SLACK
    [record] = run.records
    assert record.outcome == HookOutcome.TIMED_OUT
    assert record.reason == "hook timed out after 0.5 seconds"
    assert (record.content_chars, record.call_id) == (None, None)
    assert run.messages == list(HISTORY)


async def test_an_mcp_server_that_never_answers_initialize_costs_the_hook_deadline(
    tmp_path: Path,
) -> None:
    start_log = tmp_path / "starts.log"
    manifest = {  # 3 s: past the SDK's first import, so the wait is for the handshake
        "toolsets": [mute_toolset(start_log)],
        "hooks": [hook("whoami", toolset_name="mute", timeout_seconds=3)],
    }
    run, elapsed = await timed_run(manifest)

    assert elapsed < 3 + GRACE + SLACK
    assert [r.outcome for r in run.records] == [HookOutcome.TIMED_OUT]
    [pid] = starts(start_log)
    await gone(int(pid))  # killed, though it ignores SIGTERM and the end of its stdin


async def test_a_slow_first_mcp_call_is_abandoned_at_the_hook_deadline(tmp_path: Path) -> None:
    start_log = tmp_path / "starts.log"
    sleep = hook("sleep", toolset_name="flaky", arguments={"seconds": 60}, timeout_seconds=3)
    # 3 s: long enough for the server to start, so it is the call itself that hangs.
    run, elapsed = await timed_run(
        {"toolsets": [flaky_toolset("flaky", start_log)], "hooks": [sleep]}
    )

    assert elapsed < 3 + GRACE + SLACK
    assert [r.outcome for r in run.records] == [HookOutcome.TIMED_OUT]
    assert len(starts(start_log)) == 1


async def test_the_toolset_timeout_bounds_a_first_mcp_call(tmp_path: Path) -> None:
    toolset = {**flaky_toolset("flaky", tmp_path / "starts.log"), "timeout_seconds": 2}
    sleep = hook("sleep", toolset_name="flaky", arguments={"seconds": 5}, timeout_seconds=20)
    run, elapsed = await timed_run({"toolsets": [toolset], "hooks": [sleep]})

    [record] = run.records
    assert record.outcome == HookOutcome.TIMED_OUT  # 2.5 x the toolset timeout never "succeeds"
    assert record.reason == "timed out after 2 seconds"
    assert elapsed < 5


async def test_hooks_that_all_hang_cost_the_longest_deadline_not_the_sum(
    silent_url: str, tmp_path: Path
) -> None:
    manifest = {
        "toolsets": [
            silent_api(silent_url),
            mute_toolset(tmp_path / "mute.log"),
            flaky_toolset("flaky", tmp_path / "flaky.log"),
        ],
        "hooks": [
            hook("lookup", toolset_name="api", timeout_seconds=0.5),
            hook("lookup", toolset_name="api", arguments={"user": "u2"}, timeout_seconds=1),
            hook("whoami", toolset_name="mute", timeout_seconds=1.5),
            hook("sleep", toolset_name="flaky", arguments={"seconds": 9}, timeout_seconds=1),
        ],
        "hooks_max_concurrency": 4,
    }
    run, elapsed = await timed_run(manifest)

    assert elapsed < 1.5 + GRACE + SLACK
    assert {r.outcome for r in run.records} == {HookOutcome.TIMED_OUT}
    assert run.messages == list(HISTORY)
