"""Final function names: what the model and the synthetic pair see."""

from __future__ import annotations

import re

__all__ = ["MAX_TOOL_NAME_LENGTH", "sanitize_toolname", "uncut_toolname"]

MAX_TOOL_NAME_LENGTH = 64
"""OpenAI rejects function names longer than this."""

_DISALLOWED_RUN = re.compile(r"[^A-Za-z0-9_-]+")


def sanitize_toolname(name: str) -> str:
    """Turn any name into a valid OpenAI function name.

    Each run of characters outside ``[A-Za-z0-9_-]`` becomes one ``_``; a name starting with a
    digit or ``-`` gets a ``_`` prefix (some providers reject those); the result is cut to 64
    characters.

    >>> sanitize_toolname("my server_get data")
    'my_server_get_data'
    """
    return uncut_toolname(name)[:MAX_TOOL_NAME_LENGTH]


def uncut_toolname(name: str) -> str:
    """:func:`sanitize_toolname` without the length cut, to tell whether the cut would bite."""
    cleaned = _DISALLOWED_RUN.sub("_", name)
    if cleaned[:1].isdigit() or cleaned.startswith("-"):
        cleaned = "_" + cleaned
    return cleaned
