"""A throwaway ``redis-server`` on a free port, and a blackholed port that never answers.

A missing ``redis-server`` fails the test that needs it: the state stores are tested against the
real server, never skipped.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.servers.processes import STARTUP_DEADLINE_SECONDS, free_port, stop


class RedisServer:
    """One ``redis-server`` process on a fixed port, which a test may kill and start again."""

    def __init__(self, workdir: Path, port: int | None = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed (apt-get install redis-server)")
        self.binary = binary
        self.workdir = workdir
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--save", "", "--appendonly", "no"]
        log_path = self.workdir / "redis.log"
        with log_path.open("ab") as log:
            self._process = subprocess.Popen(
                args, cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + STARTUP_DEADLINE_SECONDS
        while not _answers_ping(self.port):
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.kill()
                pytest.fail(f"redis-server did not start: {log_path.read_text()}")

    def kill(self) -> None:
        """Stop the server at once (its data is gone: nothing is saved to disk)."""
        if self._process is not None:
            self._process.kill()
            stop(self._process)
            self._process = None


@contextmanager
def running_redis(workdir: Path) -> Iterator[RedisServer]:
    """A started :class:`RedisServer`, stopped when the block ends."""
    server = RedisServer(workdir)
    server.start()
    try:
        yield server
    finally:
        server.kill()


@contextmanager
def blackholed_port() -> Iterator[int]:
    """A port whose connections are accepted (by the kernel's listen queue) but never answered:
    a stuck server or a firewall that drops replies, from the client's point of view."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1024)
        port: int = listener.getsockname()[1]
        yield port


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        time.sleep(0.05)  # paces the poll while the server starts
        return False
