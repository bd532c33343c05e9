"""``agent-hooks run`` and ``schema`` (SPEC section 7), in-process and as a real subprocess."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_hooks.cli import main
from tests._support.manifests import CLOCK, hook
from tests.servers.processes import free_port

REPO = Path(__file__).resolve().parents[2]
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
    assert history[3]["tool_call_id"].endswith(f"_t{NOW + 600:08x}")


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


@pytest.mark.usefixtures("preview_off")
def test_run_reads_a_manifest_from_a_pipe_once(capsys: pytest.CaptureFixture[str]) -> None:
    """``run <(...)``: with preview off the manifest is validated twice (with its hooks, then
    without), from one read; a second read of a pipe would find it empty."""
    read_end, write_end = os.pipe()
    os.write(write_end, (TIME_APP / "manifest.json").read_bytes())
    os.close(write_end)
    try:
        history = str(TIME_APP / "history.json")
        code, out, err = run_cli(capsys, "run", f"/dev/fd/{read_end}", "--messages", history)
    finally:
        os.close(read_end)
    assert code == 0, err
    assert out == json.loads((TIME_APP / "history.json").read_text())


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


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


HISTORY = [{"role": "user", "content": "hi"}]


def refused_rest_toolset() -> dict[str, Any]:
    """A REST toolset whose server is not listening: every call fails at once."""
    return {
        "type": "rest-api",
        "name": "down",
        "base_url": f"http://127.0.0.1:{free_port()}",
        "tools": [{"name": "ping", "path": "/ping"}],
    }


def down_hook(name: str, **extra: Any) -> dict[str, Any]:
    return hook("ping", "down", name=name, **extra)


def explain_rows(err: str) -> list[list[str]]:
    """The ``--explain`` table: the header row, then one split row per hook."""
    lines = err.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["HOOK", "TOOL"])
    return [line.split() for line in lines[start:]]


@pytest.mark.usefixtures("preview_on")
def test_the_request_object_reaches_the_hooks_templates(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    for_u7 = hook(name="for-u7", condition="request.user_id == 'u7'")
    manifest = write_json(tmp_path / "m.json", {"toolsets": [CLOCK], "hooks": [for_u7]})
    history = write_json(tmp_path / "h.json", HISTORY)
    argv = ["run", str(manifest), "--messages", str(history), "--explain"]

    code, matching, err = run_cli(capsys, *argv, "--request", '{"user_id": "u7"}')
    assert code == 0
    assert len(matching) == 3
    assert explain_rows(err)[1][:3] == ["for-u7", "current_time", "injected"]

    code, other, err = run_cli(capsys, *argv, "--request", '{"user_id": "u8"}')
    assert (code, other) == (0, HISTORY)
    assert explain_rows(err)[1][:3] == ["for-u7", "current_time", "skipped_condition"]


@pytest.mark.usefixtures("preview_on")
def test_on_completion_runs_its_hooks_and_prints_the_history_unchanged(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    counters = "iteration_count == 0 && total_tool_calls == 0"
    hooks = [
        hook(name="at-start"),
        hook(event="on_completion", name="at-end", condition=counters),
    ]
    manifest = write_json(tmp_path / "m.json", {"toolsets": [CLOCK], "hooks": hooks})
    history = tmp_path / "h.json"
    history.write_text('[{"content": "hi", "role": "user"}]')

    code = main(["run", str(manifest), "--messages", str(history), "--event", "on_completion",
                 "--explain"])  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0
    assert json.dumps(json.loads(captured.out)) == history.read_text()
    (row,) = explain_rows(captured.err)[1:]
    assert row[:3] == ["at-end", "current_time", "completed"]


@pytest.mark.usefixtures("preview_on")
def test_a_failing_hook_is_skipped_and_the_exit_code_stays_0(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = {"toolsets": [refused_rest_toolset()], "hooks": [down_hook("ping")]}
    manifest_path = write_json(tmp_path / "m.json", manifest)
    history = write_json(tmp_path / "h.json", HISTORY)
    code, output, err = run_cli(
        capsys, "run", str(manifest_path), "--messages", str(history), "--explain"
    )
    assert (code, output) == (0, HISTORY)
    assert explain_rows(err)[1][:3] == ["ping", "down_ping", "skipped_error"]


@pytest.mark.usefixtures("preview_on")
def test_a_failed_on_error_fail_hook_exits_3_with_one_line_per_failed_hook(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    hooks = [
        down_hook("first", on_error="fail"),
        hook(name="fine"),
        down_hook("tolerated"),
        down_hook("second", on_error="fail", arguments={"n": 2}),
    ]
    manifest = write_json(
        tmp_path / "m.json", {"toolsets": [refused_rest_toolset(), CLOCK], "hooks": hooks}
    )
    history = write_json(tmp_path / "h.json", HISTORY)

    code = main(["run", str(manifest), "--messages", str(history), "--explain"])
    captured = capsys.readouterr()
    assert code == 3
    assert captured.out == ""
    errors = [line for line in captured.err.splitlines() if line.startswith("error: ")]
    assert [line.split(" failed: ")[0] for line in errors] == [
        "error: hook 'first'",
        "error: hook 'second'",
    ]
    assert all(len(line.split(" failed: ")[1]) > 0 for line in errors)
    rows = explain_rows(captured.err)
    assert [row[:3] for row in rows[1:5]] == [
        ["first", "down_ping", "skipped_error"],
        ["fine", "current_time", "injected"],
        ["tolerated", "down_ping", "skipped_error"],
        ["second", "down_ping", "skipped_error"],
    ]


@pytest.mark.usefixtures("preview_on")
def test_explain_names_unnamed_hooks_by_their_place_in_the_manifest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    hooks = [hook(), hook(arguments={"zone": "utc"})]
    manifest = write_json(tmp_path / "m.json", {"toolsets": [CLOCK], "hooks": hooks})
    history = write_json(tmp_path / "h.json", HISTORY)
    code, _, err = run_cli(capsys, "run", str(manifest), "--messages", str(history), "--explain")
    rows = explain_rows(err)
    assert code == 0
    assert rows[0] == ["HOOK", "TOOL", "OUTCOME", "LATENCY", "REASON"]
    assert [row[0] for row in rows[1:]] == ["hooks[0]", "hooks[1]"]


@pytest.mark.usefixtures("preview_off")
def test_messages_the_hooks_do_not_touch_come_out_with_their_keys_in_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    text = json.dumps(
        [
            {"content": "be brief", "role": "system"},
            {"x_trace": {"b": 1, "a": 2}, "content": "hi", "role": "user", "name": "ann"},
            {"tool_calls": [{"function": {"arguments": "{}", "name": "f"}, "type": "function",
                             "id": "c1"}], "content": None, "role": "assistant"},
        ]
    )  # fmt: skip
    history = tmp_path / "h.json"
    history.write_text(text)
    code = main(["run", str(TIME_APP / "manifest.json"), "--messages", str(history)])
    assert code == 0
    assert json.dumps(json.loads(capsys.readouterr().out)) == text


@pytest.mark.parametrize("now", ["0", "10000000000", "1900000000.5"])
def test_now_accepts_unix_seconds_from_0_to_10_to_the_10(
    capsys: pytest.CaptureFixture[str], now: str
) -> None:
    code, _, _ = run_time_app(capsys, "--now", now)
    assert code == 0


@pytest.mark.parametrize("now", ["10000000001", "1e11", "-1", "nan", "inf", "soon", ""])
def test_now_outside_0_to_10_to_the_10_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], now: str
) -> None:
    code, out, err = run_time_app(capsys, "--now", now)
    assert (code, out) == (2, "")
    assert err.startswith("--now: ")
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("request_text", ['["u7"]', '"u7"', "null", "{", '{"a": NaN}'])
def test_a_request_that_is_not_a_json_object_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str], request_text: str
) -> None:
    code, out, err = run_time_app(capsys, "--request", request_text)
    assert (code, out) == (2, "")
    assert err.startswith("--request: ")
    assert len(err.splitlines()) == 1


def test_an_unknown_event_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_time_app(capsys, "--event", "on_request_end")
    assert (code, out) == (2, "")
    assert "on_request_start" in err
