"""The runner's history equals applying the seed's transformers one after another (SPEC section 8),
for generated hook sets and histories; no history makes it raise; what it writes, it trusts."""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_hooks import HookEvent, HookOutcome, HookRunner
from agent_hooks.injection import MessagesTransformer
from agent_hooks.injection._ids import content_hash, parse_call_id
from agent_hooks.injection._trust import SigningKeys
from agent_hooks.messages import FunctionCall, Message
from tests._support import msg, synthetic_id
from tests._support.manifests import hook
from tests.runtime._kit import NOW, Recorder, VersionedTool, answer, app, dumped

TOOLS = {"alpha": "text", "beta": "text", "slow": "slow", "broken": "broken", "nothing": "nothing"}
TOOL_CHOICES = ["alpha", "alpha", "slow", "slow", "beta", "broken", "nothing"]
"""Weighted towards working tools, so hooks often meet their own earlier pairs."""
ARGUMENTS: list[dict[str, Any]] = [{}, {}, {"q": "x", "n": [1, 2]}]
KEY = "equivalence-key"
SETTINGS = settings(
    # RUNTIME_EXAMPLES=2000 searches deeper (about two minutes) when the runtime changes.
    max_examples=int(os.environ.get("RUNTIME_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

pytestmark = pytest.mark.usefixtures("preview_on")

hooks_strategy = st.lists(
    st.fixed_dictionaries(
        {
            "tool_name": st.sampled_from(TOOL_CHOICES),
            "arguments": st.sampled_from(ARGUMENTS),
            "frequency": st.sampled_from(["always", "append_if_changed"]),
            "refresh_condition": st.none()
            | st.builds(lambda m: {"kind": "ttl", "ttl_minutes": m}, st.integers(1, 3)),
        }
    ),
    min_size=1,
    max_size=6,
)
expiries = st.sampled_from(
    [None, 0, NOW - 100, NOW + 30, NOW + 30, NOW + 170, NOW + 1000, 0xFFFFFFFF]
)


ROLES = ("system", "user", "assistant")
SHAPES = ("written", "written", "edited", "always", "lone", "foreign")
"""How an earlier pair came to be: written by a run, its content edited, an ``always`` pair, a
tool message without its call, a call next to a foreign one in the same assistant message."""


@st.composite
def synthetic_pair(
    draw: st.DrawFn, key: str | None, shapes: Sequence[str] = SHAPES
) -> list[dict[str, Any]]:
    """An earlier pair of one of the tools: as a run wrote it, or forged in a usual way."""
    tool = draw(st.sampled_from(TOOL_CHOICES))
    arguments = draw(st.sampled_from(ARGUMENTS))
    content = answer(tool, arguments, draw(st.sampled_from([0, 0, 1])))
    shape = draw(st.sampled_from(shapes))
    hashed = {"edited": content + " (edited)", "always": "random token"}.get(shape, content)
    call_id = synthetic_id(tool, arguments, hashed, ttl_expiry_seconds=draw(expiries))
    signer = draw(st.sampled_from([key, key, "some other key", None]))
    function = FunctionCall(name=tool, arguments=json.dumps(arguments))
    call_id = SigningKeys((signer,)).sign(call_id, function, content) if signer else call_id
    call = {"id": call_id, "type": "function", "function": function.model_dump()}
    calls = [call, {**call, "id": "call_foreign"}] if shape == "foreign" else [call]
    assistant = {"role": "assistant", "content": None, "tool_calls": calls}
    answer_message = {"role": "tool", "tool_call_id": call_id, "content": content}
    return [answer_message] if shape == "lone" else [assistant, answer_message]


@st.composite
def histories(
    draw: st.DrawFn, key: str | None, shapes: Sequence[str] = SHAPES
) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.sampled_from([*ROLES, "pair", "pair", "pair", "tool_call"]))
        if kind == "pair":
            items += draw(synthetic_pair(key, shapes))
        elif kind == "tool_call":
            call = {"id": "call_1", "type": "function", "function": {"name": "search"}}
            items.append({"role": "assistant", "tool_calls": [call]})
            items.append({"role": "tool", "tool_call_id": "call_1", "content": "found"})
        else:
            items.append({"role": kind, "content": draw(st.text(max_size=5)), "x_vendor": 1})
    return items


def build(hooks: list[dict[str, Any]], version: int, concurrency: int, now: float = NOW) -> Any:
    tools = [VersionedTool(name, behaviour, version) for name, behaviour in TOOLS.items()]
    recorder = Recorder()
    manifest = {"hooks": hooks, "hooks_max_concurrency": concurrency}
    return app(manifest, *tools, observers=[recorder], now=now), recorder


def normalised(messages: Sequence[Message]) -> list[str]:
    """The dump of ``messages`` with the random ids of ``always`` pairs numbered by first
    appearance (their ``_c_`` segment hashes a random token, not the content)."""
    contents = {m.tool_call_id: m.content for m in messages if m.tool_call_id}
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        call_id = match[0]
        parsed = parse_call_id(call_id)
        content = contents.get(call_id)
        if (
            parsed is None
            or not isinstance(content, str)
            or content_hash(content) == parsed.content_hash
        ):
            return call_id
        return names.setdefault(call_id, f"always#{len(names)}")

    return [re.sub(r"ah_[0-9a-z_]+", rename, repr(m.to_openai())) for m in messages]


async def sequential(injector: Any, history: list[Message]) -> list[Message]:
    for transformer in injector.get(list[MessagesTransformer]):
        history = await transformer.transform(history)
    return history


def with_key(monkeypatch: pytest.MonkeyPatch, key: str | None) -> None:
    if key is None:
        monkeypatch.delenv("AGENT_HOOKS_SIGNING_KEY", raising=False)
    else:
        monkeypatch.setenv("AGENT_HOOKS_SIGNING_KEY", key)
    monkeypatch.delenv("AGENT_HOOKS_SIGNING_KEYS", raising=False)


@SETTINGS
@given(
    data=st.data(),
    hooks=hooks_strategy,
    version=st.sampled_from([0, 0, 1]),
    concurrency=st.integers(1, 8),
    key=st.sampled_from([None, KEY]),
)
def test_the_runner_gives_the_history_of_the_transformers_applied_one_after_another(
    monkeypatch: pytest.MonkeyPatch,
    data: st.DataObject,
    hooks: list[dict[str, Any]],
    version: int,
    concurrency: int,
    key: str | None,
) -> None:
    with_key(monkeypatch, key)
    history = [msg(**item) for item in data.draw(histories(key, SHAPES))]
    runner_app, runner_records = build([hook(**h) for h in hooks], version, concurrency)
    seed_app, seed_records = build([hook(**h) for h in hooks], version, concurrency)

    run = asyncio.run(runner_app.get(HookRunner).run(HookEvent.ON_REQUEST_START, history))
    one_by_one = asyncio.run(sequential(seed_app, history))

    assert normalised(run.messages) == normalised(one_by_one)
    assert [r.outcome for r in runner_records.records] == [r.outcome for r in seed_records.records]
    assert [r.hook for r in run.records] == [f"hooks[{i}]" for i in range(len(hooks))]


@SETTINGS
@given(data=st.data(), hooks=hooks_strategy, key=st.sampled_from([None, KEY]))
def test_a_history_the_runner_wrote_counts_on_the_next_run(
    monkeypatch: pytest.MonkeyPatch,
    data: st.DataObject,
    hooks: list[dict[str, Any]],
    key: str | None,
) -> None:
    with_key(monkeypatch, key)
    history = [msg(**item) for item in data.draw(histories(key))]
    injector, _ = build([hook(**h) for h in hooks], version=0, concurrency=8)
    runner = injector.get(HookRunner)

    first = asyncio.run(runner.run(HookEvent.ON_REQUEST_START, history))
    second = asyncio.run(runner.run(HookEvent.ON_REQUEST_START, first.messages))

    # A hook's freshness is its identity's latest pair; another hook of the same identity may
    # write a later one, so the claim is about hooks whose identity is their own.
    identities = Counter(_identity(h) for h in hooks)
    wrote = {HookOutcome.INJECTED, HookOutcome.REPLACED}
    for config, before, after in zip(hooks, first.records, second.records, strict=True):
        if before.outcome not in wrote or identities[_identity(config)] > 1:
            continue
        if config["refresh_condition"] is not None:
            assert after.outcome == HookOutcome.SKIPPED_FRESH, (config, after)
        elif config["frequency"] == "append_if_changed":
            assert after.outcome == HookOutcome.REPLACED, (config, after)
    if key is not None:  # nothing the runner wrote is removed as unverified
        assert len(second.messages) >= len(first.messages)


def _identity(config: dict[str, Any]) -> tuple[str, str]:
    return config["tool_name"], repr(config["arguments"])


async def test_a_lone_tool_message_behind_a_new_pair_keeps_runner_and_seed_equal() -> None:
    earlier = answer("alpha", {}, 1)
    history = [
        msg(role="user", content="hi"),
        msg(role="tool", tool_call_id=synthetic_id("alpha", {}, earlier), content=earlier),
    ]
    hooks = [hook("alpha"), hook("beta")]
    runner_app, _ = build(hooks, version=0, concurrency=8)
    seed_app, _ = build(hooks, version=0, concurrency=8)

    run = await runner_app.get(HookRunner).run(HookEvent.ON_REQUEST_START, history)
    one_by_one = await sequential(seed_app, history)

    # SPEC 4: first-time pairs go after the first user message and the *pairs* behind it, in
    # manifest order; a lone tool message is not a pair, so both pairs go before it.
    roles = ["user", "assistant", "tool", "assistant", "tool", "tool"]
    assert [m.role for m in run.messages] == roles
    assert dumped(one_by_one) == dumped(run.messages)


message_dicts = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool", "developer"])},
    optional={
        "content": st.none() | st.text(max_size=8) | st.just([{"type": "text", "text": "hi"}]),
        "tool_call_id": st.none()
        | st.text(max_size=70)
        | st.sampled_from(
            [
                synthetic_id("alpha", {}, "x", ttl_expiry_seconds=0xFFFFFFFF),
                synthetic_id("alpha", {}, "x")[:-3],
                "ah_" + "f" * 80,
                synthetic_id("alpha", {}, "x") + "_t" + "9" * 10_000,
                synthetic_id("alpha", {}, "x") + "_s" + "0" * 12,
            ]
        ),
        "tool_calls": st.none()
        | st.lists(
            st.fixed_dictionaries(
                {"id": st.text(max_size=70), "type": st.just("function")},
                optional={"function": st.fixed_dictionaries({"name": st.text(max_size=6)})},
            ),
            max_size=3,
        ),
        "name": st.text(max_size=4),
    },
)


@SETTINGS
@given(
    raw=st.lists(message_dicts, max_size=10),
    hooks=hooks_strategy,
    key=st.sampled_from([None, KEY]),
)
def test_no_history_makes_the_runner_raise(
    monkeypatch: pytest.MonkeyPatch,
    raw: list[dict[str, Any]],
    hooks: list[dict[str, Any]],
    key: str | None,
) -> None:
    with_key(monkeypatch, key)
    injector, _ = build([hook(**h) for h in hooks], version=0, concurrency=4)
    run = asyncio.run(injector.get(HookRunner).run(HookEvent.ON_REQUEST_START, raw))
    assert len(run.records) == len(hooks)
    ordinary = [m for m in dumped([msg(**item) for item in raw]) if not _looks_synthetic(m)]
    assert all(m in dumped(run.messages) for m in ordinary)


def _looks_synthetic(message: dict[str, Any]) -> bool:
    ids = [message.get("tool_call_id")] + [c.get("id") for c in message.get("tool_calls") or []]
    return any(isinstance(i, str) and i.startswith("ah_") for i in ids)
