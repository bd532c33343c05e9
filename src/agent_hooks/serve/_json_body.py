"""A request body's JSON, read within the limits (SPEC 12.1) and within 8x its size (SPEC 16).

The body must be strict UTF-8 (RFC 8259; a leading byte order mark is skipped, as it allows):
``json.loads`` on bytes would also take UTF-16 and UTF-32, and decodes with ``surrogatepass``, so
encoded surrogates (``ED A0 80``) would become strings no UTF-8 body sent upstream can hold. The
JSON is checked for depth and for numbers no model API accepts while it is parsed.

The standard parser reads a ``str`` of the whole body, and one character outside the BMP (an
emoji) makes a ``str`` take four bytes a character throughout: a 16 MiB body became 64 MiB of
text beside what it parsed into. So such characters go to the parser as JSON escapes, in a text
of a byte or two a character (:func:`_escaped`). A string holding one is then built by the
parser's string builder, which takes a quarter more room while it grows, and for a long string
as much again when it widens at the character: for a body that is mostly one such string (few
quote characters, one of them far from the character) the bytes are parsed by
``pydantic_core.from_json`` instead, which builds each string at its size. That parser holds the
GIL for the whole parse (the standard one lets other threads in at every object), which for a
body of few strings is the time of decoding it, as for the standard parser's one string.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from typing import Any, NamedTuple, NoReturn

from pydantic_core import from_json

from agent_hooks._json_writer import LONG_STRING_CHARS
from agent_hooks.serve._errors import BadRequest

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "Loaded", "load_json"]

MAX_DEPTH = 128
MAX_INT_DIGITS = 4300
"""Python's own limit on converting digits to an integer; past it, ``int()`` refuses."""


class Loaded(NamedTuple):
    """A body as :func:`load_json` read it."""

    value: Any
    long_strings: bool
    """Whether a string value is :data:`~agent_hooks._json_writer.LONG_STRING_CHARS` long or
    more: a writer must then look for such strings (to write them in slices); most bodies hold
    none, and are spared the walk."""


def load_json(raw: bytes) -> Loaded:
    """``raw`` parsed, refusing what would cost the proxy or confuse the upstream.

    Raises:
        BadRequest: not UTF-8 (``invalid_utf8``); not JSON (``invalid_json``); nested deeper
            than :data:`MAX_DEPTH` (``too_deep``); ``NaN``/``Infinity`` or a float that
            overflows (``non_finite_number``); an integer of more than :data:`MAX_INT_DIGITS`
            digits (``number_too_large``); a string escaping a lone UTF-16 surrogate
            (``invalid_unicode``), which is not Unicode text either.
    """
    value = _value(raw)
    long_strings = _check_tree(value)
    if _SURROGATE_ESCAPE.search(raw):
        _check_surrogates(value)  # only then can a string hold one: most bodies skip the walk
    return Loaded(value, long_strings)


def _value(raw: bytes) -> Any:
    codec = "utf-8-sig" if raw.startswith(codecs.BOM_UTF8) else "utf-8"
    if raw.isascii() or not any(lead in raw for lead in _ASTRAL_LEADS):
        return _parsed(_text(raw, codec))
    if codec == "utf-8" and _mostly_one_string(raw):
        value = _from_bytes(raw)
        if value is not None:
            return value
    text = _escaped(raw, codec)
    if text is None:
        return _parsed(_text(raw, codec))
    try:
        return _parse(text)
    except json.JSONDecodeError:
        del text
        return _parsed(_text(raw, codec))  # refused where the client's own text has the error


def _text(raw: bytes, codec: str) -> str:
    """Raises:
    BadRequest: ``raw`` is not UTF-8 (``invalid_utf8``).
    """
    try:
        return str(raw, codec)
    except UnicodeDecodeError as exc:
        raise BadRequest(
            f"the body is not UTF-8: {exc.reason} at byte {exc.start}", code="invalid_utf8"
        ) from exc


def _parsed(text: str) -> Any:
    """Raises:
    BadRequest: as :func:`load_json`, but for UTF-8 and surrogate escapes.
    """
    try:
        return _parse(text)
    except json.JSONDecodeError as exc:
        raise BadRequest(f"the body is not JSON: {exc}", code="invalid_json") from exc


def _parse(text: str) -> Any:
    """Raises:
    BadRequest: too deep, or a number past the limits.
    json.JSONDecodeError: ``text`` is not JSON.
    """
    try:
        return json.loads(
            text,
            object_hook=_SharedWords().object,
            parse_constant=_non_finite,
            parse_float=_float,
            parse_int=_int,
        )
    except RecursionError:
        _too_deep()


_ASTRAL_LEADS = (b"\xf0", b"\xf1", b"\xf2", b"\xf3", b"\xf4")
"""The lead bytes of the UTF-8 of a character outside the BMP (and of nothing else)."""
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
_SLICE_BYTES = 1024 * 1024
"""Bytes decoded at once where a body holds characters outside the BMP."""
_ESCAPED_AT_MOST = 16
"""Characters outside the BMP are escaped while there is at most one in this many bytes: an
escape is 12 characters, so past that the escaped text would not be the smaller one."""


def _escaped(raw: bytes, codec: str) -> str | None:
    """``raw`` decoded, each character outside the BMP as its JSON escape (a UTF-16 surrogate
    pair, which the parser reads back as the character); ``None`` where the text would not be
    the smaller one (too many such characters), where an escape would read differently (one
    right after a backslash) or where ``raw`` is not UTF-8 (the whole body's decoding says
    where). Decoded in slices, and only slices that hold such a character are searched."""
    if any(b"\\" + lead in raw for lead in _ASTRAL_LEADS):
        return None
    decoder = codecs.getincrementaldecoder(codec)()
    view = memoryview(raw)
    parts: list[str] = []
    escaped = 0
    for at in range(0, len(raw), _SLICE_BYTES):
        end = at + _SLICE_BYTES
        try:
            part = decoder.decode(view[at:end], final=end >= len(raw))
        except UnicodeDecodeError:
            return None
        if any(raw.find(lead, max(at - 3, 0), end) >= 0 for lead in _ASTRAL_LEADS):
            part, count = _ASTRAL.subn(_escape, part)
            escaped += count
            if escaped > len(raw) // _ESCAPED_AT_MOST:
                return None
        parts.append(part)
    return "".join(parts)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group()) - 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


_BYTES_A_QUOTE = 1024
"""A body with fewer quote characters than one in this many bytes holds few strings: the bytes
parser decodes it in about the time the standard parser holds the GIL for its longest string."""
_ASTRAL_LOOKED_AT = 64
"""Characters outside the BMP looked at for one in a long string, at most."""


def _mostly_one_string(raw: bytes) -> bool:
    """Whether a character outside the BMP sits in a run of more than
    :data:`~agent_hooks._json_writer.LONG_STRING_CHARS` bytes without a quote character (so in
    a string at least that long), and the body holds few quote characters."""
    looked = 0
    for lead in _ASTRAL_LEADS:
        at = raw.find(lead)
        while at >= 0 and looked < _ASTRAL_LOOKED_AT:
            looked += 1
            start = raw.rfind(b'"', max(at - LONG_STRING_CHARS, 0), at)
            end = raw.find(b'"', at, at + LONG_STRING_CHARS)
            start = at - LONG_STRING_CHARS if start < 0 else start
            end = at + LONG_STRING_CHARS if end < 0 else end
            if end - start > LONG_STRING_CHARS:
                return raw.count(b'"') <= len(raw) // _BYTES_A_QUOTE
            at = raw.find(lead, at + 1)
    return False


def _from_bytes(raw: bytes) -> Any | None:
    """``raw`` parsed from its bytes; ``None`` when this parser refuses it or it holds a float
    that overflows, which the standard parser must then refuse with its reason (it refuses all
    this one does: other UTF-8, other JSON, surrogate escapes, integers over 4,300 digits)."""
    try:
        value = from_json(raw, allow_inf_nan=False)
    except ValueError:
        return None
    return value if _finite(value) else None


def _finite(value: Any) -> bool:
    """No float in ``value`` is infinite (the bytes parser reads ``1e999`` as one)."""
    level = [value]
    while level:
        if any(type(item) is float and not math.isfinite(item) for item in level):
            return False
        level = [
            child
            for container in level
            if type(container) is dict or type(container) is list
            for child in (container.values() if type(container) is dict else container)
        ]
    return True


def _check_tree(value: Any) -> bool:
    r"""Walk containers level by level, without recursion, keeping only containers at each
    level (the parser makes exact ``dict``\s and ``list``\s: an exact type lookup is cheapest),
    checking the depth; whether a string value is
    :data:`~agent_hooks._json_writer.LONG_STRING_CHARS` long or more (one more test a string, on
    the way through the walk's filter).

    Keys are not looked at (a pass over every key would cost a third of the walk): a key that
    long is written whole."""
    level: list[Any] = [value] if type(value) is dict or type(value) is list else []
    long = [value] if type(value) is str and len(value) >= LONG_STRING_CHARS else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            _too_deep()
        level = [
            child
            for container in level
            for child in (container.values() if type(container) is dict else container)
            if type(child) in _CONTAINERS
            or (type(child) is str and len(child) >= LONG_STRING_CHARS and _aside(long, child))
        ]
    return bool(long)


_CONTAINERS = frozenset({dict, list})


def _aside(found: list[str], text: str) -> bool:
    """Keep ``text`` in ``found``; false, so the walk does not take it for a container."""
    found.append(text)
    return False


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
"""A JSON escape of a UTF-16 surrogate; paired ones decode to one character, lone ones stay."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def _check_surrogates(value: Any) -> None:
    """Every string (keys too) must be Unicode text: a lone surrogate left by the decoder makes
    encoding the forwarded body fail."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str) and _SURROGATE.search(item):
            raise BadRequest(
                "the JSON holds a lone UTF-16 surrogate escape, which is not Unicode text",
                code="invalid_unicode",
            )


def _too_deep() -> NoReturn:
    raise BadRequest(f"the JSON is nested deeper than {MAX_DEPTH} levels", code="too_deep")


class _SharedWords:
    """The parser's call for each object, which makes the values of its ``type``, ``role`` and
    ``name`` keys (``function_call``, ``tool_result``, ``assistant``, a tool's name) one string
    per distinct value for the whole body.

    The parser shares repeated keys but builds every value anew: in a long tool loop the type,
    role and tool name strings of each item took a sixth of the parsed body (Anthropic, 100,000
    messages: 6.5x the body's size, 5.4x shared; SPEC 16). The call is also a point where a
    worker thread parsing a large body lets the event loop run (one call of the C parser holds
    the GIL throughout, and a history of strings gives it no other).
    """

    def __init__(self) -> None:
        self._words: dict[str, str] = {}

    def object(self, value: dict[str, Any]) -> dict[str, Any]:
        # written out: a loop over the three keys made the parse of a long history 10% slower
        words = self._words
        if "type" in value and type(word := value["type"]) is str:
            value["type"] = words.setdefault(word, word)
        if "role" in value and type(word := value["role"]) is str:
            value["role"] = words.setdefault(word, word)
        if "name" in value and type(word := value["name"]) is str:
            value["name"] = words.setdefault(word, word)
        return value


def _non_finite(text: str) -> NoReturn:
    raise BadRequest(f"the JSON holds {text}, which is not a number", code="non_finite_number")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadRequest(f"the JSON number {text[:40]} is too large", code="non_finite_number")
    return value


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise BadRequest(
            f"the JSON holds an integer of more than {MAX_INT_DIGITS} digits",
            code="number_too_large",
        )
    return int(text)
