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

Then large bodies (issue 24, SPEC 16): NORMAL_CLIENTS clients send small chat requests, each
one every NORMAL_INTERVAL_SECONDS (no credential, so no state; a hook that injects a pair every
time, so every body is rendered) for LARGE_SECONDS alone and for LARGE_SECONDS beside one client
(its own process) that sends LARGE_BODY_MESSAGES x 4 KiB message bodies (~16 MiB) back to back,
in alternating rounds. It prints the normal clients' p50/p99 in both conditions (the median of
the rounds' figures) and their ratio (target: p99 within 10x), the large client's answers, and
the proxy's peak RSS against its RSS before the load (target: the growth within 8x the bytes in
flight).

``python bench/bench_serve_faults.py`` (needs ``redis-server``); ``--large-bodies`` runs only the
second part. Client, proxy and stub share the machine; the figures that matter are the counts
and the ratios, not the rates.
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
import statistics
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
NORMAL_CLIENTS = 32
LARGE_SECONDS = 20.0
LARGE_ROUNDS = 4
"""Each condition runs LARGE_SECONDS in so many rounds, alternating: both see the same noise."""
NORMAL_INTERVAL_SECONDS = 0.5
"""Each normal client starts a request at most this often: 64 requests a second in all, well
below what the proxy serves on two cores, so their latency is the proxy's, not a queue's."""
LARGE_BODY_MESSAGES = 4_000
LARGE_MESSAGE_BYTES = 4096
PARSED_BODY_BYTES = 1024 * 1024
"""The stub reads bodies up to this size (the tenant checks); larger ones are answered unread, so
the stub's own parse does not take the shared cores from the proxy."""


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
        raw = await request.body()
        stats["requests"] += 1
        if len(raw) > PARSED_BODY_BYTES:
            return JSONResponse(ANSWER)
        body = json.loads(raw)
        if not body.get("stream"):
            return JSONResponse(ANSWER)
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


ANSWER = {
    "id": "chatcmpl-bench",
    "object": "chat.completion",
    "created": 1,
    "model": "stub",
    "choices": [
        {"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}
    ],
}


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


# --- large bodies beside normal clients (issue 24) ---------------------------------------------


def large_body() -> bytes:
    """A chat request of LARGE_BODY_MESSAGES messages of LARGE_MESSAGE_BYTES each (~16 MiB)."""
    messages = [
        {
            "role": "user" if index % 2 == 0 else "assistant",
            "content": f"message {index:05d} " + "x" * (LARGE_MESSAGE_BYTES - 14),
        }
        for index in range(LARGE_BODY_MESSAGES)
    ]
    return json.dumps({"model": "stub", "messages": messages}).encode()


def large_client_main(url: str, seconds: float) -> None:
    """Send large bodies back to back for ``seconds``; print the statuses seen (JSON)."""
    body = large_body()
    statuses: collections.Counter[str] = collections.Counter()
    end = time.monotonic() + seconds
    with httpx.Client(timeout=120) as client:
        while time.monotonic() < end:
            try:
                response = client.post(
                    url, content=body, headers={"content-type": "application/json"}
                )
                statuses[str(response.status_code)] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
    print(json.dumps({"bytes": len(body), "statuses": statuses}))


async def normal_clients(url: str, seconds: float) -> tuple[list[float], int]:
    """NORMAL_CLIENTS clients each starting a small request every NORMAL_INTERVAL_SECONDS (or
    when the last one answered, if later): each 200's latency in seconds, and how many were not
    200."""
    body = {"model": "stub", "messages": [{"role": "user", "content": "How is my account?"}]}
    latencies: list[float] = []
    failed = 0

    async def one(client: httpx.AsyncClient, end: float) -> None:
        nonlocal failed
        await asyncio.sleep(random.uniform(0, NORMAL_INTERVAL_SECONDS))  # spread the starts
        while time.monotonic() < end:
            started = time.perf_counter()
            try:
                response = await client.post(url, json=body)
            except httpx.HTTPError:
                failed += 1
                continue
            elapsed = time.perf_counter() - started
            if response.status_code == 200:
                latencies.append(elapsed)
            else:
                failed += 1
            await asyncio.sleep(max(0.0, NORMAL_INTERVAL_SECONDS - elapsed))  # paces the load

    limits = httpx.Limits(max_keepalive_connections=NORMAL_CLIENTS, keepalive_expiry=2.0)
    async with httpx.AsyncClient(limits=limits, timeout=120) as client:
        end = time.monotonic() + seconds
        await asyncio.gather(*(one(client, end) for _ in range(NORMAL_CLIENTS)))
    return latencies, failed


@dataclass
class LargeRow:
    alone: list[list[float]]
    """The normal clients' latencies, one list per round."""
    beside: list[list[float]]
    failed_alone: int
    failed_beside: int
    large: collections.Counter[str]
    large_bytes: int
    rss_before: float
    peak_alone: float
    peak_beside: float


def peak_rss(pid: int) -> float:
    """The process's peak RSS so far (VmHWM) in MiB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return (
        next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM"))
        / 1024
    )


def run_large(workdir: Path) -> LargeRow:
    stub_port, proxy_port = free_port(), free_port()
    manifest = {
        "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
        "hooks": [
            {
                "kind": "tool_call",
                "event": "on_request_start",
                "name": "time",
                "tool_name": "current_time",
            }
        ],
    }
    (workdir / "manifest.json").write_text(json.dumps(manifest))
    stub = [sys.executable, __file__, "--stub", str(stub_port)]
    proxy = [sys.executable, "-m", "agent_hooks.serve", str(workdir / "manifest.json")]
    proxy += ["--port", str(proxy_port), "--upstream", f"http://127.0.0.1:{stub_port}"]
    proxy += ["--state", f"sqlite:///{workdir / 'state.db'}"]
    proxy_url = f"http://127.0.0.1:{proxy_port}"
    url = f"{proxy_url}/v1/chat/completions"
    seconds = LARGE_SECONDS / LARGE_ROUNDS
    alone: list[list[float]] = []
    beside: list[list[float]] = []
    failed_alone = failed_beside = 0
    large: collections.Counter[str] = collections.Counter()
    large_bytes = 0
    with (
        child(stub, workdir / "stub.log") as stub_process,
        child(proxy, workdir / "proxy.log", {"ENABLE_PREVIEW_FEATURES": "true"}) as proxy_process,
    ):
        wait_for(f"http://127.0.0.1:{stub_port}/_stats", stub_process)
        wait_for(f"{proxy_url}/healthz", proxy_process)
        asyncio.run(normal_clients(url, 1.0))  # warm-up: imports, the first connections
        rss_before = usage(proxy_process.pid)[0]
        peak_alone = 0.0
        for _ in range(LARGE_ROUNDS):
            latencies, failed = asyncio.run(normal_clients(url, seconds))
            alone.append(latencies)
            failed_alone += failed
            peak_alone = peak_alone or peak_rss(proxy_process.pid)  # before any large body
            sender = subprocess.Popen(
                [sys.executable, __file__, "--large", url, str(seconds)], stdout=subprocess.PIPE
            )
            latencies, failed = asyncio.run(normal_clients(url, seconds))
            beside.append(latencies)
            failed_beside += failed
            out, _ = sender.communicate(timeout=300)
            report = json.loads(out)
            large.update(report["statuses"])
            large_bytes = report["bytes"]
        peak_beside = peak_rss(proxy_process.pid)
    return LargeRow(
        alone,
        beside,
        failed_alone,
        failed_beside,
        large,
        large_bytes,
        rss_before,
        peak_alone,
        peak_beside,
    )


def print_large(row: LargeRow) -> None:
    def cuts(rounds: list[list[float]]) -> tuple[int, float, float]:
        """Requests, and the median of the rounds' p50 and p99 in ms."""
        p50 = statistics.median(statistics.median(latencies) for latencies in rounds)
        p99 = statistics.median(statistics.quantiles(latencies, n=100)[98] for latencies in rounds)
        return sum(map(len, rounds)), p50 * 1000, p99 * 1000

    count_alone, p50_alone, p99_alone = cuts(row.alone)
    count_beside, p50_beside, p99_beside = cuts(row.beside)
    in_flight = row.large_bytes / 2**20
    growth = row.peak_beside - row.rss_before
    print(
        f"\n{NORMAL_CLIENTS} normal clients for {LARGE_SECONDS:g} s alone and {LARGE_SECONDS:g} s"
        f" beside one client sending {in_flight:.1f} MiB bodies back to back"
        f" ({LARGE_ROUNDS} alternating rounds each)\n"
    )
    print(f"each client starts a request every {NORMAL_INTERVAL_SECONDS:g} s at most\n")
    print("| normal clients | requests | failed | p50 ms (median of rounds) | p99 ms (median) |")
    print("|---|---|---|---|---|")
    print(f"| alone | {count_alone} | {row.failed_alone} | {p50_alone:.1f} | {p99_alone:.1f} |")
    print(
        f"| beside the large client | {count_beside} | {row.failed_beside}"
        f" | {p50_beside:.1f} | {p99_beside:.1f} |"
    )
    print(
        f"| ratio | {count_beside / count_alone:.2f}x | | {p50_beside / p50_alone:.1f}x"
        f" | {p99_beside / p99_alone:.1f}x (target <= 10x) |"
    )
    print("\n| proxy RSS | MiB |")
    print("|---|---|")
    print(f"| before the load | {row.rss_before:.0f} |")
    print(f"| peak, normal clients alone (first round) | {row.peak_alone:.0f} |")
    print(f"| peak, beside the large client | {row.peak_beside:.0f} |")
    print(f"| growth over the peak alone | {row.peak_beside - row.peak_alone:.0f} |")
    print(
        f"| growth / bytes in flight ({in_flight:.1f} MiB) | {growth / in_flight:.1f}x"
        " (target <= 8x) |"
    )
    print(f"\nlarge client's answers: {dict(row.large)}")


def main_large() -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench-large-") as workdir:
        print_large(run_large(Path(workdir)))


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
    main_large()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--stub"]:
        stub_main(int(sys.argv[2]))
    elif sys.argv[1:2] == ["--large"]:
        large_client_main(sys.argv[2], float(sys.argv[3]))
    elif sys.argv[1:2] == ["--large-bodies"]:
        main_large()
    else:
        main()
