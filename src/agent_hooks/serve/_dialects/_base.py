"""What every dialect gives the proxy, and the splice that writes the hooks' pairs back.

A dialect (Chat Completions, Responses, Anthropic Messages) reads a body into the hooks'
history, OpenAI chat messages (:mod:`agent_hooks.messages`), and remembers where each history
message came from: an :class:`Entry` names the dialect item (a Responses input item, an
Anthropic message) and, for Anthropic, the content blocks it was read from. Items the hooks cannot
understand (reasoning, images, hosted tool calls...) have no entry at all and stay where they are.

Unless a hook reads the history, everything but the hooks reads a history message by its role
and its synthetic-looking ids alone (:func:`reads_more_than_role`): so a dialect that builds its
history beside its own items keeps, in :attr:`ParsedRequest.outline`, a shared role-only
message for each message without such an id, and builds the whole history only when asked
(SPEC 16: a chat-shaped dict per item, three for a call, cost a long tool loop 5x its body).

The hooks only ever add synthetic pairs, drop synthetic pairs (forged, unverified) and leave every
other message as it was (SPEC section 4), so the history they return is aligned with the one they
were given by identity (synthetic messages) and by order (every other message):
:func:`splice` then copies each untouched item verbatim, drops what the hooks dropped and lets the
dialect render only what they added. Pure: no I/O.
"""

from __future__ import annotations

import abc
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, TypeVar

from pydantic import TypeAdapter, ValidationError

from agent_hooks._json_writer import compact_json
from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.messages import Message, Role
from agent_hooks.serve._dialects._usage import Usage
from agent_hooks.serve._errors import BadRequest
from agent_hooks.serve._families import Family, for_family

__all__ = [
    "OPENAI_CREDENTIALS",
    "RELAYED_MESSAGES",
    "Answer",
    "AnswerReader",
    "Credentials",
    "Dialect",
    "Entry",
    "InvalidMessages",
    "InvalidRequest",
    "Outline",
    "ParsedRequest",
    "RenderContext",
    "SSELines",
    "ToolDefinition",
    "align",
    "as_forwarded",
    "check_messages",
    "dump_body",
    "forged_half",
    "is_role_only",
    "read_by_role",
    "reads_more_than_role",
    "role_only",
    "splice",
    "synthetic_call_id",
    "validate_messages",
    "whole_history",
]

_T = TypeVar("_T")


RELAYED_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])
"""Validates a list of history messages (as dicts) into :class:`Message`\\s, in one call.

It is ``Message.model_validate``'s validation, key-order recorders included (SPEC 16: no schema
edited by matching a function's name): relayed messages are never dumped (the client's own dicts
are forwarded), so the recorders only cost time, ~1.2 us a message (see docs/decisions.md).
"""
MESSAGES_AT_ONCE = 1024
"""Messages validated by one call of :data:`RELAYED_MESSAGES` in :func:`validate_messages`."""


class InvalidMessages(Exception):
    """Some messages do not validate as :class:`Message`\\s; ``failing`` holds the indices
    of those of one batch (all of that batch when the error names none)."""

    def __init__(self, failing: set[int]) -> None:
        super().__init__(f"{len(failing)} message(s) do not validate")
        self.failing = failing


def validate_messages(messages: Sequence[Any]) -> list[Message]:
    """``messages`` validated by :data:`RELAYED_MESSAGES`, :data:`MESSAGES_AT_ONCE` at a time.

    One call holds the GIL throughout (100,000 messages: half a second), so a worker thread
    validating a long history lets the event loop run between batches (SPEC 16).

    Raises:
        InvalidMessages: a batch holds messages that do not validate (the first such batch).
    """
    return [model for batch in _validated(messages) for model in batch]


def check_messages(messages: Sequence[Any]) -> None:
    """What :func:`validate_messages` raises, without keeping a model: each batch's models are
    dropped once it validated (SPEC 16: a model is several times the JSON it came from, so a
    long history of them would pass 8x its body).

    Raises:
        InvalidMessages: as :func:`validate_messages`.
    """
    for _ in _validated(messages):
        pass


def _validated(messages: Sequence[Any]) -> Iterator[list[Message]]:
    for at in range(0, len(messages), MESSAGES_AT_ONCE):
        batch = messages[at : at + MESSAGES_AT_ONCE]
        try:
            yield RELAYED_MESSAGES.validate_python(batch)
        except ValidationError as exc:
            named = {
                at + first
                for each in exc.errors()
                if each["loc"] and isinstance(first := each["loc"][0], int)
            }
            raise InvalidMessages(named or set(range(at, at + len(batch)))) from exc


class InvalidRequest(BadRequest):
    """The body cannot be served: a 400 ``invalid_request_error`` whose message says why."""

    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message, code=code)


class Entry(NamedTuple):
    """One history message and where it came from in the dialect's body.

    ``item`` is the index of the dialect item (input item, message); ``blocks`` the indices of
    the item's content blocks the message was read from, ``()`` when it is the whole item.
    """

    message: dict[str, Any]
    item: int
    blocks: tuple[int, ...] = ()


_ROLE_ONLY: dict[str, dict[str, Any]] = {role.value: {"role": role.value} for role in Role}
"""One role-only history message per role, shared by every message read by its role alone:
never changed (nothing changes a history message; the hooks write new ones)."""
_ROLE_ONLY_IDS = frozenset(map(id, _ROLE_ONLY.values()))


def reads_more_than_role(message: Mapping[str, Any]) -> bool:
    """Whether the hooks, the removal of client pairs and the splice read more of ``message``
    than its role: it carries a synthetic-looking id, in ``tool_call_id`` or in ``tool_calls``,
    whatever its role (SPEC 4 and 9: pairs, their callers, signatures, freshness)."""
    call_id = message.get("tool_call_id")
    if type(call_id) is str and is_synthetic_call_id(call_id):
        return True
    calls = message.get("tool_calls")
    return type(calls) is list and any(map(_synthetic_call, calls))


def _synthetic_call(call: Any) -> bool:
    each = call.get("id") if isinstance(call, Mapping) else None
    return type(each) is str and is_synthetic_call_id(each)


def role_only(role: str) -> dict[str, Any]:
    """The shared role-only message of ``role`` (a :class:`Role` value): what a dialect that
    reads its items for the :attr:`ParsedRequest.outline` puts for a message without a
    synthetic-looking id, without building it (a tool call is three dicts, an Anthropic one
    its arguments' JSON too)."""
    return _ROLE_ONLY[role]


def is_role_only(message: object) -> bool:
    """Whether ``message`` is one of the :attr:`ParsedRequest.outline`'s shared role-only
    messages (which stand for many messages: matched by order, never by identity)."""
    return id(message) in _ROLE_ONLY_IDS


class Outline(NamedTuple):
    """A history read by role (:attr:`ParsedRequest.outline`) and where its messages came from.

    ``blocks`` holds, by index in ``messages``, the blocks of the messages kept whole only
    (those with a synthetic-looking id): those are the only messages the hooks drop, which
    :func:`splice` takes out of their items (the hooks never drop an ordinary message).
    """

    messages: list[dict[str, Any]]
    item_of: Sequence[int]
    blocks: Mapping[int, tuple[int, ...]]


def read_by_role(entries: Iterable[Entry]) -> Outline:
    """``entries`` as an :class:`Outline`: the messages read for more than their role kept
    whole, every other one a shared role-only message; the item indices in an array of C ints
    (an ``int`` object each would cost 32 bytes a message)."""
    messages: list[dict[str, Any]] = []
    item_of = array("i")
    blocks: dict[int, tuple[int, ...]] = {}
    for message, item, at in entries:
        role = message.get("role")
        shared = _ROLE_ONLY.get(role) if type(role) is str else None
        if shared is None or reads_more_than_role(message):
            if at:
                blocks[len(messages)] = at
            messages.append(message)
        else:
            messages.append(shared)
        item_of.append(item)
    return Outline(messages, item_of, blocks)


def whole_history(outline: Outline, entries: Iterable[Entry]) -> list[dict[str, Any]]:
    """The whole history, read as ``entries`` from the items ``outline`` was read from: each
    message the outline keeps whole is the outline's very object (:func:`align` matches a
    synthetic message by identity), every other one as ``entries`` read it."""
    return [
        entry.message if is_role_only(kept) else kept
        for kept, entry in zip(outline.messages, entries, strict=True)
    ]


@dataclass(frozen=True)
class ToolDefinition:
    """What a model is told about a tool the proxy's pairs mention (Anthropic needs it)."""

    name: str
    description: str = ""
    input_schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "object"})


@dataclass(frozen=True)
class RenderContext:
    """What rendering needs beyond the hooks' history.

    ``unsent`` holds call ids the upstream already holds (Responses with upstream-held context:
    stored pairs and pairs replaced in place), which are not forwarded again; ``tools`` the
    definitions of the tools of the pairs, for dialects that must declare them; ``text_form``
    the call ids of pairs to forward in text form (SPEC 15, thinking: Anthropic renders each as
    one text block, declares no tool for it); ``family`` the model
    family whose rules the forwarded pairs follow (:func:`as_forwarded`, SPEC 15).
    """

    unsent: frozenset[str] = frozenset()
    tools: Mapping[str, ToolDefinition] = field(default_factory=dict)
    text_form: frozenset[str] = frozenset()
    """Call ids of pairs forwarded in text form (Anthropic thinking, SPEC 15)."""
    family: Family = "openai"


class ParsedRequest(abc.ABC):
    """A body read by its dialect: the history the hooks see, and how to write it back."""

    body: dict[str, Any]
    _outline: Outline | None = None
    _history: list[dict[str, Any]] | None = None
    long_strings: bool = False
    """Whether the body holds long strings (as :func:`~agent_hooks.serve._json_body.load_json`
    found): :meth:`dump` then looks for them."""

    @property
    def stream(self) -> bool:
        return self.body.get("stream") is True

    @property
    def model(self) -> str | None:
        model = self.body.get("model")
        return model if isinstance(model, str) and model else None

    @property
    @abc.abstractmethod
    def user(self) -> str | None:
        """Who the client says the end user is (the conversation fallback of SPEC 12)."""

    @property
    def end_user(self) -> str | None:
        """The end-user field that names a conversation when nothing else does (SPEC 15):
        OpenAI's ``user``, ``safety_identifier``, ``prompt_cache_key``."""
        for name in ("user", "safety_identifier", "prompt_cache_key"):
            value = self.body.get(name)
            if isinstance(value, str) and value:
                return value
        return None

    @property
    def outline(self) -> Outline:
        """The history as it is read unless a hook reads it, and the item of each message: a
        message read by its role alone (:func:`reads_more_than_role`) may be a shared role-only
        message. Read at first use (off the event loop, like the parse)."""
        if self._outline is None:
            self._outline = read_by_role(self._read(whole=False))
        return self._outline

    @property
    def history(self) -> list[dict[str, Any]]:
        """The whole history, every message as the hooks would read it (for hooks that read the
        history), message for message the :attr:`outline`'s, its very objects where the outline
        keeps a message whole. Read at first use; the outline, when not read yet, comes from
        the same reading."""
        if self._history is None:
            entries = list(self._read(whole=True))
            if self._outline is None:
                self._outline = read_by_role(entries)
            self._history = whole_history(self._outline, entries)
        return self._history

    def _read(self, *, whole: bool) -> Iterable[Entry]:
        """The dialect's reading of its items; without ``whole``, a message without a synthetic
        id may come as its role-only message, unbuilt (:func:`role_only`). A dialect that sets
        its outline and history when it parses (chat) is never asked."""
        raise NotImplementedError

    @property
    def items(self) -> Sequence[Any]:
        """The client's own messages (input items), in its format: what stored pairs are
        anchored to."""
        messages = self.body.get("messages")
        return messages if isinstance(messages, list) else []

    @property
    def first_user_item(self) -> Any | None:
        """The first client item with a user role: part of the conversation's key (SPEC 15)."""
        return next(
            (
                item
                for item in self.items
                if isinstance(item, Mapping) and item.get("role") == "user"
            ),
            None,
        )

    names_answers = False
    """Whether answers carry an id a later request may name (Responses' response ids)."""

    edited = False
    """Whether reading the body changed a field of it (DIAL's deployment became ``model``): it
    is then rendered even when the hooks changed nothing."""

    @property
    def named_conversation(self) -> str | None:
        """The conversation the body names (Responses' ``conversation`` parameter)."""
        return None

    @property
    def previous_response_id(self) -> str | None:
        """The answer this request continues (Responses' ``previous_response_id``)."""
        return None

    @property
    def held(self) -> bool:
        """Whether the upstream holds the earlier turns (Responses' ``previous_response_id``)."""
        return False

    def needs_tool_definitions(self) -> bool:
        """Whether :meth:`render` must declare the tools of the pairs it forwards."""
        return False

    @property
    def thinking(self) -> bool:
        """Whether the model thinks with the round-trip rules of Anthropic's thinking (a tool
        cycle's last assistant message must start with its signed thinking block): no synthetic
        tool call may then sit in the current tool cycle (SPEC 15)."""
        return False

    @property
    def cycle_start(self) -> int | None:
        """The item index where the current tool cycle starts: the last user item that holds
        more than tool results; the cycle is everything after it. ``None`` when there is no
        such item (then the whole history is the current cycle), or the dialect has no cycles.
        """
        return None

    @property
    def text_from(self) -> int | None:
        """With :attr:`thinking`, the first item of the current tool cycle: a pair anchored there
        or later is forwarded in text form (SPEC 15); ``-1`` (every pair) when the whole history
        is the cycle. ``None`` without thinking."""
        if not self.thinking:
            return None
        start = self.cycle_start
        return -1 if start is None else start

    @abc.abstractmethod
    def render(self, history: Sequence[Mapping[str, Any]], context: RenderContext) -> bytes:
        """The body to forward: every field as it came, the hooks' pairs in place.

        ``history`` is the hooks' answer on the :attr:`outline` or on the :attr:`history`: the
        two differ only in messages read by their role, which are matched by order.
        """

    def dump(self, body: Mapping[str, Any]) -> bytes:
        """``body`` (this body, some fields replaced) as :func:`dump_body` writes it."""
        return dump_body(body, long_strings=self.long_strings)


class AnswerReader(Protocol):
    """Reads a streamed answer from SSE bytes fed in the order they arrive."""

    @property
    def response_id(self) -> str | None:
        """The answer's id, once an event has named it (Responses only)."""

    @property
    def done(self) -> bool:
        """Whether the answer's last event went by (a client may close right after it)."""

    @property
    def failed(self) -> bool:
        """Whether the upstream reported a failure in the stream (an error event, a failed or
        incomplete response): the answer did not complete successfully."""

    def feed(self, chunk: bytes) -> None: ...

    def answer(self) -> Answer:
        """The final answer reassembled from everything fed."""


@dataclass(frozen=True)
class Answer:
    """What the upstream answered: the final assistant message (``None`` when it asks for a tool
    call or cannot be read), for Responses the response id, and the tokens the answer says it
    used (``None`` when it says nothing readable)."""

    message: dict[str, Any] | None
    response_id: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True)
class Credentials:
    """How a dialect's upstream learns who calls (SPEC 12 and 13).

    The proxy's own key goes in ``key_header`` (``key_format`` places it); with
    ``--forward-auth`` the client's ``client_headers`` go instead. ``passthrough`` headers
    (API versions, beta flags) are always forwarded.
    """

    key_header: str
    key_format: str
    client_headers: tuple[str, ...]
    passthrough: tuple[str, ...] = ()


OPENAI_CREDENTIALS = Credentials("authorization", "Bearer {}", ("authorization", "api-key"))


class Dialect(Protocol):
    """One API the proxy speaks; a module-level instance per dialect."""

    name: str
    """The route's label in logs and metrics: ``chat``, ``responses``, ``anthropic``."""
    upstream_path: str
    credentials: Credentials
    counts_tokens: bool
    """A token count (Anthropic's ``count_tokens``): no hook runs, nothing is stored, no
    answer is read."""
    error_event: str | None
    """The ``event:`` name of an error inside the dialect's event streams (``None``: its events
    are unnamed). The Anthropic SDK raises only for an event named ``error``; without the name
    a stream the proxy ends with an error looked to it like an empty, finished answer."""

    def parse(self, raw: bytes, *, deployment: str | None = None) -> ParsedRequest:
        """Read a body.

        Raises:
            InvalidRequest: the body is not a request of this dialect.
        """

    def error_body(
        self, status: int, message: str, *, type_: str, code: str | None
    ) -> dict[str, Any]:
        """An error in the dialect's own shape."""

    def answer_from_json(self, raw: bytes) -> Answer: ...

    def usage_from_json(self, raw: bytes) -> Usage | None:
        """The usage of a JSON answer, found without parsing the whole body."""

    def reader(self) -> AnswerReader: ...


class SSELines:
    """Splits server-sent-event bytes into the JSON text of their ``data:`` lines.

    Linear in what is fed: only the unfinished last line is kept between chunks, in pieces
    joined once its end arrives (a long line split finely is not copied once per piece).
    ``done`` turns true at ``data: [DONE]``.
    """

    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self.done = False

    def feed(self, chunk: bytes) -> Iterator[bytes]:
        if b"\n" not in chunk:
            self._pending.append(chunk)
            return iter(())
        *lines, rest = b"".join([*self._pending, chunk]).split(b"\n")
        self._pending = [rest] if rest else []
        return self._data(lines)

    def flush(self) -> Iterator[bytes]:
        lines, self._pending = [b"".join(self._pending)], []
        return self._data(lines)

    def _data(self, lines: list[bytes]) -> Iterator[bytes]:
        for line in lines:
            if line.startswith(b"data:"):
                data = line[5:].strip()
                if data == b"[DONE]":
                    self.done = True
                elif data:
                    yield data


def dump_body(body: Mapping[str, Any], *, long_strings: bool = True) -> bytes:
    """``pydantic_core.to_json(body)``, byte for byte, a large body written in pieces
    (:func:`~agent_hooks._json_writer.compact_json`, SPEC 16: a list a batch of items at a
    time, a long string in slices): without spaces, as the clients send them (httpx,
    ``JSON.stringify``, serde), so a client message written again is mostly its bytes as sent
    (SPEC 15). ``long_strings=False``: the body holds none (its parse found none), so they are
    not looked for."""
    return compact_json(body, long_strings=long_strings)


def synthetic_call_id(message: Mapping[str, Any]) -> str | None:
    """The call id when ``message`` is one half of a synthetic pair, else ``None``."""
    if message.get("role") == "tool":
        call_id = message.get("tool_call_id")
    else:
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not isinstance(calls, list) or len(calls) != 1 or not isinstance(calls[0], Mapping):
            return None
        call_id = calls[0].get("id")
    return call_id if isinstance(call_id, str) and is_synthetic_call_id(call_id) else None


def as_forwarded(
    messages: Sequence[Mapping[str, Any]], family: Family
) -> Sequence[Mapping[str, Any]]:
    """``messages`` with every synthetic half as the model ``family`` must receive it (ids,
    signatures: :func:`~agent_hooks.serve._families.for_family`); ``messages`` itself when the
    family changes nothing. Applied only where a dialect renders, after :func:`splice` and
    :func:`align` matched the pairs by their own ids."""
    if family in ("openai", "anthropic"):
        return messages
    return [
        for_family(message, family) if synthetic_call_id(message) else message
        for message in messages
    ]


def forged_half(call_id: Any, *, result: bool) -> dict[str, Any] | None:
    """The history message for a tool call (or, with ``result``, tool result) item the dialect
    cannot read, when its id is synthetic; ``None`` for any other id (the item stays, unread).

    The proxy's pairs never reach clients, so such an item is forged or replayed (SPEC 12.1): a
    history message with its id is what lets the removal of client pairs drop it, wherever it
    sits and however malformed the rest of it is.
    """
    if not (isinstance(call_id, str) and is_synthetic_call_id(call_id)):
        return None
    if result:
        return {"role": "tool", "tool_call_id": call_id, "content": ""}
    call = {"id": call_id, "type": "function", "function": {"name": "", "arguments": "{}"}}
    return {"role": "assistant", "tool_calls": [call]}


def align(
    before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]
) -> list[int | None]:
    """For each message of ``after``, the index in ``before`` of the message it is, or ``None``
    when the hooks added it.

    Ordinary messages are matched by order (the hooks never add, drop or change one); a
    synthetic message only when it is the very object of ``before``. One that merely carries the
    id of a client's synthetic message is the proxy's own (a stored pair re-applied, a pair the
    hooks wrote again): matched, the client's item would go upstream as the client wrote it (its
    arguments or content edited, a key duplicated in an Anthropic ``input``) in the pair's place,
    though SPEC 12.1 removes every pair a client sends.
    """
    synthetic: dict[int, int] = {}
    ordinary: list[int] = []
    for index, message in enumerate(before):
        if synthetic_call_id(message) is None:
            ordinary.append(index)
        else:
            synthetic[id(message)] = index
    remaining = iter(ordinary)
    matches: list[int | None] = []
    for message in after:
        if synthetic_call_id(message) is None:
            matches.append(next(remaining))
        else:
            matches.append(synthetic.pop(id(message), None))
    return matches


def splice(
    items: Sequence[_T],
    before: Outline,
    after: Sequence[Mapping[str, Any]],
    *,
    render: Callable[[list[Mapping[str, Any]]], list[_T]],
    without_blocks: Callable[[_T, frozenset[int]], _T | None],
    matches: Sequence[int | None] | None = None,
) -> list[_T]:
    """The dialect items for ``after``, the hooks' history on ``before``'s messages.

    Items whose messages the hooks kept are copied as they came; an item whose whole message the
    hooks dropped is left out, and one that lost some blocks is rebuilt by ``without_blocks``
    (``None`` when nothing is left). ``render`` writes the messages the hooks added, in runs. An
    item without entries stays before the next item that has one, so a reasoning item keeps the
    item it belongs to. Every added message thus follows the item of the kept message before it,
    at the end too (items after the last kept one come after what is appended): that item is the
    pair's anchor (SPEC 15), so a pair re-applied next turn, when more follows, lands in the same
    place.
    ``matches`` is :func:`align` of ``before``'s messages and ``after``, when the caller has it.
    """
    if matches is None:
        matches = align(before.messages, after)
    item_of = before.item_of
    kept = {match for match in matches if match is not None}
    dropped_items: set[int] = set()
    dropped_blocks: dict[int, set[int]] = {}
    for index in range(len(item_of)):
        if index in kept:
            continue
        blocks = before.blocks.get(index)
        if blocks:
            dropped_blocks.setdefault(item_of[index], set()).update(blocks)
        else:
            dropped_items.add(item_of[index])

    out: list[_T] = []
    emitted = 0

    def emit_through(last: int) -> None:
        nonlocal emitted
        for index in range(emitted, last + 1):
            if index in dropped_items:
                continue
            item: _T | None = items[index]
            if index in dropped_blocks:
                item = without_blocks(items[index], frozenset(dropped_blocks[index]))
            if item is not None:
                out.append(item)
        emitted = max(emitted, last + 1)

    added: list[Mapping[str, Any]] = []
    for message, match in zip(after, matches, strict=True):
        if match is None:
            added.append(message)
            continue
        if added:
            out.extend(render(added))
            added = []
        emit_through(item_of[match])
    if added:
        out.extend(render(added))
    emit_through(len(items) - 1)
    return out
