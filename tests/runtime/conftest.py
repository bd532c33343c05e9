"""Real servers for the runtime tests (see :mod:`tests.servers.fixtures`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.servers.fixtures import (  # noqa: F401 - fixtures are found by name
    _rest_process,
    rest_server,
)
from tests.servers.processes import SERVERS, free_port, running_server


@pytest.fixture(scope="session")
def silent_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server that accepts connections and never answers (a hanging REST API)."""
    port = free_port()
    log = tmp_path_factory.mktemp("silent") / "server.log"
    args = [str(SERVERS / "runtime_silent_server.py"), str(port)]
    with running_server(args, port=port, log_path=log) as url:
        yield url
