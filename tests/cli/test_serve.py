"""``agent-hooks serve`` is wired into the command, and only ``serve`` loads its server stack."""

from __future__ import annotations

import gc
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx
import pytest

from agent_hooks.cli import main
from tests.servers.processes import REPO, free_port

AGENT_HOOKS = Path(sys.executable).with_name("agent-hooks")
SERVE_MANIFEST = REPO / "examples" / "serve" / "manifest.json"
TIME_APP = REPO / "examples" / "time-app"
STARTUP_SECONDS = 60.0
PYTHON_M_SERVE = (sys.executable, "-m", "agent_hooks.serve")


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``agent-hooks serve`` on the example manifest, with the echo model, until the test ends."""
    with _serving(tmp_path, preview="true") as running:
        yield running


@pytest.fixture
def serving_without_preview(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    with _serving(tmp_path, preview="false") as running:
        yield running


@contextmanager
def _serving(
    tmp_path: Path,
    *args: str,
    preview: str,
    env: dict[str, str] | None = None,
    manifest: str = str(SERVE_MANIFEST),
    pass_fds: tuple[int, ...] = (),
) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    port = free_port()
    process = subprocess.Popen(
        [str(AGENT_HOOKS), "serve", manifest, "--port", str(port),
         "--state", f"sqlite:///{tmp_path / 'state.db'}", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "ENABLE_PREVIEW_FEATURES": preview, **(env or {})},
        pass_fds=pass_fds,
    )  # fmt: skip
    try:
        yield process, f"http://127.0.0.1:{port}"
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


async def wait_until_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    with anyio.fail_after(STARTUP_SECONDS):
        async with httpx.AsyncClient() as client:
            while process.poll() is None:
                try:
                    if (await client.get(f"{url}/healthz")).status_code == 200:
                        return
                except httpx.TransportError:
                    await anyio.sleep(0.05)  # polling a port, not synchronising with a sleep
    raise AssertionError(f"serve exited with {process.returncode} before answering")


async def test_serve_answers_with_the_hooks_applied_and_stops_on_sigterm(
    serving: tuple[subprocess.Popen[bytes], str],
) -> None:
    process, url = serving
    await wait_until_healthy(url, process)
    body = {"model": "echo", "messages": [{"role": "user", "content": "what time is it?"}]}
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{url}/v1/chat/completions", json=body)
    assert response.status_code == 200
    assert response.json()["choices"][0]["message"]["content"].startswith("current_time: ")
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=STARTUP_SECONDS)
    assert process.returncode == 0  # a graceful stop is an ordinary exit

    assert b"Traceback" not in stderr


def test_serve_with_an_invalid_manifest_exits_2_naming_the_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"toolsets": [{"type": "internal"}]}))
    assert main(["serve", str(manifest), "--port", str(free_port())]) == 2
    assert "toolsets[0].name: required field is missing" in capsys.readouterr().err


def test_serve_is_listed_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--help"]) == 0
    assert "--upstream" in capsys.readouterr().out


def test_run_and_validate_do_not_load_the_server_stack() -> None:
    script = (
        "import sys\n"
        "from agent_hooks.cli import main\n"
        f"main(['validate', {str(TIME_APP / 'manifest.json')!r}])\n"
        f"main(['run', {str(TIME_APP / 'manifest.json')!r}, '--messages',"
        f" {str(TIME_APP / 'history.json')!r}])\n"
        "heavy = ('starlette', 'uvicorn', 'redis', 'sqlite3')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy), file=sys.stderr)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert completed.stderr.splitlines()[-1] == "[]"


def serve_once(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``agent-hooks serve`` expected to stop at start; its exit status and output."""
    return subprocess.run(
        [str(AGENT_HOOKS), "serve", str(SERVE_MANIFEST), *args],
        capture_output=True,
        text=True,
        timeout=STARTUP_SECONDS,
        check=False,
        env={**os.environ, **(env or {})},
    )


@contextmanager
def busy_port() -> Iterator[int]:
    """A port another socket listens on until the block ends: serve cannot start on it."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_busy_port_exits_1_naming_the_address(tmp_path: Path, workers: str) -> None:
    with busy_port() as port:
        state = f"sqlite:///{tmp_path}/state.db"
        done = serve_once("--port", str(port), "--state", state, "--workers", workers)
    assert done.returncode == 1
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: 127.0.0.1:{port} is already in use"]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("state", "named"),
    [
        ("postgres://db/1", "unsupported state URL 'postgres://db/1'"),
        ("sqlite:///{}/f/s.db", "cannot open the state file /"),
        ("redis+tls://admin:pw-secret@h/0", "unsupported state URL 'redis+tls://***@h/0'"),
        ("redis://admin:pw-secret@h:notaport/0", "state URL 'redis://***@h:notaport/0': Port"),
    ],
    ids=["unparseable", "cannot-create", "unsupported-with-credentials", "redis-bad-port"],
)
def test_a_state_it_cannot_use_exits_1_with_one_error_line(
    tmp_path: Path, state: str, named: str
) -> None:
    (tmp_path / "f").write_text("a file where a directory should be")
    done = serve_once("--port", str(free_port()), "--state", state.format(tmp_path))
    assert done.returncode == 1
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert named in line
    assert "pw-secret" not in done.stderr


async def test_with_preview_off_serve_warns_and_forwards_without_hooks(
    serving_without_preview: tuple[subprocess.Popen[bytes], str],
) -> None:
    process, url = serving_without_preview
    await wait_until_healthy(url, process)
    body = {"model": "echo", "messages": [{"role": "user", "content": "what time is it?"}]}
    async with httpx.AsyncClient() as client:
        response = await client.post(f"{url}/v1/chat/completions", json=body)
    assert response.json()["choices"][0]["message"]["content"] == "no synthetic pairs"
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=STARTUP_SECONDS)
    assert b"preview field 'hooks' ignored: set ENABLE_PREVIEW_FEATURES=true" in stderr


def test_connections_the_server_accepts_have_nagle_off() -> None:
    """uvicorn serving a socket it did not bind leaves Nagle on, and an answer's last small write
    then waits for the client's delayed ACK (about 40 ms per request): the listening socket
    carries TCP_NODELAY, which accepted connections inherit."""
    from agent_hooks.serve._command import _listen

    port = free_port()
    with _listen("127.0.0.1", port) as listening:
        listening.listen()
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            accepted, _ = listening.accept()
            with accepted:
                assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def _logging_state() -> list[tuple[str, list[object], list[object]]]:
    """Every logger serve may touch: its level, filters, and its handlers with their filters."""
    names = ["", "agent_hooks", "agent_hooks.serve", "httpx", "httpcore", "httpx2", "httpcore2"]
    loggers = [logging.getLogger(name) for name in names]
    return [
        (
            f"{logger.name}:{logger.level}",
            list(logger.filters),
            [(handler, list(handler.filters)) for handler in logger.handlers],
        )
        for logger in loggers
    ]


def test_a_serve_run_puts_back_the_log_filters_and_collector_settings_it_changed(
    tmp_path: Path,
) -> None:
    """SPEC 16: nothing process-wide stays changed once ``serve`` returns (here: in-process, on a
    busy port, after it built its app and opened its store)."""
    handler = logging.NullHandler()  # a host's own handler on the root logger
    logging.getLogger().addHandler(handler)
    try:
        before = (
            _logging_state(),
            gc.get_threshold(),
            gc.get_freeze_count(),
            sys.getswitchinterval(),
        )
        with busy_port() as taken:
            port, state = str(taken), f"sqlite:///{tmp_path}/state.db"
            for _ in range(3):
                assert main(["serve", str(SERVE_MANIFEST), "--port", port, "--state", state]) == 1
        assert (
            _logging_state(),
            gc.get_threshold(),
            gc.get_freeze_count(),
            sys.getswitchinterval(),
        ) == before
    finally:
        logging.getLogger().removeHandler(handler)


@pytest.mark.parametrize(
    "upstream",
    [
        "notaurl", "ftp://x", "http://", "http://host:99999", "http://h/v1?key=1", "//host/v1",
        "http://host/ path", "http://host/\tpath",
    ],
)  # fmt: skip
def test_an_upstream_that_is_not_an_http_url_exits_1_naming_it(
    tmp_path: Path, upstream: str
) -> None:
    """SPEC 17: it would start and answer every request 502; it says so at start instead."""
    for option in ("--upstream", "--anthropic-upstream"):
        done = serve_once(option, upstream, "--state", f"sqlite:///{tmp_path}/state.db")
        assert done.returncode == 1
        errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert errors == [
            f"error: {option} {upstream!r} is not an http(s)://host[:port][/path] URL"
        ]


def test_an_invalid_upstream_url_with_credentials_does_not_echo_them(tmp_path: Path) -> None:
    done = serve_once(
        "--upstream", "ftp://admin:pw-secret@h", "--state", f"sqlite:///{tmp_path}/s.db"
    )
    assert done.returncode == 1
    assert "pw-secret" not in done.stderr


@pytest.mark.parametrize("port", ["99999", "-1", "http"])
def test_a_port_outside_0_to_65535_is_a_usage_error(port: str) -> None:
    done = serve_once("--port", port)
    assert done.returncode == 2
    assert done.stderr.splitlines()[0].startswith("usage: agent-hooks serve")
    assert "argument --port" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("workers", ["0", "-1", "two"])
def test_workers_must_be_a_positive_integer(workers: str) -> None:
    done = serve_once("--workers", workers)
    assert done.returncode == 2
    assert "argument --workers" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("entry", ["agent-hooks", "python -m agent_hooks.serve"])
@pytest.mark.parametrize(
    "options",
    [
        ("--max-inflight-bytes", "1000"),
        ("--max-inflight-bytes", "999", "--max-body-bytes", "1000"),
        ("--max-body-bytes", "1001", "--max-inflight-bytes", "1000"),
    ],
    ids=["below-the-default-body", "given-first", "given-last"],
)
def test_max_inflight_bytes_below_max_body_bytes_is_a_usage_error(
    entry: str, options: tuple[str, ...]
) -> None:
    """A body of an allowed size could never be admitted (it alone passes the in-flight bound):
    refused before anything starts (the port is busy, which would be exit 1), whatever the
    order of the options, in both ways of starting serve."""
    command = [str(AGENT_HOOKS), "serve"] if entry == "agent-hooks" else [*PYTHON_M_SERVE]
    with busy_port() as port:
        done = subprocess.run(
            [*command, str(SERVE_MANIFEST), "--port", str(port), *options],
            capture_output=True,
            text=True,
            timeout=STARTUP_SECONDS,
            check=False,
        )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert lines[0].startswith("usage: ")
    (error,) = [line for line in lines if ": error: " in line]
    assert "--max-inflight-bytes" in error
    assert "--max-body-bytes" in error
    assert "Traceback" not in done.stderr


def test_max_inflight_bytes_equal_to_max_body_bytes_starts(tmp_path: Path) -> None:
    """One body of the largest allowed size fits: serve goes on to bind (a busy port, here)."""
    limits = ("--max-inflight-bytes", "1000", "--max-body-bytes", "1000")
    with busy_port() as port:
        done = serve_once("--port", str(port), "--state", f"sqlite:///{tmp_path}/s.db", *limits)
    assert done.returncode == 1
    assert "already in use" in done.stderr


async def test_with_workers_the_start_lines_are_logged_once_and_each_worker_line_names_its_pid(
    tmp_path: Path,
) -> None:
    options = ("--upstream", "http://127.0.0.1:9/v1", "--workers", "2")
    no_key = {"AGENT_HOOKS_UPSTREAM_API_KEY": ""}
    with _serving(tmp_path, *options, preview="true", env=no_key) as (process, url):
        try:
            await wait_until_healthy(url, process)
        finally:
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=STARTUP_SECONDS)
    assert process.returncode == 0
    stderr = err.decode()
    assert stderr.count("listening on http://") == 1
    assert "workers=2" in stderr
    assert stderr.count("--upstream ends with /v1") == 1
    assert stderr.count("AGENT_HOOKS_UPSTREAM_API_KEY nor --forward-auth") == 1
    (access,) = [line for line in stderr.splitlines() if "path=/healthz status=200" in line]
    assert re.match(r"\[\d+\] INFO agent_hooks\.serve: request method=GET", access)


async def test_the_start_line_names_the_address_the_upstream_host_and_the_hooks(
    tmp_path: Path,
) -> None:
    """One line at start (SPEC 17): where it listens, the upstream's host without credentials,
    the hooks; a trailing ``/v1`` is left out with one line saying so; no key: one warning."""
    credentials = "http://admin:pw-secret@127.0.0.1:9/v1/"
    no_key = {"AGENT_HOOKS_UPSTREAM_API_KEY": ""}
    with _serving(tmp_path, "--upstream", credentials, preview="true", env=no_key) as serving:
        process, url = serving
        try:
            await wait_until_healthy(url, process)
        finally:
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=STARTUP_SECONDS)
    port = int(url.rsplit(":", 1)[1])
    stderr = err.decode()
    hooks = ", ".join(
        hook.get("name") or hook["tool_name"]
        for hook in json.loads(SERVE_MANIFEST.read_text())["hooks"]
    )
    assert (f"listening on http://127.0.0.1:{port} upstream=127.0.0.1:9 hooks={hooks}") in stderr
    assert "--upstream ends with /v1: using http://127.0.0.1:9 " in stderr
    assert stderr.count("AGENT_HOOKS_UPSTREAM_API_KEY nor --forward-auth") == 1
    assert "pw-secret" not in stderr


def test_with_debug_on_a_fresh_hooks_record_line_is_written_at_debug(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from agent_hooks.serve._command import _FreshAtDebug

    hooks = logging.getLogger("agent_hooks.hooks")
    hooks.addFilter(quiet := _FreshAtDebug())
    try:
        with caplog.at_level(logging.DEBUG, logger="agent_hooks.hooks"):
            hooks.info("fresh", extra={"outcome": "skipped_fresh"})
            hooks.info("ran", extra={"outcome": "injected"})
    finally:
        hooks.removeFilter(quiet)
    assert [(r.getMessage(), r.levelname) for r in caplog.records] == [
        ("fresh", "DEBUG"),
        ("ran", "INFO"),
    ]


@contextmanager
def _serving_from_a_pipe(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """``serve /dev/fd/N`` where N is a pipe holding the example manifest (``serve <(...)``)."""
    read_end, write_end = os.pipe()
    os.write(write_end, SERVE_MANIFEST.read_bytes())
    os.close(write_end)
    try:
        with _serving(
            tmp_path, preview="true", manifest=f"/dev/fd/{read_end}", pass_fds=(read_end,)
        ) as running:
            yield running
    finally:
        os.close(read_end)


async def test_serve_reads_a_manifest_from_a_pipe_once(tmp_path: Path) -> None:
    """A pipe can be read only once, so the start reads the manifest once (validating it with
    and without preview features from the same bytes)."""
    with _serving_from_a_pipe(tmp_path) as (process, url):
        await wait_until_healthy(url, process)
        body = {"model": "echo", "messages": [{"role": "user", "content": "what time is it?"}]}
        async with httpx.AsyncClient() as client:
            response = await client.post(f"{url}/v1/chat/completions", json=body)
        assert response.json()["choices"][0]["message"]["content"].startswith("current_time: ")
        process.terminate()
        _, stderr = process.communicate(timeout=STARTUP_SECONDS)
    assert b"error" not in stderr.lower(), stderr
