"""A throwaway ``redis-server`` on a free port, for the Redis store and the replica tests."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.servers.processes import STARTUP_DEADLINE_SECONDS, free_port, stop


@contextmanager
def running_redis(workdir: Path) -> Iterator[str]:
    """Yields ``redis://127.0.0.1:PORT/0``; without a usable redis-server, skips (fails in CI)."""
    binary = shutil.which("redis-server")
    if binary is None:
        _unavailable("redis-server is not installed")
    port = free_port()
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    with (workdir / "redis.log").open("ab") as log:
        process = subprocess.Popen(args, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + STARTUP_DEADLINE_SECONDS
        while not _answers_ping(port):
            if process.poll() is not None or time.monotonic() > deadline:
                _unavailable(f"redis-server did not start: {(workdir / 'redis.log').read_text()}")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(process)


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        time.sleep(0.05)  # paces the poll while the server starts
        return False


def _unavailable(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)
