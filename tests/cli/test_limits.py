"""``agent-hooks`` input limits and capped error listings (SPEC section 7)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_hooks.cli import main

REPO = Path(__file__).resolve().parents[2]
AGENT_HOOKS = Path(sys.executable).with_name("agent-hooks")
TIME_APP_MANIFEST = REPO / "examples" / "time-app" / "manifest.json"
USER = {"role": "user", "content": ""}
ENDLESS_WRITER = "import sys\nwhile True:\n    sys.stdout.buffer.write(b'[' * 65536)"


def run_on(capsys: pytest.CaptureFixture[str], history: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["run", str(TIME_APP_MANIFEST), "--messages", str(history), *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.usefixtures("preview_on")
def test_a_messages_file_over_max_bytes_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    history = tmp_path / "h.json"
    history.write_text(json.dumps([USER] * 10))
    code, out, err = run_on(capsys, history, "--max-bytes", str(history.stat().st_size - 1))
    assert (code, out) == (2, "")
    assert "--max-bytes" in err
    assert len(err.splitlines()) == 1

    code, _, _ = run_on(capsys, history, "--max-bytes", str(history.stat().st_size))
    assert code == 0


def test_an_endless_stdin_is_refused_after_64_mib_without_waiting_for_its_end() -> None:
    writer = subprocess.Popen([sys.executable, "-c", ENDLESS_WRITER], stdout=subprocess.PIPE)
    try:
        completed = subprocess.run(
            [str(AGENT_HOOKS), "run", str(TIME_APP_MANIFEST), "--messages", "-"],
            stdin=writer.stdout,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        writer.kill()
        writer.wait(timeout=10)
        assert writer.stdout is not None
        writer.stdout.close()
    assert (completed.returncode, completed.stdout) == (2, "")
    assert "larger than 67108864 bytes" in completed.stderr
    assert "Traceback" not in completed.stderr


@pytest.mark.usefixtures("preview_off")
def test_more_than_100000_messages_are_refused_unless_the_limit_is_raised(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    history = tmp_path / "h.json"
    history.write_text(json.dumps([USER] * 100_001))
    code, out, err = run_on(capsys, history)
    assert (code, out) == (2, "")
    assert "100001 messages" in err
    assert "--max-messages" in err

    code, out, _ = run_on(capsys, history, "--max-messages", "100001")
    assert code == 0
    assert len(json.loads(out)) == 100_001


@pytest.mark.parametrize("flag", ["--max-bytes", "--max-messages"])
@pytest.mark.parametrize("value", ["0", "-5", "lots"])
def test_limits_must_be_positive_integers(
    capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    code, out, err = run_on(capsys, REPO / "examples" / "time-app" / "history.json", flag, value)
    assert (code, out) == (2, "")
    assert flag in err


@pytest.mark.usefixtures("preview_on")
def test_a_listing_of_messages_errors_stops_after_50_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    history = tmp_path / "h.json"
    history.write_text(json.dumps([{"role": "robot"}] * 60))
    code, out, err = run_on(capsys, history)
    lines = err.splitlines()
    assert (code, out) == (2, "")
    assert len(lines) == 51
    assert [line.split(".")[0] for line in lines[:50]] == [f"[{i}]" for i in range(50)]
    assert lines[50] == "... and 10 more"


def test_a_listing_of_manifest_errors_stops_after_50_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"toolsets": [{"type": "internal", "tools": []}] * 53}))
    code = main(["validate", str(manifest)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 2
    assert lines[:50] == [f"toolsets[{i}].name: required field is missing" for i in range(50)]
    assert lines[50:] == ["... and 3 more"]


def test_exactly_50_errors_are_all_listed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"toolsets": [{"type": "internal", "tools": []}] * 50}))
    assert main(["validate", str(manifest)]) == 2
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 50
    assert not any(line.startswith("...") for line in lines)
