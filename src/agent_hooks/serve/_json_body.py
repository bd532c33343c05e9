"""A request body's JSON, read within the limits (SPEC 12.1): strict UTF-8, and checked for depth
and for numbers no model API accepts while it is parsed."""

from __future__ import annotations

import codecs
import json
import math
import re
from typing import Any, NamedTuple, NoReturn

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

    The body is decoded as strict UTF-8 first (a leading byte order mark is skipped, as RFC 8259
    allows): ``json.loads`` on bytes would also take UTF-16 and UTF-32, and decodes with
    ``surrogatepass``, so encoded surrogates (``ED A0 80``) would become strings no UTF-8 body
    sent upstream can hold.

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
    return _parsed(_text(raw, "utf-8-sig" if raw.startswith(codecs.BOM_UTF8) else "utf-8"))


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
            object_hook=_same,
            parse_constant=_non_finite,
            parse_float=_float,
            parse_int=_int,
        )
    except RecursionError:
        _too_deep()


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


def _same(value: dict[str, Any]) -> dict[str, Any]:
    """The parser's call for each object: a point where a worker thread parsing a large body
    lets the event loop run (SPEC 16; one call of the C parser holds the GIL throughout, and a
    history of strings gives it no other)."""
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
