"""``agent-hooks run`` and ``schema`` (SPEC section 7), in-process and as a real subprocess."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.cli import main

REPO = Path(__file__).resolve().parents[1]
TIME_APP = REPO / "examples" / "time-app"
NOW = 1_900_000_000  # 2030-03-17T17:46:40Z


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, Any, str]:
    code = main(list(argv))
    captured = capsys.readouterr()
    output = json.loads(captured.out) if code == 0 and captured.out.strip() else captured.out
    return code, output, captured.err


def run_time_app(capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, Any, str]:
    """``run`` on the time-app example's manifest and history, with ``extra`` options."""
    manifest = str(TIME_APP / "manifest.json")
    return run_cli(capsys, "run", manifest, "--messages", str(TIME_APP / "history.json"), *extra)


@pytest.mark.usefixtures("preview_on")
def test_run_prints_the_history_with_the_injected_pair(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, history, _ = run_time_app(capsys, "--now", str(NOW))
    assert code == 0
    original = json.loads((TIME_APP / "history.json").read_text())
    assert history[:2] == original
    assert history[2]["tool_calls"][0]["function"] == {"name": "current_time", "arguments": "{}"}
    assert history[3] == {
        "role": "tool",
        "tool_call_id": history[2]["tool_calls"][0]["id"],
        "content": "2030-03-17T17:46:40Z",
    }
    assert history[3]["tool_call_id"].endswith(f"_ttl_{NOW + 600:08x}")


@pytest.mark.usefixtures("preview_on")
def test_run_within_the_ttl_leaves_its_own_output_unchanged(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, first, _ = run_time_app(capsys, "--now", str(NOW))
    monkeypatch.setattr(sys, "stdin", io.StringIO(json.dumps(first)))
    manifest = str(TIME_APP / "manifest.json")
    code, second, _ = run_cli(capsys, "run", manifest, "--messages", "-", "--now", str(NOW + 599))
    assert code == 0
    assert second == first


@pytest.mark.usefixtures("preview_off")
def test_run_with_preview_off_says_so_and_leaves_the_history_unchanged(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, history, err = run_time_app(capsys)
    assert code == 0
    assert history == json.loads((TIME_APP / "history.json").read_text())
    assert "ENABLE_PREVIEW_FEATURES" in err


@pytest.mark.usefixtures("preview_on")
def test_run_with_a_bad_messages_file_exits_2_naming_the_place(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "history.json"
    bad.write_text(json.dumps([{"role": "user", "content": "hi"}, {"role": "robot"}]))
    code, _, err = run_cli(capsys, "run", str(TIME_APP / "manifest.json"), "--messages", str(bad))
    assert code == 2
    assert err.splitlines() == [
        "[1].role: must be one of 'system', 'developer', 'user', 'assistant', 'tool' or 'function',"
        " got 'robot'"
    ]


def test_run_with_a_bad_manifest_exits_2_with_path_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"toolsets": [{"type": "internal"}]}))
    code, _, err = run_cli(
        capsys, "run", str(manifest), "--messages", str(TIME_APP / "history.json")
    )
    assert code == 2
    assert "toolsets[0].name: required field is missing" in err.splitlines()


def test_schema_follows_the_preview_setting(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENABLE_PREVIEW_FEATURES", "false")
    _, schema_off, _ = run_cli(capsys, "schema")
    monkeypatch.setenv("ENABLE_PREVIEW_FEATURES", "true")
    _, schema_on, _ = run_cli(capsys, "schema")
    assert "hooks" not in schema_off["properties"]
    assert schema_on["properties"]["hooks"]["x-preview"] is True


def test_the_installed_command_runs_without_a_traceback(tmp_path: Path) -> None:
    executable = Path(sys.executable).with_name("agent-hooks")
    missing = tmp_path / "nope.json"
    completed = subprocess.run(
        [str(executable), "run", str(missing), "--messages", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 2
    assert "Traceback" not in completed.stderr
    assert completed.stdout == ""
    assert "cannot read file" in completed.stderr


@pytest.mark.parametrize("now", ["nan", "inf", "-1000", "soon"])
def test_run_rejects_a_now_that_is_not_unix_seconds_with_exit_2(
    capsys: pytest.CaptureFixture[str], now: str
) -> None:
    code = main(
        ["run", str(TIME_APP / "manifest.json"), "--messages", str(TIME_APP / "history.json"),
         "--now", now]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 2
    assert "--now" in captured.err
    assert "Traceback" not in captured.err
    assert captured.out == ""


def test_a_reader_closing_the_pipe_early_gets_no_traceback(tmp_path: Path) -> None:
    history = tmp_path / "history.json"
    history.write_text(json.dumps([{"role": "user", "content": "x" * 100}] * 5000))
    executable = Path(sys.executable).with_name("agent-hooks")
    process = subprocess.Popen(
        [str(executable), "run", str(TIME_APP / "manifest.json"), "--messages", str(history)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdout.read(10)
    process.stdout.close()  # like `| head -c 10`
    stderr = process.stderr.read().decode()
    process.stderr.close()
    assert process.wait(timeout=60) == 1
    assert "Traceback" not in stderr
