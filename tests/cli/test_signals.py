"""Ctrl-C while ``agent-hooks run`` waits on a tool: exit 130, promptly, without a traceback."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

AGENT_HOOKS = Path(sys.executable).with_name("agent-hooks")
WAIT_SECONDS = 60  # far longer than the test: only the interrupt can end the run
EXIT_BOUND_SECONDS = 5.0  # the command promises 2 s; generous on a busy machine


@pytest.fixture
def silent_server() -> Iterator[socket.socket]:
    """A TCP listener on 127.0.0.1 that takes connections and never answers them."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(WAIT_SECONDS)
        yield listener


def test_ctrl_c_while_a_hook_waits_exits_130_without_a_traceback(
    tmp_path: Path, silent_server: socket.socket
) -> None:
    port = silent_server.getsockname()[1]
    toolset = {
        "type": "rest-api",
        "name": "silent",
        "base_url": f"http://127.0.0.1:{port}",
        "timeout_seconds": WAIT_SECONDS,
        "tools": [{"name": "wait", "path": "/wait"}],
    }
    hook = {
        "kind": "tool_call",
        "event": "on_request_start",
        "toolset_name": "silent",
        "tool_name": "wait",
        "timeout_seconds": WAIT_SECONDS,
    }
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"toolsets": [toolset], "hooks": [hook]}))
    history = tmp_path / "history.json"
    history.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    process = subprocess.Popen(
        [str(AGENT_HOOKS), "run", str(manifest), "--messages", str(history)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "ENABLE_PREVIEW_FEATURES": "true"},
    )
    try:
        connection, _ = silent_server.accept()  # the hook's request is on its way
        with connection:
            connection.settimeout(WAIT_SECONDS)
            assert connection.recv(1024).startswith(b"GET /wait ")  # and it has been sent
            process.send_signal(signal.SIGINT)
            stdout, stderr = process.communicate(timeout=EXIT_BOUND_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 130
    assert stdout == b""
    assert b"Traceback" not in stderr
