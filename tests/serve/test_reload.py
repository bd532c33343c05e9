"""Reloading the manifest without a restart (SPEC 17): SIGHUP (a burst of them too) and
``--watch``, an invalid manifest kept out, an answer in flight finishing on its own manifest, and
the MCP sessions of unchanged toolsets kept, through reloads in a row, while a changed one's
server goes after its last request."""

from __future__ import annotations

import asyncio
import itertools
import json
import signal
from pathlib import Path
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from agent_hooks.serve._reload import Reloader
from tests._support.flaky import flaky_toolset, starts
from tests._support.manifests import hook
from tests.serve._proxy import Proxy, running_proxy
from tests.serve.test_proxy import USER, eventually, held_stream, manifest, saved_notes
from tests.serve.upstream_server import ANSWER
from tests.servers.fixtures import RecordingServer

CLOCK = {"hooks": [hook(name="clock")]}
"""The built-in ``current_time`` tool at request start: the echo model lists its pair."""


def echoed(proxy: Proxy) -> str:
    """What the echo model answers: one line per synthetic pair it received."""
    answer = proxy.client().chat.completions.create(model="echo", messages=[USER])  # type: ignore[list-item]
    return answer.choices[0].message.content or ""


def reloads(proxy: Proxy) -> dict[str, float]:
    """``agent_hooks_manifest_reloads_total`` by result."""
    text = httpx.get(f"{proxy.url}/metrics", timeout=10).text
    (family,) = (f for f in text_string_to_metric_families(text) if f.name.endswith("reloads"))
    return {s.labels["result"]: s.value for s in family.samples if s.name.endswith("_total")}


def reloaded(proxy: Proxy, result: str, count: int = 1) -> None:
    """Wait until ``count`` reloads ended with ``result``."""
    eventually(lambda: True if reloads(proxy)[result] >= count else None)


def rewrite(workdir: Path, new: dict[str, Any]) -> None:
    """Replace the manifest at once, as a deploy does (a reload never reads it half-written)."""
    written = workdir / "manifest.json.new"
    written.write_text(json.dumps(new))
    written.replace(workdir / "manifest.json")


def test_sighup_loads_a_manifest_that_adds_a_hook(tmp_path: Path) -> None:
    with running_proxy({}, tmp_path) as proxy:
        assert echoed(proxy) == "no synthetic pairs"
        assert reloads(proxy) == {"ok": 0, "invalid": 0}
        rewrite(tmp_path, CLOCK)
        proxy.process.send_signal(signal.SIGHUP)
        reloaded(proxy, "ok")
        assert echoed(proxy).startswith("current_time: ")
        assert "manifest reloaded from" in proxy.log()


def test_a_burst_of_sighups_ends_on_the_latest_manifest_with_one_reload_at_a_time(
    tmp_path: Path,
) -> None:
    """Five rewrites, each followed at once by SIGHUP: requests then run the fifth manifest's
    hook. Signals that come while a reload is pending are that reload (docs/decisions.md, SPEC
    17): between one and five reloads, each counted and logged once, none failed."""
    with running_proxy({}, tmp_path) as proxy:
        for version in range(1, 6):
            rewrite(tmp_path, {"hooks": [hook(name=f"v{version}")]})
            proxy.process.send_signal(signal.SIGHUP)

        def latest_served() -> bool | None:
            """Whether a new request ran the fifth manifest's hook (its access line says)."""
            echoed(proxy)
            lines = [line for line in proxy.log().splitlines() if "path=/v1/chat" in line]
            return True if lines and lines[-1].endswith(" hooks=v5:injected") else None

        eventually(latest_served)

        def settled() -> dict[str, float] | None:
            """The counts, once they agree with the reloads logged."""
            logged = proxy.log().count("manifest reloaded from")
            counted = reloads(proxy)
            again = proxy.log().count("manifest reloaded from")
            return counted if again == logged == counted["ok"] else None

        counted = eventually(settled)
        assert 1 <= counted["ok"] <= 5
        assert counted["invalid"] == 0
        lines = proxy.log().splitlines()
        assert not [line for line in lines if line.startswith(("ERROR", "WARNING", "Traceback"))]


async def test_requests_for_a_reload_while_one_is_pending_or_running_are_one_more_reload(
    tmp_path: Path,
) -> None:
    """What a burst of SIGHUPs does, in order: five requests before the reload task runs are one
    reload; three during it (a signal handler runs between any two steps) are one more, which
    loads the file as it was written during the first; then a last request, one last reload."""
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"hooks": [hook(name="v1")]}))
    results: list[str] = []
    counted = asyncio.Event()

    def on_reload(result: str) -> None:
        results.append(result)
        counted.set()
        if len(results) == 1:
            rewrite(tmp_path, {"hooks": [hook(name="v2")]})
            for _ in range(3):
                reloader.request()

    async def reloads_counted(count: int) -> None:
        while len(results) < count:
            counted.clear()
            await counted.wait()

    reloader = Reloader(path, hooks=True, on_reload=on_reload)
    for _ in range(5):
        reloader.request()
    async with asyncio.timeout(10), asyncio.TaskGroup() as tasks:
        running = tasks.create_task(reloader.run())
        await reloads_counted(2)
        assert reloader.generations.current.hook_names == ("v2",)
        reloader.request()
        await reloads_counted(3)
        running.cancel()
    assert results == ["ok", "ok", "ok"]
    await reloader.generations.aclose()


def test_watch_loads_the_manifest_when_the_file_changes(tmp_path: Path) -> None:
    with running_proxy({}, tmp_path, "--watch") as proxy:
        rewrite(tmp_path, CLOCK)
        reloaded(proxy, "ok")
        assert echoed(proxy).startswith("current_time: ")
        assert reloads(proxy) == {"ok": 1, "invalid": 0}  # one change, one reload


def test_an_invalid_manifest_leaves_the_previous_one_serving(tmp_path: Path) -> None:
    with running_proxy(CLOCK, tmp_path) as proxy:
        invalid = {"hooks": [{**hook(name="clock"), "tool_nam": "x"}], "toolset": []}
        rewrite(tmp_path, invalid)
        proxy.process.send_signal(signal.SIGHUP)
        reloaded(proxy, "invalid")
        assert echoed(proxy).startswith("current_time: ")
        errors = [line for line in proxy.log().splitlines() if line.startswith("ERROR")]
        assert errors == [
            "ERROR agent_hooks.serve: error: hooks[0].tool_nam: unknown key; did you mean"
            " 'tool_name'?",
            "ERROR agent_hooks.serve: error: toolset: unknown key; did you mean 'toolsets'?",
        ]
        (tmp_path / "manifest.json").write_text("{not json")
        proxy.process.send_signal(signal.SIGHUP)
        reloaded(proxy, "invalid", 2)
        (tmp_path / "manifest.json").unlink()
        proxy.process.send_signal(signal.SIGHUP)
        reloaded(proxy, "invalid", 3)
        assert "error: $: cannot read file" in proxy.log()
        assert echoed(proxy).startswith("current_time: ")
        assert reloads(proxy) == {"ok": 0, "invalid": 3}


def test_an_answer_in_flight_finishes_on_the_manifest_it_started_with(
    tmp_path: Path, upstream: RecordingServer, rest_server: RecordingServer
) -> None:
    """The streamed answer's completion hook (gone from the new manifest, with its toolset)
    still runs after the reload, once the answer completes."""
    with running_proxy(manifest(rest_server.url), tmp_path, "--upstream", upstream.url) as proxy:
        chunks = held_stream(proxy)
        rewrite(tmp_path, CLOCK)
        proxy.process.send_signal(signal.SIGHUP)
        reloaded(proxy, "ok")
        proxy.client().chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
        assert "closing toolsets" not in proxy.log()  # the answer in flight still uses them
        httpx.post(f"{upstream.url}/_release").raise_for_status()
        rest = "".join(chunk.choices[0].delta.content or "" for chunk in chunks)
        assert "Hello" + rest == ANSWER
        (note,) = saved_notes(rest_server)  # the old manifest's on_completion hook
        assert note["answer"] == ANSWER
        eventually(lambda: True if "closing toolsets" in proxy.log() else None)
    first, second = (entry["body"]["messages"] for entry in upstream.received())
    assert first[1]["tool_calls"][0]["function"]["name"] == "prefs_get_preferences"
    assert second[1]["tool_calls"][0]["function"]["name"] == "current_time"
    log = proxy.log()
    assert "status=200 latency_ms=" in log
    assert "hooks=prefs:injected" in log
    assert "hooks=clock:injected" in log
    assert "closing toolsets of the previous manifest, its last request over: prefs" in log


def gone(pid: str) -> bool:
    """Whether process ``pid`` has exited (a zombie has)."""
    try:
        status = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return status.rsplit(")", 1)[1].split()[0] == "Z"


TWO_SERVERS_HOOKS = [hook("whoami", "kept", name="kept"), hook("whoami", "changed", name="changed")]


def two_servers(workdir: Path, version: str) -> dict[str, Any]:
    """Two MCP toolsets on the flaky test server, each with a hook asking its process id:
    ``kept`` and ``changed``, whose declaration differs by ``version``. Each server start is a
    line in ``workdir/kept.log`` or ``workdir/changed.log``."""
    changed = flaky_toolset("changed", workdir / "changed.log", FLAKY_VERSION=version)
    kept = flaky_toolset("kept", workdir / "kept.log")
    return {"toolsets": [kept, changed], "hooks": TWO_SERVERS_HOOKS}


def server_pids(entry: dict[str, Any]) -> dict[str, str]:
    """The process id each hook's pair carried in a forwarded request, by toolset."""
    messages = entry["body"]["messages"]
    return {
        call["function"]["name"].split("_")[0]: answer["content"]
        for message, answer in itertools.pairwise(messages)
        for call in message.get("tool_calls") or ()
    }


def test_an_unchanged_mcp_toolset_keeps_its_server_and_a_changed_one_gets_a_new_one(
    tmp_path: Path, upstream: RecordingServer
) -> None:
    """The changed toolset's old server serves the request in flight to its end, then goes."""
    kept_log, changed_log = tmp_path / "kept.log", tmp_path / "changed.log"
    with running_proxy(two_servers(tmp_path, "1"), tmp_path, "--upstream", upstream.url) as proxy:
        chunks = held_stream(proxy)
        rewrite(tmp_path, two_servers(tmp_path, "2"))
        proxy.process.send_signal(signal.SIGHUP)
        reloaded(proxy, "ok")
        proxy.client().chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
        (old_changed,) = starts(changed_log)[:1]
        assert not gone(old_changed)  # the answer in flight still holds the old manifest
        httpx.post(f"{upstream.url}/_release").raise_for_status()
        list(chunks)
        eventually(lambda: True if gone(old_changed) else None)
        assert "toolsets kept=kept new=changed" in proxy.log()
    before, after = (server_pids(entry) for entry in upstream.received())
    assert starts(kept_log) == [before["kept"]]
    assert after["kept"] == before["kept"]
    assert starts(changed_log) == [before["changed"], after["changed"]]


def test_an_unchanged_mcp_toolset_keeps_its_server_through_reloads_in_a_row(
    tmp_path: Path, upstream: RecordingServer
) -> None:
    """Three reloads, one request after each: the same file, one that changes the other
    toolset, the same file again. The kept toolset's one server answers every request; the
    other one gets a server per declaration."""
    kept_log, changed_log = tmp_path / "kept.log", tmp_path / "changed.log"
    versions = ["1", "2", "2"]
    with running_proxy(two_servers(tmp_path, "1"), tmp_path, "--upstream", upstream.url) as proxy:
        client = proxy.client()
        client.chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
        for count, version in enumerate(versions, start=1):
            rewrite(tmp_path, two_servers(tmp_path, version))
            proxy.process.send_signal(signal.SIGHUP)
            reloaded(proxy, "ok", count)
            client.chat.completions.create(model="m", messages=[USER])  # type: ignore[list-item]
        log = proxy.log()
    answered = [server_pids(entry) for entry in upstream.received()]
    (kept,) = starts(kept_log)
    assert [pids["kept"] for pids in answered] == [kept] * 4
    changed = [pids["changed"] for pids in answered]
    assert changed == [changed[0], changed[0], changed[2], changed[2]]
    assert starts(changed_log) == [changed[0], changed[2]]
    kept_lines = [line.split("toolsets ", 1)[1] for line in log.splitlines() if "reloaded" in line]
    assert kept_lines == [
        "kept=kept,changed new=-",
        "kept=kept new=changed",
        "kept=kept,changed new=-",
    ]
