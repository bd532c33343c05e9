"""What ``agent-hooks serve`` costs beside its upstream, in one run, as issue 19's ratios.

The upstream is a fast stub (aiohttp, one fixed chat completion, its own process) so that the
proxy, not the model, is what is measured; the load comes from ``hey`` (Go, Debian's ``hey``
package), which serves the stub far faster than any Python client on the same cores. Every row
is measured against the baseline it must be compared with, in the same run:

* throughput (medians of three rounds of every row in turn): the stub direct (32 clients), the
  proxy without hooks at 1 and 32 clients, the proxy with two TTL-fresh hooks at 32 clients
  (one conversation with a credential, so each request loads the stored pairs, finds both hooks
  fresh and forwards: the steady state of a long conversation); req/s, p50/p99 and the proxy's
  CPU per request and RSS;
* a 5,000-message request: the proxy's added latency (one at a time, alternating with direct
  requests so both see the same noise) against one ``json.loads`` + ``json.dumps`` of its body;
* one hook around an in-process tool (runner only) against the tool's ``execute``;
* ``agent-hooks --help`` against ``python -c 'import httpx, pydantic'`` (child processes);
* the SQLite store: one turn's load + save, 32 at once, with 0 and with 100k stored
  conversations (half of them expired, so the first save would purge them);
* the LiteLLM proxy at 1 and 32 clients, when ``litellm`` is installed (optional);
* each API the proxy speaks (Chat Completions, Responses, Anthropic Messages) with the same two
  TTL'd hooks, once in one stored conversation and once without a credential (no state):
  throughput at 32 clients against the stub direct on the same route, and the p50 latency the
  proxy adds one request at a time (alternating with direct requests). ``--routes`` runs only
  these.

The client, the proxy and the upstream share one (often 2-core, noisy) machine: compare ratios,
not absolute figures, and note the machine's load (printed first). ``make bench`` runs it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import astuple, dataclass
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the test servers' helpers live in tests/servers

from bench_runtime import (  # noqa: E402
    InstantLookup,
    app_modules,
    duration,
    manifest,
    median_seconds,
    process_times,
    synthetic_history,
)
from tests.servers.processes import free_port, running_server  # noqa: E402

AGENT_HOOKS = str(Path(sys.executable).with_name("agent-hooks"))
"""The installed command, run by this interpreter (``python agent-hooks serve ...``)."""
LOAD_SECONDS = 4
"""How long ``hey`` loads each target (after a one-second warm-up)."""
LOAD_ROUNDS = 3
"""Rounds of the throughput rows; each figure is the median of its rounds."""
CLIENTS = 32
LONG_MESSAGES = 5_000
SEQUENTIAL = 40
"""Alternating one-at-a-time requests per target for the 5,000-message latency."""
ROUTE_SEQUENTIAL = 200
"""Alternating one-at-a-time requests per target and API for the added p50."""
STORED = 100_000
STATE_TURNS = 3_000
"""Turns (load + save) timed per store figure, 32 at once."""

FRESH_HOOKS = {
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
NO_HOOKS: dict[str, Any] = {"hooks": []}
BODY = {
    "model": "echo",
    "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What time is it?"},
    ],
}
HEADERS = {
    "content-type": "application/json",
    "x-conversation-id": "bench",
    "authorization": "Bearer bench-tenant",  # a tenant: without a credential there is no state
}
RESPONSES_BODY = {"model": "echo", "instructions": "Be helpful.", "input": "What time is it?"}
MESSAGES_BODY = {
    "model": "echo",
    "max_tokens": 64,
    "system": "You are a helpful assistant.",
    "messages": [{"role": "user", "content": "What time is it?"}],
}
ROUTES = {
    "chat": ("/v1/chat/completions", BODY),
    "responses": ("/v1/responses", RESPONSES_BODY),
    "messages": ("/v1/messages", MESSAGES_BODY),
}
"""Each API the proxy speaks: its path and a small request (all one conversation, per route)."""
RESPONSES_ANSWER = json.dumps(
    {
        "id": "resp_bench",
        "object": "response",
        "created_at": 1_900_000_000,
        "status": "completed",
        "model": "echo",
        "output": [
            {
                "type": "message",
                "id": "msg_bench",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "It is noon.", "annotations": []}],
            }
        ],
        "usage": {"input_tokens": 10, "output_tokens": 4, "total_tokens": 14},
    }
).encode()
MESSAGES_ANSWER = json.dumps(
    {
        "id": "msg_bench",
        "type": "message",
        "role": "assistant",
        "model": "echo",
        "content": [{"type": "text", "text": "It is noon."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 4},
    }
).encode()
ANSWER = json.dumps(
    {
        "id": "chatcmpl-bench",
        "object": "chat.completion",
        "created": 1_900_000_000,
        "model": "echo",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "It is noon."},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 4, "total_tokens": 14},
    }
).encode()


# ---------------------------------------------------------------------------------------------
# The upstream stub and the servers.


def serve_stub(port: int) -> None:
    """The upstream: reads the body, answers one fixed completion; as fast as aiohttp goes."""
    from aiohttp import web

    def answering(answer: bytes) -> Callable[[web.Request], Any]:
        async def handler(request: web.Request) -> web.Response:
            await request.read()
            return web.Response(body=answer, content_type="application/json")

        return handler

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", answering(ANSWER))
    app.router.add_post("/v1/responses", answering(RESPONSES_ANSWER))
    app.router.add_post("/v1/messages", answering(MESSAGES_ANSWER))
    web.run_app(app, host="127.0.0.1", port=port, access_log=None, print=None)


@dataclass(frozen=True)
class Server:
    url: str
    pid: int | None
    """The process to read CPU time and RSS from (None: not found)."""


def _child_pid(port: int) -> int | None:
    """Our child process started with ``port`` in its command line."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and str(port).encode() in cmdline:
            return int(entry.name)
    return None


@contextmanager
def server(args: list[str], workdir: Path, name: str) -> Iterator[Server]:
    port = free_port()
    log = workdir / f"{name}.log"
    # serve honours the preview gate: without it the proxy forwards with no hooks at all.
    env = {"ENABLE_PREVIEW_FEATURES": "true"}
    with running_server([*args, str(port)], port=port, log_path=log, env=env) as url:
        yield Server(url, _child_pid(port))


def proxy(
    upstream: str, workdir: Path, name: str, config: dict[str, Any], *, verbose: bool = False
) -> list[str]:
    """The arguments (all but the port's value) of ``agent-hooks serve`` in front of
    ``upstream``, logging as operators get it by default (the access log, warnings, errors);
    ``verbose`` adds ``-v``: every hook's record at INFO too."""
    path = workdir / f"{name}.json"
    path.write_text(json.dumps(config))
    return [
        *(AGENT_HOOKS, *(["-v"] if verbose else []), "serve", str(path), "--upstream", upstream),
        *("--state", f"sqlite:///{workdir}/{name}.db", "--port"),
    ]


def _cpu_seconds(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mb(pid: int | None) -> float:
    if pid is None:
        return float("nan")
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# ---------------------------------------------------------------------------------------------
# Load with hey.


@dataclass(frozen=True)
class Load:
    rps: float
    p50_ms: float
    p99_ms: float
    cpu_ms: float
    """The target's CPU time per request (nan for the stub's own row: not its cost we judge)."""
    rss_mb: float


def hey(
    target: Server,
    clients: int,
    body_file: Path,
    *,
    seconds: int = LOAD_SECONDS,
    path: str = "/v1/chat/completions",
    headers: dict[str, str] = HEADERS,
) -> Load:
    """``clients`` keep-alive connections posting ``body_file`` to ``path`` for ``seconds``;
    all 200s.

    hey's per-request CSV, not its summary: the summary's percentiles come out as zero when a
    slow target answers only a few requests.
    """
    command = ["hey", "-c", str(clients), "-m", "POST", "-D", str(body_file)]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"] if name != "content-type" else ["-T", value]
    url = f"{target.url}{path}"
    subprocess.run([*command, "-z", "1s", url], check=True, capture_output=True)
    cpu = _cpu_seconds(target.pid)
    out = subprocess.run(
        [*command, "-z", f"{seconds}s", "-o", "csv", url],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    cpu = _cpu_seconds(target.pid) - cpu
    rows = [line.split(",") for line in out.splitlines()[1:] if line]
    statuses = {row[6] for row in rows}
    if statuses != {"200"}:
        raise RuntimeError(f"{target.url}: not every answer was 200: {sorted(statuses)}")
    latencies = [float(row[0]) for row in rows]
    elapsed = max(float(row[7]) + float(row[0]) for row in rows)
    cuts = statistics.quantiles(latencies, n=100)
    return Load(
        len(rows) / elapsed,
        cuts[49] * 1000,
        cuts[98] * 1000,
        cpu / len(rows) * 1000,
        _rss_mb(target.pid),
    )


def median_load(loads: list[Load]) -> Load:
    """Each figure's median over ``loads`` (the rounds of one row)."""
    rows = [astuple(load) for load in loads]
    return Load(*(statistics.median(figures) for figures in zip(*rows, strict=True)))


def one_at_a_time(
    direct: str,
    through: str,
    body: bytes,
    *,
    path: str = "/v1/chat/completions",
    requests: int = SEQUENTIAL,
    headers: dict[str, str] = HEADERS,
) -> tuple[float, float]:
    """Median latency (s) of ``body`` to each target, alternating, one request at a time."""
    latencies: dict[str, list[float]] = {direct: [], through: []}
    with httpx.Client(timeout=60, headers=headers) as client:
        for index in range(2 * (requests + 2)):
            url = (direct, through)[index % 2]
            started = time.perf_counter()
            client.post(f"{url}{path}", content=body).raise_for_status()
            if index >= 4:  # the first two of each warm up
                latencies[url].append(time.perf_counter() - started)
    return statistics.median(latencies[direct]), statistics.median(latencies[through])


def json_round_trip_seconds(body: bytes) -> float:
    async def round_trip() -> None:
        json.dumps(json.loads(body), ensure_ascii=False)

    return asyncio.run(median_seconds(round_trip, time.perf_counter))


def long_body() -> bytes:
    history = [message.to_openai() for message in synthetic_history(LONG_MESSAGES)]
    return json.dumps({**BODY, "messages": history}).encode()


# ---------------------------------------------------------------------------------------------
# In process: the runner, the store.


async def hook_over_tool() -> tuple[float, float]:
    """(one hook around an instant host tool, that tool's ``execute``), seconds each."""
    from agent_hooks import HookEvent, HookOutcome, HookRunner, open_app

    tool = InstantLookup()
    alone = await median_seconds(lambda: tool.execute({"key": "k"}))
    config = manifest("instant_lookup", [{"arguments": {"key": "k"}, "frequency": "always"}])
    history = synthetic_history(4)
    async with open_app(config, app_modules(), preview=True) as injector:
        runner = injector.get(HookRunner)

        async def run() -> None:
            result = await runner.run(HookEvent.ON_REQUEST_START, history)
            outcomes = [record.outcome for record in result.records]
            if outcomes != [HookOutcome.INJECTED]:
                raise RuntimeError(f"expected one injected pair, got {outcomes}")

        hooked = await median_seconds(run)
    return hooked, alone


@dataclass(frozen=True)
class StoreFigures:
    p50_ms: float
    p99_ms: float
    max_ms: float


def _fill(path: Path, rows: int) -> None:
    """``rows`` conversations straight into the file, every other one already expired."""
    from agent_hooks.state._sqlite import SqliteStore
    from agent_hooks.state._store import _encode as encode_pairs

    asyncio.run(_close(SqliteStore(path)))  # creates the file and its schema
    pair = _stored_pair("x" * 100)
    now = time.time()
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO conversations (id, pairs, expires_at) VALUES (?, ?, ?)",
            (
                (f"filler-{i}", encode_pairs([pair]), now + (3600 if i % 2 else -3600))
                for i in range(rows)
            ),
        )


async def _close(store: Any) -> None:
    await store.save("set-up", [], tenant=None)
    await store.aclose()


def _stored_pair(content: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A pair as the proxy stores it (the store keeps synthetic pairs only)."""
    from tests._support import synthetic_id

    call_id = synthetic_id("bench_tool", {}, content)
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": "bench_tool", "arguments": "{}"},
    }
    return (
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": content},
    )


async def store_turns(path: Path) -> StoreFigures:
    """Latency of one turn (load, then save) for STATE_TURNS turns, CLIENTS conversations."""
    from agent_hooks.state._sqlite import SqliteStore

    store = SqliteStore(path)
    pair = _stored_pair("y" * 100)
    latencies: list[float] = []
    turns = iter(range(STATE_TURNS))

    async def conversation(index: int) -> None:
        for _ in turns:
            started = time.perf_counter()
            await store.load(f"bench-{index}", tenant="bench-key")
            await store.save(f"bench-{index}", [pair], tenant="bench-key")
            latencies.append(time.perf_counter() - started)

    await asyncio.gather(*(conversation(i) for i in range(CLIENTS)))
    await store.aclose()
    cuts = statistics.quantiles(latencies, n=100)
    return StoreFigures(cuts[49] * 1000, cuts[98] * 1000, max(latencies) * 1000)


# ---------------------------------------------------------------------------------------------
# The table.


@dataclass(frozen=True)
class Ratio:
    case: str
    value: float
    baseline: str
    baseline_value: float
    target: str
    """How the ratio is judged: ">=1.5", "<=3" or "" (no target)."""
    unit: Callable[[float], str]
    difference: bool = False
    """Judge ``value - baseline_value`` (in the unit) rather than ``value / baseline_value``."""

    def verdict(self) -> str:
        if not self.target:
            return ""
        bound = float(self.target[2:])
        figure = self.value - self.baseline_value if self.difference else self.figure
        if self.difference:
            figure *= 1e6  # µs
        met = figure >= bound if self.target.startswith(">=") else figure <= bound
        return "met" if met else "MISSED"

    @property
    def figure(self) -> float:
        return self.value / self.baseline_value


def rps(value: float) -> str:
    return f"{value:.0f} req/s"


def milliseconds(value: float) -> str:
    return f"{value:.2f} ms"


def print_loads(loads: dict[str, Load]) -> None:
    print(f"{'':<40}{'req/s':>8}{'p50 ms':>9}{'p99 ms':>9}{'CPU ms/req':>12}{'RSS MB':>8}")
    for name, load in loads.items():
        print(
            f"{name:<40}{load.rps:>8.0f}{load.p50_ms:>9.2f}{load.p99_ms:>9.2f}"
            f"{load.cpu_ms:>12.2f}{load.rss_mb:>8.0f}"
        )


def print_ratios(ratios: list[Ratio]) -> None:
    print(f"{'case':<46}{'value':>12}  {'baseline':<38}{'value':>12}{'ratio':>9}  target")
    for ratio in ratios:
        shown = (
            f"{(ratio.value - ratio.baseline_value) * 1e6:+.1f} µs"
            if ratio.difference
            else f"{ratio.figure:.2f}x"
        )
        target = f"{ratio.target}{' µs' if ratio.difference else 'x'}" if ratio.target else ""
        print(
            f"{ratio.case:<46}{ratio.unit(ratio.value):>12}  {ratio.baseline:<38}"
            f"{ratio.unit(ratio.baseline_value):>12}{shown:>10}  {target:<7} {ratio.verdict()}"
        )


def litellm_loads(stub: str, workdir: Path, body_file: Path) -> dict[str, Load]:
    """The LiteLLM proxy in front of the same stub, when a ``litellm`` command is on PATH (it is
    best installed in a virtualenv of its own: its pins would fight ours)."""
    litellm = shutil.which("litellm")
    if litellm is None:
        return {}
    config = workdir / "litellm.yaml"
    config.write_text(
        "model_list:\n  - model_name: echo\n    litellm_params:\n"
        f"      model: openai/echo\n      api_base: {stub}/v1\n      api_key: none\n"
    )
    port = free_port()
    log = workdir / "litellm.log"
    # running_server starts Python scripts; this one hands its process over to litellm.
    start = f"import os, sys; os.execv({litellm!r}, [{litellm!r}, *sys.argv[1:]])"
    args = ["-c", start, "--config", str(config), "--port", str(port)]
    offline = {  # no download of its price list; no master key (loopback only)
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_DANGEROUSLY_PERMIT_WEAK_OR_UNSET_MASTER_KEY": "true",
    }
    with running_server(args, port=port, log_path=log, env=offline, startup_seconds=120) as url:
        target = Server(url, _child_pid(port))
        return {
            "LiteLLM proxy, 1 client": hey(target, 1, body_file),
            f"LiteLLM proxy, {CLIENTS} clients": hey(target, CLIENTS, body_file),
        }


@dataclass(frozen=True)
class RouteFigures:
    direct: Load
    through: Load
    direct_p50: float
    through_p50: float
    """Median seconds one request at a time, alternating direct and through the proxy."""


STATELESS = {"content-type": "application/json"}
"""No credential, so no tenant and no stored state: the pipeline alone, without the store."""


def route_figures(
    stub: Server, hooked: Server, workdir: Path, headers: dict[str, str]
) -> dict[str, RouteFigures]:
    """Each API with the two TTL hooks: load at CLIENTS, then one at a time."""
    figures = {}
    for name, (path, body) in ROUTES.items():
        body_file = workdir / f"{name}.json"
        body_file.write_bytes(json.dumps(body).encode())
        direct = hey(stub, CLIENTS, body_file, path=path, headers=headers)
        through = hey(hooked, CLIENTS, body_file, path=path, headers=headers)
        alone = one_at_a_time(
            stub.url,
            hooked.url,
            body_file.read_bytes(),
            path=path,
            requests=ROUTE_SEQUENTIAL,
            headers=headers,
        )
        figures[name] = RouteFigures(direct, through, *alone)
    return figures


def print_routes(title: str, figures: dict[str, RouteFigures]) -> None:
    print(
        f"\neach API, {title}: {CLIENTS} clients (hey), and p50 one at a time "
        f"({ROUTE_SEQUENTIAL} alternating requests each)\n"
    )
    print(
        f"{'API':<12}{'direct req/s':>14}{'proxy req/s':>13}{'ratio':>8}"
        f"{'direct p50':>12}{'proxy p50':>11}{'added p50':>11}"
    )
    for name, row in figures.items():
        print(
            f"{name:<12}{row.direct.rps:>14.0f}{row.through.rps:>13.0f}"
            f"{row.through.rps / row.direct.rps:>7.2f}x"
            f"{row.direct_p50 * 1000:>9.2f} ms{row.through_p50 * 1000:>8.2f} ms"
            f"{(row.through_p50 - row.direct_p50) * 1000:>+8.2f} ms"
        )


def all_routes(stub: Server, hooked: Server, workdir: Path) -> None:
    """Each API twice: one conversation with stored state (both hooks TTL-fresh after the first
    turn; every turn saves), and requests without a credential (no state: the hooks run)."""
    stateful = route_figures(stub, hooked, workdir, HEADERS)
    stateless = route_figures(stub, hooked, workdir, STATELESS)
    print_routes("one conversation, SQLite state, 2 TTL-fresh hooks", stateful)
    print_routes("no credential (no state), 2 hooks injecting", stateless)


def main() -> None:
    if shutil.which("hey") is None:
        sys.exit("bench_serve needs the load generator hey: apt-get install hey")
    print(f"machine: {os.cpu_count()} cores, load average", *os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        small, long = workdir / "small.json", workdir / "long.json"
        small.write_bytes(json.dumps(BODY).encode())
        long.write_bytes(long_body())
        stub = stack.enter_context(server([__file__, "--stub"], workdir, "stub"))
        bare = stack.enter_context(
            server(proxy(stub.url, workdir, "bare", NO_HOOKS), workdir, "bare")
        )
        hooked = stack.enter_context(
            server(proxy(stub.url, workdir, "hooked", FRESH_HOOKS), workdir, "hooked")
        )
        rows = {
            f"upstream stub direct, {CLIENTS} clients": (stub, CLIENTS),
            "proxy, no hooks, 1 client": (bare, 1),
            f"proxy, no hooks, {CLIENTS} clients": (bare, CLIENTS),
            f"proxy, 2 fresh hooks, {CLIENTS} clients": (hooked, CLIENTS),
        }
        # Rounds of every row in turn, medians per row: a burst of other work on a shared
        # machine then costs one round of one row, not the ratio.
        rounds = [
            {name: hey(target, clients, small) for name, (target, clients) in rows.items()}
            for _ in range(LOAD_ROUNDS)
        ]
        loads = {name: median_load([each[name] for each in rounds]) for name in rows}
        if "skipped_fresh" not in (workdir / "hooked.log").read_text():
            raise RuntimeError("the hooked proxy ran no hooks: see its log")
        loads |= litellm_loads(stub.url, workdir, small)
        stateful = route_figures(stub, hooked, workdir, HEADERS)
        stateless = route_figures(stub, hooked, workdir, STATELESS)
        body = long.read_bytes()
        direct_long, bare_long = one_at_a_time(stub.url, bare.url, body)
        _, hooked_long = one_at_a_time(stub.url, hooked.url, body)
    round_trip = json_round_trip_seconds(body)
    hook, tool = asyncio.run(hook_over_tool())
    starts = process_times(
        {
            "help": [AGENT_HOOKS, "--help"],
            "deps": [sys.executable, "-c", "import httpx, pydantic"],
        }
    )
    stores = {}
    with tempfile.TemporaryDirectory() as tmp:
        for rows in (0, STORED):
            path = Path(tmp) / f"state-{rows}.db"
            _fill(path, rows)
            stores[rows] = asyncio.run(store_turns(path))
    _print(loads, direct_long, bare_long, hooked_long, round_trip, hook, tool, starts, stores)
    print_routes("one conversation, SQLite state, 2 TTL-fresh hooks", stateful)
    print_routes("no credential (no state), 2 hooks injecting", stateless)


def _print(
    loads: dict[str, Load],
    direct_long: float,
    bare_long: float,
    hooked_long: float,
    round_trip: float,
    hook: float,
    tool: float,
    starts: dict[str, Any],
    stores: dict[int, StoreFigures],
) -> None:
    direct = loads[f"upstream stub direct, {CLIENTS} clients"]
    one = loads["proxy, no hooks, 1 client"]
    many = loads[f"proxy, no hooks, {CLIENTS} clients"]
    fresh = loads[f"proxy, 2 fresh hooks, {CLIENTS} clients"]
    print(
        f"\nload: hey, {LOAD_SECONDS} s per row after 1 s of warm-up, medians of {LOAD_ROUNDS}"
        " rounds; SQLite state\n"
    )
    print_loads(loads)
    print()
    seconds = duration
    print_ratios(
        [
            Ratio(f"{CLIENTS} clients, no hooks", many.rps, "the upstream direct", direct.rps,
                  ">=0.06", rps),
            Ratio(f"{CLIENTS} clients, no hooks", many.rps, "the proxy at 1 client", one.rps,
                  ">=1.5", rps),
            Ratio(f"{CLIENTS} clients, 2 TTL-fresh hooks", fresh.rps,
                  f"{CLIENTS} clients, no hooks", many.rps, ">=0.8", rps),
            Ratio(f"{LONG_MESSAGES:,} messages, added, no hooks", bare_long - direct_long,
                  "json.loads + json.dumps of the body", round_trip, "<=3", seconds),
            Ratio(f"{LONG_MESSAGES:,} messages, added, 2 fresh hooks",
                  hooked_long - direct_long, "json.loads + json.dumps of the body", round_trip,
                  "", seconds),
            Ratio("one hook around an in-process tool", hook, "the tool's execute", tool,
                  "<=20", seconds, difference=True),
            Ratio("agent-hooks --help", starts["help"].wall,
                  "python -c 'import httpx, pydantic'", starts["deps"].wall, "<=1.5", seconds),
            Ratio(f"store turn p99, {STORED:,} stored", stores[STORED].p99_ms / 1000,
                  "store turn p99, empty store", stores[0].p99_ms / 1000, "<=1.5", seconds),
            Ratio(f"store turn max, {STORED:,} stored", stores[STORED].max_ms / 1000,
                  "store turn max, empty store", stores[0].max_ms / 1000, "", seconds),
        ]
    )  # fmt: skip
    print(
        f"\n(5,000 messages: direct {seconds(direct_long)}, through the proxy "
        f"{seconds(bare_long)} without hooks, {seconds(hooked_long)} with 2 fresh hooks; "
        f"store turns: {STATE_TURNS} load + save, {CLIENTS} at once, p50 "
        f"{stores[0].p50_ms:.2f} / {stores[STORED].p50_ms:.2f} ms)"
    )


def routes_only() -> None:
    """``--routes``: only the per-API figures (the stub and one hooked proxy)."""
    print(f"machine: {os.cpu_count()} cores, load average", *os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        stub = stack.enter_context(server([__file__, "--stub"], workdir, "stub"))
        hooked = stack.enter_context(
            server(proxy(stub.url, workdir, "hooked", FRESH_HOOKS), workdir, "hooked")
        )
        all_routes(stub, hooked, workdir)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--stub"]:
        serve_stub(int(sys.argv[2]))
    elif sys.argv[1:2] == ["--routes"]:
        routes_only()
    else:
        main()
