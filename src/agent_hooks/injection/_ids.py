"""Synthetic call ids: how a hook recognises its own earlier pairs in a history.

``synth_t_{h6(tool)}_a_{h6(args)}_c_{h6(content)}[_ttl_{expiry:08x}]`` where ``h6`` is the first
six hex digits of SHA-256. The part up to ``_a_{h6(args)}_`` means "this tool with these
arguments"; the content hash tells whether a result changed; the optional expiry (absolute Unix
seconds, lowercase hex) says until when the result is fresh. Ids stay far below OpenAI's 64.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "SYNTHETIC_ID_PREFIX",
    "arguments_json",
    "call_id_prefix",
    "h6",
    "is_synthetic_call_id",
    "make_call_id",
    "ttl_expiry",
]

SYNTHETIC_ID_PREFIX = "synth_t_"

_ID_PATTERN = re.compile(
    r"^synth_t_[0-9a-f]{6}_a_[0-9a-f]{6}_c_[0-9a-f]{6}(?:_ttl_(?P<expiry>[0-9a-f]+))?$"
)


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
    """A call id for one synthetic pair.

    ``content_key`` is the tool message's text (or a random token, for ids that must differ on
    every call).

    Raises:
        ValueError: a negative expiry (a clock set before 1970), which has no hex form.
    """
    call_id = f"{call_id_prefix(tool_name, arguments)}c_{h6(content_key)}"
    if ttl_expiry_seconds is not None:
        if ttl_expiry_seconds < 0:
            raise ValueError(f"a TTL expiry is Unix seconds >= 0, got {ttl_expiry_seconds}")
        call_id += f"_ttl_{ttl_expiry_seconds:08x}"
    return call_id


def is_synthetic_call_id(call_id: str | None) -> bool:
    return call_id is not None and _ID_PATTERN.match(call_id) is not None


def ttl_expiry(call_id: str) -> int | None:
    """The expiry stamped into a synthetic id; ``None`` when it carries none (counts as expired)."""
    match = _ID_PATTERN.match(call_id)
    if match is None or match["expiry"] is None:
        return None
    return int(match["expiry"], 16)
