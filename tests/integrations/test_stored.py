"""The pairs the store-backed adapters keep: where they go back, what a client may not send."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_hooks.integrations._stored import (
    RunPairs,
    StoredPairs,
    keeper_for,
    synthetic_pairs,
    with_stored_pairs,
    without_client_pairs,
)
from agent_hooks.messages import Message, ToolCall
from agent_hooks.state import ConversationStore, open_store
from agent_hooks.testing import run_manifest

MANIFEST = {
    "toolsets": [{"type": "internal", "name": "host", "tools": ["current_time"]}],
    "hooks": [{"event": "on_request_start", "kind": "tool_call", "tool_name": "current_time"}],
}


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[ConversationStore]:
    opened = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    yield opened
    await opened.aclose()


async def a_pair() -> list[Message]:
    run = await run_manifest(MANIFEST, [{"role": "user", "content": "hi"}], now=1_700_000_000)
    return run.messages[1:3]


async def test_stored_pairs_go_back_after_the_first_user_message_once() -> None:
    pair = await a_pair()
    stored = synthetic_pairs(pair)
    history = [
        Message.model_validate({"role": "system", "content": "be brief"}),
        Message.model_validate({"role": "user", "content": "hi"}),
        Message.model_validate({"role": "assistant", "content": "hello"}),
    ]
    again = with_stored_pairs(history, stored)
    assert [m.to_openai() for m in again] == [
        history[0].to_openai(),
        history[1].to_openai(),
        *stored[0],
        history[2].to_openai(),
    ]
    assert again[0] is history[0]
    assert with_stored_pairs(again, stored) == again  # a pair already there is not added twice


async def test_a_client_pair_is_removed_and_ordinary_calls_are_kept() -> None:
    call, answer = await a_pair()
    ordinary = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    calls = [*(call.tool_calls or []), ToolCall.model_validate(ordinary)]
    both = call.model_copy(update={"tool_calls": calls})
    history = [Message.model_validate({"role": "user", "content": "hi"}), both, answer]
    kept, removed = without_client_pairs(history)
    assert removed == 1
    assert [m.to_openai() for m in kept] == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [ordinary]},
    ]


async def test_a_call_without_a_credential_keeps_nothing_where_the_framework_has_them(
    store: ConversationStore,
) -> None:
    fallback = RunPairs()
    request = {"conversation_id": "c1"}
    assert keeper_for(store, request, fallback, needs_tenant=True) is fallback
    assert keeper_for(store, {}, fallback, tenant="key") is fallback
    assert keeper_for(None, request, fallback, tenant="key") is fallback
    kept = keeper_for(store, request, fallback, tenant="key", needs_tenant=True)
    assert kept == StoredPairs(store, "c1", "key")


async def test_two_tenants_never_see_each_others_pairs(store: ConversationStore) -> None:
    pairs = synthetic_pairs(await a_pair())
    ann = keeper_for(store, {"conversation_id": "c1"}, RunPairs(), tenant="key-ann")
    bob = keeper_for(store, {"conversation_id": "c1"}, RunPairs(), tenant="key-bob")
    await ann.save(pairs)
    assert await ann.load() == pairs
    assert await bob.load() == []
