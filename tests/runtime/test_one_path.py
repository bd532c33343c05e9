"""One decision path for every seam (SPEC sections 8 and 9): enrichers, host injectors, deadlines.

The runner, the manifest's transformers and a host's own ``SyntheticToolCallInjector`` share ids,
signing, trust rules and records, so what one seam writes, another keeps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from injector import Module, multiprovider

from agent_hooks import ClockModule, HookOutcome, HookRunner, create_injector
from agent_hooks._scrub import register_secret
from agent_hooks.clock import FixedClock
from agent_hooks.config import ApplicationConfig, HookEvent
from agent_hooks.injection import SyntheticToolCallInjector
from agent_hooks.messages import Message
from agent_hooks.tools import StagedBaseTool, ToolCallResult, ToolCallResultEnricher
from tests._support import HostTools
from tests._support.manifests import hook
from tests.runtime._kit import HISTORY, NOW, VersionedTool, run_once

pytestmark = pytest.mark.usefixtures("preview_on")

KEY = "one-path-key"


class Stamp(ToolCallResultEnricher):
    """A host enricher that changes the content: it appends the host's note."""

    def enrich(self, message: Message, result: ToolCallResult) -> Message:
        return message.model_copy(update={"content": f"{message.content}\n(note from the host)"})


class Enrichers(Module):
    @multiprovider
    def provide_enrichers(self) -> list[ToolCallResultEnricher]:
        return [Stamp()]


def enriched_app(*tools: StagedBaseTool) -> Any:
    config = ApplicationConfig.model_validate({"hooks": [hook("alpha")]})
    modules = [HostTools(*tools), Enrichers(), _clock()]
    return create_injector(config, modules, preview=True)


def _clock() -> Module:
    return ClockModule(FixedClock(NOW))


@pytest.mark.parametrize("key", [None, KEY])
async def test_an_enriched_unchanged_result_is_replaced_on_every_later_turn(
    key: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    _use_key(monkeypatch, key)
    injector = enriched_app(VersionedTool("alpha"))
    history: Sequence[Message] = HISTORY
    outcomes, lengths = [], []
    for _ in range(3):
        run = await run_once(injector, history)
        outcomes.append(run.records[0].outcome)
        lengths.append(len(run.messages))
        history = run.messages
    assert outcomes == [HookOutcome.INJECTED, HookOutcome.REPLACED, HookOutcome.REPLACED]
    assert lengths == [4, 4, 4]
    assert str(history[3].content).endswith("(note from the host)")


class HostMemories(SyntheticToolCallInjector):
    """A host's own injector, built without DI as the seed shows."""

    def __init__(self, content: str = "the user likes tea", **kwargs: Any) -> None:
        super().__init__(clock=FixedClock(NOW), **kwargs)
        self.content = content
        self.calls = 0

    def get_tool_name(self) -> str:
        return "host_memories"

    def get_arguments(self) -> Mapping[str, Any]:
        return {"user": "u7"}

    async def get_content(self, messages: Sequence[Message]) -> str | None:
        self.calls += 1
        return self.content


async def test_a_host_injectors_pair_is_signed_and_survives_a_signed_run(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _use_key(monkeypatch, KEY)
    host = HostMemories()
    with_host_pair = await host.transform(list(HISTORY))
    host_id = with_host_pair[3].tool_call_id
    assert host_id is not None
    assert "_s" in host_id

    runner_app = create_injector(
        ApplicationConfig.model_validate({"hooks": [hook("alpha")]}),
        [HostTools(VersionedTool("alpha")), _clock()],
        preview=True,
    )
    run = await runner_app.get(HookRunner).run(HookEvent.ON_REQUEST_START, with_host_pair)

    assert host_id in {m.tool_call_id for m in run.messages}
    assert "removed_unverified" not in caplog.text


async def test_a_host_injector_and_a_manifest_hook_of_the_same_identity_write_the_same_pair(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _use_key(monkeypatch, KEY)
    host = HostMemories(ttl_seconds=600)
    by_host = await host.transform(list(HISTORY))

    class Memories(StagedBaseTool):
        async def execute(self, arguments: Mapping[str, Any]) -> str:
            return "the user likes tea"

    manifest = {
        "hooks": [
            hook(
                "host_memories",
                arguments={"user": "u7"},
                refresh_condition={"kind": "ttl", "ttl_minutes": 10},
            )
        ]
    }
    runner_app = create_injector(
        ApplicationConfig.model_validate(manifest),
        [HostTools(Memories(name="host_memories")), _clock()],
        preview=True,
    )
    by_runner = await run_once(runner_app, HISTORY)
    assert [m.to_openai() for m in by_runner.messages] == [m.to_openai() for m in by_host]
    # And each sees the other's pair as its own: fresh, so nothing is called again.
    again = await run_once(runner_app, by_host)
    assert again.records[0].outcome == HookOutcome.SKIPPED_FRESH
    assert await host.transform(by_runner.messages) == by_runner.messages
    assert host.calls == 1


class CancelRaises(StagedBaseTool):
    """A tool that hangs, and raises an error of its own when its call is cancelled."""

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            raise RuntimeError("cleanup failed while cancelling") from None
        return "never"


async def test_a_call_that_raises_while_unwinding_from_the_deadline_is_timed_out() -> None:
    config = ApplicationConfig.model_validate(
        {"hooks": [hook("stubborn", timeout_seconds=0.2, on_error="skip")]}
    )
    runner_app = create_injector(
        config, [HostTools(CancelRaises(name="stubborn")), _clock()], preview=True
    )
    run = await run_once(runner_app)
    assert run.records[0].outcome == HookOutcome.TIMED_OUT
    assert run.records[0].reason == "hook timed out after 0.2 seconds"


class Hanging(StagedBaseTool):
    """Counts the calls that are running right now."""

    running = 0

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        type(self).running += 1
        try:
            await asyncio.sleep(30)
        finally:
            type(self).running -= 1
        return "never"


async def test_a_cancelled_run_leaves_no_call_running() -> None:
    config = ApplicationConfig.model_validate(
        {"hooks": [hook("hang_a", timeout_seconds=20), hook("hang_b", timeout_seconds=20)]}
    )
    tools = [Hanging(name="hang_a"), Hanging(name="hang_b")]
    runner_app = create_injector(config, [HostTools(*tools), _clock()], preview=True)
    task = asyncio.create_task(run_once(runner_app))
    while Hanging.running < 2:  # noqa: ASYNC110 - waiting for both calls to have started
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert Hanging.running == 0


def _use_key(monkeypatch: pytest.MonkeyPatch, key: str | None) -> None:
    monkeypatch.delenv("AGENT_HOOKS_SIGNING_KEYS", raising=False)
    if key is None:
        monkeypatch.delenv("AGENT_HOOKS_SIGNING_KEY", raising=False)
    else:
        monkeypatch.setenv("AGENT_HOOKS_SIGNING_KEY", key)


async def test_a_host_injectors_content_is_scrubbed_of_the_secrets_the_app_resolved() -> None:
    secret = "sk-one-path-only-secret-value"
    register_secret(secret, always_whole=True)  # as a value read through {"env": NAME} is
    host = HostMemories(content=f"the header was Bearer {secret}")
    history = await host.transform(list(HISTORY))
    assert history[3].content == "the header was Bearer ***"


class SwallowsCancel(StagedBaseTool):
    """A host tool that catches the deadline's cancel and answers anyway, slowly."""

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            await asyncio.sleep(2)  # unwinds far past the grace period
            return "late answer"
        return "never"


async def test_a_host_tool_that_swallows_the_cancel_is_abandoned_and_timed_out() -> None:
    config = ApplicationConfig.model_validate({"hooks": [hook("swallow", timeout_seconds=0.2)]})
    runner_app = create_injector(
        config, [HostTools(SwallowsCancel(name="swallow")), _clock()], preview=True
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    run = await run_once(runner_app)
    assert loop.time() - started < 0.2 + 0.5 + 1.0  # the deadline, the grace, a busy machine
    assert run.records[0].outcome == HookOutcome.TIMED_OUT
    assert run.messages == list(HISTORY)


class CancelledTwice(StagedBaseTool):
    """A host tool that swallows two cancels, noting when each came, then answers."""

    def __init__(self) -> None:
        super().__init__(name="stubborn")
        self.cancels: list[float] = []
        self.answered = asyncio.Event()

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        for _ in range(2):
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                self.cancels.append(asyncio.get_running_loop().time())
        self.answered.set()
        return "late answer"


async def test_a_call_given_up_on_is_cancelled_again_at_its_toolset_timeout() -> None:
    """The hook's deadline comes first; the toolset's own timeout still bounds the call after."""
    toolset = {"type": "internal", "name": "slow", "tools": ["stubborn"], "timeout_seconds": 0.4}
    config = ApplicationConfig.model_validate(
        {"toolsets": [toolset], "hooks": [hook("stubborn", timeout_seconds=0.1)]}
    )
    tool = CancelledTwice()
    runner_app = create_injector(config, [HostTools(tool), _clock()], preview=True)
    started = asyncio.get_running_loop().time()
    run = await run_once(runner_app)
    await asyncio.wait_for(tool.answered.wait(), timeout=10)
    assert run.records[0].outcome == HookOutcome.TIMED_OUT
    assert run.records[0].reason == "hook timed out after 0.1 seconds"
    first, second = (moment - started for moment in tool.cancels)
    assert 0.1 <= first < 0.4
    assert second >= 0.4


def test_only_tools_that_never_wait_skip_the_abandonable_task() -> None:
    config = ApplicationConfig.model_validate(
        {
            "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
            "hooks": [hook("current_time"), hook("alpha")],
        }
    )
    runner_app = create_injector(
        config, [HostTools(VersionedTool("alpha")), _clock()], preview=True
    )
    inline = {h.tool: h.inline for h in runner_app.get(HookRunner).hooks}
    assert inline == {"current_time": True, "alpha": False}
