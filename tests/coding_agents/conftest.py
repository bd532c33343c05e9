"""The real agents (installed by ``make install`` into ``.agents/``) and the scripted upstream,
for the agent tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.coding_agents._agents import AGENTS_BIN, REPO
from tests.servers.fixtures import RecordingServer
from tests.servers.processes import free_port, running_server


@pytest.fixture(scope="session")
def agents_installed() -> Path:
    """The agents' ``node_modules/.bin``; a missing agent fails the test (CI must run them)."""
    missing = [name for name in ("claude", "codex", "opencode") if not (AGENTS_BIN / name).exists()]
    if missing:
        pytest.fail(f"agents {missing} are not installed in {AGENTS_BIN}: run 'make install'")
    return AGENTS_BIN


@pytest.fixture(scope="session")
def _scripted_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("scripted") / "server.log"
    args = ["-m", "tests.coding_agents.scripted_upstream", str(port)]
    env = {"PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    with running_server(args, port=port, log_path=log, env=env) as url:
        yield url


@pytest.fixture
def scripted_upstream(_scripted_process: str) -> RecordingServer:
    """The rule-enforcing scripted upstream, with an empty record."""
    server = RecordingServer(_scripted_process)
    server.forget()
    return server
