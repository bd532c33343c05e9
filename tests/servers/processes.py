"""Starting the test servers as child processes and waiting for them, with bounded waits only."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SERVERS = Path(__file__).resolve().parent
FLAKY_MCP_SERVER = SERVERS / "flaky_mcp_server.py"
API_SERVERS = SERVERS / "api_servers.py"
MEMORY_SERVER = REPO / "examples" / "memory-server" / "memory_server.py"

STARTUP_DEADLINE_SECONDS = 30.0
"""Longest wait for a server to accept connections (interpreter start plus imports)."""

STOP_DEADLINE_SECONDS = 10.0
_POLL_SECONDS = 0.05


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def running_server(
    args: list[str],
    *,
    port: int,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    startup_seconds: float = STARTUP_DEADLINE_SECONDS,
) -> Iterator[str]:
    """Run ``python *args`` until the block ends; yields ``http://127.0.0.1:{port}``.

    The server's output goes to ``log_path`` and is quoted when it fails to start (it has
    ``startup_seconds`` to listen).
    """
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
        )
    try:
        _wait_until_listening(process, port, log_path, startup_seconds)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate, then kill if it will not go; always reaped."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=STOP_DEADLINE_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=STOP_DEADLINE_SECONDS)


def _wait_until_listening(
    process: subprocess.Popen[bytes], port: int, log_path: Path, startup_seconds: float
) -> None:
    deadline = time.monotonic() + startup_seconds
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=_POLL_SECONDS).close()
            return
        except OSError:
            pass
        try:
            code = process.wait(timeout=_POLL_SECONDS)  # paces the poll and notices a crash
        except subprocess.TimeoutExpired:
            continue
        raise RuntimeError(f"server exited with {code}:\n{log_path.read_text(errors='replace')}")
    raise TimeoutError(f"server not listening on port {port} after {startup_seconds}s")
