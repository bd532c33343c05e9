"""How each real agent is run through the proxy: its config, its environment and its command
line for a first turn and for a second turn of the same session.

Every agent runs with ``HOME`` (and its config directories) in a fresh directory, a fake key, its
base URL at the proxy, and telemetry, update checks, model-list fetches and plugin downloads off,
so nothing leaves 127.0.0.1: every run is traced (``strace -f``, the socket calls that name an
address) and the addresses it reached are kept, DNS servers included.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
AGENTS_BIN = REPO / ".agents" / "node_modules" / ".bin"
RUN_TIMEOUT_SECONDS = 120.0
"""Longest wait for one agent run (a tool loop takes a few seconds)."""

FAKE_KEY = "sk-agents-test-not-a-key"
PROMPTS = ("List the txt files here.", "Thanks. Now say goodbye.")
"""The user's message of the first and of the second turn."""

_QUIET_CLAUDE = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}
_QUIET_OPENCODE = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
    # opencode looks its own packages up on registry.npmjs.org at start; offline, it does not.
    "npm_config_offline": "true",
}


LOCAL_ADDRESSES = frozenset({"127.0.0.1", "::1", "::ffff:127.0.0.1"})
_TRACED = "connect,sendto,sendmsg,sendmmsg"
_ADDRESS = re.compile(r'inet_addr\("([^"]+)"\)|inet_pton\(AF_INET6, "([^"]+)"')


@dataclass(frozen=True)
class Run:
    argv: list[str]
    returncode: int
    stdout: str
    stderr: str
    addresses: frozenset[str]
    """Every IP address the agent and its children sent to or connected to."""


@dataclass(frozen=True)
class Agent:
    """One agent program and the settings it runs with (``model`` None: its default)."""

    id: str
    program: str
    route: str
    """The upstream path its model requests take."""
    session_header: str
    """The header that carries its own session id (the proxy does not forward it)."""
    model: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    def run(self, turn: int, proxy_url: str, home: Path, workdir: Path) -> Run:
        """Turn 1 starts a session in ``workdir``; turn 2 continues the most recent one."""
        env = {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8", **self.env}
        env.update(_CONFIGURE[self.program](self, proxy_url, home))
        argv = [str(AGENTS_BIN / self.program), *_ARGV[self.program](self, turn, PROMPTS[turn - 1])]
        trace = home / f"trace-{turn}.txt"
        strace = shutil.which("strace")
        if strace is None:
            raise RuntimeError("strace is missing: the agent tests trace what the agents reach")
        completed = subprocess.run(
            [strace, "-f", "-qq", "-s", "0", "-e", f"trace={_TRACED}", "-o", str(trace), *argv],
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_SECONDS,
            check=False,
        )
        found = {a or b for a, b in _ADDRESS.findall(trace.read_text(errors="replace"))}
        return Run(argv, completed.returncode, completed.stdout, completed.stderr, frozenset(found))


def _claude_env(agent: Agent, proxy_url: str, home: Path) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": proxy_url, "ANTHROPIC_API_KEY": FAKE_KEY, **_QUIET_CLAUDE}


def _claude_argv(agent: Agent, turn: int, prompt: str) -> list[str]:
    model = ["--model", agent.model] if agent.model else []
    resume = ["--continue"] if turn > 1 else []
    return ["-p", *resume, *model, prompt]


def _codex_env(agent: Agent, proxy_url: str, home: Path) -> dict[str, str]:
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(
        f'model = "{agent.model or "gpt-5.1-codex"}"\n'
        'model_provider = "proxy"\n'
        "check_for_update_on_startup = false\n\n"
        "[model_providers.proxy]\n"
        'name = "agent-hooks serve"\n'
        f'base_url = "{proxy_url}/v1"\n'
        'env_key = "PROXY_API_KEY"\n'
        'wire_api = "responses"\n\n'
        "[analytics]\nenabled = false\n\n"
        # the curated-plugin sync reaches github.com and chatgpt.com at start
        "[features]\nplugins = false\n"
    )
    return {"CODEX_HOME": str(codex_home), "PROXY_API_KEY": FAKE_KEY}


def _codex_argv(agent: Agent, turn: int, prompt: str) -> list[str]:
    resume = ["resume", "--last"] if turn > 1 else []
    return ["exec", *resume, "--skip-git-repo-check", prompt]


def _opencode_env(agent: Agent, proxy_url: str, home: Path) -> dict[str, str]:
    model = agent.model or "scripted-model"
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "name": "agent-hooks serve",
        "options": {"baseURL": f"{proxy_url}/v1", "apiKey": FAKE_KEY},
        "models": {model: {"name": model, "tool_call": True}},
    }
    config = {
        "$schema": "https://opencode.ai/config.json",
        "provider": {"proxy": provider},
        "model": f"proxy/{model}",
        "small_model": f"proxy/{model}",
        "autoupdate": False,
        "share": "disabled",
    }
    path = home / "opencode.json"
    path.write_text(json.dumps(config, indent=2))
    return {"OPENCODE_CONFIG": str(path), **_QUIET_OPENCODE}


def _opencode_argv(agent: Agent, turn: int, prompt: str) -> list[str]:
    resume = ["--continue"] if turn > 1 else []
    return ["run", *resume, prompt]


_CONFIGURE = {"claude": _claude_env, "codex": _codex_env, "opencode": _opencode_env}
_ARGV = {"claude": _claude_argv, "codex": _codex_argv, "opencode": _opencode_argv}

_CLAUDE = ("claude", "/v1/messages", "x-claude-code-session-id")
AGENTS = (
    Agent("claude-default", *_CLAUDE),
    Agent("claude-thinking", *_CLAUDE, "claude-sonnet-4-5", {"MAX_THINKING_TOKENS": "4000"}),
    Agent("claude-no-thinking", *_CLAUDE, "claude-sonnet-4-5", {"MAX_THINKING_TOKENS": "0"}),
    Agent("codex", "codex", "/v1/responses", "session-id"),
    Agent("opencode", "opencode", "/v1/chat/completions", "x-session-id"),
)
