"""One app for every adapter's tests: real internal tools registered through DI, a fixed clock.

The hooks are the manifest entries a host would write; each test picks the ones it needs:

- ``memories``: request start, TTL'd (10 minutes), injects what the ``memory`` tool says;
- ``profile``: request start, its argument a template of the host's ``request``;
- ``notes``: request start, TTL'd, with fixed arguments (the ``profile`` tool echoes them);
- ``broken``: request start, its tool raises (the run must go on);
- ``strict``: as ``broken`` with ``on_error: fail`` (``HookFailedError`` comes out);
- ``audit``: on completion, given the final answer as its argument.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from agent_hooks import ClockModule, HookRunner, open_app
from agent_hooks.clock import FixedClock
from agent_hooks.config import ApplicationConfig
from agent_hooks.tools import StagedBaseTool
from tests._support import HostTools, ScriptedTool

NOW = 1_700_000_000

MEMORY = "- likes green tea"

HOOKS: dict[str, dict[str, Any]] = {
    "memories": {
        "name": "memories",
        "event": "on_request_start",
        "kind": "tool_call",
        "tool_name": "memory",
        "refresh_condition": {"kind": "ttl", "ttl_minutes": 10},
    },
    "profile": {
        "name": "profile",
        "event": "on_request_start",
        "kind": "tool_call",
        "tool_name": "profile",
        "arguments": {"user": "${request.user_id}"},
    },
    "notes": {
        "name": "notes",
        "event": "on_request_start",
        "kind": "tool_call",
        "tool_name": "profile",
        "arguments": {"topic": "weather"},
        "refresh_condition": {"kind": "ttl", "ttl_minutes": 10},
    },
    "broken": {
        "name": "broken",
        "event": "on_request_start",
        "kind": "tool_call",
        "tool_name": "broken",
    },
    "strict": {
        "name": "strict",
        "event": "on_request_start",
        "kind": "tool_call",
        "tool_name": "broken",
        "on_error": "fail",
    },
    "audit": {
        "name": "audit",
        "event": "on_completion",
        "kind": "tool_call",
        "tool_name": "audit",
        "arguments": {
            "answer": "${last_assistant_message.content}",
            "request": {"$eval": "request"},
        },
    },
}


class EchoTool(StagedBaseTool):
    """Answers with its arguments as JSON and keeps every call."""

    def __init__(self, name: str) -> None:
        super().__init__(name=name)
        self.calls: list[dict[str, Any]] = []

    async def execute(self, arguments: Mapping[str, Any]) -> str | None:
        self.calls.append(dict(arguments))
        return json.dumps(dict(arguments), sort_keys=True)


@dataclass
class Tools:
    """The app's host tools, for assertions on what they were asked."""

    memory: ScriptedTool = field(default_factory=lambda: ScriptedTool("memory", MEMORY))
    profile: EchoTool = field(default_factory=lambda: EchoTool("profile"))
    broken: ScriptedTool = field(
        default_factory=lambda: ScriptedTool("broken", RuntimeError("memory service is down"))
    )
    audit: EchoTool = field(default_factory=lambda: EchoTool("audit"))


@dataclass(frozen=True)
class Kit:
    """The running app's runner, its tools and its clock (move ``clock.at`` to expire a TTL)."""

    runner: HookRunner
    tools: Tools
    clock: FixedClock


@asynccontextmanager
async def hooks_app(*names: str) -> AsyncIterator[Kit]:
    """An app with the named hooks of :data:`HOOKS`, in that order."""
    host = Tools()
    tools = [host.memory, host.profile, host.broken, host.audit]
    manifest = {
        "toolsets": [{"type": "internal", "name": "host", "tools": [tool.name for tool in tools]}],
        "hooks": [HOOKS[name] for name in names],
    }
    config = ApplicationConfig.from_dict(manifest, preview=True)
    clock = FixedClock(NOW)
    modules = [HostTools(*tools), ClockModule(clock)]
    async with open_app(config, modules, preview=True) as injector:
        yield Kit(injector.get(HookRunner), host, clock)
