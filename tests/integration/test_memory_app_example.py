"""The memory-app example, run like ``make run``: the CLI spawns the memory server over stdio."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.servers.processes import REPO

MEMORY_APP = REPO / "examples" / "memory-app"
BIN = Path(sys.executable).parent
DEADLINE = 60


def test_the_example_prints_the_history_with_the_memories_injected(tmp_path: Path) -> None:
    manifest = json.loads((MEMORY_APP / "manifest.json").read_text())
    server = manifest["toolsets"][0]["server"]
    assert server["command"] == "python"  # found on PATH, as the Makefile arranges
    server["env"] = {"MEMORY_SERVER_DB": str(tmp_path / "memories.sqlite3")}  # keep the repo clean
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
        "ENABLE_PREVIEW_FEATURES": "true",
    }
    argv = ["--verbose", "run", tmp_path / "manifest.json"]
    argv += ["--messages", MEMORY_APP / "history.json"]
    completed = subprocess.run(
        [BIN / "agent-hooks", *argv],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    history = json.loads(completed.stdout)
    original = json.loads((MEMORY_APP / "history.json").read_text())
    assert history[:2] == original
    call = history[2]["tool_calls"][0]
    assert call["function"] == {
        "name": "memory_server_get_memories",
        "arguments": '{"user_id": "current"}',
    }
    assert history[3]["tool_call_id"] == call["id"]
    assert history[3]["content"].startswith("- Prefers short answers")
    assert "outcome=injected" in completed.stderr
    assert "Processing request" not in completed.stderr  # the server's own log stays in our log
