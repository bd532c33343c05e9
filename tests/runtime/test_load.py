"""Concurrency: many runs on one app (issue 8) share one MCP stdio session and one REST client, none
of them fails, the server starts once, and closing the app gives back every file descriptor and
leaves no child process; within a run, ``hooks_max_concurrency`` bounds how many hooks run at once
and hooks of one identity never overlap (SPEC section 8)."""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import anyio
import pytest

from agent_hooks import HookOutcome
from agent_hooks.tools import StagedBaseTool
from tests._support.flaky import flaky_toolset, starts
from tests._support.manifests import hook
from tests.runtime._kit import HISTORY, app, gone, opened, run_once
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


class Gauge(StagedBaseTool):
    """A tool that notes how many of its calls overlap, per identity and overall."""

    def __init__(self) -> None:
        super().__init__(name="gauge")
        self.active: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        key = str(arguments["group"])
        for name in (key, "all"):
            self.active[name] += 1
            self.peak[name] = max(self.peak[name], self.active[name])
        await asyncio.sleep(0.02)  # the tool's work, long enough for the others to start
        for name in (key, "all"):
            self.active[name] -= 1
        return key


@pytest.mark.parametrize("limit", [1, 3, 8])
async def test_at_most_hooks_max_concurrency_hooks_run_at_once_and_one_identity_at_a_time(
    limit: int,
) -> None:
    gauge = Gauge()
    hooks = [hook("gauge", arguments={"group": i % 4}, frequency="always") for i in range(12)]
    injector = app({"hooks": hooks, "hooks_max_concurrency": limit}, gauge)

    run = await run_once(injector)

    assert gauge.peak["all"] == min(limit, 4)
    assert all(gauge.peak[str(group)] == 1 for group in range(4))
    assert [m.content for m in run.messages[len(HISTORY) + 1 :: 2]] == [
        str(i % 4) for i in range(12)
    ]
