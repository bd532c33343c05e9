"""Real servers for the proxy tests: Redis, the REST test API, and the recording upstream."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.servers.fixtures import (  # noqa: F401 - fixtures are found by name
    RecordingServer,
    _rest_process,
    redis_url,
    rest_server,
)
from tests.servers.processes import free_port, running_server

UPSTREAM_SERVER = Path(__file__).resolve().parent / "upstream_server.py"


@pytest.fixture(scope="session")
def _upstream_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("upstream") / "server.log"
    with running_server([str(UPSTREAM_SERVER), str(port)], port=port, log_path=log) as url:
        yield url


@pytest.fixture
def upstream(_upstream_process: str) -> RecordingServer:
    """The recording chat-completions upstream, with an empty record."""
    server = RecordingServer(_upstream_process)
    server.forget()
    return server
