"""``serve --workers N`` (SPEC 17): N processes on one port sharing the store and the metrics.

Which worker served a request is read from the log: each worker's lines start with ``[PID]``.
Every request below opens a connection of its own, so the kernel hands it to either worker.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.serve._proxy import CLIENT_KEY, Proxy, running_proxy, wait_until_healthy
from tests.serve.test_proxy import USER, eventually, is_pair_at, manifest, tool_hits
from tests.serve.upstream_server import ANSWER
from tests.servers.fixtures import RecordingServer
from tests.servers.processes import free_port, stop

ACCESS_LINE = re.compile(r"^\[(\d+)\] INFO agent_hooks\.serve: request method=POST .*status=200")
MOST_REQUESTS = 60
"""Requests sent at most until both workers have answered one (usually a handful)."""


def served_by(proxy: Proxy) -> list[int]:
    """The pid of the worker behind each answered POST, in the order they were logged."""
    lines = proxy.log().splitlines()
    return [int(match[1]) for line in lines if (match := ACCESS_LINE.match(line))]


def nth_served_by(proxy: Proxy, index: int) -> int:
    """The pid of the worker behind the ``index``-th answered POST, once it is logged."""
    return eventually(lambda: log[index] if len(log := served_by(proxy)) > index else None)


def spawned() -> Iterator[tuple[int, Path]]:
    """Every process multiprocessing spawned (not its resource tracker) and its ``/proc`` entry."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if b"spawn_main" in command:
                yield int(entry.name), entry


def workers(pid: int) -> set[int]:
    """The worker processes of the proxy ``pid``."""
    found = set()
    for worker, entry in spawned():
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.add(worker)
    return found


def two_workers(proxy: Proxy, *, besides: int | None = None) -> set[int]:
    """The proxy's two workers once both run (and ``besides`` is not one of them)."""

    def probe() -> set[int] | None:
        found = workers(proxy.process.pid) - {besides}
        return found if len(found) == 2 else None

    return eventually(probe)


def metrics_dir(worker: int) -> Path:
    """The directory of the metric files ``worker`` has mapped (prometheus-client's), once it
    has created its metrics."""

    def probe() -> Path | None:
        maps = Path(f"/proc/{worker}/maps").read_text().splitlines()
        files = {Path(line.split()[-1]) for line in maps if line.endswith(f"_{worker}.db")}
        return files.pop().parent if files else None

    return eventually(probe)


def chat(proxy: Proxy, conversation: str, **body: object) -> httpx.Response:
    """One turn on a connection of its own."""
    response = httpx.post(
        f"{proxy.url}/v1/chat/completions",
        json={"model": "m", "messages": [USER], **body},
        headers={"authorization": f"Bearer {CLIENT_KEY}", "x-conversation-id": conversation},
        timeout=20,
    )
    response.raise_for_status()
    return response


def counted(proxy: Proxy, series: str) -> float:
    text = httpx.get(f"{proxy.url}/metrics", timeout=10).text
    (line,) = [line for line in text.splitlines() if line.startswith(f"{series} ")]
    return float(line.split()[-1])


def requests_counted(proxy: Proxy) -> float:
    return counted(proxy, 'agent_hooks_requests_total{route="chat",status="200"}')


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_turns_of_one_conversation_move_between_workers_and_the_ttl_hook_runs_once(
    tmp_path: Path,
    upstream: RecordingServer,
    rest_server: RecordingServer,
    redis_url: str,
    backend: str,
) -> None:
    state = ["--state", redis_url] if backend == "redis" else []
    options = ("--upstream", upstream.url, "--workers", "2", *state)
    conversation = f"workers-{tmp_path.name}"
    with running_proxy(manifest(rest_server.url), tmp_path, *options) as proxy:
        sent = 0
        while len(set(served_by(proxy))) < 2 and sent < MOST_REQUESTS:
            chat(proxy, conversation)
            sent += 1
        pids = served_by(proxy)
        assert len(set(pids)) == 2, f"one worker answered all {sent} requests"
        assert set(pids) == workers(proxy.process.pid)
        # Both workers' counts, added up (each counts a request just after its last byte left).
        eventually(lambda: True if requests_counted(proxy) == sent else None)
    assert tool_hits(rest_server) == 1  # the other worker found the pair fresh in the store
    forwarded = [entry["body"]["messages"] for entry in upstream.received()]
    assert len(forwarded) == sent
    assert all(messages == forwarded[0] and is_pair_at(messages, 1) for messages in forwarded)


def test_sigterm_lets_an_answer_in_flight_finish_stops_every_worker_and_removes_the_metrics(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    options = ("--upstream", upstream.url, "--workers", "2")
    with running_proxy(manifest(rest_server.url), tmp_path, *options) as proxy:
        started = two_workers(proxy)
        directory = metrics_dir(min(started))
        assert directory.is_dir()
        stream = proxy.client().chat.completions.create(
            model="gated",
            messages=[USER],  # type: ignore[list-item]
            stream=True,
        )
        chunks = iter(stream)
        assert next(chunks).choices[0].delta.content == "Hello"
        proxy.process.send_signal(signal.SIGTERM)
        httpx.post(f"{upstream.url}/_release").raise_for_status()
        rest = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
        assert "Hello" + rest == ANSWER
        assert proxy.process.wait(timeout=30) == 0
    assert not any(Path(f"/proc/{pid}").exists() for pid in started)
    assert not directory.exists()


def test_a_killed_worker_is_replaced_and_the_counts_it_made_are_kept(
    tmp_path: Path, upstream: RecordingServer
) -> None:
    options = ("--upstream", upstream.url, "--workers", "2")
    with running_proxy({"hooks": []}, tmp_path, *options) as proxy:
        first = two_workers(proxy)
        while len(set(served_by(proxy))) < 2 and len(served_by(proxy)) < MOST_REQUESTS:
            chat(proxy, "replaced")
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        line = f"worker {victim} exited with code -9: starting another"
        eventually(lambda: True if line in proxy.log() else None)
        (replacement,) = two_workers(proxy, besides=victim) - first
        deadline = time.monotonic() + 20
        while replacement not in served_by(proxy) and time.monotonic() < deadline:
            chat(proxy, "replaced")
        assert replacement in served_by(proxy)
        # The killed worker's requests are still counted beside the living ones'.
        assert victim in served_by(proxy)
        eventually(lambda: True if requests_counted(proxy) == len(served_by(proxy)) else None)


def test_sighup_to_the_parent_reloads_the_manifest_of_every_worker(tmp_path: Path) -> None:
    clock = {"kind": "tool_call", "event": "on_request_start", "tool_name": "current_time"}
    with running_proxy({"hooks": []}, tmp_path, "--workers", "2") as proxy:
        two_workers(proxy)
        (tmp_path / "manifest.json").write_text(json.dumps({"hooks": [clock]}))
        proxy.process.send_signal(signal.SIGHUP)
        reloaded: set[int] = set()
        deadline = time.monotonic() + 30
        while reloaded != workers(proxy.process.pid) and time.monotonic() < deadline:
            answered = len(served_by(proxy))
            text = httpx.post(
                f"{proxy.url}/v1/chat/completions",
                json={"model": "m", "messages": [USER]},
                timeout=20,
            ).json()["choices"][0]["message"]["content"]
            pid = nth_served_by(proxy, answered)
            if text.startswith("current_time: "):
                reloaded.add(pid)
        assert reloaded == workers(proxy.process.pid)
        assert counted(proxy, 'agent_hooks_manifest_reloads_total{result="ok"}') == 2
        assert "exited" not in proxy.log()  # reloaded in place, not restarted


RUN_MARKER = "AGENT_HOOKS_TEST_RUN"
"""An environment variable a test gives a serve process; its workers inherit it."""


def left_running(run: str) -> list[int]:
    """Worker processes, whoever their parent is now, of the serve process whose
    :data:`RUN_MARKER` was ``run``."""
    found = []
    for worker, entry in spawned():
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"{RUN_MARKER}={run}".encode() in environ:
            found.append(worker)
    return found


WORKERS_CANNOT_OPEN_THE_STORE = """
import multiprocessing

import agent_hooks.state

_open_store = agent_hooks.state.open_store


def open_store(*args, **kwargs):
    if multiprocessing.parent_process() is not None:  # a worker, not the parent that checked
        raise OSError("cannot open the state file: the disk is full")
    return _open_store(*args, **kwargs)


agent_hooks.state.open_store = open_store
"""
"""A ``sitecustomize`` that lets the parent open the store and no worker (a disk filled up in
between, say)."""


def test_a_worker_that_cannot_start_stops_serve_with_one_error_line_and_leaves_nothing(
    tmp_path: Path,
) -> None:
    """Exit 1 with one ``error:`` line saying why (not one per worker), no worker left running,
    nothing left in the temporary directory (the metrics directory)."""
    (tmp_path / "manifest.json").write_text("{}")
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(WORKERS_CANNOT_OPEN_THE_STORE)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "agent_hooks.serve", str(tmp_path / "manifest.json"),
         "--port", "0", "--state", f"sqlite:///{tmp_path}/state.db", "--workers", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, "TMPDIR": str(temporary), RUN_MARKER: tmp_path.name,
             "PYTHONPATH": os.pathsep.join([str(site), *sys.path])},
    )  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    (error,) = [line for line in lines if "error" in line.lower()]
    assert re.fullmatch(
        r"error: worker \d+ could not start: cannot open the state file: the disk is full",
        error,
    ), done.stderr
    assert "Traceback" not in done.stderr
    assert left_running(tmp_path.name) == []
    assert list(temporary.iterdir()) == []


def test_workers_serve_a_manifest_only_the_parent_could_read(tmp_path: Path) -> None:
    """``serve <(...) --workers 2``: a pipe is read once, by the parent; each worker starts from
    the bytes the parent read and checked, and says so."""
    clock = {"kind": "tool_call", "event": "on_request_start", "tool_name": "current_time"}
    read_end, write_end = os.pipe()
    os.write(write_end, json.dumps({"hooks": [clock]}).encode())
    os.close(write_end)
    port = free_port()
    log_path = tmp_path / "serve.log"
    try:
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                [sys.executable, "-m", "agent_hooks.serve", f"/dev/fd/{read_end}",
                 "--port", str(port), "--state", f"sqlite:///{tmp_path}/state.db",
                 "--workers", "2"],
                stdout=log,
                stderr=subprocess.STDOUT,
                pass_fds=(read_end,),
                env={**os.environ, "ENABLE_PREVIEW_FEATURES": "true"},
            )  # fmt: skip
    finally:
        os.close(read_end)
    proxy = Proxy(f"http://127.0.0.1:{port}", process, log_path)
    try:
        wait_until_healthy(proxy)
        two_workers(proxy)
        answered: set[int] = set()
        while answered != workers(process.pid) and len(served_by(proxy)) < MOST_REQUESTS:
            before = len(served_by(proxy))
            text = httpx.post(
                f"{proxy.url}/v1/chat/completions",
                json={"model": "m", "messages": [USER]},
                timeout=20,
            ).json()["choices"][0]["message"]["content"]
            assert text.startswith("current_time: "), text
            answered.add(nth_served_by(proxy, before))
        assert answered == workers(process.pid)
        fallbacks = [line for line in proxy.log().splitlines() if "the server checked" in line]
        assert len(fallbacks) == 2, proxy.log()
        assert " ERROR " not in proxy.log()
    finally:
        stop(process)


def test_a_worker_started_after_the_file_turned_invalid_serves_the_checked_manifest(
    tmp_path: Path, upstream: RecordingServer
) -> None:
    """A worker that died is replaced; the manifest on disk is invalid by then (its reload was
    refused, the workers kept theirs): the new worker starts from the manifest the parent
    checked, instead of failing to start and taking the server down."""
    clock = {"kind": "tool_call", "event": "on_request_start", "tool_name": "current_time"}
    options = ("--upstream", upstream.url, "--workers", "2")
    with running_proxy({"hooks": [clock]}, tmp_path, *options) as proxy:
        first = two_workers(proxy)
        # Both serve before one is killed: a worker killed while starting stops the server.
        while len(set(served_by(proxy))) < 2 and len(served_by(proxy)) < MOST_REQUESTS:
            chat(proxy, "before-invalid")
        (tmp_path / "manifest.json").write_text('{"hooks": [{"kind": "nonsense"}]}')
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        eventually(lambda: True if "starting another" in proxy.log() else None)
        (replacement,) = two_workers(proxy, besides=victim) - first
        deadline = time.monotonic() + 20
        while replacement not in served_by(proxy) and time.monotonic() < deadline:
            chat(proxy, "after-invalid")
        assert replacement in served_by(proxy)
        assert proxy.process.poll() is None
        assert f"[{replacement}] WARNING agent_hooks.serve: manifest not loaded from" in proxy.log()
