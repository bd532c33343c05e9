"""``agent-hooks validate [--connect]`` (SPEC section 7): in-process, and as the real command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.cli import main
from tests._support.manifests import CLOCK, hook
from tests.servers.processes import free_port

REPO = Path(__file__).resolve().parents[2]
AGENT_HOOKS = Path(sys.executable).with_name("agent-hooks")


def write(tmp_path: Path, manifest: Any) -> Path:
    path = tmp_path / "manifest.json"
    path.write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))
    return path


def validate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["validate", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_command(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(AGENT_HOOKS), *argv], capture_output=True, text=True, timeout=60, check=False
    )


@pytest.mark.usefixtures("preview_on")
def test_a_valid_manifest_exits_0_and_prints_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = write(tmp_path, {"toolsets": [CLOCK], "hooks": [hook()]})
    assert validate(capsys, str(manifest)) == (0, "", "")


@pytest.mark.usefixtures("preview_off")
def test_hooks_are_checked_with_preview_off_and_a_warning_says_a_host_would_ignore_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    valid = write(tmp_path, {"toolsets": [CLOCK], "hooks": [hook()]})
    code, out, err = validate(capsys, str(valid))
    assert (code, out) == (0, "")
    assert "ENABLE_PREVIEW_FEATURES is off" in err

    invalid = write(tmp_path, {"toolsets": [CLOCK], "hooks": [hook(frequency="never")]})
    code, out, _ = validate(capsys, str(invalid))
    assert code == 2
    assert out == (
        "hooks[0].frequency: must be one of 'always' or 'append_if_changed', got 'never'\n"
    )


@pytest.mark.usefixtures("preview_on")
def test_a_toolset_name_on_an_internal_toolset_is_a_warning_not_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = write(tmp_path, {"toolsets": [CLOCK], "hooks": [hook(toolset_name="clock")]})
    code, out, err = validate(capsys, str(manifest))
    assert (code, out) == (0, "")
    assert err == (
        "warning: hooks[0].toolset_name: toolset 'clock' has type 'internal', whose tools keep"
        " their own names, so this hook calls 'clock_current_time'; remove toolset_name and give"
        " the tool's name in tool_name\n"
    )


@pytest.mark.usefixtures("preview_on")
def test_the_schema_key_is_accepted_and_ignored(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    schema = str(REPO / "generated-app-schema.json")
    manifest = write(tmp_path, {"$schema": schema, "toolsets": [CLOCK]})
    assert validate(capsys, str(manifest)) == (0, "", "")


@pytest.mark.usefixtures("preview_on")
def test_errors_are_lines_on_stdout_and_nothing_else_is_printed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    hooks = [hook(), hook(), hook(refresh_condition={"kind": "ttl", "ttl_minutes": 0})]
    manifest = write(tmp_path, {"toolsets": [CLOCK], "hooks": hooks})
    assert validate(capsys, str(manifest)) == (
        2,
        "hooks[2].refresh_condition.ttl_minutes: must be greater than 0\n",
        "",
    )


def test_a_missing_manifest_argument_is_a_usage_error_with_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = main(["validate"])
    assert code == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.usefixtures("preview_on")
def test_connect_on_an_invalid_manifest_reports_validation_errors_without_contacting_anything(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    remote = {"type": "mcp", "name": "r", "server": {"transport": "streamable_http", "url": url}}
    manifest = write(tmp_path, {"toolsets": [remote, remote]})
    assert validate(capsys, "--connect", str(manifest)) == (
        2,
        "toolsets[1].name: duplicate toolset name 'r' (first used at toolsets[0])\n",
        "",
    )


@pytest.mark.usefixtures("preview_on")
def test_connect_with_an_unregistered_internal_tool_exits_2_naming_the_tool(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = write(tmp_path, {"toolsets": [{**CLOCK, "tools": ["current_tme"]}]})
    code, out, _ = validate(capsys, "--connect", str(manifest))
    assert code == 2
    assert out.startswith(
        "toolsets[0].tools[0]: no internal tool named 'current_tme' is registered;"
        " did you mean 'current_time'?"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"hooks": [{"kind": "tool_call", "tool_name": "x", ', "$: invalid JSON: expecting"),
        ('{"toolsets": [{"type": "mpc"}]}', "toolsets[0].type: must be one of"),
        ("[]", "$: the manifest must be a JSON object, got an array"),
    ],
    ids=["truncated", "unknown-type", "non-object-root"],
)
def test_the_real_command_prints_error_lines_and_never_a_traceback(
    tmp_path: Path, text: str, expected: str
) -> None:
    result = run_command("validate", str(write(tmp_path, text)))

    assert result.returncode == 2
    assert result.stdout.startswith(expected)
    assert len(result.stdout.splitlines()) == 1
    assert "Traceback" not in result.stderr


def test_the_real_command_reports_an_unreachable_toolset_and_exits_2(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    remote = {
        "type": "mcp",
        "name": "remote",
        "timeout_seconds": 5,
        "server": {"transport": "streamable_http", "url": url},
    }
    result = run_command("validate", "--connect", str(write(tmp_path, {"toolsets": [remote]})))

    assert result.returncode == 2
    assert result.stdout.startswith("toolsets[0]: cannot reach toolset 'remote': ")
    assert len(result.stdout.splitlines()) == 1
    assert "Traceback" not in result.stderr
