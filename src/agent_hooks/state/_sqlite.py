"""The SQLite conversation store: one file, zero set-up, shared safely by threads and processes.

Failure modes it is built around (SPEC 12.1: a bad state file costs the state, never the process):

- *No memory-mapped files.* WAL keeps its index in a shared-memory file that SQLite maps into the
  process; when that file cannot be extended (disk full, read-only or vanished filesystem) the
  kernel answers the next access with SIGBUS and the process dies. The store therefore uses the
  rollback journal (``journal_mode=DELETE``) and ``mmap_size=0``: every failure is an error code.
- *No fsync per save* (``synchronous=OFF``): with the rollback journal every commit would wait
  on the disk several times (4 to 5 ms here, so a few hundred saves a second in all), and under
  load the store's 2 s bound would cost state it need not. The data are a cache of what hooks
  can compute again: a process crash loses nothing, an OS crash may lose recent saves or damage
  the file, which is then set aside (next point).
- *A deleted, replaced or damaged file.* An open connection keeps writing to an unlinked inode
  and the state silently vanishes with it. Each call first checks that the path still names the
  file the connection opened; when it does not, it says so at ERROR and starts a new file. A file
  SQLite calls damaged is renamed ``*.corrupt`` (kept for a look) and a new one started.
- *Slow disks and locks* run in a worker thread; the busy timeout stays under the store's 2 s bound.
  One thread of its own runs one statement at a time: concurrent requests queue on the event
  loop instead of piling up threads that wait on the connection's lock, and a statement whose
  caller gave up before it started never runs. (anyio's worker threads, with a capacity limiter
  and a cancel scope per call, cost the proxy a tenth of its CPU per request.)
- *A load is read on the event loop when nothing can make it wait*: the connection is open, the
  worker thread is not using it, and SQLite would answer at once (the connection does not wait
  on locks: a file another process is writing answers ``SQLITE_BUSY`` and the read goes to the
  thread, whose statements wait up to the busy timeout). A conversation's row is one indexed
  lookup in pages the OS has cached, about 10 µs; handing it to the thread and back cost the
  proxy 0.3-0.4 ms of CPU per request at 32 clients (the two threads trading the GIL), a third
  of a request's CPU (``bench/bench_serve.py``).

Expired conversations are never returned (``load`` filters on expiry); deleting them happens in
the background after a save, at most hourly, in batches of :data:`_PURGE_BATCH` rows queued
behind the requests' statements, so a purge of 100,000 rows never holds a request up.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import enum
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Hashable, Mapping
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from agent_hooks.state._store import (
    STATE_TTL_SECONDS,
    WAIT,
    ConversationStore,
    StateError,
    Wait,
)

__all__ = ["SqliteStore"]

logger = logging.getLogger("agent_hooks.state")

_BUSY_TIMEOUT_MS = 1500
"""Wait on another process's write lock this long: under the 2 s bound of every store call."""

_SET_UP_RETRY_SECONDS = 0.02
_PURGE_EVERY_SECONDS = 3600.0
_PURGE_BATCH = 100
"""Expired rows deleted per statement: about a millisecond, so a request queued behind one
waits no longer. (With 500, turns 32 at once beside a purge of 50,000 rows had a p99 1.7-2.5x
that of an empty store; with 100, 1.1-1.2x: ``bench/bench_serve.py``.)"""
_QUIET_NS = 2_000_000_000
"""A load's entry is remembered unchanged only while the file was last written longer ago than
this: a later write then gives it a later modification time, on every filesystem whose
timestamps are no coarser (FAT's, the coarsest in use, step by 2 s)."""
_PURGE_CLOSE_SECONDS = 2.0
"""How long closing the store waits for a purge under way to finish."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS conversations (
    id TEXT PRIMARY KEY,
    pairs TEXT NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS conversations_expiry ON conversations (expires_at);
"""

_T = TypeVar("_T")


class SqliteStore(ConversationStore):
    """Conversations in a SQLite file, created (with its parent directory) by :meth:`open`."""

    def __init__(
        self,
        path: Path,
        *,
        clock: Callable[[], float] = time.time,
        on_error: Callable[[], None] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            name=f"sqlite store {path}", on_error=on_error, monotonic=monotonic, clock=clock
        )
        self.path = path
        self._path_text = os.fspath(path)  # stat on every shared load: no conversion each time
        self._lock = threading.Lock()
        self._connection: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self._purged_at = float("-inf")
        self._thread: concurrent.futures.ThreadPoolExecutor | None = None
        self._purge: asyncio.Task[None] | None = None

    def open(self) -> None:
        """Create the file now, so a path that cannot hold it fails at start, not on a request.

        A damaged file is set aside and a new one created.

        Raises:
            OSError: the file or its directory cannot be created or opened as a database.
        """
        with self._lock:
            try:
                try:
                    self._connect()
                except sqlite3.DatabaseError as exc:
                    if not _damaged(exc):
                        raise
                    self._set_aside()
                    self._connect()
            except (sqlite3.Error, OSError) as exc:  # OSError: its directory cannot be made
                raise OSError(f"cannot open the state file {self.path}: {exc}") from exc

    async def _read(self, key: str) -> tuple[str, float] | None:
        """On the store's thread: :meth:`_read_at_once` found that the read could wait."""
        return _text_and_expiry(await self._run(self._select(key)))

    def _change_mark(self) -> Hashable | None:
        """The file's identity and when it was last written (its status change and size too),
        unless that was less than :data:`_QUIET_NS` ago: any commit, from any process, writes
        the file and so moves its modification time past the mark. It costs the ``stat`` each
        read makes anyway; SQLite's own check (a shared lock on the file) costs as much as the
        read it would spare. A file written all the time is read every time, as before."""
        try:
            stat = os.stat(self._path_text)
        except OSError:
            return None
        if time.time_ns() - stat.st_mtime_ns < _QUIET_NS:
            return None
        return stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size

    def _read_at_once(self, key: str) -> tuple[str, float] | Wait | None:
        row = self._read_now(self._select(key))
        return WAIT if isinstance(row, _NotNow) else _text_and_expiry(row)

    def _select(self, key: str) -> Callable[[sqlite3.Connection], tuple[Any, ...] | None]:
        def select(db: sqlite3.Connection) -> tuple[Any, ...] | None:
            row: tuple[Any, ...] | None = db.execute(
                "SELECT pairs, expires_at FROM conversations WHERE id = ? AND expires_at > ?",
                (key, self._clock()),
            ).fetchone()
            return row

        return select

    def _read_now(self, select: Callable[[sqlite3.Connection], _T]) -> _T | _NotNow:
        """``select`` run here, on the caller's thread, when it cannot wait on anything;
        :data:`_NOT_NOW` when it could (no connection yet, the file replaced, the worker thread
        holding the connection, another process writing the file)."""
        if not self._lock.acquire(blocking=False):
            return _NOT_NOW
        try:
            db = self._connection
            if db is None or not self._names_its_file():
                return _NOT_NOW  # (re)connecting may wait: the thread does it
            try:
                return self._checked(select, db)
            except StateError as exc:
                if _busy(exc.__cause__):
                    return _NOT_NOW
                raise
        finally:
            self._lock.release()

    async def _ping(self) -> None:
        await self._run(lambda db: db.execute("SELECT count(*) FROM conversations LIMIT 1"))

    async def _write(self, entries: Mapping[str, str]) -> None:
        now = self._clock()
        rows = [(key, text, now + STATE_TTL_SECONDS) for key, text in entries.items()]

        def write(db: sqlite3.Connection) -> None:
            # One transaction however many keys: a response id and its pairs land together.
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    "INSERT INTO conversations (id, pairs, expires_at) VALUES (?, ?, ?)"
                    " ON CONFLICT (id) DO UPDATE SET pairs = excluded.pairs,"
                    " expires_at = excluded.expires_at",
                    rows,
                )
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

        await self._run(write)
        if now - self._purged_at >= _PURGE_EVERY_SECONDS and self._purge is None:
            self._purged_at = now
            self._purge = asyncio.create_task(self._purge_expired(now))

    async def _close(self) -> None:
        """Close the connection once a purge under way has finished (or after
        :data:`_PURGE_CLOSE_SECONDS`, when it is cancelled between batches)."""
        if self._purge is not None:
            purge = self._purge
            await asyncio.wait({purge}, timeout=_PURGE_CLOSE_SECONDS)
            purge.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await purge

        def close() -> None:
            with self._lock:
                if self._connection is not None:
                    self._connection.close()
                    self._connection = None

        if self._thread is None:
            close()
            return
        thread, self._thread = self._thread, None
        await asyncio.get_running_loop().run_in_executor(thread, close)
        thread.shutdown(wait=False)

    async def _purge_expired(self, now: float) -> None:
        """Delete the conversations expired at ``now``, a batch per statement (a task of its
        own, so no request waits on it; each batch queues behind the requests' statements)."""
        try:
            while True:
                deleted = await self._run(
                    lambda db: (
                        db.execute(
                            "DELETE FROM conversations WHERE rowid IN (SELECT rowid FROM"
                            " conversations WHERE expires_at <= ? LIMIT ?)",
                            (now, _PURGE_BATCH),
                        ).rowcount
                    )
                )
                if deleted < _PURGE_BATCH:
                    return
        except StateError as exc:
            logger.warning("expired conversations not purged: %s: %s", self.path, exc)
        finally:
            self._purge = None

    def _checked(self, statement: Callable[[sqlite3.Connection], _T], db: sqlite3.Connection) -> _T:
        """``statement`` on ``db``; a failure as :class:`StateError` (a damaged file set aside)."""
        try:
            return statement(db)
        except sqlite3.DatabaseError as exc:
            if _damaged(exc):
                self._set_aside()
            raise StateError(f"{exc}") from exc
        except (sqlite3.Error, OSError) as exc:
            raise StateError(f"{exc}") from exc

    async def _run(self, statement: Callable[[sqlite3.Connection], _T]) -> _T:
        def locked() -> _T:
            with self._lock:
                try:
                    db = self._connection_for_path()
                except (sqlite3.Error, OSError) as exc:
                    raise StateError(f"{exc}") from exc
                return self._checked(partial(_waiting, statement), db)

        if self._thread is None:
            self._thread = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="agent-hooks-sqlite"
            )
        # Abandoned at the store's 2 s bound, a running statement finishes on its own; a queued
        # one is dropped.
        return await asyncio.get_running_loop().run_in_executor(self._thread, locked)

    def _set_aside(self) -> None:
        """Move a damaged file out of the way; the next call starts a new one."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None
        aside = self.path.with_name(self.path.name + ".corrupt")
        try:
            self.path.replace(aside)
        except OSError as exc:
            logger.error("state file %s is damaged and cannot be moved aside: %s", self.path, exc)
        else:
            logger.error(
                "state file %s is damaged: moved to %s; starting a new file", self.path, aside
            )

    def _names_its_file(self) -> bool:
        """Whether the path still names the file the connection opened (not deleted, replaced)."""
        return self._identity == _file_identity(self.path)

    def _connection_for_path(self) -> sqlite3.Connection:
        """The open connection, or a new one when the file it had open was deleted or replaced."""
        if self._connection is not None and not self._names_its_file():
            logger.error(
                "state file %s was deleted or replaced: its conversations are lost;"
                " starting a new file",
                self.path,
            )
            self._connection.close()
            self._connection = None
        if self._connection is None:
            self._connect()
        assert self._connection is not None
        return self._connection

    def _connect(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = sqlite3.connect(
            self.path,
            timeout=_BUSY_TIMEOUT_MS / 1000,
            isolation_level=None,
            check_same_thread=False,
        )
        try:
            db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            _set_up(db)
            db.execute("PRAGMA busy_timeout = 0")  # statements that may wait say so: _waiting
        except BaseException:
            db.close()
            raise
        self._connection = db
        self._identity = _file_identity(self.path)


def _text_and_expiry(row: tuple[Any, ...] | None) -> tuple[str, float] | None:
    return None if row is None else (str(row[0]), float(row[1]))


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    return exc.sqlite_errorcode in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)


def _waiting(statement: Callable[[sqlite3.Connection], _T], db: sqlite3.Connection) -> _T:
    """``statement`` waiting up to the busy timeout for a lock another process holds (the
    connection's own setting is not to wait, for the reads on the event loop)."""
    db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    try:
        return statement(db)
    finally:
        db.execute("PRAGMA busy_timeout = 0")


def _busy(exc: BaseException | None) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and exc.sqlite_errorcode in (
        sqlite3.SQLITE_BUSY,
        sqlite3.SQLITE_LOCKED,
    )


class _NotNow(enum.Enum):
    NOT_NOW = enum.auto()


_NOT_NOW = _NotNow.NOT_NOW
"""A read that would have to wait: it goes to the worker thread."""


def _file_identity(path: Path) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino


def _set_up(db: sqlite3.Connection) -> None:
    """Rollback journal, no memory map, and the schema; retried while another process holds a
    new file (switching the journal mode does not wait on the busy timeout)."""
    deadline = time.monotonic() + _BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            db.execute("PRAGMA journal_mode = DELETE")
            db.execute("PRAGMA synchronous = OFF")
            db.execute("PRAGMA mmap_size = 0")
            db.executescript(_SCHEMA)
            return
        except sqlite3.OperationalError as exc:
            if not _busy(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(_SET_UP_RETRY_SECONDS)
