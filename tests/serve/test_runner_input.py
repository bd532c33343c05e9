"""The hook runner given role-only stand-ins for the messages it does not read, and the dicts
themselves for its hooks' context, writes the history it writes when given every message as a
model (SPEC 16: a model per message of a long history would pass 8x the body), and the messages
it left alone come back as the client's own dicts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks import HookEvent, HookRunner
from agent_hooks.messages import Message
from agent_hooks.serve._runner_input import RunnerInput
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


READING_HOOKS = [
    {"tool_name": "alpha", "arguments": {"q": "${last_user_message.content}"}},
    {"tool_name": "beta", "arguments": {"n": {"$eval": "len(messages)"}}},
    {"tool_name": "alpha", "arguments": {}, "condition": "messages[0].role == 'user'"},
]
"""Hooks whose arguments or condition read the history: their context comes from the dicts."""


@SETTINGS
@given(
    data=st.data(),
    hooks=hooks_strategy,
    reading=st.lists(st.sampled_from(READING_HOOKS), max_size=2),
    key=st.sampled_from([None, KEY]),
)
def test_stand_ins_give_the_history_every_model_gives(
    monkeypatch: pytest.MonkeyPatch,
    data: st.DataObject,
    hooks: list[dict[str, Any]],
    reading: list[dict[str, Any]],
    key: str | None,
) -> None:
    with_key(monkeypatch, key)
    history = data.draw(histories(key))
    history.append({"role": "user", "content": "go on"})
    injector, _ = build([hook(**h) for h in [*hooks, *reading]], version=0, concurrency=4)
    runner = injector.get(HookRunner)
    event = HookEvent.ON_REQUEST_START

    models = _models(history)
    expected = asyncio.run(runner.run(event, models)).messages
    given_ = RunnerInput(history)
    run = runner.run_hooks(runner.hooks, event, given_.models, context_history=history)
    got = given_.history(asyncio.run(run).messages)

    assert normalised(_models(got)) == normalised(expected)
    dict_of = {id(model): message for model, message in zip(models, history, strict=True)}
    ids = {id(message) for message in history}
    assert [m for m in got if id(m) in ids] == [
        dict_of[id(m)] for m in expected if id(m) in dict_of
    ]


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
    models = RunnerInput(history).models
    assert [model.to_openai() for model in models[3:]] == history[3:]
    assert [model.to_openai() for model in models[:3]] == [
        {"role": "user"},
        {"role": "assistant"},
        {"role": "tool"},
    ]
    assert models[0] is RunnerInput([{"role": "user", "content": "other"}]).models[0]
