"""What ``agent-hooks`` logs on stderr: ``-v``/``-vv`` on either side of the subcommand, every
library through the same one-line, scrubbed handler, and logging put back after the command."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.cli import main
from tests._support.manifests import CLOCK, hook
from tests.servers.fixtures import (  # noqa: F401 - fixtures are found by name
    RecordingServer,
    _rest_process,
    rest_server,
)
from tests.servers.processes import FLAKY_MCP_SERVER

AGENT_HOOKS = Path(sys.executable).with_name("agent-hooks")
FLAKY = {
    "type": "mcp",
    "name": "flaky",
    "server": {"transport": "stdio", "command": sys.executable, "args": [str(FLAKY_MCP_SERVER)]},
}
PASSWORD = "hunter2-hunter2"


def files(tmp_path: Path, manifest: dict[str, Any]) -> tuple[str, str]:
    manifest_path = tmp_path / "manifest.json"
    manifest_path.write_text(json.dumps(manifest))
    history = tmp_path / "history.json"
    history.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    return str(manifest_path), str(history)


def run_in_process(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().err


def flaky_hook(tool: str) -> dict[str, Any]:
    return hook(tool, "flaky", name=tool)


@pytest.mark.usefixtures("preview_on")
@pytest.mark.parametrize(
    "flags",
    [("-v", None), (None, "-v"), ("--verbose", None), (None, "--verbose")],
    ids=["-v before", "-v after", "--verbose before", "--verbose after"],
)
def test_one_v_before_or_after_the_subcommand_shows_info(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flags: tuple[str | None, str | None]
) -> None:
    manifest, history = files(tmp_path, {"toolsets": [CLOCK], "hooks": [hook()]})
    before, after = ([flag] if flag else [] for flag in flags)
    code, err = run_in_process(capsys, [*before, "run", manifest, "--messages", history, *after])
    assert code == 0
    assert "INFO agent_hooks.hooks: hook=hooks[0] " in err
    assert "DEBUG " not in err


@pytest.mark.usefixtures("preview_on")
def test_without_v_only_warnings_are_logged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest, history = files(tmp_path, {"toolsets": [CLOCK], "hooks": [hook()]})
    assert run_in_process(capsys, ["run", manifest, "--messages", history]) == (0, "")


@pytest.mark.usefixtures("preview_on")
@pytest.mark.parametrize("position", ["before", "after"])
def test_two_v_show_debug_with_the_mcp_servers_stderr(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, position: str
) -> None:
    manifest, history = files(tmp_path, {"toolsets": [FLAKY], "hooks": [flaky_hook("whoami")]})
    command = ["run", manifest, "--messages", history]
    argv = ["-vv", *command] if position == "before" else [*command, "-vv"]
    code, err = run_in_process(capsys, argv)
    assert code == 0
    assert "DEBUG agent_hooks.tools.mcp: toolset=flaky stderr: flaky server starting" in err


@pytest.mark.usefixtures("preview_on")
def test_libraries_log_through_the_same_handler_with_secrets_scrubbed(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    rest_server: RecordingServer,  # noqa: F811 - the fixture imported above
) -> None:
    base_url = rest_server.url.replace("http://", f"http://alice:{PASSWORD}@")
    rest = {
        "type": "rest-api",
        "name": "prefs",
        "base_url": base_url,
        "tools": [{"name": "get", "path": "/preferences"}],
    }
    manifest, history = files(tmp_path, {"toolsets": [rest], "hooks": [hook("get", "prefs")]})
    code, err = run_in_process(capsys, ["-vv", "run", manifest, "--messages", history])
    assert code == 0
    assert any(line.startswith("INFO httpx: HTTP Request: GET ") for line in err.splitlines())
    assert any(line.startswith("DEBUG httpcore.") for line in err.splitlines())
    assert PASSWORD not in err


@pytest.mark.usefixtures("preview_on")
def test_a_logged_exception_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    manifest, history = files(tmp_path, {"toolsets": [FLAKY], "hooks": [flaky_hook("crash")]})
    completed = subprocess.run(
        [str(AGENT_HOOKS), "-vv", "run", manifest, "--messages", history],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0
    assert "Traceback" not in completed.stderr
    details = [line for line in completed.stderr.splitlines() if "failure detail" in line]
    assert len(details) == 1
    assert ": ToolError: tool 'flaky_crash' failed: " in details[0]
    assert all(line.split(" ")[0] in {"DEBUG", "INFO", "WARNING", "ERROR"}
               for line in completed.stderr.splitlines())  # fmt: skip


def test_logging_is_put_back_as_it_was_after_the_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    watched = [logging.getLogger(), logging.getLogger("agent_hooks"), logging.getLogger("httpx")]
    before = [(each.level, list(each.handlers), list(each.filters)) for each in watched]
    missing = tmp_path / "missing.json"
    assert main(["-vv", "schema"]) == 0
    assert main(["run", str(missing), "--messages", str(missing), "-vv"]) == 2
    capsys.readouterr()
    assert [(each.level, list(each.handlers), list(each.filters)) for each in watched] == before
