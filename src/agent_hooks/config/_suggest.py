"""Did-you-mean suggestions for names a manifest author mistyped."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["did_you_mean", "quoted_list"]


def did_you_mean(word: str, choices: Iterable[str], *, limit: int = 1) -> str:
    """``"; did you mean 'x'?"`` when a choice is close to ``word``, else ``""``."""
    matches = difflib.get_close_matches(word, list(choices), n=limit, cutoff=0.6)
    if not matches:
        return ""
    return f"; did you mean {' or '.join(repr(m) for m in matches)}?"


def quoted_list(names: Iterable[str]) -> str:
    """``'a', 'b'`` — or ``(none)`` for an empty list."""
    rendered = ", ".join(repr(name) for name in names)
    return rendered or "(none)"
