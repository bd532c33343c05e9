"""Pytest fixtures for the real servers; conftest files import the ones their tests use."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.servers.processes import (
    API_SERVERS,
    MEMORY_SERVER,
    free_port,
    running_server,
)
from tests.servers.redis import running_redis

CHAT_API_KEY = "test-chat-key-3f9a"
"""The key the chat server expects; tests hand it to the toolset through an env var."""


@dataclass(frozen=True)
class RecordingServer:
    """A running API server and what it has received since the test started."""

    url: str

    def received(self) -> list[dict[str, Any]]:
        records: list[dict[str, Any]] = httpx.get(f"{self.url}/_received").json()
        return records

    def forget(self) -> None:
        httpx.delete(f"{self.url}/_received").raise_for_status()


@pytest.fixture(scope="session")
def _rest_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("rest") / "server.log"
    with running_server([str(API_SERVERS), "rest", str(port)], port=port, log_path=log) as url:
        yield url


@pytest.fixture(scope="session")
def _chat_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("chat") / "server.log"
    env = {"CHAT_SERVER_API_KEY": CHAT_API_KEY}
    args = [str(API_SERVERS), "chat", str(port)]
    with running_server(args, port=port, log_path=log, env=env) as url:
        yield url


@pytest.fixture
def rest_server(_rest_process: str) -> RecordingServer:
    """The REST test API, with an empty request record."""
    server = RecordingServer(_rest_process)
    server.forget()
    return server


@pytest.fixture
def chat_server(_chat_process: str) -> RecordingServer:
    """The chat-completions test endpoint, with an empty request record."""
    server = RecordingServer(_chat_process)
    server.forget()
    return server


@pytest.fixture(scope="session")
def memory_http_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The example memory server over streamable HTTP, on its own database; yields its MCP URL."""
    workdir = tmp_path_factory.mktemp("memory-http")
    port = free_port()
    args = [
        str(MEMORY_SERVER),
        "--transport",
        "streamable-http",
        "--port",
        str(port),
        "--db",
        str(workdir / "memories.sqlite3"),
    ]
    with running_server(args, port=port, log_path=workdir / "server.log") as url:
        yield f"{url}/mcp"


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server for the session (its absence fails the test)."""
    with running_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server.url
