"""Did-you-mean suggestions for names a manifest author mistyped."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["MAX_ECHO_CHARS", "clip", "did_you_mean", "quoted_list"]


MAX_ECHO_CHARS = 80
"""Longest piece of the author's text a message repeats (SPEC section 7)."""


def clip(text: str, limit: int = MAX_ECHO_CHARS) -> str:
    """``text`` cut to ``limit`` characters (``...`` marks the cut), for echoing in a message."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def did_you_mean(word: str, choices: Iterable[str], *, limit: int = 1) -> str:
    """``"; did you mean 'x'?"`` when a choice is close to ``word``, else ``""``."""
    matches = difflib.get_close_matches(word, list(choices), n=limit, cutoff=0.6)
    if not matches:
        return ""
    return f"; did you mean {' or '.join(repr(clip(m)) for m in matches)}?"


def quoted_list(names: Iterable[str]) -> str:
    """``'a', 'b'`` — or ``(none)`` for an empty list; each name cut like :func:`clip`."""
    rendered = ", ".join(repr(clip(name)) for name in names)
    return rendered or "(none)"
