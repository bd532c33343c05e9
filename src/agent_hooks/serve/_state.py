"""Where the proxy keeps each conversation's synthetic pairs between requests.

Two real stores behind one small protocol: SQLite (the default; a file, zero set-up, safe for
several processes on one machine) and Redis (shared by replicas behind a load balancer). A
conversation's pairs live at most :data:`STATE_TTL_SECONDS` after its last saved request.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol

from agent_hooks.serve._conversation import Pair

__all__ = [
    "DEFAULT_STATE_URL",
    "STATE_TTL_SECONDS",
    "ConversationStore",
    "StateError",
    "StateURLError",
    "check_state_url",
    "decode_pairs",
    "encode_pairs",
    "open_store",
]

STATE_TTL_SECONDS = 7 * 24 * 60 * 60
DEFAULT_STATE_URL = "sqlite:///agent-hooks-state.db"
_SQLITE = "sqlite:///"


class StateURLError(ValueError):
    """``--state`` names no store we have; the message shows the accepted forms."""

    def __init__(self, url: str) -> None:
        super().__init__(
            f"unsupported --state {url!r}: use sqlite:///RELATIVE/PATH, sqlite:////ABSOLUTE/PATH"
            " or redis://HOST:PORT/DB"
        )


class StateError(Exception):
    """The store failed (disk, network, a corrupt entry); the message names the store only."""


class ConversationStore(Protocol):
    """Pairs per conversation id; ``load`` of an unknown or expired id is ``[]``.

    Stores raise :class:`StateError` for their own failures, whatever library is underneath.
    """

    async def load(self, conversation_id: str) -> list[Pair]: ...

    async def save(self, conversation_id: str, pairs: list[Pair]) -> None:
        """Replace the conversation's pairs and restart its expiry."""

    async def aclose(self) -> None: ...


def encode_pairs(pairs: list[Pair]) -> str:
    return json.dumps([list(pair) for pair in pairs], ensure_ascii=False, separators=(",", ":"))


def decode_pairs(text: str | bytes) -> list[Pair]:
    """The pairs :func:`encode_pairs` wrote.

    Raises:
        StateError: the entry is not what we write (another program wrote that key).
    """
    try:
        data: list[list[dict[str, Any]]] = json.loads(text)
        return [(dict(assistant), dict(tool)) for assistant, tool in data]
    except (ValueError, TypeError) as exc:
        raise StateError(f"a stored conversation is unreadable: {type(exc).__name__}") from exc


def check_state_url(url: str) -> str:
    """``url`` when it names a store we have; the store kind is its scheme.

    Raises:
        StateURLError: neither ``sqlite:///PATH`` nor ``redis://`` (or ``rediss://``).
    """
    if url.startswith("sqlite:///") and len(url) > len(_SQLITE):
        return url
    if url.startswith(("redis://", "rediss://")):
        return url
    raise StateURLError(url)


def open_store(url: str) -> ConversationStore:
    """The store a ``--state`` URL names; nothing is connected until first use.

    ``sqlite:///PATH`` is relative to the working directory, ``sqlite:////PATH`` absolute.

    Raises:
        StateURLError: see :func:`check_state_url`.
    """
    if check_state_url(url).startswith(_SQLITE):
        from agent_hooks.serve._sqlite import SqliteStore

        return SqliteStore(Path(url.removeprefix(_SQLITE)))
    from agent_hooks.serve._redis import RedisStore

    return RedisStore(url)
