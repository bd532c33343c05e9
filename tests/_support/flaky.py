"""The flaky MCP test server (``tests/servers/flaky_mcp_server.py``) in a manifest, and what its
start log says."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tests.servers.processes import FLAKY_MCP_SERVER


def flaky_server(start_log: Path, **env: str) -> dict[str, Any]:
    """A stdio ``server`` block for the flaky test server, which records each start in
    ``start_log``; ``env`` sets its ``FLAKY_*`` switches."""
    return {
        "transport": "stdio",
        "command": sys.executable,
        "args": [str(FLAKY_MCP_SERVER)],
        "env": {"FLAKY_START_LOG": str(start_log), **env},
    }


def flaky_toolset(name: str, start_log: Path, **env: str) -> dict[str, Any]:
    """An MCP toolset ``name`` on the flaky test server; each start is a line in ``start_log``."""
    return {"type": "mcp", "name": name, "server": flaky_server(start_log, **env)}


def starts(start_log: Path) -> list[str]:
    """What the server wrote in ``start_log``: a pid per start, ``refused`` per refusal."""
    return start_log.read_text().split() if start_log.exists() else []
