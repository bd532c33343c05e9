"""What a store writes: only what changed (or is due for a new expiry), and purges in batches."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from redis.asyncio import Redis

from agent_hooks.state import _store as store_module
from agent_hooks.state import open_store
from agent_hooks.state._sqlite import SqliteStore
from agent_hooks.state._store import REFRESH_AFTER_SECONDS, STATE_TTL_SECONDS, Pair, state_key
from tests._support import pair

PAIRS = [pair("clock", "12:00"), pair("kb", "facts")]
CHANGED = [pair("clock", "12:05"), pair("kb", "facts")]
TENANT = "Bearer sk-tenant-0001"
START = 1_700_000_000.0


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def expiry(path: Path, conversation: str) -> float:
    with sqlite3.connect(path) as db:
        row = db.execute(
            "SELECT expires_at FROM conversations WHERE id = ?",
            (state_key(TENANT, conversation),),
        ).fetchone()
    return float(row[0])


async def test_an_unchanged_conversation_is_not_written_again_within_the_hour(
    tmp_path: Path,
) -> None:
    clock = Clock()
    store = SqliteStore(tmp_path / "state.db", clock=clock)
    await store.save("c1", PAIRS, tenant=TENANT)
    clock.now += REFRESH_AFTER_SECONDS - 1
    assert await store.load("c1", tenant=TENANT) == PAIRS
    await store.save("c1", PAIRS, tenant=TENANT)
    await store.aclose()
    assert expiry(tmp_path / "state.db", "c1") == START + STATE_TTL_SECONDS


async def test_an_unchanged_conversation_gets_a_new_expiry_once_its_entry_is_an_hour_old(
    tmp_path: Path,
) -> None:
    clock = Clock()
    store = SqliteStore(tmp_path / "state.db", clock=clock)
    await store.save("c1", PAIRS, tenant=TENANT)
    clock.now += REFRESH_AFTER_SECONDS + 1
    assert await store.load("c1", tenant=TENANT) == PAIRS
    await store.save("c1", PAIRS, tenant=TENANT)
    await store.aclose()
    assert expiry(tmp_path / "state.db", "c1") == clock.now + STATE_TTL_SECONDS


async def test_pairs_saved_as_loaded_are_not_encoded_again_until_their_hour_is_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn whose hooks were all fresh saves the very pairs it loaded: while the entry is
    younger than an hour the store does not even encode them; after it, their expiry moves."""
    clock = Clock()
    store = SqliteStore(tmp_path / "state.db", clock=clock)
    await store.save("c1", PAIRS, tenant=TENANT)
    clock.now += REFRESH_AFTER_SECONDS - 1
    loaded = await store.load("c1", tenant=TENANT)
    encoded: list[object] = []
    real_encode = store_module._encode

    def counting_encode(pairs: list[Pair]) -> str:
        encoded.append(pairs)
        return real_encode(pairs)

    monkeypatch.setattr(store_module, "_encode", counting_encode)
    await store.save("c1", loaded, tenant=TENANT, as_loaded=True)
    assert encoded == []
    assert expiry(tmp_path / "state.db", "c1") == START + STATE_TTL_SECONDS
    clock.now += 2
    await store.save("c1", loaded, tenant=TENANT, as_loaded=True)
    await store.aclose()
    assert len(encoded) == 1
    assert expiry(tmp_path / "state.db", "c1") == clock.now + STATE_TTL_SECONDS


async def test_changed_pairs_are_always_written(tmp_path: Path) -> None:
    clock = Clock()
    store = SqliteStore(tmp_path / "state.db", clock=clock)
    await store.save("c1", PAIRS, tenant=TENANT)
    clock.now += 1
    await store.save("c1", CHANGED, tenant=TENANT)
    assert await store.load("c1", tenant=TENANT) == CHANGED
    await store.aclose()
    assert expiry(tmp_path / "state.db", "c1") == clock.now + STATE_TTL_SECONDS


async def test_overlapping_turns_of_an_unchanged_conversation_write_nothing(
    tmp_path: Path,
) -> None:
    """Many requests of one conversation at once (a busy agent, a benchmark): each load that
    starts before another's save must not make the store forget what it holds."""
    clock = Clock()
    store = SqliteStore(tmp_path / "state.db", clock=clock)
    await store.save("c1", PAIRS, tenant=TENANT)
    clock.now += 1
    assert await store.load("c1", tenant=TENANT) == PAIRS  # the first turn's load
    second = asyncio.create_task(store.load("c1", tenant=TENANT))
    await asyncio.sleep(0)  # the second turn's load is under way...
    await store.save("c1", PAIRS, tenant=TENANT)  # ...when the first turn saves
    assert await second == PAIRS
    await store.save("c1", PAIRS, tenant=TENANT)
    await store.aclose()
    assert expiry(tmp_path / "state.db", "c1") == START + STATE_TTL_SECONDS  # never rewritten


async def test_what_another_process_wrote_since_is_overwritten(tmp_path: Path) -> None:
    """The skip compares with what this store last read or wrote: a load refreshes it."""
    url = f"sqlite:///{tmp_path}/state.db"
    first, second = open_store(url), open_store(url)
    await first.save("c1", PAIRS, tenant=TENANT)
    await second.save("c1", CHANGED, tenant=TENANT)
    assert await first.load("c1", tenant=TENANT) == CHANGED
    await first.save("c1", PAIRS, tenant=TENANT)
    assert await second.load("c1", tenant=TENANT) == PAIRS
    await first.aclose()
    await second.aclose()


async def test_redis_keeps_the_expiry_of_an_unchanged_conversation_until_the_hour_is_up(
    redis_url: str,
) -> None:
    store = open_store(redis_url)
    client = Redis.from_url(redis_url)
    key = f"agent-hooks:conversation:{state_key(TENANT, 'c-redis')}"
    try:
        await store.save("c-redis", PAIRS, tenant=TENANT)
        recent = STATE_TTL_SECONDS - 60  # as if saved a minute ago
        await client.expire(key, recent)
        assert await store.load("c-redis", tenant=TENANT) == PAIRS
        await store.save("c-redis", PAIRS, tenant=TENANT)
        assert await client.ttl(key) <= recent
        old = STATE_TTL_SECONDS - int(REFRESH_AFTER_SECONDS) - 60  # saved over an hour ago
        await client.expire(key, old)
        assert await store.load("c-redis", tenant=TENANT) == PAIRS
        await store.save("c-redis", PAIRS, tenant=TENANT)
        assert await client.ttl(key) > STATE_TTL_SECONDS - 60
    finally:
        await client.aclose()
        await store.aclose()


async def test_expired_conversations_are_purged_in_batches_and_live_ones_kept(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.db"
    store = SqliteStore(path, clock=Clock())
    store.open()
    with sqlite3.connect(path) as db:
        db.executemany(
            "INSERT INTO conversations (id, pairs, expires_at) VALUES (?, '[]', ?)",
            ((f"old-{i}", START - 1) for i in range(1_234)),
        )
    await store.save("live", PAIRS, tenant=TENANT)  # the first save starts the purge
    await store.aclose()  # lets a purge under way finish
    with sqlite3.connect(path) as db:
        remaining = db.execute("SELECT count(*) FROM conversations").fetchone()[0]
    assert remaining == 1
