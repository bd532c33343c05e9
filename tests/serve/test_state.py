"""Both conversation stores, for real: SQLite files and a Redis server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from redis.asyncio import Redis

from agent_hooks.serve._sqlite import SqliteStore
from agent_hooks.serve._state import (
    STATE_TTL_SECONDS,
    ConversationStore,
    StateError,
    StateURLError,
    open_store,
)
from tests.serve.test_conversation import pair

PAIRS = [pair("clock", "12:00"), pair("kb", "ünïcode\nlines")]


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


async def test_saved_pairs_load_back_in_order(store: ConversationStore) -> None:
    assert await store.load("c1") == []
    await store.save("c1", PAIRS)
    assert await store.load("c1") == PAIRS
    assert await store.load("c2") == []


async def test_a_save_replaces_the_previous_pairs(store: ConversationStore) -> None:
    await store.save("c1", PAIRS)
    await store.save("c1", PAIRS[:1])
    assert await store.load("c1") == PAIRS[:1]


async def test_two_stores_on_one_url_share_conversations_under_concurrency(store_url: str) -> None:
    """Two handles stand for two proxy processes: each sees the other's latest save."""
    first, second = open_store(store_url), open_store(store_url)
    try:
        async with anyio.create_task_group() as group:
            for index in range(40):
                writer = first if index % 2 else second
                group.start_soon(writer.save, f"c{index}", PAIRS[: index % 3])
        for index in range(40):
            reader = second if index % 2 else first
            assert await reader.load(f"c{index}") == PAIRS[: index % 3]
    finally:
        await first.aclose()
        await second.aclose()


async def test_sqlite_conversations_expire_seven_days_after_the_last_save(tmp_path: Path) -> None:
    now = 1_700_000_000.0
    store = SqliteStore(tmp_path / "state.db", clock=lambda: now)
    await store.save("c1", PAIRS)
    now += STATE_TTL_SECONDS - 1
    assert await store.load("c1") == PAIRS
    await store.save("c1", PAIRS)  # the conversation was used again: its clock restarts
    now += STATE_TTL_SECONDS - 1
    assert await store.load("c1") == PAIRS
    now += 2
    assert await store.load("c1") == []
    await store.aclose()


async def test_redis_conversations_carry_a_seven_day_expiry(redis_url: str) -> None:
    store = open_store(redis_url)
    await store.save("c-ttl", PAIRS)
    client = Redis.from_url(redis_url)
    try:
        ttl = await client.ttl("agent-hooks:conversation:c-ttl")
    finally:
        await client.aclose()
        await store.aclose()
    assert STATE_TTL_SECONDS - 60 < ttl <= STATE_TTL_SECONDS


async def test_a_store_that_cannot_work_raises_a_state_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    sqlite = open_store(f"sqlite:///{tmp_path}/a-file/state.db")
    redis = open_store("redis://127.0.0.1:1/0")
    for broken in (sqlite, redis):
        with pytest.raises(StateError):
            await broken.load("c1")
        await broken.aclose()


@pytest.mark.parametrize("url", ["sqlite:///", "postgres://db/1", "state.db"])
def test_unknown_state_urls_name_the_accepted_forms(url: str) -> None:
    with pytest.raises(StateURLError, match="sqlite:///RELATIVE/PATH"):
        open_store(url)


def test_sqlite_paths_are_relative_unless_they_start_with_a_fourth_slash() -> None:
    assert open_store("sqlite:///state.db").path == Path("state.db")  # type: ignore[attr-defined]
    assert open_store("sqlite:////abs/state.db").path == Path("/abs/state.db")  # type: ignore[attr-defined]
