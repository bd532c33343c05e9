"""Both conversation stores, for real: SQLite files and a Redis server."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from redis.asyncio import Redis

import agent_hooks.state
from agent_hooks.state import ConversationStore, open_store
from agent_hooks.state._conversation import BEFORE_ALL, StoredPair
from agent_hooks.state._sqlite import SqliteStore
from agent_hooks.state._store import (
    MAX_PAIRS,
    STATE_TTL_SECONDS,
    WAIT,
    StateError,
    state_key,
)
from tests._support import pair, synthetic_id

PAIRS = [pair("clock", "12:00"), pair("kb", "ünïcode\nlines")]
ALICE, BOB = "Bearer sk-alice-0001", "Bearer sk-bob-0002"


@pytest.fixture(params=["sqlite", "redis"])
async def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/state/conversations.db"  # the parent is created
    url: str = request.getfixturevalue("redis_url")
    client = Redis.from_url(url)
    await client.flushdb()
    await client.aclose()
    return url


@pytest.fixture
async def store(store_url: str) -> AsyncIterator[ConversationStore]:
    opened = open_store(store_url)
    yield opened
    await opened.aclose()


def test_the_package_exports_the_store_and_its_opener_only() -> None:
    assert agent_hooks.state.__all__ == ["ConversationStore", "open_store"]


async def test_saved_pairs_load_back_in_order(store: ConversationStore) -> None:
    assert await store.load("c1", tenant=ALICE) == []
    await store.save("c1", PAIRS, tenant=ALICE)
    assert await store.load("c1", tenant=ALICE) == PAIRS
    assert await store.load("c2", tenant=ALICE) == []


async def test_a_save_replaces_the_previous_pairs(store: ConversationStore) -> None:
    await store.save("c1", PAIRS, tenant=None)
    await store.save("c1", PAIRS[:1], tenant=None)
    assert await store.load("c1", tenant=None) == PAIRS[:1]


async def test_a_shared_load_of_a_text_loaded_before_decodes_nothing_and_a_changed_one_is(
    store_url: str,
) -> None:
    """A fresh turn loads the text it loaded last turn: a shared load gets the same pair objects
    back (read only), in a list of the caller's own; another process's save is seen at once."""
    writer, reader = open_store(store_url), open_store(store_url)
    await writer.save("c1", PAIRS, tenant=ALICE)
    first = await reader.load_entries("c1", tenant=ALICE, shared=True)
    first.clear()  # the caller's list, not the store's
    again = await reader.load_entries("c1", tenant=ALICE, shared=True)
    assert [entry.pair for entry in again] == PAIRS
    assert again[0] is (await reader.load_entries("c1", tenant=ALICE, shared=True))[0]
    await writer.save("c1", PAIRS[:1], tenant=ALICE)
    assert await reader.load("c1", tenant=ALICE) == PAIRS[:1]
    await writer.aclose()
    await reader.aclose()


async def test_what_a_load_returns_is_the_callers_own(store: ConversationStore) -> None:
    """A host that edits the pairs it loaded changes nothing a later load returns, its own or
    another tenant's with the very same stored text, shared loads included."""
    await store.save("c1", PAIRS, tenant=ALICE)
    await store.save("c1", PAIRS, tenant=BOB)  # another tenant, the same pairs: the same text
    await store.load_entries("c1", tenant=BOB, shared=True)  # the text is now kept decoded
    loaded = await store.load("c1", tenant=ALICE)
    loaded[0][1]["content"] = "edited by Alice's host"
    entries = await store.load_entries("c1", tenant=ALICE)
    entries[0].tool["content"] = "edited again"
    assert await store.load("c1", tenant=BOB) == PAIRS
    assert await store.load("c1", tenant=ALICE) == PAIRS
    assert [e.pair for e in await store.load_entries("c1", tenant=BOB, shared=True)] == PAIRS


async def test_tenants_never_see_each_others_conversations(store: ConversationStore) -> None:
    await store.save("conv-123", PAIRS, tenant=ALICE)
    assert await store.load("conv-123", tenant=BOB) == []
    assert await store.load("conv-123", tenant=None) == []
    await store.save("conv-123", PAIRS[:1], tenant=BOB)
    assert await store.load("conv-123", tenant=ALICE) == PAIRS


async def test_redis_keys_hold_the_tenant_only_as_its_sha256(redis_url: str) -> None:
    client = Redis.from_url(redis_url)
    await client.flushdb()
    store = open_store(redis_url)
    try:
        await store.save("conv-1", PAIRS, tenant=ALICE)
        keys = [key.decode() for key in await client.keys("*")]
    finally:
        await store.aclose()
        await client.aclose()
    digest = hashlib.sha256(ALICE.encode()).hexdigest()
    assert keys == [f"agent-hooks:conversation:{digest}:conv-1"]


async def test_the_sqlite_file_holds_the_tenant_only_as_its_sha256(tmp_path: Path) -> None:
    store = open_store(f"sqlite:///{tmp_path}/state.db")
    await store.save("conv-1", PAIRS, tenant=ALICE)
    await store.aclose()
    data = (tmp_path / "state.db").read_bytes()
    assert b"sk-alice" not in data
    assert hashlib.sha256(ALICE.encode()).hexdigest().encode() in data


async def test_every_pair_forwarded_is_kept_in_order_with_its_anchor_and_form(
    store: ConversationStore,
) -> None:
    """SPEC 15: not only the latest of a hook, so each goes back where it was forwarded."""
    old, other, new = pair("clock", "11:00"), pair("kb", "facts"), pair("clock", "12:00")
    entries = [
        StoredPair(*old, 0, "d" * 64),
        StoredPair(*other, BEFORE_ALL),
        StoredPair(*new, 3, "e" * 64, "text"),
    ]
    await store.save("c1", [*entries, StoredPair(*old, 0, "d" * 64)], tenant=ALICE)
    assert await store.load("c1", tenant=ALICE) == [other, new, old]  # each call id once
    assert await store.load_entries("c1", tenant=ALICE) == [*entries[1:], entries[0]]


async def test_pairs_stored_before_anchors_existed_still_load(store: ConversationStore) -> None:
    await store._write({state_key(ALICE, "c1"): json.dumps([list(pair("kb", "facts"))])})
    assert await store.load_entries("c1", tenant=ALICE) == [StoredPair(*pair("kb", "facts"))]


async def test_arguments_are_part_of_a_pairs_identity(store: ConversationStore) -> None:
    paris, rome = _pair("weather", "sunny", city="paris"), _pair("weather", "rain", city="rome")
    await store.save("c1", [paris, rome], tenant=ALICE)
    assert await store.load("c1", tenant=ALICE) == [paris, rome]


async def test_at_most_256_pairs_are_kept_the_oldest_dropped(store: ConversationStore) -> None:
    pairs = [_pair("kb", f"fact {n}", topic=n) for n in range(MAX_PAIRS + 10)]
    await store.save("c1", pairs, tenant=ALICE)
    assert await store.load("c1", tenant=ALICE) == pairs[-MAX_PAIRS:]


async def test_pairs_that_are_not_synthetic_are_never_stored(store: ConversationStore) -> None:
    ordinary = _pair("kb", "facts")
    ordinary[0]["tool_calls"][0]["id"] = ordinary[1]["tool_call_id"] = "call_abc123"
    await store.save("c1", [ordinary, *PAIRS], tenant=ALICE)
    assert await store.load("c1", tenant=ALICE) == PAIRS


async def test_two_stores_on_one_url_share_conversations_under_concurrency(store_url: str) -> None:
    """Two handles stand for two proxy processes: each sees the other's latest save."""
    first, second = open_store(store_url), open_store(store_url)
    try:
        async with anyio.create_task_group() as group:
            for index in range(40):
                writer = first if index % 2 else second
                group.start_soon(_save, writer, f"c{index}", PAIRS[: index % 3])
        for index in range(40):
            reader = second if index % 2 else first
            assert await reader.load(f"c{index}", tenant=ALICE) == PAIRS[: index % 3]
    finally:
        await first.aclose()
        await second.aclose()


async def test_sqlite_conversations_expire_seven_days_after_the_last_save(tmp_path: Path) -> None:
    now = 1_700_000_000.0
    store = SqliteStore(tmp_path / "state.db", clock=lambda: now)
    await store.save("c1", PAIRS, tenant=ALICE)
    now += STATE_TTL_SECONDS - 1
    assert await store.load("c1", tenant=ALICE) == PAIRS
    await store.save("c1", PAIRS, tenant=ALICE)  # the conversation was used again
    now += STATE_TTL_SECONDS - 1
    assert await store.load("c1", tenant=ALICE) == PAIRS
    now += 2
    assert await store.load("c1", tenant=ALICE) == []
    await store.aclose()


async def test_a_quiet_sqlite_file_is_not_read_again_for_an_entry_it_holds_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shared load of an entry read before, from a file nobody wrote since and not in the
    last 2 s (SPEC 17: a fresh turn's load), answers without a read. Another process's write
    is seen at the next load, whenever it came; so is the entry's expiry."""
    path = tmp_path / "state.db"
    now = time.time()
    writer, reader = SqliteStore(path), SqliteStore(path, clock=lambda: now)
    await writer.save("c1", PAIRS, tenant=ALICE)
    _quiet(path, seconds_ago=60)
    first = await reader.load_entries("c1", tenant=ALICE, shared=True)

    async def unreadable(key: str) -> None:
        raise StateError("the read was made")

    with monkeypatch.context() as patched:
        patched.setattr(reader, "_read", unreadable)
        patched.setattr(reader, "_read_at_once", lambda key: WAIT)
        again = await reader.load_entries("c1", tenant=ALICE, shared=True)
    assert [entry.pair for entry in again] == PAIRS
    assert again[0] is first[0]

    await writer.save("c1", PAIRS[:1], tenant=ALICE)
    assert await _shared_load(reader) == PAIRS[:1]  # written just now: read
    _quiet(path, seconds_ago=50)
    assert await _shared_load(reader) == PAIRS[:1]
    await writer.save("c1", PAIRS[1:], tenant=ALICE)
    _quiet(path, seconds_ago=40)  # written, then quiet again before the next load
    assert await _shared_load(reader) == PAIRS[1:]

    now += STATE_TTL_SECONDS + 1
    assert await reader.load_entries("c1", tenant=ALICE, shared=True) == []
    await writer.aclose()
    await reader.aclose()


async def _shared_load(store: ConversationStore) -> list[Any]:
    return [entry.pair for entry in await store.load_entries("c1", tenant=ALICE, shared=True)]


def _quiet(path: Path, *, seconds_ago: int) -> None:
    """Date the file's last write back, as if nobody had written it for ``seconds_ago``."""
    then = time.time_ns() - seconds_ago * 1_000_000_000
    os.utime(path, ns=(then, then))


async def test_redis_conversations_carry_a_seven_day_expiry(redis_url: str) -> None:
    store = open_store(redis_url)
    await store.save("c-ttl", PAIRS, tenant=None)
    client = Redis.from_url(redis_url)
    try:
        ttl = await client.ttl("agent-hooks:conversation:-:c-ttl")
    finally:
        await client.aclose()
        await store.aclose()
    assert STATE_TTL_SECONDS - 60 < ttl <= STATE_TTL_SECONDS


async def test_an_entry_another_program_wrote_loads_as_no_state(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    client = Redis.from_url(redis_url)
    await client.set("agent-hooks:conversation:-:foreign", "not json")
    await client.aclose()
    store = open_store(redis_url)
    assert await store.load("foreign", tenant=None) == []
    await store.aclose()
    assert [r.levelname for r in caplog.records if r.name == "agent_hooks.state"] == ["ERROR"]


async def test_a_closed_store_says_so(store: ConversationStore) -> None:
    await store.aclose()
    await store.aclose()  # idempotent
    with pytest.raises(RuntimeError, match="is closed"):
        await store.load("c1", tenant=None)


@pytest.mark.parametrize("url", ["sqlite:///", "postgres://db/1", "state.db"])
def test_unknown_state_urls_name_the_accepted_forms(url: str) -> None:
    with pytest.raises(ValueError, match="sqlite:///RELATIVE/PATH"):
        open_store(url)


def test_a_sqlite_file_that_cannot_be_created_fails_at_open(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    with pytest.raises(OSError, match="a-file"):
        open_store(f"sqlite:///{tmp_path}/a-file/state.db")


def test_sqlite_paths_are_relative_unless_they_start_with_a_fourth_slash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    relative = open_store("sqlite:///state.db")
    absolute = open_store(f"sqlite:///{tmp_path}/abs/state.db")
    assert relative.path == Path("state.db")  # type: ignore[attr-defined]
    assert absolute.path == tmp_path / "abs" / "state.db"  # type: ignore[attr-defined]
    assert (tmp_path / "state.db").exists()
    assert (tmp_path / "abs" / "state.db").exists()


def _pair(tool: str, content: str, **arguments: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    call_id = synthetic_id(tool, arguments, content)
    function = {"name": tool, "arguments": json.dumps(arguments)}
    return (
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "function": function}],
        },
        {"role": "tool", "tool_call_id": call_id, "content": content},
    )


async def _save(store: ConversationStore, conversation: str, pairs: Any) -> None:
    await store.save(conversation, pairs, tenant=ALICE)
