"""A request body's JSON, read within the limits (SPEC 12.1): strict UTF-8, and checked for depth
and for numbers no model API accepts while it is parsed."""

from __future__ import annotations

import codecs
import json
import math
import re
from typing import Any, NoReturn

from agent_hooks.serve._errors import BadRequest

__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "load_json"]

MAX_DEPTH = 128
MAX_INT_DIGITS = 4300
"""Python's own limit on converting digits to an integer; past it, ``int()`` refuses."""


def load_json(raw: bytes) -> Any:
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
    try:
        text = str(raw, "utf-8-sig" if raw.startswith(codecs.BOM_UTF8) else "utf-8")
    except UnicodeDecodeError as exc:
        raise BadRequest(
            f"the body is not UTF-8: {exc.reason} at byte {exc.start}", code="invalid_utf8"
        ) from exc
    try:
        value = json.loads(
            text,
            object_hook=_same,
            parse_constant=_non_finite,
            parse_float=_float,
            parse_int=_int,
        )
    except RecursionError:
        _too_deep()
    except json.JSONDecodeError as exc:
        raise BadRequest(f"the body is not JSON: {exc}", code="invalid_json") from exc
    _check_depth(value)
    if _SURROGATE_ESCAPE.search(raw):
        _check_surrogates(value)  # only then can a string hold one: most bodies skip the walk
    return value


def _check_depth(value: Any) -> None:
    r"""Walk containers level by level, without recursion, keeping only containers at each
    level (the parser makes exact ``dict``\s and ``list``\s: an exact type test is cheapest)."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > MAX_DEPTH:
            _too_deep()
        level = [
            child
            for container in level
            for child in (container.values() if type(container) is dict else container)
            if type(child) is dict or type(child) is list
        ]


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
