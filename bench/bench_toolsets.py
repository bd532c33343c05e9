"""What a hook run costs against real toolsets, and what reusing a session and the TTL save.

The MCP toolsets keep one session per toolset for the life of the app, so only the first hook
run pays for starting the server (stdio) or connecting and handshaking (streamable HTTP). This
measures, with real servers on 127.0.0.1 and real child processes, one ``transform`` call of a
``tool_call`` hook built through the public path (``ApplicationConfig.from_dict`` +
``open_app``):

* reused: the session or HTTP client is already open (medians of batches of calls);
* fresh app: the first run of a new app, which spawns the example memory server over stdio or
  opens a streamable-HTTP session (and lists the tools) before calling; closing the app is
  timed separately;
* the same for a ``rest-api`` toolset against a tiny local Starlette server;
* a TTL-fresh skip (a ``ttl`` hook run on its own output), against a real MCP call.

Run it with ``make bench``. The machine is shared and noisy: compare ratios, not absolute times.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from injector import Injector

from agent_hooks import open_app
from agent_hooks.config import ApplicationConfig
from agent_hooks.injection import MessagesTransformer
from agent_hooks.messages import Message

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # the test servers' helpers live in tests/servers

from tests.servers.processes import MEMORY_SERVER, free_port, running_server  # noqa: E402

REPEATS = 7
"""Batches per reused figure, and fresh apps per fresh figure; every figure is their median."""

REUSED_LOOPS = 20
"""Hook runs per batch against a real server (about a millisecond each)."""

SKIP_LOOPS = 1_000
"""Hook runs per batch for the TTL-fresh skip (microseconds each)."""

HISTORY = [
    Message.model_validate({"role": "system", "content": "You are a helpful assistant."}),
    Message.model_validate({"role": "user", "content": "What do you remember about me?"}),
]


@dataclass(frozen=True)
class Row:
    label: str
    reused: float
    fresh: float
    close: float


# Servers: child processes on free ports, started and stopped by the same helpers the tests use.


def serve_rest(port: int) -> None:
    """The REST API under test (run in a child process): GET /users/{user_id}/preferences."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def preferences(request: Request) -> JSONResponse:
        user = request.path_params["user_id"]
        return JSONResponse({"user_id": user, "language": "en-GB", "units": "metric"})

    app = Starlette(routes=[Route("/users/{user_id}/preferences", preferences)])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1)


# ---------------------------------------------------------------------------------------------
# Manifests and hook runs.


def mcp_toolset(server: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "mcp",
        "name": "memory_server",
        "server": server,
        "allowed_tools": ["get_memories"],
        "timeout_seconds": 30,
    }


def manifest(
    toolset: dict[str, Any], tool_name: str, arguments: dict[str, Any]
) -> ApplicationConfig:
    """One toolset, a ``call`` hook (always injects) and a ``ttl`` hook on the same tool."""
    hook = {
        "kind": "tool_call",
        "event": "on_request_start",
        "toolset_name": toolset["name"],
        "tool_name": tool_name,
        "arguments": arguments,
    }
    ttl = {"kind": "ttl", "ttl_minutes": 60}
    return ApplicationConfig.from_dict(
        {
            "toolsets": [toolset],
            "hooks": [
                {**hook, "name": "call", "frequency": "always"},
                {**hook, "name": "ttl", "frequency": "append_if_changed", "refresh_condition": ttl},
            ],
        },
        preview=True,
    )


def hooks_of(injector: Injector) -> tuple[MessagesTransformer, MessagesTransformer]:
    call, ttl = injector.get(list[MessagesTransformer])
    return call, ttl


async def run_injecting(hook: MessagesTransformer, messages: list[Message]) -> list[Message]:
    """One hook run that must have injected (hooks swallow tool errors, so check it)."""
    out = await hook.transform(messages)
    if len(out) <= len(messages):
        raise RuntimeError(f"{hook!r} did not inject; is the server up? (see the log above)")
    return out


async def reused_seconds(hook: MessagesTransformer) -> float:
    """Median over ``REPEATS`` batches of the mean time of one run on an open session."""
    await run_injecting(hook, HISTORY)  # opens the session, lists the tools
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for _ in range(REUSED_LOOPS):
            await run_injecting(hook, HISTORY)
        samples.append((time.perf_counter() - started) / REUSED_LOOPS)
    return statistics.median(samples)


async def fresh_seconds(config: ApplicationConfig) -> tuple[float, float]:
    """Medians over ``REPEATS`` new apps of the first run's time and of closing the app."""
    runs, closes = [], []
    for _ in range(REPEATS):
        async with open_app(config) as injector:
            call, _ = hooks_of(injector)
            started = time.perf_counter()
            await run_injecting(call, HISTORY)
            runs.append(time.perf_counter() - started)
            closing = time.perf_counter()
        closes.append(time.perf_counter() - closing)
    return statistics.median(runs), statistics.median(closes)


async def ttl_skip_seconds(hook: MessagesTransformer) -> float:
    """Median over ``REPEATS`` batches of a run on the hook's own fresh output (no tool call)."""
    injected = await run_injecting(hook, HISTORY)
    samples = []
    for _ in range(REPEATS):
        started = time.perf_counter()
        for _ in range(SKIP_LOOPS):
            out = await hook.transform(injected)
        samples.append((time.perf_counter() - started) / SKIP_LOOPS)
        if len(out) != len(injected) or any(a is not b for a, b in zip(out, injected, strict=True)):
            raise RuntimeError("the TTL hook did not skip its fresh result")
    return statistics.median(samples)


async def measure_toolset(label: str, config: ApplicationConfig) -> tuple[Row, float]:
    async with open_app(config) as injector:
        call, ttl = hooks_of(injector)
        reused = await reused_seconds(call)
        skip = await ttl_skip_seconds(ttl)
    fresh, close = await fresh_seconds(config)
    return Row(label, reused, fresh, close), skip


async def measure(db_dir: Path, http_url: str, rest_url: str) -> tuple[list[Row], float]:
    stdio = mcp_toolset(
        {
            "transport": "stdio",
            "command": sys.executable,
            "args": [str(MEMORY_SERVER), "--db", str(db_dir / "stdio.sqlite3")],
        }
    )
    http = mcp_toolset({"transport": "streamable_http", "url": f"{http_url}/mcp"})
    rest = {
        "type": "rest-api",
        "name": "prefs",
        "base_url": rest_url,
        "tools": [{"name": "get_preferences", "path": "/users/{user_id}/preferences"}],
    }
    user = {"user_id": "current"}
    rows, skips = [], []
    for label, toolset, tool in (
        ("mcp stdio", stdio, "get_memories"),
        ("mcp streamable-http", http, "get_memories"),
        ("rest-api", rest, "get_preferences"),
    ):
        row, skip = await measure_toolset(label, manifest(toolset, tool, user))
        rows.append(row)
        skips.append(skip)
    return rows, statistics.median(skips)


def main() -> None:
    if sys.argv[1:2] == ["--serve-rest"]:
        serve_rest(int(sys.argv[2]))
        return
    os.environ["ENABLE_PREVIEW_FEATURES"] = "true"  # hooks are a preview feature
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench-toolsets-") as tmp, ExitStack() as servers:
        work = Path(tmp)
        port = free_port()
        http_args = [str(MEMORY_SERVER), "--transport", "streamable-http", "--port", str(port)]
        http_args += ["--db", str(work / "http.sqlite3")]
        http_url = servers.enter_context(
            running_server(http_args, port=port, log_path=work / "mcp-http.log")
        )
        port = free_port()
        rest_args = [str(Path(__file__).resolve()), "--serve-rest", str(port)]
        rest_url = servers.enter_context(
            running_server(rest_args, port=port, log_path=work / "rest.log")
        )
        rows, skip = asyncio.run(measure(work, http_url, rest_url))
    elapsed = time.perf_counter() - started

    print(
        f"medians of {REPEATS} batches ({REUSED_LOOPS} runs each when reused, 1 new app each "
        f"when fresh); shared machine, compare ratios"
    )
    print(f"{'toolset':<20} {'reused ms':>10} {'fresh app ms':>13} {'fresh/reused':>13} "
          f"{'app close ms':>13}")  # fmt: skip
    for row in rows:
        print(
            f"{row.label:<20} {row.reused * 1e3:>10.2f} {row.fresh * 1e3:>13.1f} "
            f"{row.fresh / row.reused:>12.0f}x {row.close * 1e3:>13.1f}"
        )
    print(f"{'ttl-fresh skip':<20} {skip * 1e3:>10.3f}")
    stdio, http, rest = rows
    print(
        f"\nspawning the stdio server costs {stdio.fresh / stdio.reused:.0f} reused calls; "
        f"opening an HTTP session {http.fresh / http.reused:.0f}"
    )
    print(
        f"a TTL-fresh skip is {stdio.reused / skip:.0f}x cheaper than a reused stdio MCP call, "
        f"{http.reused / skip:.0f}x than streamable HTTP, {rest.reused / skip:.0f}x than REST"
    )
    print(f"(whole benchmark: {elapsed:.0f} s)")


if __name__ == "__main__":
    main()
