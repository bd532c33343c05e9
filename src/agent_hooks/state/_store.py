"""The conversation store's contract and the policy every backend shares.

A backend only reads and writes one text value per key (:meth:`ConversationStore._read`,
:meth:`ConversationStore._write`). Everything callers rely on lives here, once: the tenant is
hashed into the key, each pair once and at most :data:`MAX_PAIRS` are kept,
every call is bounded by :data:`CALL_TIMEOUT_SECONDS`, and a failure costs the caller its state
(one ERROR line), never its request, and a save that would write what the store already holds
(the same pairs, written or read less than :data:`REFRESH_AFTER_SECONDS` into their expiry) is
not sent at all: a conversation whose hooks were fresh costs one round trip per turn, its load.
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import json
import logging
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from agent_hooks._scrub import scrub
from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.state._conversation import MAX_STORED_PAIRS, StoredPair, digest

__all__ = [
    "CALL_TIMEOUT_SECONDS",
    "MAX_PAIRS",
    "PAUSE_SECONDS",
    "REFRESH_AFTER_SECONDS",
    "STATE_TTL_SECONDS",
    "ConversationStore",
    "Pair",
    "StateError",
    "retained_pairs",
    "single_call_id",
    "state_key",
]

logger = logging.getLogger("agent_hooks.state")

STATE_TTL_SECONDS = 7 * 24 * 60 * 60
"""A conversation's pairs are kept this long after its last save (SPEC 12)."""

CALL_TIMEOUT_SECONDS = 2.0
"""Longest any store call may hold its caller (SPEC 12.1): then the caller goes on without state."""

MAX_PAIRS = MAX_STORED_PAIRS
"""Pairs kept per conversation; the oldest go first (SPEC 15)."""

PAUSE_SECONDS = 2.0
"""How long a backend that failed is left alone before it is asked again."""

REFRESH_AFTER_SECONDS = 3600.0
"""An unchanged conversation is written again (its expiry restarted) once its entry is this old,
not on every turn: it expires between 7 days less an hour and 7 days after its last request."""

_REMEMBERED_KEYS = 10_000
"""Conversations whose stored content a store remembers, to skip writing it again (a digest
each, the least recently used forgotten first)."""

_DECODED_TEXT_BYTES = 8 * 1024 * 1024
"""How much stored text a store keeps decoded (by its digest, the least recently loaded
forgotten first): a conversation whose hooks are fresh loads the same text every turn."""

Pair = tuple[dict[str, Any], dict[str, Any]]
"""A synthetic pair in OpenAI chat format: the assistant message with its one tool call, then the
tool message answering it."""

_NO_TENANT = "-"

_T = TypeVar("_T")


class Wait(enum.Enum):
    WAIT = enum.auto()


WAIT = Wait.WAIT
"""What :meth:`ConversationStore._read_at_once` answers when only :meth:`~ConversationStore._read`
can: the read would wait."""


class _Held(NamedTuple):
    """What the backend holds under a key, as far as this store last read or wrote it."""

    digest: bytes
    expires_at: float
    """``clock`` seconds."""
    mark: Hashable | None = None
    """The backend's :meth:`~ConversationStore._change_mark` taken before the read that found
    it (``None``: written here, or the backend cannot tell)."""


class StateError(Exception):
    """A backend failed (disk, network, a foreign entry); the message names the store only."""


def state_key(tenant: str | None, conversation_id: str) -> str:
    """The key of one tenant's conversation: the tenant only as its SHA-256, never in clear.

    The hash has a fixed length (or is ``-`` without a tenant), so no pair of tenant and
    conversation id can produce another pair's key.
    """
    owner = _NO_TENANT if tenant is None else hashlib.sha256(tenant.encode()).hexdigest()
    return f"{owner}:{conversation_id}"


def _link_key(tenant: str | None, response_id: str) -> str:
    """Where :meth:`ConversationStore.save` records a response's conversation: the owner part of
    :func:`state_key`, then ``/`` where a conversation key has ``:``, so no key is both."""
    owner = state_key(tenant, "").removesuffix(":")
    return f"{owner}/{digest(response_id)}"


def retained_pairs(pairs: Sequence[Pair | StoredPair]) -> list[StoredPair]:
    """What a save keeps: synthetic pairs only, each call id once, the newest
    :data:`MAX_STORED_PAIRS`, in order (SPEC 15: every pair forwarded, not only the latest of a
    hook, so each goes back where it was)."""
    kept: dict[str, StoredPair] = {}
    for pair in pairs:
        entry = pair if isinstance(pair, StoredPair) else StoredPair(*pair)
        call_id = single_call_id(entry.assistant)
        if call_id is not None and is_synthetic_call_id(call_id):
            kept.pop(call_id, None)
            kept[call_id] = entry
    return list(kept.values())[-MAX_STORED_PAIRS:]


class ConversationStore(ABC):
    """The synthetic pairs of each (tenant, conversation), shared by ``serve`` and the adapters.

    ``load`` answers ``[]`` for an unknown, expired or unreadable conversation; ``save`` replaces
    the pairs and restarts the conversation's seven-day expiry. Neither ever raises for a store
    failure nor takes longer than :data:`CALL_TIMEOUT_SECONDS`: the failure is logged at ERROR
    (one line) and reported to ``on_error``, and the caller goes on without state.

    A backend that failed is not asked again for :data:`PAUSE_SECONDS`: calls in that window
    fail at once (reported to ``on_error``, not logged again). So a blackholed server costs one
    request its 2 s and the others nothing, and a down one writes an ERROR line per pause, not
    one per call; the first call after the pause tries again.
    """

    def __init__(
        self,
        *,
        name: str,
        on_error: Callable[[], None] | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._name = name
        self._on_error = on_error
        self._monotonic = monotonic
        self._clock = clock
        self._paused_until = float("-inf")
        self._closed = False
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._decoded: OrderedDict[bytes, tuple[tuple[StoredPair, ...], int]] = OrderedDict()
        """Stored texts already decoded, by digest: their pairs and the text's length."""
        self._decoded_bytes = 0

    async def load(self, conversation_id: str, *, tenant: str | None) -> list[Pair]:
        """The stored pairs of ``tenant``'s conversation, oldest first; ``[]`` on any failure."""
        return [entry.pair for entry in await self.load_entries(conversation_id, tenant=tenant)]

    async def load_entries(
        self, conversation_id: str, *, tenant: str | None, shared: bool = False
    ) -> list[StoredPair]:
        """:meth:`load` with where and how each pair was forwarded (SPEC 15).

        ``shared``: the caller only reads the pairs, so a text it loaded before is not decoded
        again and its pairs are the very objects of that load (a fresh turn loads the text it
        loaded last turn). Their dicts are then shared with every other shared load of the same
        text, whoever's, and must never be changed; without ``shared`` they are the caller's own.
        """
        self._check_open()
        key = state_key(tenant, conversation_id)
        mark = self._change_mark() if shared else None
        if mark is not None:
            unchanged = self._unchanged(key, mark)
            if unchanged is not None:
                return list(unchanged)
        # What was held stays held while the read is under way: requests of one conversation
        # that overlap would otherwise each forget what the other learnt, and all rewrite it.
        entry = await self._read_entry(key, "not loaded")
        if entry is None:
            self._held.pop(key, None)  # nothing there, or no idea what is: the next save writes
            return []
        text, expires_at = entry
        digest = _digest(text)
        try:
            pairs = self._decoded_pairs(digest, text) if shared else _decode(text)
        except StateError as exc:
            self._held.pop(key, None)
            self._report(f"conversation state not loaded: {self._name}: {exc}")
            return []
        self._hold(key, digest, expires_at, mark)
        return list(pairs)

    async def save(
        self,
        conversation_id: str,
        pairs: Sequence[Pair | StoredPair],
        *,
        tenant: str | None,
        response_id: str | None = None,
        as_loaded: bool = False,
    ) -> None:
        """Keep :func:`retained_pairs` of ``pairs`` as the conversation's state.

        ``response_id`` also records, in the same write, that this answer belongs to the
        conversation (``serve``'s Responses route: a follow-up names only the answer it
        continues, SPEC 13); :meth:`linked` reads it back, as long as a conversation lives.

        Nothing is sent when the store already holds exactly these pairs with more than
        ``STATE_TTL_SECONDS - REFRESH_AFTER_SECONDS`` left before they expire (and there is no
        answer to link). ``as_loaded`` says the caller knows ``pairs`` are the very pairs
        :meth:`load` returned (a turn whose hooks were all fresh): then they are not even
        encoded to be compared while the entry is that fresh.
        """
        self._check_open()
        key = state_key(tenant, conversation_id)
        now = self._clock()
        held = self._held.pop(key, None)
        # A write is due whatever the pairs when nothing is known of the entry, when it is an
        # hour old, or when an answer is to be linked to the conversation.
        due = (
            held is None or held.expires_at - now <= _UNREFRESHED_SECONDS or response_id is not None
        )
        fresh = None if due else held
        # Nothing to write: what was held is held again, as the most recently used.
        if fresh is not None and as_loaded:
            self._held[key] = fresh
            return
        text = _encode(retained_pairs(pairs))
        digest = _digest(text)
        if fresh is not None and fresh.digest == digest:
            self._held[key] = fresh
            return
        entries = {key: text}
        if response_id is not None:
            entries[_link_key(tenant, response_id)] = conversation_id
        if await self._call(lambda: self._written(entries), "not saved"):
            self._hold(key, digest, now + STATE_TTL_SECONDS)

    async def linked(self, response_id: str, *, tenant: str | None) -> str | None:
        """The conversation :meth:`save` recorded for ``tenant``'s ``response_id``; ``None`` when
        there is none or the store failed."""
        self._check_open()
        entry = await self._read_entry(_link_key(tenant, response_id), "link not loaded")
        if entry is None:
            return None
        text = entry[0]
        return text.decode() if isinstance(text, bytes) else text

    async def unready(self) -> str | None:
        """Why the backend cannot serve now (one line), or ``None`` when it answers.

        Asks the backend every time, within :data:`CALL_TIMEOUT_SECONDS`, even while calls are
        paused after a failure: a readiness probe must see it come back. Neither logged nor
        reported to ``on_error``: the probe's answer says it, and the calls that failed said it.
        """
        self._check_open()
        try:
            async with asyncio.timeout(CALL_TIMEOUT_SECONDS):
                await self._ping()
        except TimeoutError:
            return f"{self._name}: no answer within {CALL_TIMEOUT_SECONDS:g} s"
        except StateError as exc:
            return scrub(f"{self._name}: {exc}")
        return None

    async def aclose(self) -> None:
        """Release the connection; safe to call twice. The host that opened the store closes it."""
        if not self._closed:
            self._closed = True
            await self._close()

    @abstractmethod
    async def _read(self, key: str) -> tuple[str | bytes, float] | None:
        """The text stored under ``key`` and when it expires (``clock`` seconds), ``None`` when
        absent or expired.

        Raises:
            StateError: the backend failed.
        """

    def _change_mark(self) -> Hashable | None:
        """A value that two calls return equal only when no entry changed in between; ``None``
        when the backend cannot tell (the default) or not now. A shared load whose entry was
        read under the same mark, and is still decoded, is answered without a read."""
        return None

    def _read_at_once(self, key: str) -> tuple[str | bytes, float] | Wait | None:
        """:meth:`_read` when the backend can answer without waiting (a local file that nobody
        is writing), :data:`WAIT` when it cannot: then :meth:`_read` is awaited, within
        :data:`CALL_TIMEOUT_SECONDS`. A read answered here needs no timer (a few µs a turn).

        Raises:
            StateError: the backend failed.
        """
        return WAIT

    @abstractmethod
    async def _write(self, entries: Mapping[str, str]) -> None:
        """Store each text under its key for :data:`STATE_TTL_SECONDS`, in one round trip.

        Raises:
            StateError: the backend failed.
        """

    @abstractmethod
    async def _close(self) -> None: ...

    @abstractmethod
    async def _ping(self) -> None:
        """One round trip to the backend.

        Raises:
            StateError: it did not answer as it should.
        """

    async def _read_entry(self, key: str, what: str) -> tuple[str | bytes, float] | None:
        """:meth:`_read` through :meth:`_call`, at once when the backend can answer so."""
        return await self._call(
            lambda: self._read(key), what, at_once=lambda: self._read_at_once(key)
        )

    async def _written(self, entries: Mapping[str, str]) -> bool:
        """:meth:`_write`, then ``True``: so :meth:`_call` tells a save that succeeded apart."""
        await self._write(entries)
        return True

    def _hold(
        self, key: str, digest: bytes, expires_at: float, mark: Hashable | None = None
    ) -> None:
        """Remember what ``key`` holds, as the most recently used."""
        self._held[key] = _Held(digest, expires_at, mark)
        self._held.move_to_end(key)
        if len(self._held) > _REMEMBERED_KEYS:
            self._held.popitem(last=False)

    def _unchanged(self, key: str, mark: Hashable) -> tuple[StoredPair, ...] | None:
        """The decoded pairs of ``key``'s entry when it was read under ``mark`` (so nothing
        changed since), has not expired and is still decoded; ``None`` otherwise. Not while
        the backend is paused: a load then fails at once, as every call does."""
        held = self._held.get(key)
        if (
            held is None
            or held.mark != mark
            or held.expires_at <= self._clock()
            or self._monotonic() < self._paused_until
        ):
            return None
        remembered = self._decoded.get(held.digest)
        if remembered is None:
            return None
        self._held.move_to_end(key)
        self._decoded.move_to_end(held.digest)
        return remembered[0]

    def _decoded_pairs(self, digest: bytes, text: str | bytes) -> tuple[StoredPair, ...]:
        """The pairs of ``text`` (its digest ``digest``), decoded only when not remembered (the
        shared loads of :meth:`load_entries`).

        Raises:
            StateError: as :func:`_decode`.
        """
        remembered = self._decoded.get(digest)
        if remembered is not None:
            self._decoded.move_to_end(digest)
            return remembered[0]
        pairs = tuple(_decode(text))
        size = len(text)
        if size <= _DECODED_TEXT_BYTES:
            self._decoded[digest] = (pairs, size)
            self._decoded_bytes += size
            while self._decoded_bytes > _DECODED_TEXT_BYTES:
                self._decoded_bytes -= self._decoded.popitem(last=False)[1][1]
        return pairs

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"the conversation store {self._name} is closed")

    async def _call(
        self,
        work: Callable[[], Awaitable[_T]],
        what: str,
        *,
        at_once: Callable[[], _T | Wait] | None = None,
    ) -> _T | None:
        """``work()``'s result, or ``None`` when the backend failed, timed out or is paused;
        ``at_once()``'s, when given and it does not answer :data:`WAIT` (``work`` is then not
        called)."""
        if self._monotonic() < self._paused_until:  # the backend is not asked while paused
            if self._on_error is not None:
                self._on_error()
            return None
        try:
            if at_once is not None:
                answer = at_once()
                if not isinstance(answer, Wait):
                    return answer
            async with asyncio.timeout(CALL_TIMEOUT_SECONDS):
                return await work()
        except (StateError, TimeoutError) as exc:
            now = self._monotonic()
            if now < self._paused_until:  # one of a burst already in flight: counted, not logged
                if self._on_error is not None:
                    self._on_error()
                return None
            self._paused_until = now + PAUSE_SECONDS
            reason = "no answer within 2 s" if isinstance(exc, TimeoutError) else str(exc)
            self._report(
                f"conversation state {what}: {self._name}: {reason};"
                f" serving without state for {PAUSE_SECONDS:g} s"
            )
            return None

    def _report(self, line: str) -> None:
        logger.error("%s", scrub(line))
        if self._on_error is not None:
            self._on_error()


_UNREFRESHED_SECONDS = STATE_TTL_SECONDS - REFRESH_AFTER_SECONDS


def _digest(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.blake2b(data, digest_size=16).digest()


def _encode(entries: list[StoredPair]) -> str:
    """One JSON object per pair: ``p`` the pair, ``a`` its anchor, ``h`` the anchor's digest,
    ``f`` its form (``a``, ``h`` and ``f`` left out when unknown or ``pair``)."""
    records = []
    for entry in entries:
        record: dict[str, Any] = {"p": list(entry.pair)}
        if entry.anchor is not None:
            record["a"] = entry.anchor
        if entry.anchor_digest is not None:
            record["h"] = entry.anchor_digest
        if entry.form != "pair":
            record["f"] = entry.form
        records.append(record)
    return json.dumps(records, ensure_ascii=False, separators=(",", ":"))


def _decode(text: str | bytes) -> list[StoredPair]:
    """The pairs :func:`_encode` wrote, or the bare ``[assistant, tool]`` lists stored before
    anchors existed (re-applied after the first user message, then anchored on the next save).

    Raises:
        StateError: the entry is not what we write (another program wrote that key).
    """
    try:
        data = json.loads(text)
        return [_entry(record) for record in data]
    except (ValueError, TypeError, KeyError) as exc:
        raise StateError(f"a stored conversation is unreadable ({type(exc).__name__})") from exc


def _entry(record: Any) -> StoredPair:
    if isinstance(record, list):
        assistant, tool = record
        return StoredPair(dict(assistant), dict(tool))
    assistant, tool = record["p"]
    anchor, anchor_digest = record.get("a"), record.get("h")
    if not (anchor is None or type(anchor) is int) or not (
        anchor_digest is None or isinstance(anchor_digest, str)
    ):
        raise TypeError("a stored anchor is not an index and a digest")
    text = record.get("f") == "text"
    return StoredPair(
        dict(assistant), dict(tool), anchor, anchor_digest, "text" if text else "pair"
    )


def single_call_id(message: Mapping[str, Any]) -> str | None:
    """The id of an assistant message's one tool call; ``None`` for anything else (no pair)."""
    calls = message.get("tool_calls") if message.get("role") == "assistant" else None
    if not isinstance(calls, list) or len(calls) != 1 or not isinstance(calls[0], Mapping):
        return None
    call_id = calls[0].get("id")
    return call_id if isinstance(call_id, str) else None
