"""The SQLite conversation store: one file, shared safely by threads and processes.

WAL lets readers and a writer work at once; a busy timeout makes concurrent writers from other
processes wait instead of failing. Every statement runs in a worker thread so a slow disk never
blocks the event loop; one connection per store, used by one thread at a time.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import anyio.to_thread

from agent_hooks.serve._conversation import Pair
from agent_hooks.serve._state import STATE_TTL_SECONDS, StateError, decode_pairs, encode_pairs

__all__ = ["SqliteStore"]

_BUSY_TIMEOUT_MS = 10_000
_SET_UP_RETRY_SECONDS = 0.02
_PURGE_EVERY_SECONDS = 3600.0
"""How often a save also deletes expired conversations (so the file does not grow forever)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    pairs TEXT NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_expiry ON conversations (expires_at);
"""

_T = TypeVar("_T")


class SqliteStore:
    """Conversations in a SQLite file, created on first use with its parent directory."""

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self._clock = clock
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._closed = False
        self._purged_at = float("-inf")

    async def load(self, conversation_id: str) -> list[Pair]:
        row = await self._run(
            lambda db: db.execute(
                "SELECT pairs FROM conversations WHERE id = ? AND expires_at > ?",
                (conversation_id, self._clock()),
            ).fetchone()
        )
        return decode_pairs(row[0]) if row else []

    async def save(self, conversation_id: str, pairs: list[Pair]) -> None:
        text = encode_pairs(pairs)

        def write(db: sqlite3.Connection) -> None:
            now = self._clock()
            db.execute(
                "INSERT INTO conversations (id, pairs, expires_at) VALUES (?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET pairs = excluded.pairs,"
                " expires_at = excluded.expires_at",
                (conversation_id, text, now + STATE_TTL_SECONDS),
            )
            if now - self._purged_at >= _PURGE_EVERY_SECONDS:
                db.execute("DELETE FROM conversations WHERE expires_at <= ?", (now,))
                self._purged_at = now

        await self._run(write)

    async def aclose(self) -> None:
        """Close the connection; safe to call twice."""

        def close() -> None:
            with self._lock:
                self._closed = True
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None

        await anyio.to_thread.run_sync(close)

    async def _run(self, statement: Callable[[sqlite3.Connection], _T]) -> _T:
        def locked() -> _T:
            with self._lock:
                try:
                    return statement(self._open())
                except (sqlite3.Error, OSError) as exc:
                    raise StateError(f"sqlite store {self.path}: {exc}") from exc

        return await anyio.to_thread.run_sync(locked)

    def _open(self) -> sqlite3.Connection:
        if self._closed:
            raise RuntimeError(f"the conversation store {self.path} is closed")
        if self._connection is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path,
                timeout=_BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
            db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            _set_up(db)
            self._connection = db
        return self._connection


def _set_up(db: sqlite3.Connection) -> None:
    """WAL mode and the schema, retried while another connection holds the file.

    Switching to WAL does not wait on the busy timeout: when two processes open a new file at
    the same moment, one of them is told "database is locked" at once. It retries until the
    busy timeout has passed.
    """
    deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
            db.executescript(_SCHEMA)
            return
        except sqlite3.OperationalError as exc:
            busy = exc.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
            if not busy or time.monotonic() >= deadline:
                raise
            time.sleep(_SET_UP_RETRY_SECONDS)
