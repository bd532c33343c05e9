"""Synthetic call ids: how a hook recognises its own earlier pairs in a history (SPEC section 4).

``ah_{i8}_{c6}[_t{expiry:08x}][_s{sig10}]``: ``i8`` hashes "this tool with these arguments", ``c6``
the tool message's text, the optional expiry (absolute Unix seconds, exactly eight lowercase hex
digits) says until when the result is fresh, and the optional signature (SPEC section 9) says that
this process, or one sharing its key, wrote the pair.

The shape is set by what providers accept, not by us: OpenAI and Azure refuse a ``tool_calls[].id``
over 40 characters, Anthropic accepts only ``[a-zA-Z0-9_-]``, so every id is at most 40 characters
of ``[a-z0-9_]`` (the longest, with both optional segments, is exactly 40).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = [
    "MAX_CALL_ID_LENGTH",
    "MAX_EXPIRY",
    "PREFIX_LENGTH",
    "SYNTHETIC_ID_PREFIX",
    "ParsedCallId",
    "arguments_json",
    "call_id_prefix",
    "content_hash",
    "is_synthetic_call_id",
    "parse_call_id",
    "prefixed_call_id",
    "ttl_expiry",
]

SYNTHETIC_ID_PREFIX = "ah_"

MAX_CALL_ID_LENGTH = 40
"""OpenAI and Azure reject longer ``tool_calls[].id`` values ("Expected a string with maximum
length 40"); every id we write fits, so a longer synthetic-looking id was not written by us."""

PREFIX_LENGTH = len("ah_00000000_")
"""Length of the "this tool with these arguments" part of every synthetic id."""

MAX_EXPIRY = 0xFFFFFFFF
"""Expiries are exactly eight hex digits; a later one (after 2106) is clamped to this."""

_ID_PATTERN = re.compile(
    r"ah_[0-9a-f]{8}_(?P<content>[0-9a-f]{6})"
    r"(?:_t(?P<expiry>[0-9a-f]{8}))?"
    r"(?:_s(?P<signature>[0-9a-f]{10}))?"
)


# The records built per hook and run are NamedTuples: a frozen dataclass's ``__init__`` sets each
# field through ``object.__setattr__``, several times slower, on the path of every hook call.


class ParsedCallId(NamedTuple):
    """The parts of a synthetic call id."""

    prefix: str
    content_hash: str
    expiry: int | None
    signature: str | None
    unsigned: str
    """The id without its ``_s`` segment: what a signature covers."""


def _hex(text: str, digits: int) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:digits]


def content_hash(text: str) -> str:
    """``c6``: the first six hex digits of the SHA-256 of a tool message's text."""
    return _hex(text, 6)


def arguments_json(arguments: Mapping[str, Any]) -> str:
    """The canonical JSON of the arguments: sorted keys, Python's default separators."""
    return _SORTED_KEYS.encode(arguments)


_SORTED_KEYS = json.JSONEncoder(sort_keys=True)
"""``json.dumps(..., sort_keys=True)`` without building an encoder per call (templated hooks
render their arguments on every run)."""


def call_id_prefix(tool_name: str, arguments: Mapping[str, Any]) -> str:
    """``ah_{i8}_``, shared by every pair of ``tool_name`` called with ``arguments``."""
    identity = f"{tool_name}\n{arguments_json(arguments)}"
    return f"{SYNTHETIC_ID_PREFIX}{_hex(identity, 8)}_"


def prefixed_call_id(prefix: str, content_key: str, *, ttl_expiry_seconds: int | None) -> str:
    """An unsigned id: ``prefix`` (from :func:`call_id_prefix`), the content hash and the expiry.

    ``content_key`` is the tool message's text (or a random token, for ids that must differ on
    every call). An expiry past ``ffffffff`` is clamped to it.

    Raises:
        ValueError: a negative expiry (a clock set before 1970), which has no hex form.
    """
    call_id = f"{prefix}{content_hash(content_key)}"
    if ttl_expiry_seconds is not None:
        if ttl_expiry_seconds < 0:
            raise ValueError(f"a TTL expiry is Unix seconds >= 0, got {ttl_expiry_seconds}")
        call_id += f"_t{min(ttl_expiry_seconds, MAX_EXPIRY):08x}"
    return call_id


def parse_call_id(call_id: str | None) -> ParsedCallId | None:
    """The parts of a synthetic id; ``None`` for any other id."""
    if call_id is None or len(call_id) > MAX_CALL_ID_LENGTH:
        return None
    match = _ID_PATTERN.fullmatch(call_id)
    if match is None:
        return None
    content, expiry, signature = match.groups()
    return ParsedCallId(
        call_id[:PREFIX_LENGTH],
        content,
        None if expiry is None else int(expiry, 16),
        signature,
        call_id if signature is None else call_id[: -len(signature) - 2],
    )


def is_synthetic_call_id(call_id: str | None) -> bool:
    """Whether ``call_id`` has the synthetic shape, trusted or not (placement uses this)."""
    return (
        call_id is not None
        and call_id.startswith(SYNTHETIC_ID_PREFIX)
        and len(call_id) <= MAX_CALL_ID_LENGTH
        and _ID_PATTERN.fullmatch(call_id) is not None
    )


def ttl_expiry(call_id: str) -> int | None:
    """The expiry stamped into a synthetic id; ``None`` when it carries none (counts as expired)."""
    parsed = parse_call_id(call_id)
    return None if parsed is None else parsed.expiry
