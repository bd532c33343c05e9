"""Real servers for the proxy tests: Redis, the REST test API, and the recording upstream."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.serve._redis_server import running_redis
from tests.servers.fixtures import _rest_process, rest_server  # noqa: F401 - found by name


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_redis(tmp_path_factory.mktemp("redis")) as url:
        yield url
