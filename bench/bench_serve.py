"""What ``agent-hooks serve`` costs beside its upstream, in one run, as issue 19's ratios.

The upstream is a fast stub (aiohttp, one fixed chat completion, its own process) so that the
proxy, not the model, is what is measured; the load comes from ``hey`` (Go, Debian's ``hey``
package; ``wrk`` for the ``--workers`` rows), which serves the stub far faster than any Python
client on the same cores. Every row
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
  these;
* one conversation of 20 turns per API (a credential and an ``x-session-id``; a TTL'd hook and an
  ``always`` hook; each turn the client's history so far, the stub's answer and a new user
  message) through a proxy in front of a recording stub: how many bytes of last turn's forwarded
  history changed in this turn's (SPEC 15: 0 on every TTL-fresh turn), and where;
* 1,000 requests, each with its own 1 MiB ``user`` (the only identity they send): the proxy's
  RSS growth (at most 20 MB: every client-chosen value is kept as a digest) and the store's size.
  ``--conversation`` runs only these two;
* ``--workers 2`` against ``--workers 1`` (two TTL-fresh hooks, SQLite state) at 32 clients,
  each client its own connection and stored conversation (``wrk``, a thread per client: hey
  cannot send each connection its own headers). ``--workers`` runs only these.

The client, the proxy and the upstream share one (often 2-core, noisy) machine: compare ratios,
not absolute figures, and note the machine's load (printed first). ``make bench`` runs it.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import astuple, dataclass, replace
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


RECORDED_PATH = "/bench/recorded"
"""The recording stub's list of the bodies it was sent (GET: every body since the last GET)."""


def serve_stub(port: int, *, record: bool = False) -> None:
    """The upstream: reads the body, answers one fixed completion; as fast as aiohttp goes.

    ``record`` (a stub of its own, ``--recording-stub``: the load rows' stub stays as fast)
    also keeps every body it was sent, for :data:`RECORDED_PATH` to hand over.
    """
    from aiohttp import web

    recorded: list[str] = []

    def answering(answer: bytes) -> Callable[[web.Request], Any]:
        async def handler(request: web.Request) -> web.Response:
            body = await request.read()
            if record:
                recorded.append(body.decode())
            return web.Response(body=answer, content_type="application/json")

        return handler

    async def handing_over(request: web.Request) -> web.Response:
        bodies = recorded.copy()
        recorded.clear()
        return web.json_response(bodies)

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_post("/v1/chat/completions", answering(ANSWER))
    app.router.add_post("/v1/responses", answering(RESPONSES_ANSWER))
    app.router.add_post("/v1/messages", answering(MESSAGES_ANSWER))
    if record:
        app.router.add_get(RECORDED_PATH, handing_over)
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
    upstream: str,
    workdir: Path,
    name: str,
    config: dict[str, Any],
    *,
    verbose: bool = False,
    workers: int = 1,
) -> list[str]:
    """The arguments (all but the port's value) of ``agent-hooks serve`` in front of
    ``upstream``, logging as operators get it by default (the access log, warnings, errors);
    ``verbose`` adds ``-v``: every hook's record at INFO too."""
    path = workdir / f"{name}.json"
    path.write_text(json.dumps(config))
    return [
        *(AGENT_HOOKS, *(["-v"] if verbose else []), "serve", str(path), "--upstream", upstream),
        *("--state", f"sqlite:///{workdir}/{name}.db", "--workers", str(workers), "--port"),
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


def require(*load_generators: str) -> None:
    """Exit with the install line when a load generator is missing (both are Debian packages)."""
    missing = [name for name in load_generators if shutil.which(name) is None]
    if missing:
        sys.exit(f"bench_serve needs the load generators {', '.join(missing)}:"
                 f" apt-get install {' '.join(missing)}")  # fmt: skip


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
    from agent_hooks.state._conversation import StoredPair
    from agent_hooks.state._sqlite import SqliteStore
    from agent_hooks.state._store import _encode as encode_pairs

    asyncio.run(_close(SqliteStore(path)))  # creates the file and its schema
    pair = StoredPair(*_stored_pair("x" * 100))
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
    """Latency of one turn (load, then save) for STATE_TURNS turns, CLIENTS conversations; each
    turn saves a pair of its own, so every save writes (a turn whose pairs did not change writes
    nothing, and would measure only the load)."""
    from agent_hooks.state._sqlite import SqliteStore

    store = SqliteStore(path)
    latencies: list[float] = []
    turns = iter(range(STATE_TURNS))

    async def conversation(index: int) -> None:
        for turn in turns:
            pair = _stored_pair(f"{turn:06d}" + "y" * 94)
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


# ---------------------------------------------------------------------------------------------
# --workers 2 against --workers 1, a stored conversation per client.


WRK_CLIENT_SCRIPT = """
local clients = 0
function setup(thread)
  thread:set("client", clients)
  clients = clients + 1
end
function init(args)
  local file = io.open(args[1], "rb")
  local body = file:read("*a")
  file:close()
  prepared = wrk.format("POST", nil, {
    ["content-type"] = "application/json",
    ["authorization"] = args[2],
    ["x-conversation-id"] = "bench-client-" .. client,
  }, body)
end
function request() return prepared end
"""
"""wrk's Lua: one thread per client (each with one connection), and each thread's requests name
its own conversation; the request is formatted once per thread."""


def wrk_per_client(target: Server, clients: int, body_file: Path, script: Path) -> Load:
    """``clients`` keep-alive connections, each its own conversation, posting ``body_file`` for
    :data:`LOAD_SECONDS` (after a second that stores each conversation's pairs); all 2xx.

    One ``wrk`` process with a thread per connection, not ``hey``: hey sends the same headers on
    every connection, and 32 hey processes of one connection each cost ~235 µs of CPU per
    request on this machine (wrk ~50 µs), a quarter of a 2-core machine the proxy's workers
    then do not get.
    """
    command = ["wrk", "-t", str(clients), "-c", str(clients), "-s", str(script), "--latency"]
    url = f"{target.url}/v1/chat/completions"
    arguments = ["--", str(body_file), HEADERS["authorization"]]
    subprocess.run([*command, "-d", "1s", url, *arguments], check=True, capture_output=True)
    out = subprocess.run(
        [*command, "-d", f"{LOAD_SECONDS}s", url, *arguments],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    if "Non-2xx" in out or "Socket errors" in out:
        raise RuntimeError(f"{target.url}: not every request was answered 2xx:\n{out}")
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]
    cuts = dict(re.findall(r"^\s+(50|99)%\s+(\S+)$", out, re.MULTILINE))
    return Load(rps, _wrk_ms(cuts["50"]), _wrk_ms(cuts["99"]), float("nan"), float("nan"))


def _wrk_ms(figure: str) -> float:
    """wrk's latency (``812.00us``, ``12.34ms``, ``1.02s``) in milliseconds."""
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", figure).groups()  # type: ignore[union-attr]
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def workers_figures(stub: Server, workdir: Path, body_file: Path) -> dict[str, Load]:
    """The proxy with two TTL-fresh hooks and SQLite state at ``--workers 1`` and ``2``, rounds
    of both in turn, medians per row (CPU and RSS are left out: they are spread over
    processes)."""
    rows = {}
    with ExitStack() as stack:
        for workers in (1, 2):
            name = f"workers-{workers}"
            args = proxy(stub.url, workdir, name, FRESH_HOOKS, workers=workers)
            rows[f"proxy --workers {workers}, {CLIENTS} conversations"] = stack.enter_context(
                server(args, workdir, name)
            )
        script = workdir / "conversation.lua"
        script.write_text(WRK_CLIENT_SCRIPT)
        rounds = [
            {
                name: wrk_per_client(target, CLIENTS, body_file, script)
                for name, target in rows.items()
            }
            for _ in range(LOAD_ROUNDS)
        ]
    return {name: median_load([each[name] for each in rounds]) for name in rows}


def print_workers(loads: dict[str, Load]) -> None:
    one, two = loads.values()
    print(
        f"\n--workers: {CLIENTS} wrk threads of one connection each, a stored conversation per"
        f" client, 2 TTL-fresh hooks, SQLite state; {LOAD_SECONDS} s per row, medians of"
        f" {LOAD_ROUNDS} rounds\n"
    )
    print_loads(loads)
    print()
    print_ratios(
        [Ratio(f"--workers 2, {CLIENTS} conversations", two.rps, "--workers 1", one.rps, ">=1.3",
               rps)]
    )  # fmt: skip


def workers_only() -> None:
    """``--workers``: only the --workers rows (the stub and two proxies)."""
    require("wrk")
    print(f"machine: {os.cpu_count()} cores, load average", *os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        small = workdir / "small.json"
        small.write_bytes(json.dumps(BODY).encode())
        stub = stack.enter_context(server([__file__, "--stub"], workdir, "stub"))
        loads = workers_figures(stub, workdir, small)
    print_workers(loads)
    print(f"\nload average after: {' '.join(map(str, os.getloadavg()))}")


# ---------------------------------------------------------------------------------------------
# One conversation over many turns: is the forwarded prefix the one forwarded last turn?

TURNS = 20
CONVERSATION_ROUNDS = 3
"""Conversations of TURNS turns per API (each its own session id); figures are their medians,
and a changed prefix in any of them is shown."""
TURN_HOOKS = {
    "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
    "hooks": [
        {
            "kind": "tool_call",
            "event": "on_request_start",
            "name": "time-ttl",
            "tool_name": "current_time",
            "arguments": {"zone": "ttl"},
            "refresh_condition": {"kind": "ttl", "ttl_minutes": 60},
        },
        {
            "kind": "tool_call",
            "event": "on_request_start",
            "name": "time-always",
            "tool_name": "current_time",
            "arguments": {"zone": "always"},
            "frequency": "always",
        },
    ],
}
"""A TTL'd hook (fresh for the whole run after turn 1) and an ``always`` hook (a new pair
appended after every turn's new user message)."""
HISTORY_FIELD = {"chat": "messages", "responses": "input", "messages": "messages"}
"""Where each API's body holds the conversation."""


def _answer_item(route: str) -> list[dict[str, Any]]:
    """What the client keeps of the stub's answer, as an agent appends it to its history."""
    if route == "chat":
        return [json.loads(ANSWER)["choices"][0]["message"]]
    if route == "responses":
        return list(json.loads(RESPONSES_ANSWER)["output"])
    answer = json.loads(MESSAGES_ANSWER)
    return [{"role": "assistant", "content": answer["content"]}]


def _turn_body(route: str, history: list[dict[str, Any]]) -> dict[str, Any]:
    if route == "chat":
        return {"model": "echo", "messages": history}
    if route == "responses":
        return {"model": "echo", "instructions": "Be helpful.", "input": history}
    return {"model": "echo", "max_tokens": 64, "system": "Be helpful.", "messages": history}


@dataclass(frozen=True)
class TurnChange:
    """How turn ``turn``'s forwarded history differs from turn ``turn - 1``'s."""

    turn: int
    forwarded: int
    """Messages (items) forwarded this turn."""
    compared: int
    """Messages forwarded last turn: the prefix compared."""
    changed_bytes: int
    """Bytes of the prefix (each message as JSON text, concatenated) that differ."""
    first: tuple[int, int] | None
    """(message index, byte offset in it) of the first difference; None when none."""
    pair: tuple[str, str] | None
    """That message last turn and this turn, as JSON text."""
    rest_changed: bool
    """Whether the body's other fields (``tools``, ``system``, ...) changed."""


def _as_texts(messages: list[Any]) -> list[bytes]:
    return [json.dumps(message, ensure_ascii=False).encode() for message in messages]


def _differing_bytes(was: bytes, now: bytes) -> int:
    """Bytes of ``was`` and ``now`` that differ, position by position, and the length difference."""
    return sum(a != b for a, b in zip(was, now, strict=False)) + abs(len(was) - len(now))


def prefix_change(previous: dict[str, Any], current: dict[str, Any], field: str) -> TurnChange:
    """Compare last turn's forwarded history (``field`` of the body) with the same number of
    messages of this turn's, each message as JSON text; a message missing this turn counts whole."""
    before, after = previous[field], current[field]
    old, new = _as_texts(before), _as_texts(after[: len(before)])
    changed = sum(len(text) for text in old[len(new) :])
    first = pair = None
    for index, (was, now) in enumerate(zip(old, new, strict=False)):
        if was == now:
            continue
        changed += _differing_bytes(was, now)
        if first is None:
            offset = next(
                (i for i, (a, b) in enumerate(zip(was, now, strict=False)) if a != b),
                min(len(was), len(now)),
            )
            first, pair = (index, offset), (was.decode(), now.decode())
    if first is None and len(new) < len(old):
        first, pair = (len(new), 0), (old[len(new)].decode(), "")
    rest = {key: value for key, value in previous.items() if key != field}
    rest_now = {key: value for key, value in current.items() if key != field}
    return TurnChange(0, len(after), len(before), changed, first, pair, rest != rest_now)


def conversation_turns(
    recorder: Server, hooked: Server, route: str, session: str | None
) -> tuple[list[TurnChange], int, list[float]]:
    """TURNS turns of one conversation (a credential and an ``x-session-id``; without
    ``session``, no identity, so no stored state) on ``route``: each turn's body is the client's
    history so far, the stub's answer and a new user message. Returns each turn's change against
    the one before (turns 2 to TURNS), the messages the proxy added on the last turn, and each
    turn's latency (s)."""
    path, _ = ROUTES[route]
    field = HISTORY_FIELD[route]
    headers = {key: value for key, value in HEADERS.items() if key != "x-conversation-id"}
    if session is not None:
        headers["x-session-id"] = session
    history: list[dict[str, Any]] = []
    if route == "chat":
        history.append({"role": "system", "content": "You are a helpful assistant."})
    changes: list[TurnChange] = []
    previous: dict[str, Any] | None = None
    added = 0
    latencies = []
    with httpx.Client(timeout=60, headers=headers) as client:
        client.get(f"{recorder.url}{RECORDED_PATH}").raise_for_status()  # forget earlier bodies
        for turn in range(1, TURNS + 1):
            history.append({"role": "user", "content": f"Turn {turn}: what time is it now?"})
            body = json.dumps(_turn_body(route, history)).encode()
            started = time.perf_counter()
            client.post(f"{hooked.url}{path}", content=body).raise_for_status()
            latencies.append(time.perf_counter() - started)
            recorded = client.get(f"{recorder.url}{RECORDED_PATH}").json()
            if len(recorded) != 1:
                raise RuntimeError(f"turn {turn}: the stub was sent {len(recorded)} bodies")
            forwarded = json.loads(recorded[0])
            added = len(forwarded[field]) - len(history)
            if turn == 1 and added <= 0:
                raise RuntimeError(f"{route}: the hooks added nothing on turn 1")
            if previous is not None:
                change = prefix_change(previous, forwarded, field)
                changes.append(replace(change, turn=turn))
            previous = forwarded
            history.extend(_answer_item(route))
    return changes, added, latencies


@dataclass(frozen=True)
class ConversationFigures:
    """One API's conversations (CONVERSATION_ROUNDS of them, TURNS turns each)."""

    changes: list[list[TurnChange]]
    added: list[int]
    """Messages the proxy added to the last turn's history, per conversation."""
    latencies: list[float]
    """Every turn's latency (s), every conversation."""

    @property
    def changed_turns(self) -> list[TurnChange]:
        return [change for each in self.changes for change in each if change.changed_bytes]

    @property
    def worst(self) -> int:
        """The most prefix bytes changed in one turn, any conversation."""
        return max(change.changed_bytes for each in self.changes for change in each)


NO_IDENTITY = "chat, no id"
"""The control row: the same chat conversation without a session id, so without stored state:
the pairs of last turn are not there again (and the TTL hook fires every turn)."""


def conversation_figures(recorder: Server, hooked: Server) -> dict[str, ConversationFigures]:
    """Every API, CONVERSATION_ROUNDS conversations each, in turn (so noise hits them alike);
    then one conversation of the control row."""
    runs: dict[str, list[tuple[list[TurnChange], int, list[float]]]] = {r: [] for r in ROUTES}
    for index in range(CONVERSATION_ROUNDS):
        for route in ROUTES:
            session = f"bench-{route}-{index}-{os.getpid()}"
            runs[route].append(conversation_turns(recorder, hooked, route, session))
    runs[NO_IDENTITY] = [conversation_turns(recorder, hooked, "chat", None)]
    return {
        route: ConversationFigures(
            [changes for changes, _, _ in each],
            [added for _, added, _ in each],
            [latency for _, _, latencies in each for latency in latencies],
        )
        for route, each in runs.items()
    }


def _trimmed(text: str, offset: int, width: int = 90) -> str:
    start = max(0, offset - width // 3)
    shown = text[start : start + width]
    return f"{'…' if start else ''}{shown}{'…' if start + width < len(text) else ''}"


def print_conversations(figures: dict[str, ConversationFigures]) -> None:
    print(
        f"\none conversation per API ({TURNS} turns, a credential and x-session-id; a TTL'd hook,"
        f" fresh after turn 1, and an always hook), {CONVERSATION_ROUNDS} conversations each"
        f" ('{NO_IDENTITY}': one, without a session id: no state, the control):\nbytes of last"
        f" turn's forwarded history (each message as JSON text) that differ in this turn's,"
        f" turns 2 to {TURNS}\n"
    )
    print(
        f"{'API':<12}{'turns':>7}{'median B':>10}{'max B':>8}{'changed':>9}"
        f"{'added msgs':>12}{'other fields':>14}{'turn p50':>11}"
    )
    for route, row in figures.items():
        turns = [change for each in row.changes for change in each]
        print(
            f"{route:<12}{len(turns):>7}"
            f"{statistics.median(c.changed_bytes for c in turns):>10.0f}{row.worst:>8}"
            f"{len(row.changed_turns):>9}{statistics.median(row.added):>12.0f}"
            f"{sum(c.rest_changed for c in turns):>14}"
            f"{statistics.median(row.latencies) * 1000:>8.2f} ms"
        )
    for route, row in figures.items():
        for change in row.changed_turns[: 1 if route == NO_IDENTITY else 3]:
            assert change.first is not None
            assert change.pair is not None
            index, offset = change.first
            was, now = change.pair
            print(
                f"  {route}, turn {change.turn}: {change.changed_bytes} B changed, first in "
                f"message {index} of {change.compared}, byte {offset}:\n"
                f"    was: {_trimmed(was, offset)}\n    now: {_trimmed(now, offset)}"
            )


# ---------------------------------------------------------------------------------------------
# What a long end-user id costs: kept as a digest, so nothing.

KEY_REQUESTS = 1_000
KEY_BYTES = 1024 * 1024
"""Each request's ``user`` field (distinct per request; the only identity it sends)."""


@dataclass(frozen=True)
class KeyFigures:
    rss_before_mb: float
    """After one small request."""
    rss_early_mb: float
    """After the first tenth of the requests (the allocator has grown for 1 MiB bodies)."""
    rss_after_mb: float
    store_bytes: int
    """The SQLite file, with its journal files."""
    stored: int
    """Conversations in the store."""
    longest_key: int
    """The longest conversation key in the store (characters)."""
    seconds: float


def key_size(stub: Server, workdir: Path) -> KeyFigures:
    """A proxy of its own with the two TTL hooks (each new conversation gets pairs, so each
    request writes its state) and KEY_REQUESTS requests, one at a time, each with its own 1 MiB
    ``user`` and the same credential."""
    name = "keys"
    args = proxy(stub.url, workdir, name, FRESH_HOOKS)
    headers = {"content-type": "application/json", "authorization": HEADERS["authorization"]}
    start = json.dumps(BODY)[:-1].encode() + b', "user": "'
    with server(args, workdir, name) as keyed, httpx.Client(timeout=60, headers=headers) as client:
        url = f"{keyed.url}/v1/chat/completions"
        client.post(url, content=json.dumps(BODY).encode()).raise_for_status()
        before = _rss_mb(keyed.pid)
        early = float("nan")
        started = time.perf_counter()
        for index in range(KEY_REQUESTS):
            unique = f"{index:08d}".encode()
            user = unique + b"u" * (KEY_BYTES - len(unique))
            client.post(url, content=start + user + b'"}').raise_for_status()
            if index + 1 == KEY_REQUESTS // 10:
                early = _rss_mb(keyed.pid)
        seconds = time.perf_counter() - started
        after = _rss_mb(keyed.pid)
        database = workdir / f"{name}.db"
        with sqlite3.connect(database) as db:
            stored, longest = db.execute(
                "SELECT count(*), max(length(id)) FROM conversations"
            ).fetchone()
        size = sum(path.stat().st_size for path in workdir.glob(f"{name}.db*"))
    return KeyFigures(before, early, after, size, stored, longest or 0, seconds)


def print_key_size(figures: KeyFigures) -> None:
    print(
        f"\n{KEY_REQUESTS:,} requests with a distinct {KEY_BYTES // 1024} KiB `user` each "
        f"(one credential, no other identity), one at a time, in {figures.seconds:.1f} s: "
        f"proxy RSS {figures.rss_before_mb:.1f} MB before, {figures.rss_early_mb:.1f} MB after "
        f"{KEY_REQUESTS // 10}, {figures.rss_after_mb:.1f} MB after all; store "
        f"{figures.store_bytes / 1e6:.2f} MB on disk, {figures.stored:,} conversations, longest "
        f"key {figures.longest_key} characters"
    )


@dataclass(frozen=True)
class Bound:
    """A figure judged against a fixed bound (not a ratio)."""

    case: str
    value: float
    shown: str
    target: float
    unit: str

    def verdict(self) -> str:
        return "met" if self.value <= self.target else "MISSED"


def print_bounds(bounds: list[Bound]) -> None:
    print(f"\n{'case':<72}{'value':>12}  target")
    for bound in bounds:
        print(
            f"{bound.case:<72}{bound.shown:>12}  <={bound.target:g} {bound.unit:<4} "
            f"{bound.verdict()}"
        )


def conversation_bounds(
    conversations: dict[str, ConversationFigures], keys: KeyFigures
) -> list[Bound]:
    bounds = [
        Bound(
            f"{name}: prefix bytes changed, worst TTL-fresh turn of {CONVERSATION_ROUNDS}x{TURNS}",
            figures.worst,
            f"{figures.worst} B",
            0,
            "B",
        )
        for name, figures in conversations.items()
        if name != NO_IDENTITY
    ]
    growth = keys.rss_after_mb - keys.rss_before_mb
    bounds.append(
        Bound(
            f"proxy RSS growth, {KEY_REQUESTS:,} requests with 1 MiB `user` values",
            growth,
            f"{growth:+.1f} MB",
            20,
            "MB",
        )
    )
    return bounds


def conversation_only() -> None:
    """``--conversation``: only the multi-turn rows and the key-size figure."""
    print(f"machine: {os.cpu_count()} cores, load average", *os.getloadavg())
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        workdir = Path(tmp)
        stub = stack.enter_context(server([__file__, "--stub"], workdir, "stub"))
        recorder = stack.enter_context(server([__file__, "--recording-stub"], workdir, "recorder"))
        turns = stack.enter_context(
            server(proxy(recorder.url, workdir, "turns", TURN_HOOKS), workdir, "turns")
        )
        conversations = conversation_figures(recorder, turns)
        keys = key_size(stub, workdir)
    print_conversations(conversations)
    print_key_size(keys)
    print_bounds(conversation_bounds(conversations, keys))
    print(f"\nload average after: {' '.join(map(str, os.getloadavg()))}")


def main() -> None:
    require("hey", "wrk")
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
        processes = workers_figures(stub, workdir, small)
        stateful = route_figures(stub, hooked, workdir, HEADERS)
        stateless = route_figures(stub, hooked, workdir, STATELESS)
        body = long.read_bytes()
        direct_long, bare_long = one_at_a_time(stub.url, bare.url, body)
        _, hooked_long = one_at_a_time(stub.url, hooked.url, body)
        # Started now, not idle beside the load rows: the recording stub and its proxy.
        recorder = stack.enter_context(server([__file__, "--recording-stub"], workdir, "recorder"))
        turns = stack.enter_context(
            server(proxy(recorder.url, workdir, "turns", TURN_HOOKS), workdir, "turns")
        )
        conversations = conversation_figures(recorder, turns)
        keys = key_size(stub, workdir)
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
    print_workers(processes)
    print_routes("one conversation, SQLite state, 2 TTL-fresh hooks", stateful)
    print_routes("no credential (no state), 2 hooks injecting", stateless)
    print_conversations(conversations)
    print_key_size(keys)
    print_bounds(conversation_bounds(conversations, keys))


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
                  ">=0.1", rps),
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
    if sys.argv[1:2] in (["--help"], ["-h"]):
        print(f"usage: {sys.argv[0]} [--routes | --conversation | --workers]\n\n{__doc__}")
    elif sys.argv[1:2] == ["--stub"]:
        serve_stub(int(sys.argv[2]))
    elif sys.argv[1:2] == ["--recording-stub"]:
        serve_stub(int(sys.argv[2]), record=True)
    elif sys.argv[1:2] == ["--conversation"]:
        conversation_only()
    elif sys.argv[1:2] == ["--routes"]:
        routes_only()
    elif sys.argv[1:2] == ["--workers"]:
        workers_only()
    else:
        main()
