"""The hook runner given role-only stand-ins for the messages it does not read writes the
history it writes when given every message as a model (SPEC 16: a model per message of a long
history would pass 8x the body), and the messages it left alone come back as the client's own
dicts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks import HookEvent, HookRunner
from agent_hooks.messages import Message
from agent_hooks.serve._runner_input import RunnerInput, reads_history
from tests._support.manifests import hook
from tests.runtime.test_equivalence import (
    KEY,
    SETTINGS,
    build,
    histories,
    hooks_strategy,
    normalised,
    with_key,
)

pytestmark = pytest.mark.usefixtures("preview_on")


@SETTINGS
@given(data=st.data(), hooks=hooks_strategy, key=st.sampled_from([None, KEY]))
def test_stand_ins_give_the_history_every_model_gives(
    monkeypatch: pytest.MonkeyPatch,
    data: st.DataObject,
    hooks: list[dict[str, Any]],
    key: str | None,
) -> None:
    with_key(monkeypatch, key)
    history = data.draw(histories(key))
    history.append({"role": "user", "content": "go on"})
    injector, _ = build([hook(**h) for h in hooks], version=0, concurrency=4)
    runner = injector.get(HookRunner)
    event = HookEvent.ON_REQUEST_START

    every = RunnerInput(history, whole=True)
    expected = every.history(asyncio.run(runner.run(event, every.models)).messages)
    given_ = RunnerInput(history, whole=False)
    got = given_.history(asyncio.run(runner.run(event, given_.models)).messages)

    assert normalised(_models(got)) == normalised(_models(expected))
    ids = {id(message) for message in history}
    assert [m for m in got if id(m) in ids] == [m for m in expected if id(m) in ids]


def _models(history: list[dict[str, Any]]) -> list[Message]:
    return [Message.model_validate(message) for message in history]


def test_only_messages_with_a_synthetic_looking_id_are_built() -> None:
    call = {"id": "ah_0123abcd_a1b2c3", "type": "function", "function": {"name": "clock"}}
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [{**call, "id": "call_1"}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "noon"},
    ]
    models = RunnerInput(history, whole=False).models
    assert [model.to_openai() for model in models[3:]] == history[3:]
    assert [model.to_openai() for model in models[:3]] == [
        {"role": "user"},
        {"role": "assistant"},
        {"role": "tool"},
    ]
    assert models[0] is RunnerInput([{"role": "user", "content": "other"}], whole=False).models[0]


def test_hooks_whose_arguments_or_condition_read_the_history_get_every_message() -> None:
    injector, _ = build(
        [hook(tool_name="alpha", arguments={"q": "${last_user_message.content}"})],
        version=0,
        concurrency=1,
    )
    runner = injector.get(HookRunner)
    assert reads_history(runner, HookEvent.ON_REQUEST_START)
    assert not reads_history(runner, HookEvent.ON_COMPLETION)
    history = [{"role": "user", "content": "hi"}]
    assert RunnerInput(history, whole=True).models[0].to_openai() == history[0]
