"""The Redis conversation store, shared by proxy replicas behind a load balancer.

Each conversation is one string key holding its pairs as JSON, with Redis's own expiry doing the
seven-day clean-up. Socket timeouts keep a blackholed server inside the store's 2 s bound; a
connection error is retried once on a new connection, so a restarted Redis is used again at once
instead of failing once per stale pooled connection. The pool is bounded (:data:`MAX_CONNECTIONS`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError

from agent_hooks.state._store import (
    CALL_TIMEOUT_SECONDS,
    STATE_TTL_SECONDS,
    ConversationStore,
    StateError,
)

__all__ = ["RedisStore"]

_KEY_PREFIX = "agent-hooks:conversation:"

MAX_CONNECTIONS = 32
"""Connections to Redis at most: calls beyond them wait their turn (within the 2 s bound)
instead of opening one connection, and keeping one descriptor, per concurrent request."""


class RedisStore(ConversationStore):
    """Conversations in Redis; the client connects on first use, so a Redis that is down at
    start only costs state until it answers."""

    def __init__(
        self,
        url: str,
        *,
        on_error: Callable[[], None] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(name="redis store", on_error=on_error, monotonic=monotonic)
        pool = BlockingConnectionPool.from_url(
            url,
            max_connections=MAX_CONNECTIONS,
            timeout=CALL_TIMEOUT_SECONDS,
            socket_timeout=CALL_TIMEOUT_SECONDS,
            socket_connect_timeout=CALL_TIMEOUT_SECONDS,
            # A pooled connection to a Redis that restarted fails once: retried at once on a new
            # connection. Timeouts are not retried (the 2 s bound is already spent).
            retry=Retry(NoBackoff(), retries=1, supported_errors=(RedisConnectionError,)),
        )
        self._client: Redis = Redis.from_pool(pool)

    async def _read(self, key: str) -> tuple[str | bytes, float] | None:
        """The entry and its expiry, in one round trip (a pipeline of GET and PTTL)."""
        try:
            async with self._client.pipeline(transaction=False) as pipeline:
                pipeline.get(_KEY_PREFIX + key)
                pipeline.pttl(_KEY_PREFIX + key)
                text, milliseconds = await pipeline.execute()
        except RedisError as exc:
            raise StateError(f"{type(exc).__name__}: {exc}") from exc
        if text is None:
            return None
        # PTTL is -1 for a key without expiry (another program wrote it): never skip its save.
        left = milliseconds / 1000 if milliseconds >= 0 else 0.0
        return text, self._clock() + left

    async def _write(self, entries: Mapping[str, str]) -> None:
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for key, text in entries.items():
                    pipe.set(_KEY_PREFIX + key, text, ex=STATE_TTL_SECONDS)
                await pipe.execute()
        except RedisError as exc:
            raise StateError(f"{type(exc).__name__}: {exc}") from exc

    async def _ping(self) -> None:
        try:
            await self._client.ping()
        except RedisError as exc:
            raise StateError(f"{type(exc).__name__}: {exc}") from exc

    async def _close(self) -> None:
        await self._client.aclose()
