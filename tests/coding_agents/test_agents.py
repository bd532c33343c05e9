"""The agents people run, through ``agent-hooks serve`` (SPEC 15, "Proof"): Claude Code, Codex and
opencode, pinned and installed by ``make install``, each run twice (a tool loop, then a second
turn of the same session) against the scripted upstream that enforces every provider rule.

Each agent's two runs happen once (a module fixture); each test checks one promise on them.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests._support.manifests import hook
from tests.coding_agents._agents import AGENTS, LOCAL_ADDRESSES, Agent, Run
from tests.coding_agents.scripted_upstream import FINAL, STAMP, TOOL_PATH
from tests.serve._proxy import running_proxy
from tests.servers.fixtures import RecordingServer

SYNTHETIC_ID = re.compile(r"ah_[0-9a-f]{8}_[0-9a-f]{6}")
_STAMPED = re.compile(re.escape(STAMP) + r"[0-9]+")


def manifest(tool_url: str) -> dict[str, Any]:
    """One TTL'd hook (10 minutes) on the scripted upstream's REST tool, whose every answer
    differs: a hook that runs again changes its pair."""
    tool = {"name": "get_preferences", "path": TOOL_PATH, "description": "The user's preferences."}
    toolset = {"type": "rest-api", "name": "prefs", "base_url": tool_url, "tools": [tool]}
    ttl = {"kind": "ttl", "ttl_minutes": 10}
    prefs = hook("get_preferences", "prefs", name="prefs", refresh_condition=ttl)
    return {"toolsets": [toolset], "hooks": [prefs]}


@dataclass(frozen=True)
class Transcript:
    agent: Agent
    runs: list[Run]
    received: list[dict[str, Any]]
    """Every request the upstream got, in order."""
    proxy_log: str
    root: Path
    """Where the runs happened; ``received.json`` there holds every request the upstream got."""

    @classmethod
    def record(
        cls, agent: Agent, runs: list[Run], upstream: RecordingServer, proxy_log: str, root: Path
    ) -> Transcript:
        received = upstream.received()
        (root / "received.json").write_text(json.dumps(received, indent=1))
        return cls(agent, runs, received, proxy_log, root)

    def violations(self) -> list[tuple[str, list[str]]]:
        return [(r["path"], r["violations"]) for r in self.received if r["violations"]]

    def first_change(self) -> str | None:
        """Where a main-loop request first differs from the one before, if it does."""
        histories = [_history(body) for body in self.model_requests()]
        for number, (before, after) in enumerate(itertools.pairwise(histories), 1):
            changed = next(
                (i for i, (a, b) in enumerate(zip(before, after, strict=False)) if a != b), None
            )
            if changed is not None:
                return (
                    f"request {number + 1} changes item {changed} of request {number}:\n"
                    f"- {before[changed][:600]}\n+ {after[changed][:600]}"
                )
            if len(after) < len(before):
                return f"request {number + 1} is shorter than request {number}"
        return None

    def model_requests(self) -> list[dict[str, Any]]:
        """The bodies of the agent's main loop: requests on its route that declare tools (titles
        and other side requests declare none)."""
        bodies = [json.loads(r["text"]) for r in self.received if r["path"] == self.agent.route]
        return [body for body in bodies if body.get("tools")]

    def hook_calls(self) -> int:
        return sum(1 for r in self.received if r["path"] == TOOL_PATH)

    def hook_answers(self, bodies: list[dict[str, Any]]) -> set[str]:
        """The hook's answers (``hook-call-N``) that reached these requests."""
        return {found for body in bodies for found in _STAMPED.findall(json.dumps(body))}

    def all_requests(self) -> list[dict[str, Any]]:
        return [json.loads(r["text"]) for r in self.received if r["path"] == self.agent.route]

    def explain(self) -> str:
        runs = "\n".join(
            f"$ {' '.join(run.argv[1:])}\nexit {run.returncode}\n{run.stdout[-1500:]}\n"
            f"{run.stderr[-1500:]}"
            for run in self.runs
        )
        log = self.proxy_log[-3000:]
        return f"{runs}\n--- proxy log ---\n{log}\n--- requests: {self.root}/received.json"


@pytest.fixture(scope="module", params=AGENTS, ids=[agent.id for agent in AGENTS])
def transcript(
    request: pytest.FixtureRequest,
    agents_installed: Path,
    _scripted_process: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Transcript:
    agent: Agent = request.param
    upstream = RecordingServer(_scripted_process)
    upstream.forget()
    root = tmp_path_factory.mktemp(agent.id)
    options = ("--upstream", _scripted_process, "--state", f"sqlite:///{root}/state.db")
    with running_proxy(manifest(_scripted_process), root / "proxy", *options) as proxy:
        runs = _two_turns(agent, proxy.url, root)
        log = proxy.log()
    return Transcript.record(agent, runs, upstream, log, root)


def _two_turns(agent: Agent, base_url: str, root: Path) -> list[Run]:
    home, workdir = root / "home", root / "work"
    home.mkdir()
    workdir.mkdir()
    (workdir / "notes.txt").write_text("a file for the agent to find\n")
    return [agent.run(turn, base_url, home, workdir) for turn in (1, 2)]


def test_each_run_exits_0_with_the_scripted_answer(transcript: Transcript) -> None:
    for run in transcript.runs:
        assert run.returncode == 0, transcript.explain()
        assert FINAL in run.stdout, transcript.explain()


def test_nothing_leaves_127_0_0_1(transcript: Transcript) -> None:
    """No telemetry, update check, model list or download: not even a DNS query."""
    for run in transcript.runs:
        assert run.addresses, "the trace saw no socket call"
        assert run.addresses <= LOCAL_ADDRESSES, transcript.explain()


def test_no_request_breaks_a_provider_rule(transcript: Transcript) -> None:
    assert not transcript.violations(), transcript.explain()


def test_both_turns_complete_a_tool_loop(transcript: Transcript) -> None:
    """Two requests per turn at least: the tool call, then the answer with its result."""
    assert len(transcript.model_requests()) >= 4, transcript.explain()


def test_the_hook_pair_reaches_the_upstream(transcript: Transcript) -> None:
    requests = transcript.model_requests()
    assert requests, transcript.explain()
    assert all(_synthetic_ids(body) for body in requests), transcript.explain()


def test_the_ttl_hook_runs_once_across_both_turns(transcript: Transcript) -> None:
    """State is kept through the agent's own session id (the proxy does not forward it, so the
    upstream cannot see it): one call, then fresh for 10 minutes. A side request with another
    first user message is a conversation of its own (SPEC 15's state key) with a call of its own:
    opencode's title request."""
    main_loop = transcript.hook_answers(transcript.model_requests())
    everywhere = transcript.hook_answers(transcript.all_requests())
    assert transcript.hook_calls() == len(everywhere), transcript.explain()
    assert len(main_loop) == 1, f"the main loop got {sorted(main_loop)}\n{transcript.explain()}"


def test_each_forwarded_history_extends_the_one_before(transcript: Transcript) -> None:
    """Request n+1's messages (input) start with request n's, item for item, as JSON text;
    ``cache_control`` and a one-text-block content written as its string do not count (the
    client moves its own breakpoints, SPEC 15)."""
    assert len(transcript.model_requests()) >= 2, transcript.explain()
    change = transcript.first_change()
    assert change is None, change


@pytest.mark.parametrize("agent", AGENTS, ids=[agent.id for agent in AGENTS])
def test_without_the_proxy_each_agent_passes_the_same_checks(
    agent: Agent,
    agents_installed: Path,
    scripted_upstream: RecordingServer,
    tmp_path: Path,
) -> None:
    """The control: straight at the scripted upstream every agent keeps the rules and its own
    prefix, so what fails through the proxy is the proxy's doing."""
    runs = _two_turns(agent, scripted_upstream.url, tmp_path)
    transcript = Transcript.record(agent, runs, scripted_upstream, "(no proxy)", tmp_path)
    for run in runs:
        assert run.returncode == 0, transcript.explain()
        assert FINAL in run.stdout, transcript.explain()
        assert run.addresses <= LOCAL_ADDRESSES, transcript.explain()
    assert not transcript.violations(), transcript.explain()
    assert len(transcript.model_requests()) >= 4, transcript.explain()
    assert transcript.first_change() is None, transcript.first_change()
    sessions = [
        r["headers"].get(agent.session_header)
        for r in transcript.received
        if r["path"] == agent.route
    ]
    assert None not in sessions, sessions  # its own session id on every request,
    assert len(set(sessions)) == 1, sessions  # the same on the resumed turn


def _history(body: dict[str, Any]) -> list[str]:
    items = body.get("messages", body.get("input"))
    assert isinstance(items, list)
    return [json.dumps(_canonical(item)) for item in items]


def _canonical(value: Any) -> Any:
    if isinstance(value, list):
        return [_canonical(item) for item in value]
    if not isinstance(value, dict):
        return value
    found = {k: _canonical(v) for k, v in value.items() if k != "cache_control"}
    content = found.get("content")
    if isinstance(content, list) and len(content) == 1 and content[0].get("type") == "text":
        found["content"] = content[0].get("text")
    return found


def _synthetic_ids(body: dict[str, Any]) -> list[str]:
    """The proxy's call ids anywhere in a body: in pairs, or in a pair's text form."""
    return SYNTHETIC_ID.findall(json.dumps(body))
