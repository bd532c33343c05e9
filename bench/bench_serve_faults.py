"""``agent-hooks serve`` under load and faults (issue 16): nothing leaks, fails or grows.

Two runs, one per store (Redis, then SQLite). Each starts the proxy (a child process) in front of
a streaming stub upstream, then runs CLIENTS concurrent streaming clients for LOAD_SECONDS. Every
client has its own credential (its tenant) and its own ``user``, and they all send the same
``X-Conversation-Id``: the one hook reads the requesting user's record, so each pair names its
owner, and the stub counts every request whose history holds a pair naming another user (a
leak: one tenant's state reaching another's model). While the load runs:

* one request in ABORT_EVERY is abandoned by its client after the first event;
* Redis run: the Redis server is killed at KILL_AT and started again (empty) at RESTART_AT;
* SQLite run: the state file is deleted at KILL_AT.

It prints, per run: requests completed and failed (a completed answer is a 200 stream that ends
with ``[DONE]`` and holds no error event; the store's faults must cost state, not answers), client
aborts, pairs leaked (must be 0), the proxy's state-error count from ``/metrics``, and the
proxy's RSS and open descriptors before the load and after it settled.

``python bench/bench_serve_faults.py`` (needs ``redis-server``). Client, proxy and stub share the
machine; the figures that matter are the counts, not the rates.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
CLIENTS = 300
LOAD_SECONDS = 20.0
KILL_AT = 6.0
RESTART_AT = 10.0
ABORT_EVERY = 10
STUB_CHUNKS = 5
STUB_GAP_SECONDS = 0.02
CONVERSATION = "shared-conversation"
STARTUP_SECONDS = 30.0


# --- the stub upstream (run as a child: ``bench_serve_faults.py --stub PORT``) ----------------


def stub_main(port: int) -> None:
    """A streaming chat-completions upstream that checks whose pairs each request carries, and
    the REST endpoint the hook reads (``/users/{id}``)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response, StreamingResponse
    from starlette.routing import Route

    stats = {"requests": 0, "leaks": 0, "with_pairs": 0}

    async def user_record(request: Request) -> Response:
        return JSONResponse({"user_id": request.path_params["user_id"], "plan": "pro"})

    async def completions(request: Request) -> Response:
        body = json.loads(await request.body())
        stats["requests"] += 1
        owners = {
            json.loads(message["content"]).get("user_id")
            for message in body["messages"]
            if message.get("role") == "tool" and message.get("tool_call_id", "").startswith("ah_")
        }
        if owners:
            stats["with_pairs"] += 1
        if owners - {body.get("user")}:
            stats["leaks"] += 1

        async def events() -> AsyncIterator[bytes]:
            for index in range(STUB_CHUNKS):
                delta = {"content": f"part {index} "}
                chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                yield f"data: {json.dumps(chunk)}\n\n".encode()
                await asyncio.sleep(STUB_GAP_SECONDS)
            end = {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
            yield f"data: {json.dumps(end)}\n\ndata: [DONE]\n\n".encode()

        return StreamingResponse(events(), media_type="text/event-stream")

    async def read_stats(_: Request) -> Response:
        return JSONResponse(stats)

    app = Starlette(
        routes=[
            Route("/users/{user_id}", user_record),
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/_stats", read_stats),
        ]
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", backlog=2048)


# --- processes ---------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_for(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{process.args!r} exited with {process.returncode}")
        try:
            httpx.get(url, timeout=0.5)
            return
        except httpx.TransportError:
            time.sleep(0.05)  # paces the poll while the server starts
    raise TimeoutError(f"{url} did not answer")


@contextmanager
def child(
    args: list[str], log: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as out:
        process = subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})}
        )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Redis:
    """A redis-server on a fixed port that the run kills and starts again."""

    def __init__(self, workdir: Path) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise SystemExit("redis-server is not installed")
        self.args = [binary, "--port", str(free_port()), "--save", "", "--appendonly", "no"]
        self.url = f"redis://127.0.0.1:{self.args[2]}/0"
        self.log = workdir / "redis.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(self.args, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", int(self.args[2])), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)  # paces the poll while the server starts
        raise TimeoutError("redis-server did not start")

    def kill(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None


# --- the load ----------------------------------------------------------------------------------


@dataclass
class Counts:
    completed: int = 0
    aborted: int = 0
    failures: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)

    @property
    def failed(self) -> int:
        return sum(self.failures.values())


async def client_loop(
    client: httpx.AsyncClient, url: str, index: int, end: float, counts: Counts
) -> None:
    headers = {"authorization": f"Bearer tenant-key-{index:04d}", "x-conversation-id": CONVERSATION}
    body = {
        "model": "stub",
        "stream": True,
        "user": f"user-{index}",
        "messages": [{"role": "user", "content": "How is my account?"}],
    }
    rng = random.Random(index)
    while time.monotonic() < end:
        abort = rng.randrange(ABORT_EVERY) == 0
        try:
            async with client.stream("POST", url, json=body, headers=headers) as response:
                if response.status_code != 200:
                    counts.failures[f"status {response.status_code}"] += 1
                    continue
                done = broken = False
                async for line in response.aiter_lines():
                    if abort:
                        break  # leaving the block closes the connection mid-answer
                    done = done or line == "data: [DONE]"
                    broken = broken or line.startswith('data: {"error"')
            if abort:
                counts.aborted += 1
            elif broken:
                counts.failures["error event"] += 1
            elif not done:
                counts.failures["no [DONE]"] += 1
            else:
                counts.completed += 1
        except httpx.HTTPError as exc:
            counts.failures[f"{type(exc).__name__}: {exc}"[:120]] += 1


def usage(pid: int) -> tuple[float, int]:
    """The process's RSS in MiB and its open descriptors."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kib = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS"))
    return rss_kib / 1024, len(os.listdir(f"/proc/{pid}/fd"))


def metric(proxy_url: str, prefix: str) -> float:
    """The value of the first ``/metrics`` series starting with ``prefix`` (0 when absent)."""
    text = httpx.get(f"{proxy_url}/metrics", timeout=10).text
    rows = [row for row in text.splitlines() if row.startswith(prefix)]
    return float(rows[0].split()[-1]) if rows else 0.0


async def load(proxy_url: str, fault: Any) -> Counts:
    counts = Counts()
    limits = httpx.Limits(  # idle connections dropped before the proxy (uvicorn) drops them
        max_connections=CLIENTS + 50, max_keepalive_connections=CLIENTS, keepalive_expiry=2.0
    )
    async with httpx.AsyncClient(limits=limits, timeout=60) as client:
        end = time.monotonic() + LOAD_SECONDS
        url = f"{proxy_url}/v1/chat/completions"
        workers = [client_loop(client, url, index, end, counts) for index in range(CLIENTS)]
        await asyncio.gather(*workers, fault())
    return counts


@dataclass
class Row:
    store: str
    counts: Counts
    leaks: int
    upstream_requests: int
    reapplied: float
    injected: float
    state_errors: float
    before: tuple[float, int]
    after: tuple[float, int]


def run(kind: str, workdir: Path) -> Row:
    stub_port, proxy_port = free_port(), free_port()
    manifest = {
        "toolsets": [
            {
                "type": "rest-api",
                "name": "accounts",
                "base_url": f"http://127.0.0.1:{stub_port}",
                "tools": [{"name": "get_user", "path": "/users/{user_id}"}],
            }
        ],
        "hooks": [
            {
                "kind": "tool_call",
                "event": "on_request_start",
                "name": "account",
                "toolset_name": "accounts",
                "tool_name": "get_user",
                "arguments": {"user_id": "${request.user}"},
            }
        ],
    }
    (workdir / "manifest.json").write_text(json.dumps(manifest))
    redis = Redis(workdir) if kind == "redis" else None
    state_file = workdir / "state.db"
    state = redis.url if redis is not None else f"sqlite:///{state_file}"
    if redis is not None:
        redis.start()
    stub = [sys.executable, __file__, "--stub", str(stub_port)]
    proxy = [sys.executable, "-m", "agent_hooks.serve", str(workdir / "manifest.json")]
    proxy += ["--port", str(proxy_port), "--upstream", f"http://127.0.0.1:{stub_port}"]
    proxy += ["--state", state, "--max-connections", "2000"]
    proxy_url = f"http://127.0.0.1:{proxy_port}"
    try:
        with (
            child(stub, workdir / "stub.log") as stub_process,
            child(
                proxy, workdir / "proxy.log", {"ENABLE_PREVIEW_FEATURES": "true"}
            ) as proxy_process,
        ):
            wait_for(f"http://127.0.0.1:{stub_port}/_stats", stub_process)
            wait_for(f"{proxy_url}/healthz", proxy_process)
            httpx.post(  # warm-up: imports, the store, the first connections
                f"{proxy_url}/v1/chat/completions",
                json={"model": "stub", "messages": [{"role": "user", "content": "hi"}]},
                headers={"authorization": "Bearer warm-up"},
                timeout=30,
            )
            before = usage(proxy_process.pid)

            async def fault() -> None:
                await asyncio.sleep(KILL_AT)
                if redis is not None:
                    redis.kill()
                    await asyncio.sleep(RESTART_AT - KILL_AT)
                    redis.start()
                else:
                    state_file.unlink()

            counts = asyncio.run(load(proxy_url, fault))
            time.sleep(3.0)  # let closed connections and abandoned work wind down
            after = usage(proxy_process.pid)
            stats = httpx.get(f"http://127.0.0.1:{stub_port}/_stats", timeout=10).json()
            errors = metric(proxy_url, "agent_hooks_state_errors_total")
            runs = 'agent_hooks_hook_runs_total{hook="account",outcome='
            reapplied = metric(proxy_url, runs + '"replaced"}')
            injected = metric(proxy_url, runs + '"injected"}')
    finally:
        if redis is not None:
            redis.kill()
    return Row(
        kind,
        counts,
        stats["leaks"],
        stats["requests"],
        reapplied,
        injected,
        errors,
        before,
        after,
    )


def main() -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(
        f"{CLIENTS} concurrent streaming clients for {LOAD_SECONDS:g} s, one in {ABORT_EVERY}"
        f" abandoned after its first event; fault at {KILL_AT:g} s"
        f" (Redis killed, back at {RESTART_AT:g} s; SQLite file deleted)\n"
    )
    rows = []
    for kind in ("redis", "sqlite"):
        with tempfile.TemporaryDirectory(prefix=f"bench-faults-{kind}-") as workdir:
            rows.append(run(kind, Path(workdir)))
    header = (
        "| store | completed | failed | client aborts | upstream requests | pairs leaked"
        " | stored pair re-applied | pair injected anew | state errors"
        " | RSS MiB before → after | fds before → after |"
    )
    print(header)
    print("|" + "---|" * 11)
    for row in rows:
        print(
            f"| {row.store} | {row.counts.completed} | {row.counts.failed}"
            f" | {row.counts.aborted} | {row.upstream_requests} | {row.leaks}"
            f" | {row.reapplied:g} | {row.injected:g} | {row.state_errors:g}"
            f" | {row.before[0]:.0f} → {row.after[0]:.0f} | {row.before[1]} → {row.after[1]} |"
        )
    for row in rows:
        if row.counts.failures:
            print(f"{row.store} failures: {dict(row.counts.failures)}")
    print(
        "\n'pair injected anew' counts each tenant's first turn (300) plus every turn whose stored"
        " state was lost or unreachable; 'state errors' counts store calls that failed or were"
        " skipped while the store was paused after a failure."
    )
    if any(row.leaks for row in rows):
        raise SystemExit("pairs leaked between tenants")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--stub"]:
        stub_main(int(sys.argv[2]))
    else:
        main()
