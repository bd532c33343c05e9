"""The Redis conversation store, shared by proxy replicas behind a load balancer.

Each conversation is one string key holding its pairs as JSON, with Redis's own expiry doing
the seven-day clean-up.
"""

from __future__ import annotations

from redis.asyncio import Redis
from redis.exceptions import RedisError

from agent_hooks.serve._conversation import Pair
from agent_hooks.serve._state import STATE_TTL_SECONDS, StateError, decode_pairs, encode_pairs

__all__ = ["RedisStore"]

_KEY_PREFIX = "agent-hooks:conversation:"


class RedisStore:
    """Conversations in Redis; the client connects on first use."""

    def __init__(self, url: str) -> None:
        self._client: Redis = Redis.from_url(url)

    async def load(self, conversation_id: str) -> list[Pair]:
        try:
            text: bytes | str | None = await self._client.get(_KEY_PREFIX + conversation_id)
        except RedisError as exc:
            raise StateError(f"redis store: {type(exc).__name__}: {exc}") from exc
        return decode_pairs(text) if text is not None else []

    async def save(self, conversation_id: str, pairs: list[Pair]) -> None:
        key, text = _KEY_PREFIX + conversation_id, encode_pairs(pairs)
        try:
            await self._client.set(key, text, ex=STATE_TTL_SECONDS)
        except RedisError as exc:
            raise StateError(f"redis store: {type(exc).__name__}: {exc}") from exc

    async def aclose(self) -> None:
        await self._client.aclose()
