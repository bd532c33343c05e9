"""A bad ``ENABLE_PREVIEW_FEATURES`` value is one line naming it, for every command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_hooks.cli import main

REPO = Path(__file__).resolve().parents[2]
TIME_APP = REPO / "examples" / "time-app"
COMMANDS = {
    "run": ["run", str(TIME_APP / "manifest.json"), "--messages", str(TIME_APP / "history.json")],
    "validate": ["validate", str(TIME_APP / "manifest.json")],
    "schema": ["schema"],
    "serve": ["serve", str(REPO / "examples" / "serve" / "manifest.json"), "--port", "1"],
}


@pytest.mark.parametrize("command", COMMANDS.values(), ids=COMMANDS.keys())
def test_an_invalid_preview_setting_exits_2_with_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.setenv("ENABLE_PREVIEW_FEATURES", "maybe")
    code = main(command)
    captured = capsys.readouterr()
    assert (code, captured.out) == (2, "")
    assert captured.err.splitlines() == [
        "ENABLE_PREVIEW_FEATURES: must be true or false (or 1/0, yes/no, on/off), got 'maybe'"
    ]


def test_the_real_command_reports_an_invalid_preview_setting_without_a_traceback() -> None:
    completed = subprocess.run(
        [str(Path(sys.executable).with_name("agent-hooks")), *COMMANDS["validate"]],
        env={"ENABLE_PREVIEW_FEATURES": "x" * 500, "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert completed.stderr.startswith("ENABLE_PREVIEW_FEATURES: ")
    assert len(completed.stderr.splitlines()) == 1
    assert len(completed.stderr) < 200  # the value is cut, not echoed in full


@pytest.mark.parametrize("value", ["true", "False", "1", "0", "yes", "off"])
def test_valid_preview_settings_are_accepted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("ENABLE_PREVIEW_FEATURES", value)
    assert main(COMMANDS["validate"]) == 0
