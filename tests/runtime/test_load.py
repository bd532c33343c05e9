"""Many concurrent runs on one app (issue 8): 200 requests at once share one MCP stdio session and
one REST client, none of them fails, the server starts once, and closing the app gives back every
file descriptor and leaves no child process."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import anyio
import pytest

from agent_hooks import HookOutcome
from tests.runtime._kit import HISTORY, flaky_toolset, gone, hook, opened, run_once, starts
from tests.servers.fixtures import RecordingServer

pytestmark = pytest.mark.usefixtures("preview_on")

RUNS = 200
DEADLINE = 60
FD_SLACK = 3
"""Descriptors the process may keep after the first use of a library (a selector, a cache)."""


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


async def test_two_hundred_concurrent_runs_share_one_server_and_leave_nothing_open(
    tmp_path: Path, rest_server: RecordingServer
) -> None:
    start_log = tmp_path / "starts.log"
    manifest = {
        "toolsets": [
            flaky_toolset("flaky", start_log),
            {
                "type": "rest-api",
                "name": "api",
                "base_url": rest_server.url,
                "tools": [{"name": "prefs", "path": "/preferences"}],
            },
        ],
        "hooks": [
            hook("echo", toolset_name="flaky", arguments={"text": "remembered"}),
            hook("whoami", toolset_name="flaky"),
            hook("prefs", toolset_name="api"),
        ],
    }
    baseline = open_descriptors()

    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            runs = await asyncio.gather(*(run_once(injector, HISTORY) for _ in range(RUNS)))

    outcomes = {record.outcome for run in runs for record in run.records}
    assert outcomes == {HookOutcome.INJECTED}
    assert all(len(run.messages) == len(HISTORY) + 6 for run in runs)
    [pid] = starts(start_log)
    await gone(int(pid))
    assert len(rest_server.received()) == RUNS
    assert open_descriptors() <= baseline + FD_SLACK
