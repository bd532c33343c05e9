"""The Redis conversation store, shared by proxy replicas behind a load balancer.

Each conversation is one string key holding its pairs as JSON, with Redis's own expiry doing the
seven-day clean-up. Socket timeouts and no retries keep a down or blackholed server inside the
store's 2 s bound; the client reconnects by itself once the server answers again.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError

from agent_hooks.state._store import (
    CALL_TIMEOUT_SECONDS,
    STATE_TTL_SECONDS,
    ConversationStore,
    StateError,
)

__all__ = ["RedisStore"]

_KEY_PREFIX = "agent-hooks:conversation:"


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
        self._client: Redis = Redis.from_url(
            url,
            socket_timeout=CALL_TIMEOUT_SECONDS,
            socket_connect_timeout=CALL_TIMEOUT_SECONDS,
            retry=Retry(NoBackoff(), retries=0),
        )

    async def _read(self, key: str) -> str | bytes | None:
        try:
            text: str | bytes | None = await self._client.get(_KEY_PREFIX + key)
        except RedisError as exc:
            raise StateError(f"{type(exc).__name__}: {exc}") from exc
        return text

    async def _write(self, key: str, text: str) -> None:
        try:
            await self._client.set(_KEY_PREFIX + key, text, ex=STATE_TTL_SECONDS)
        except RedisError as exc:
            raise StateError(f"{type(exc).__name__}: {exc}") from exc

    async def _close(self) -> None:
        await self._client.aclose()
