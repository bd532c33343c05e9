"""One conversation across turns, as ``serve`` and the stateful adapters keep it (SPEC 15).

The rule behind every function here: each turn, the model sees the history it saw last turn,
byte for byte, with the proxy's pairs where they were, plus what is new — as if the client had
kept the pairs itself. So every pair that was forwarded is kept with its *anchor* (the client
message it followed, by position and digest) and its *form* (a tool-call pair, or the text form
that Anthropic thinking needs), and goes back after the same message next turn.

Pure: histories, client items and stored pairs in, histories and stored pairs out. A history is
a list of OpenAI chat-format dicts (``serve``) or of :class:`~agent_hooks.messages.Message`
(the adapters): both are read through :func:`pair_half`. ``items`` are the client's own messages
in its own format (Anthropic messages, Responses input items, chat messages), and ``item_of``
gives, for each history message the client sent, the item it was read from.
"""

from __future__ import annotations

import bisect
import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import Any, Literal, NamedTuple, TypeVar

from agent_hooks._json_writer import write_json
from agent_hooks.injection._ids import PREFIX_LENGTH, is_synthetic_call_id
from agent_hooks.injection._trust import with_calls
from agent_hooks.messages import Message, Role

__all__ = [
    "CONVERSATION_HEADER",
    "MAX_STORED_PAIRS",
    "SESSION_HEADERS",
    "Conversation",
    "ConversationSource",
    "Form",
    "MessageDigests",
    "Reapplied",
    "StoredPair",
    "client_message_digest",
    "collect_pairs",
    "conversation_key",
    "conversation_source",
    "digest",
    "log_dropped",
    "pair_half",
    "reapply",
    "without_client_pairs",
]

CONVERSATION_HEADER = "x-conversation-id"

SESSION_HEADERS = ("x-session-id", "session-id", "x-claude-code-session-id")
"""The session ids agents send (opencode, Codex, Claude Code), in the order they are read."""

MAX_SESSION_HEADER_CHARS = 256

MAX_STORED_PAIRS = 256
"""Pairs kept per conversation; past that the oldest go."""

BEFORE_ALL = -1
"""The anchor of a pair forwarded before every client message."""

Form = Literal["pair", "text"]

_M = TypeVar("_M")


class StoredPair(NamedTuple):
    """A pair the proxy forwarded, and where and how it went.

    ``anchor`` is the index of the client message it followed (:data:`BEFORE_ALL` before all of
    them; ``None`` when unknown: the upstream holds the earlier turns, or the entry was stored
    before anchors existed), ``anchor_digest`` that message's :func:`client_message_digest`.
    """

    assistant: dict[str, Any]
    tool: dict[str, Any]
    anchor: int | None = None
    anchor_digest: str | None = None
    form: Form = "pair"

    @property
    def call_id(self) -> str:
        return str(self.tool.get("tool_call_id", ""))

    @property
    def pair(self) -> tuple[dict[str, Any], dict[str, Any]]:
        return (self.assistant, self.tool)


def digest(value: str) -> str:
    """A client-chosen value as kept anywhere: a fixed-size SHA-256, whatever its length."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()


def _canonical(message: Any) -> Any:
    """``message`` without any ``cache_control``, and a content of one text block written as its
    string: Claude Code moves its cache breakpoint every request and re-sends the message that
    lost it as a string, which is the same message."""
    if isinstance(message, Mapping):
        out = {key: _canonical(value) for key, value in message.items() if key != "cache_control"}
        content = out.get("content")
        if (
            isinstance(content, list)
            and len(content) == 1
            and isinstance(content[0], Mapping)
            and content[0].get("type") == "text"
            and set(content[0]) == {"type", "text"}
            and isinstance(content[0]["text"], str)
        ):
            out["content"] = content[0]["text"]
        return out
    if isinstance(message, list):
        return [_canonical(value) for value in message]
    return message


def client_message_digest(message: Any) -> str:
    """SHA-256 of a client message's canonical JSON (see :func:`_canonical`): ``json.dumps``
    with sorted keys, not ASCII-escaped, other values as their ``str``, hashed as it is written
    (:func:`~agent_hooks._json_writer.write_json`: a client's 16 MiB message with one emoji is
    not made a 64 MiB ``str`` and more, SPEC 16)."""
    if isinstance(message, Message):
        message = message.to_openai()
    hashed = hashlib.sha256()
    write_json(_canonical(message), hashed.update, encoder=_CANONICAL, errors="surrogatepass")
    return hashed.hexdigest()


_CANONICAL = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)


class MessageDigests:
    """:func:`client_message_digest` of one request's client messages, each computed once.

    A request's conversation key and its stored pairs' anchors usually name the same message
    (the first user message, after which first-time pairs go), and a digest encodes the whole
    message. Kept for one request only: its messages are not changed while it runs.
    """

    def __init__(self) -> None:
        self._known: dict[int, tuple[Any, str]] = {}

    def __call__(self, message: Any) -> str:
        known = self._known.get(id(message))
        if known is None:
            known = self._known[id(message)] = (message, client_message_digest(message))
        return known[1]


class ConversationSource(NamedTuple):
    """What named a conversation: ``kind`` is ``conversation`` (the header), ``session`` (an
    agent's session header), ``named`` (Responses' ``conversation``), ``user`` (an end-user
    field) or ``response`` (a Responses answer that started one); ``value`` as the client sent
    it, never kept."""

    kind: str
    value: str


class Conversation(NamedTuple):
    """A request's conversation: ``key`` its state's key, ``name`` what the hooks see as
    ``request.conversation_id``."""

    key: str
    name: str


def conversation_source(
    headers: Mapping[str, str],
    *,
    named: str | None = None,
    end_user: str | None = None,
) -> ConversationSource | None:
    """Which conversation a request says it belongs to, first present wins (SPEC 15):
    ``X-Conversation-Id``, an agent's session header, a conversation the body names (Responses'
    ``conversation``), an end-user field; ``None`` without any (no stored state).

    A session header that is empty, too long or not printable ASCII is ignored, not refused
    (``X-Conversation-Id`` is checked, and refused, before this).
    """
    explicit = headers.get(CONVERSATION_HEADER, "").strip()
    if explicit:
        return ConversationSource("conversation", explicit)
    for name in SESSION_HEADERS:
        value = headers.get(name, "").strip()
        if value and len(value) <= MAX_SESSION_HEADER_CHARS and _printable_ascii(value):
            return ConversationSource("session", value)
    if named:
        return ConversationSource("named", named)
    if end_user:
        return ConversationSource("user", end_user)
    return None


def _printable_ascii(value: str) -> bool:
    return all(" " <= char <= "~" for char in value)


def conversation_key(
    source: ConversationSource,
    first_user: Any | None,
    *,
    digest_of: Callable[[Any], str] = client_message_digest,
) -> str:
    """The key of a conversation's state: the source's digest, then the digest of the first
    client message with a user role (``-`` when there is none, or the upstream holds it).

    Two histories sent under one session id (opencode's title request beside its main loop)
    thus keep separate state. A fixed size, whatever the client sent.
    """
    first = "-" if first_user is None else digest_of(first_user)[:32]
    return f"{digest(f'{source.kind}:{source.value}')}:{first}"


def pair_half(message: Any) -> tuple[str, str] | None:
    """``("call", id)`` or ``("result", id)`` when ``message`` is one half of a synthetic pair
    (an assistant message with exactly one synthetic tool call, or a tool message answering a
    synthetic id); ``None`` for any other message."""
    if isinstance(message, Message):
        if message.role is Role.TOOL:
            result = message.tool_call_id
            return ("result", result) if result and is_synthetic_call_id(result) else None
        calls = message.tool_calls if message.role is Role.ASSISTANT else None
        if calls is None or len(calls) != 1:
            return None
        return ("call", calls[0].id) if is_synthetic_call_id(calls[0].id) else None
    if not isinstance(message, Mapping):
        return None
    role = message.get("role")
    if role == "tool":
        call_id = message.get("tool_call_id")
        kind = "result"
    elif role == "assistant":
        calls = message.get("tool_calls")
        if not isinstance(calls, list) or len(calls) != 1 or not isinstance(calls[0], Mapping):
            return None
        call_id = calls[0].get("id")
        kind = "call"
    else:
        return None
    return (kind, call_id) if isinstance(call_id, str) and is_synthetic_call_id(call_id) else None


def _call_ids(history: Iterable[Any]) -> set[str]:
    return {half[1] for message in history if (half := pair_half(message)) is not None}


class Reapplied(NamedTuple):
    """What :func:`reapply` made of a turn: the history the hooks run on, the stored pairs in it
    (oldest first), and how many stored pairs were dropped and why."""

    history: list[Any]
    kept: list[StoredPair]
    anchor_changed: int
    hook_gone: int


def log_dropped(reapplied: Reapplied, logger: logging.Logger) -> None:
    """One INFO line for a turn whose stored pairs were not all re-applied (``serve`` and the
    adapters alike): an operator sees why a hook's content is gone."""
    if reapplied.anchor_changed or reapplied.hook_gone:
        logger.info(
            "stored pairs dropped: %d whose client message changed, %d of no current hook",
            reapplied.anchor_changed,
            reapplied.hook_gone,
        )


def reapply(
    history: Sequence[_M],
    stored: Sequence[StoredPair],
    *,
    items: Sequence[Any],
    item_of: Sequence[int],
    hook_prefixes: frozenset[str] | None,
    held: bool = False,
    build: Callable[[dict[str, Any]], _M] | None,
    digest_of: Callable[[Any], str] = client_message_digest,
    without_pairs: bool = False,
) -> Reapplied:
    """``history`` with the stored pairs back where they were forwarded.

    Each pair goes after the last history message read from its anchor item (in stored order
    among pairs of one anchor). A pair whose anchor item is gone or changed is dropped, with every
    pair anchored after it: the client edited, rewound or compacted its history, and the hooks
    decide afresh. A pair of no current hook (``hook_prefixes``: the ``ah_{i8}_`` of each hook;
    ``None`` while hooks are off) is dropped too, so removing a hook stops its content at once.

    ``held``: the upstream holds the earlier turns (Responses' ``previous_response_id``): the
    pairs go before every message. A pair without an anchor (stored before anchors existed) goes
    after the first user message, as it used to. Pairs whose call id the history already holds
    are not added twice. ``build`` turns a stored dict into the history's message type (``None``:
    the history holds dicts, and gets the very ones the store decoded);
    ``digest_of`` gives an anchor item's :func:`client_message_digest`; ``without_pairs``: the
    history holds no synthetic pair (:func:`without_client_pairs` removed them), so none is
    looked for.
    """
    if not stored:
        return Reapplied(list(history), [], 0, 0)
    known = [
        entry
        for entry in stored
        if hook_prefixes is not None and entry.call_id[:PREFIX_LENGTH] in hook_prefixes
    ]
    hook_gone = len(stored) - len(known)
    if not held:
        broken = _first_broken_anchor(known, items, digest_of)
        if broken is not None:
            before = len(known)
            known = [e for e in known if e.anchor is None or e.anchor < broken]
            anchor_changed = before - len(known)
        else:
            anchor_changed = 0
    else:
        anchor_changed = 0
    if without_pairs:
        kept = known
    else:
        present = _call_ids(history)
        kept = [entry for entry in known if entry.call_id not in present]
    if not kept:
        return Reapplied(list(history), [], anchor_changed, hook_gone)
    if held:
        added = [message for entry in kept for message in entry.pair]
        built = added if build is None else map(build, added)
        return Reapplied([*built, *history], kept, anchor_changed, hook_gone)
    positions = _insertion_points(history, kept, item_of)
    out: list[Any] = []
    at = 0
    for position, entry in sorted(
        zip(positions, kept, strict=True), key=itemgetter(0)
    ):  # sorted is stable: pairs at one position keep their stored order
        out.extend(history[at:position])
        at = max(at, position)
        out.extend(entry.pair if build is None else map(build, entry.pair))
    out.extend(history[at:])
    return Reapplied(out, kept, anchor_changed, hook_gone)


def _first_broken_anchor(
    entries: Sequence[StoredPair], items: Sequence[Any], digest_of: Callable[[Any], str]
) -> int | None:
    """The smallest anchor whose client message is no longer there unchanged."""
    checked: dict[int, bool] = {}
    broken: int | None = None
    for entry in entries:
        anchor = entry.anchor
        if anchor is None or anchor == BEFORE_ALL or anchor in checked:
            continue
        intact = anchor < len(items) and digest_of(items[anchor]) == entry.anchor_digest
        checked[anchor] = intact
        if not intact and (broken is None or anchor < broken):
            broken = anchor
    return broken


def _insertion_points(
    history: Sequence[Any], entries: Sequence[StoredPair], item_of: Sequence[int]
) -> list[int]:
    """Where in ``history`` each entry goes: after the last message read from an item at or
    before its anchor; after the first user message (and the pairs right after it) without one."""
    legacy = len(history)
    if any(entry.anchor is None for entry in entries):  # a scan of the history only for them
        first_user = next((at for at, message in enumerate(history) if _is_user(message)), None)
        legacy = legacy if first_user is None else first_user + 1
    # item_of never decreases (history messages come in their items' order): a binary search
    return [
        legacy if entry.anchor is None else bisect.bisect_right(item_of, entry.anchor)
        for entry in entries
    ]


def _is_user(message: Any) -> bool:
    if isinstance(message, Message):
        return message.role is Role.USER
    return isinstance(message, Mapping) and message.get("role") == "user"


def collect_pairs(
    history: Sequence[Any],
    *,
    item_at: Sequence[int | None],
    items: Sequence[Any],
    reapplied: Sequence[StoredPair],
    held: bool = False,
    text_from: int | None = None,
    to_dict: Callable[[Any], dict[str, Any]],
) -> list[StoredPair]:
    """The turn's pairs, as the store keeps them, in history order.

    ``item_at`` gives the client item of each message of ``history`` (``None`` for a message
    the client did not send: the hooks' and the store's). A pair re-applied unchanged keeps
    its record; a pair the hooks wrote is anchored at the client item
    of the nearest ordinary message before it. Its form: the form of the pair of the same hook it
    replaced in place (a TTL refresh), else ``text`` when it is anchored at or after
    ``text_from`` (Anthropic thinking: the current tool cycle), else ``pair``.
    """
    by_call = {entry.call_id: entry for entry in reapplied}
    pairs: list[StoredPair] = []
    anchor = BEFORE_ALL
    replaced = {
        (entry.call_id[:PREFIX_LENGTH], entry.anchor): entry.form
        for entry in reapplied
        if entry.form == "text"
    }
    index = 0
    while index < len(history):
        message = history[index]
        half = pair_half(message)
        if half is None or half[0] != "call":
            item = item_at[index]
            if item is not None:
                anchor = item
            index += 1
            continue
        following = history[index + 1] if index + 1 < len(history) else None
        answer = pair_half(following) if following is not None else None
        if answer is None or answer != ("result", half[1]):
            index += 1
            continue
        call_id = half[1]
        known = by_call.get(call_id)
        if known is not None and (known.anchor is not None or held):
            pairs.append(known)
        else:
            where = None if held else anchor
            form: Form = "pair"
            if replaced.get((call_id[:PREFIX_LENGTH], where)) == "text":
                form = "text"
            elif text_from is not None and where is not None and where >= text_from:
                form = "text"
            pairs.append(
                StoredPair(
                    to_dict(message),
                    to_dict(following),
                    where,
                    None if where is None or where < 0 else client_message_digest(items[where]),
                    form,
                )
            )
        index += 2
    return pairs[-MAX_STORED_PAIRS:]


def without_client_pairs(history: Sequence[_M]) -> tuple[list[_M], int]:
    """``history`` without the synthetic pairs a client sent, and how many call ids went.

    The proxy's (and the adapters') own pairs never reach clients, so a synthetic-looking call
    or result in a client's history is forged or replayed: the tool message goes, and the
    ``tool_calls`` entry (the assistant message too when nothing else is left in it). Every other
    message is kept as it came, the very object.
    """
    removed: set[str] = set()
    kept: list[_M] = []
    for message in history:
        if isinstance(message, Message):
            result_id = message.tool_call_id if message.role is Role.TOOL else None
            calls: list[Any] = list(message.tool_calls or [])
            call_ids = [call.id for call in calls]
        elif isinstance(message, Mapping):
            result_id = message.get("tool_call_id") if message.get("role") == "tool" else None
            raw = message.get("tool_calls")
            calls = raw if isinstance(raw, list) else []
            call_ids = [call.get("id") if isinstance(call, Mapping) else None for call in calls]
        else:
            kept.append(message)
            continue
        if isinstance(result_id, str) and is_synthetic_call_id(result_id):
            removed.add(result_id)
            continue
        forged = [isinstance(i, str) and is_synthetic_call_id(i) for i in call_ids]
        if not any(forged):
            kept.append(message)
            continue
        removed.update(i for i, bad in zip(call_ids, forged, strict=True) if bad and i)
        remaining = [call for call, bad in zip(calls, forged, strict=True) if not bad]
        rebuilt = _with_calls(message, remaining)
        if rebuilt is not None:
            kept.append(rebuilt)
    return kept, len(removed)


def _with_calls(message: Any, calls: list[Any]) -> Any:
    """``message`` with only ``calls``; ``None`` when that leaves it with nothing to say."""
    if isinstance(message, Message):
        if not calls and not message.content:
            return None
        return with_calls(message, calls)
    if not calls and not message.get("content"):
        return None
    if calls:  # the key keeps its place
        return {**message, "tool_calls": calls}
    return {key: value for key, value in message.items() if key != "tool_calls"}
