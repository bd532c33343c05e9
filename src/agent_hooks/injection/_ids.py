"""Synthetic call ids: how a hook recognises its own earlier pairs in a history.

``synth_t_{h6(tool)}_a_{h6(args)}_c_{h6(content)}[_ttl_{expiry:08x}][_s_{sig}]`` where ``h6`` is
the first six hex digits of SHA-256. The part up to ``_a_{h6(args)}_`` means "this tool with these
arguments"; the content hash tells whether a result changed; the optional expiry (absolute Unix
seconds, lowercase hex) says until when the result is fresh; the optional signature (SPEC section
9) says that this process, or one sharing its key, wrote the pair. Ids stay within OpenAI's 64.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_CALL_ID_LENGTH",
    "PREFIX_LENGTH",
    "SYNTHETIC_ID_PREFIX",
    "ParsedCallId",
    "arguments_json",
    "call_id_prefix",
    "h6",
    "is_synthetic_call_id",
    "make_call_id",
    "parse_call_id",
    "prefixed_call_id",
    "ttl_expiry",
]

SYNTHETIC_ID_PREFIX = "synth_t_"

MAX_CALL_ID_LENGTH = 64
"""OpenAI rejects longer tool call ids; a longer synthetic-looking id was not written by us."""

PREFIX_LENGTH = len("synth_t_000000_a_000000_")
"""Length of the "this tool with these arguments" part of every synthetic id."""

_MAX_EXPIRY_DIGITS = 10
"""Hex digits of an expiry: ten cover any clock up to the year 36812, and keep ids short."""

_ID_PATTERN = re.compile(
    r"synth_t_[0-9a-f]{6}_a_[0-9a-f]{6}_c_(?P<content>[0-9a-f]{6})"
    rf"(?:_ttl_(?P<expiry>[0-9a-f]{{1,{_MAX_EXPIRY_DIGITS}}}))?"
    r"(?:_s_(?P<signature>[0-9a-f]{12}))?"
)


@dataclass(frozen=True)
class ParsedCallId:
    """The parts of a synthetic call id."""

    prefix: str
    content_hash: str
    expiry: int | None
    signature: str | None
    unsigned: str
    """The id without its ``_s_`` segment: what a signature covers."""


def h6(text: str) -> str:
    """First six hex digits of the SHA-256 of ``text``'s UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:6]


def arguments_json(arguments: Mapping[str, Any]) -> str:
    """The canonical JSON of the arguments: sorted keys, Python's default separators."""
    return json.dumps(arguments, sort_keys=True)


def call_id_prefix(tool_name: str, arguments: Mapping[str, Any]) -> str:
    """The id prefix shared by every pair of ``tool_name`` called with ``arguments``."""
    return f"{SYNTHETIC_ID_PREFIX}{h6(tool_name)}_a_{h6(arguments_json(arguments))}_"


def make_call_id(
    tool_name: str,
    arguments: Mapping[str, Any],
    content_key: str,
    *,
    ttl_expiry_seconds: int | None = None,
) -> str:
    """An unsigned call id for one synthetic pair.

    ``content_key`` is the tool message's text (or a random token, for ids that must differ on
    every call).

    Raises:
        ValueError: a negative expiry (a clock set before 1970), which has no hex form.
    """
    return prefixed_call_id(
        call_id_prefix(tool_name, arguments), content_key, ttl_expiry_seconds=ttl_expiry_seconds
    )


def prefixed_call_id(prefix: str, content_key: str, *, ttl_expiry_seconds: int | None) -> str:
    """:func:`make_call_id` for a prefix computed once (the runtime keeps one per hook).

    Raises:
        ValueError: a negative expiry.
    """
    call_id = f"{prefix}c_{h6(content_key)}"
    if ttl_expiry_seconds is not None:
        if ttl_expiry_seconds < 0:
            raise ValueError(f"a TTL expiry is Unix seconds >= 0, got {ttl_expiry_seconds}")
        call_id += f"_ttl_{ttl_expiry_seconds:08x}"
    return call_id


def parse_call_id(call_id: str | None) -> ParsedCallId | None:
    """The parts of a synthetic id; ``None`` for any other id (or an over-long one)."""
    if call_id is None or len(call_id) > MAX_CALL_ID_LENGTH:
        return None
    match = _ID_PATTERN.fullmatch(call_id)
    if match is None:
        return None
    expiry = match["expiry"]
    signature = match["signature"]
    unsigned = call_id if signature is None else call_id[: match.start("signature") - 3]
    return ParsedCallId(
        prefix=call_id[:PREFIX_LENGTH],
        content_hash=match["content"],
        expiry=None if expiry is None else int(expiry, 16),
        signature=signature,
        unsigned=unsigned,
    )


def is_synthetic_call_id(call_id: str | None) -> bool:
    """Whether ``call_id`` has the synthetic shape, trusted or not (placement uses this)."""
    return (
        call_id is not None
        and call_id.startswith(SYNTHETIC_ID_PREFIX)
        and _ID_PATTERN.fullmatch(call_id) is not None
    )


def ttl_expiry(call_id: str) -> int | None:
    """The expiry stamped into a synthetic id; ``None`` when it carries none (counts as expired)."""
    parsed = parse_call_id(call_id)
    return None if parsed is None else parsed.expiry
