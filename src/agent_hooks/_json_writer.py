"""JSON written in pieces: the bytes of ``encoder.encode(value)``, without a ``str`` of the whole.

``json.dumps`` builds one ``str`` of the whole value, and a ``str`` takes up to four bytes a
character: one character outside the BMP (an emoji) makes every character of it take four, one
outside Latin-1 two. The escaped copy of a long string and the joined text beside the value
itself made a 16 MiB body with one emoji cost 13x its size to write (SPEC 16). So
:func:`write_json` writes a list a batch of items at a time, each batch encoded to bytes at once,
and a long string in slices: no ``str`` larger than a batch or a slice exists. A batch holds at
most :data:`ITEMS_AT_ONCE` items and about :data:`CHARS_AT_ONCE` bytes (sized by the batch
before it), which also lets a worker thread hand the GIL over between batches.

Two forms: :func:`write_json` writes what a :class:`json.JSONEncoder` would (the canonical
digests), :func:`compact_json` what ``pydantic_core.to_json`` writes, without spaces (the
bodies ``serve`` forwards: the form httpx, ``JSON.stringify`` and serde send, written about three
times faster than the ``json`` module writes its own).

Pure: bytes go to the ``write`` callable given (a buffer's ``write``, a hash's ``update``).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from pydantic_core import to_json

__all__ = [
    "CHARS_AT_ONCE",
    "ITEMS_AT_ONCE",
    "LONG_STRING_CHARS",
    "compact_json",
    "write_json",
]

LONG_STRING_CHARS = 1 << 16
"""Strings from this length are written in slices, and the containers holding them a value at a
time: a batch holding one could not be kept to :data:`CHARS_AT_ONCE`."""
ITEMS_AT_ONCE = 64
"""List items written by one call of the C encoder, at most: enough that its per-call cost is
nothing beside theirs, few enough that a worker thread writing a long history lets the event
loop in often (about every 256 KiB of 4 KiB messages)."""
CHARS_AT_ONCE = 256 * 1024
"""About how many bytes one batch writes (its ``str``, for :func:`write_json`: at most 1 MiB)."""
_FIRST_BATCH = 8
"""Items in a list's first batch, before any size is known: a list this short is one batch."""
_SLICE_CHARS = 64 * 1024
"""Characters of a long string written at once."""

_ENCODER = json.JSONEncoder(ensure_ascii=False)

_Write = Callable[[bytes | memoryview], object]


class _Form(NamedTuple):
    """How values are written: ``encode`` writes one whole, the separators go between."""

    encode: Callable[[Any], bytes]
    item_separator: bytes
    key_separator: bytes
    sort_keys: bool = False


_COMPACT = _Form(to_json, b",", b":")


def write_json(
    value: Any,
    write: _Write,
    *,
    encoder: json.JSONEncoder = _ENCODER,
    errors: str = "strict",
    long_strings: bool = True,
) -> None:
    """Write ``encoder.encode(value).encode("utf-8", errors)`` to ``write``, in pieces.

    ``encoder`` must write without indentation and with the default separators (its
    ``sort_keys`` is followed). ``long_strings``: ``value`` may hold strings of
    :data:`LONG_STRING_CHARS` or more; ``False`` when the caller knows it holds none (the
    parser's walk found none), which spares a walk over it. A value without a long string or a
    list longer than a first batch, at the top or as a field of the top-level object, is
    written at once (a small body: one call, as ``json.dumps``).
    """

    def encode(piece: Any) -> bytes:
        return encoder.encode(piece).encode("utf-8", errors)

    hot = _in_pieces(value, long_strings)
    if hot is None:
        write(encode(value))
    else:
        _Writer(write, _Form(encode, b", ", b": ", encoder.sort_keys), hot).write_top(value)


def compact_json(value: Any, *, long_strings: bool = True) -> bytes:
    """``pydantic_core.to_json(value)``, written in pieces as :func:`write_json` writes when the
    value is large (into one buffer that becomes the bytes returned without a copy: CPython's
    ``BytesIO.getvalue``): JSON without spaces, every character but the escaped ones as it is.

    It is ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` but for floats under
    ``1e-4``, written without an exponent (``0.00001``, not ``1e-05``).

    Raises:
        pydantic_core.PydanticSerializationError: a string holds a lone surrogate (no UTF-8
            text can), or a value is not JSON's (only what a JSON parser returns is written).
    """
    hot = _in_pieces(value, long_strings)
    if hot is None:
        return to_json(value)
    out = io.BytesIO()
    _Writer(out.write, _COMPACT, hot).write_top(value)
    return out.getvalue()


def _in_pieces(value: Any, long_strings: bool) -> set[int] | None:
    """What :class:`_Writer` writes a value at a time (``hot``), when ``value`` is written in
    pieces at all: ``None`` without a long string or a list longer than a first batch, at the
    top or as a field of the top-level object (one call for it all, as ``json.dumps``)."""
    hot = _holding(value) if long_strings else set()
    return None if not hot and not _has_long_list(value) else hot


def _has_long_list(value: Any) -> bool:
    if type(value) is list:
        return len(value) > _FIRST_BATCH
    return type(value) is dict and any(
        type(field) is list and len(field) > _FIRST_BATCH for field in value.values()
    )


class _Writer:
    """Writes values; ``hot`` holds the ``id()`` of the long strings and of every container that
    holds one (at any depth): those are written a value at a time, the rest by the encoder."""

    def __init__(self, write: _Write, form: _Form, hot: set[int]):
        self._write = write
        self._form = form
        self._hot = hot

    def write_top(self, value: Any) -> None:
        if type(value) is dict:
            self.write_object(value)
        else:
            self.write(value)

    def write(self, value: Any) -> None:
        if id(value) not in self._hot:
            if type(value) is list and len(value) > _FIRST_BATCH:
                self.write_list(value)
            else:
                self._write(self._form.encode(value))
        elif type(value) is str:
            self._write_long(value)
        elif type(value) is list:
            self.write_list(value)
        else:
            self.write_object(value)

    def write_object(self, value: Mapping[Any, Any]) -> None:
        form = self._form
        if not all(type(key) is str for key in value):
            self._write(form.encode(value))
            return  # keys the encoder converts (numbers, None): rare, never a parsed body's
        write = self._write
        items = sorted(value.items()) if form.sort_keys else value.items()
        write(b"{")
        for index, (key, item) in enumerate(items):
            if index:
                write(form.item_separator)
            write(form.encode(key))
            write(form.key_separator)
            self.write(item)
        write(b"}")

    def write_list(self, items: list[Any]) -> None:
        """Batches of items, each sized by the one before; a hot item alone."""
        write, hot = self._write, self._hot
        write(b"[")
        at, size = 0, _FIRST_BATCH
        while at < len(items):
            if at:
                write(self._form.item_separator)
            if hot and id(items[at]) in hot:
                self.write(items[at])
                at += 1
                continue
            end = min(at + size, len(items))
            if hot:
                end = next((i for i in range(at, end) if id(items[i]) in hot), end)
            text = self._form.encode(items[at:end])
            write(memoryview(text)[1:-1])  # less its brackets
            size = max(1, min(ITEMS_AT_ONCE, (end - at) * CHARS_AT_ONCE // len(text)))
            at = end
        write(b"]")

    def _write_long(self, text: str) -> None:
        """Escaping is per character, so the slices escaped one by one are the whole escaped."""
        write = self._write
        write(b'"')
        for at in range(0, len(text), _SLICE_CHARS):
            write(memoryview(self._form.encode(text[at : at + _SLICE_CHARS]))[1:-1])
        write(b'"')


_Link = tuple[Any, "_Link | None"]
"""A container, and the link of the container that holds it (``None`` at the top)."""


def _holding(value: Any) -> set[int]:
    """The ``id()`` of ``value``'s long strings and of every container that holds one: walked
    level by level, each container linked to the one that holds it; a long string marks the
    containers up its links."""
    hot: set[int] = set()
    if type(value) is str:
        return {id(value)} if len(value) >= LONG_STRING_CHARS else hot
    level: list[_Link] = [(value, None)] if type(value) is dict or type(value) is list else []
    while level:
        level = [
            (child, link)
            for link in level
            for child in (link[0].values() if type(link[0]) is dict else link[0])
            if type(child) is dict
            or type(child) is list
            or (type(child) is str and len(child) >= LONG_STRING_CHARS and _mark(hot, child, link))
        ]
    return hot


def _mark(hot: set[int], text: str, link: _Link | None) -> bool:
    """Mark ``text`` and the containers up ``link`` hot; false, so the walk goes on."""
    hot.add(id(text))
    while link is not None and id(link[0]) not in hot:
        hot.add(id(link[0]))
        link = link[1]
    return False
