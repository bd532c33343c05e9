"""The store-backed adapters keep their pairs through the conversation core (SPEC 15): the
core's own behaviours are pinned in tests/state/test_conversation.py for ``Message`` histories
too; these pin the adapters' wiring: keys, tenants, and a turn-to-turn run."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent_hooks.integrations._stored import RunPairs, StoredPairs, keeper_for, run_with_pairs
from agent_hooks.messages import Message
from agent_hooks.state import ConversationStore, open_store
from agent_hooks.state._conversation import ConversationSource, conversation_key
from tests.integrations._kit import MEMORY, hooks_app


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[ConversationStore]:
    opened = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    yield opened
    await opened.aclose()


def history(*texts: str) -> list[Message]:
    roles = ["user", "assistant"]
    return [
        Message.model_validate({"role": roles[index % 2], "content": text})
        for index, text in enumerate(texts)
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
    key = conversation_key(ConversationSource("conversation", "c1"), None)
    assert kept == StoredPairs(store, key, "key")


def test_the_conversation_id_is_kept_only_as_a_digest(store: ConversationStore) -> None:
    long = "c" * 100_000
    kept = keeper_for(store, {"conversation_id": long}, RunPairs(), tenant="key")
    assert isinstance(kept, StoredPairs)
    assert long[:100] not in kept.conversation
    assert len(kept.conversation) < 100


async def test_turns_of_a_conversation_reapply_pairs_where_they_were(
    store: ConversationStore,
) -> None:
    async with hooks_app("memories") as kit:
        keeper = keeper_for(store, {"conversation_id": "c1"}, RunPairs(), tenant="key-ann")
        turn1 = history("hi")
        run1, save1 = await run_with_pairs(kit.runner, turn1, keeper, None, from_client=True)
        await save1()
        assert [m.content for m in run1.messages] == ["hi", None, MEMORY]
        turn2 = history("hi", "hello", "what do I like?")
        run2, save2 = await run_with_pairs(kit.runner, turn2, keeper, None, from_client=True)
        await save2()
        assert [m.to_openai() for m in run2.messages] == [
            turn2[0].to_openai(),
            *(m.to_openai() for m in run1.messages[1:]),
            turn2[1].to_openai(),
            turn2[2].to_openai(),
        ]
        assert len(kit.tools.memory.calls) == 1  # fresh: the stored pair was seen
        other = keeper_for(store, {"conversation_id": "c1"}, RunPairs(), tenant="key-bob")
        assert await other.load() == []
        edited = history("hello there")  # the anchor message changed: the hooks decide afresh
        run3, _ = await run_with_pairs(kit.runner, edited, keeper, None, from_client=True)
        assert [m.content for m in run3.messages] == ["hello there", None, MEMORY]
        assert len(kit.tools.memory.calls) == 2


async def test_a_pair_of_a_hook_no_longer_in_the_manifest_is_not_reapplied(
    store: ConversationStore,
) -> None:
    keeper = keeper_for(store, {"conversation_id": "c1"}, RunPairs(), tenant="key")
    async with hooks_app("memories") as kit:
        _, save = await run_with_pairs(kit.runner, history("hi"), keeper, None, from_client=True)
        await save()
    async with hooks_app("profile") as kit:
        run, _ = await run_with_pairs(kit.runner, history("hi"), keeper, None, from_client=True)
        assert MEMORY not in [m.content for m in run.messages]
