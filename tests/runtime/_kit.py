"""Shared pieces of the runtime tests: host tools whose answers are a function of the call, an app
built the way a host builds one, and the records an observer sees."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

import anyio
from injector import Injector, Module, multiprovider

from agent_hooks import (
    ClockModule,
    HookEvent,
    HookObserver,
    HookRun,
    HookRunner,
    HookRunRecord,
    create_injector,
    open_app,
)
from agent_hooks.clock import FixedClock
from agent_hooks.config import ApplicationConfig
from agent_hooks.messages import Message
from agent_hooks.tools import StagedBaseTool
from tests._support import HostTools, msg

NOW = 1_700_000_000
"""The app clock of every runtime test (a fixed "now" makes TTL ids reproducible)."""

HISTORY = (
    msg(role="system", content="You are a helpful assistant."),
    msg(role="user", content="What do you know about me?"),
)


class VersionedTool(StagedBaseTool):
    """A host tool whose answer depends only on (its name, the arguments, ``version``).

    ``behaviour`` picks how it answers: ``"text"`` at once, ``"slow"`` after a few milliseconds
    (how many depends on the arguments, so concurrent calls finish out of order), ``"broken"``
    raises, ``"nothing"`` returns ``None``.
    """

    def __init__(self, name: str, behaviour: str = "text", version: int = 0) -> None:
        super().__init__(name=name)
        self.behaviour = behaviour
        self.version = version
        self.calls = 0

    async def execute(self, arguments: Mapping[str, Any]) -> str | None:
        self.calls += 1
        text = answer(self.name, arguments, self.version)
        if self.behaviour == "slow":
            await asyncio.sleep(0.001 * (len(text) % 5))
        elif self.behaviour == "broken":
            raise RuntimeError(f"{self.name} is broken")
        elif self.behaviour == "nothing":
            return None
        return text


def answer(tool: str, arguments: Mapping[str, Any], version: int) -> str:
    """What a :class:`VersionedTool` called ``tool`` answers for ``arguments`` at ``version``."""
    return f"{tool} {json.dumps(arguments, sort_keys=True)} v{version}"


@dataclass
class Recorder:
    """An observer that keeps every record it is given."""

    records: list[HookRunRecord] = field(default_factory=list)

    def on_record(self, record: HookRunRecord) -> None:
        self.records.append(record)


class Observers(Module):
    """Registers observers the way a host does: a multiprovider of ``list[HookObserver]``."""

    def __init__(self, *observers: HookObserver) -> None:
        self.observers = list(observers)

    @multiprovider
    def provide_observers(self) -> list[HookObserver]:
        return self.observers


def app(
    manifest: Mapping[str, Any],
    *tools: StagedBaseTool,
    observers: Sequence[HookObserver] = (),
    now: float = NOW,
) -> Injector:
    """The app of ``manifest`` with host ``tools`` and ``observers``, its clock fixed at ``now``
    (for apps that open nothing: no MCP or HTTP toolset)."""
    config = ApplicationConfig.model_validate(manifest)
    return create_injector(config, _modules(tools, observers, now), preview=True)


def opened(
    manifest: Mapping[str, Any],
    *tools: StagedBaseTool,
    observers: Sequence[HookObserver] = (),
    now: float = NOW,
) -> AbstractAsyncContextManager[Injector]:
    """:func:`app` through ``open_app``, which closes the sessions and clients it opened."""
    config = ApplicationConfig.model_validate(manifest)
    return open_app(config, _modules(tools, observers, now), preview=True)


def _modules(
    tools: Sequence[StagedBaseTool], observers: Sequence[HookObserver], now: float
) -> list[Module]:
    return [HostTools(*tools), Observers(*observers), ClockModule(FixedClock(now))]


def dumped(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [message.to_openai() for message in messages]


async def run_once(injector: Injector, messages: Sequence[Message] = HISTORY) -> HookRun:
    return await injector.get(HookRunner).run(HookEvent.ON_REQUEST_START, messages)


async def gone(pid: int) -> None:
    """Wait (bounded) until process ``pid`` no longer runs."""
    with anyio.fail_after(10):
        while _running(pid):  # noqa: ASYNC110 - another process: nothing to await but its state
            await anyio.sleep(0.05)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False
