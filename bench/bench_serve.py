"""What ``agent-hooks serve`` adds to a chat completion, under bounded loopback load.

An echo model served on its own (uvicorn, 127.0.0.1) is the upstream. The same load (REQUESTS
requests, CONCURRENCY at a time, httpx) goes once straight to it and once through the proxy,
whose manifest has two TTL'd hooks (``current_time``). Each worker is one conversation
(``X-Conversation-Id``), so after its first request the proxy loads the stored pairs from SQLite,
finds both hooks fresh (no tool call), forwards, and saves the pairs again: the steady state of
a long conversation. Figures: requests/s and p50/p99 latency, the proxy's added latency and its
throughput as a ratio of direct. Targets: p50 added under 3 ms, throughput at least 0.5x direct.

The client, the proxy and the upstream share one (often 2-core, noisy) machine, so the proxy
also competes with the load generator: compare ratios, not absolute times. Run with
``make bench``; it stays well under a minute.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the test servers' helpers live in tests/servers

from tests.servers.processes import free_port, running_server  # noqa: E402

REQUESTS = 2_000
CONCURRENCY = 32
WARMUP = 200
"""Requests sent (and not measured) before each run: connections, imports, first tool calls."""

SEQUENTIAL = 400
"""Requests sent one at a time to each target, alternating, for the added latency."""

MANIFEST = {
    "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
    "hooks": [
        {
            "kind": "tool_call",
            "event": "on_request_start",
            "name": f"time-{zone}",
            "tool_name": "current_time",
            "arguments": {"zone": zone},
            "refresh_condition": {"kind": "ttl", "ttl_minutes": 60},
        }
        for zone in ("a", "b")
    ],
}
BODY = {
    "model": "echo",
    "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What time is it?"},
    ],
}


@dataclass(frozen=True)
class Figures:
    rps: float
    p50_ms: float
    p99_ms: float


async def _load(base_url: str, requests: int) -> list[float]:
    """Latencies (ms) of ``requests`` POSTs, CONCURRENCY workers, one conversation each."""
    latencies: list[float] = []
    remaining = iter(range(requests))
    limits = httpx.Limits(max_connections=CONCURRENCY, max_keepalive_connections=CONCURRENCY)
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=30) as client:

        async def worker(index: int) -> None:
            headers = {"X-Conversation-Id": f"bench-{index}", "content-type": "application/json"}
            body = json.dumps(BODY).encode()
            for _ in remaining:
                started = time.perf_counter()
                response = await client.post("/v1/chat/completions", content=body, headers=headers)
                latencies.append((time.perf_counter() - started) * 1000)
                response.raise_for_status()

        await asyncio.gather(*(worker(index) for index in range(CONCURRENCY)))
    return latencies


def _figures(latencies: list[float], elapsed: float) -> Figures:
    cuts = statistics.quantiles(latencies, n=100)
    return Figures(rps=len(latencies) / elapsed, p50_ms=cuts[49], p99_ms=cuts[98])


def under_load(base_url: str) -> Figures:
    asyncio.run(_load(base_url, WARMUP))
    started = time.perf_counter()
    latencies = asyncio.run(_load(base_url, REQUESTS))
    return _figures(latencies, time.perf_counter() - started)


def one_at_a_time(direct_url: str, proxy_url: str) -> tuple[Figures, Figures]:
    """Alternating single requests, so both targets see the same background noise."""
    latencies: dict[str, list[float]] = {direct_url: [], proxy_url: []}
    headers = {"X-Conversation-Id": "bench-sequential"}
    with httpx.Client(timeout=30) as client:
        for index in range(SEQUENTIAL * 2):
            url = (direct_url, proxy_url)[index % 2]
            started = time.perf_counter()
            response = client.post(f"{url}/v1/chat/completions", json=BODY, headers=headers)
            latencies[url].append((time.perf_counter() - started) * 1000)
            response.raise_for_status()
    seconds = {url: sum(values) / 1000 for url, values in latencies.items()}
    return (
        _figures(latencies[direct_url], seconds[direct_url]),
        _figures(latencies[proxy_url], seconds[proxy_url]),
    )


def serve_echo(port: int) -> None:
    """The upstream: the proxy's own echo model, served on its own."""
    import uvicorn

    from agent_hooks.serve._echo import echo_app

    uvicorn.run(echo_app(), host="127.0.0.1", port=port, log_level="warning")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        upstream_port, proxy_port = free_port(), free_port()
        upstream = stack.enter_context(
            running_server(
                [__file__, "--echo-upstream", str(upstream_port)],
                port=upstream_port,
                log_path=workdir / "upstream.log",
            )
        )
        (workdir / "manifest.json").write_text(json.dumps(MANIFEST))
        proxy_args = [
            *("-m", "agent_hooks.serve", str(workdir / "manifest.json")),
            *("--upstream", upstream, "--port", str(proxy_port)),
            *("--state", f"sqlite:///{workdir}/state.db"),
        ]
        proxy = stack.enter_context(
            running_server(proxy_args, port=proxy_port, log_path=workdir / "proxy.log")
        )
        alone = one_at_a_time(upstream, proxy)
        loaded = (under_load(upstream), under_load(proxy))
    print("agent-hooks serve vs the echo upstream directly, loopback; two TTL'd hooks (fresh")
    print("after each conversation's first turn), SQLite state\n")
    print(f"{'':<36}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}")
    for title, (direct, through) in (
        (f"one at a time ({SEQUENTIAL} each)", alone),
        (f"{REQUESTS} requests, {CONCURRENCY} concurrent", loaded),
    ):
        print(title)
        for name, row in (("  direct to upstream", direct), ("  through the proxy", through)):
            print(f"{name:<36}{row.rps:>8.0f}{row.p50_ms:>9.2f}{row.p99_ms:>9.2f}")
        added_p50, added_p99 = through.p50_ms - direct.p50_ms, through.p99_ms - direct.p99_ms
        print(f"  added p50 {added_p50:+.2f} ms, p99 {added_p99:+.2f} ms;", end=" ")
        print(f"throughput {through.rps / direct.rps:.2f}x direct")
    print("\ntargets: p50 added (one at a time) < 3 ms; throughput under load >= 0.5x direct")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--echo-upstream"]:
        serve_echo(int(sys.argv[2]))
    else:
        main()
