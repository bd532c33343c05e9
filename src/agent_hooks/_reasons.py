"""The one place that turns an exception into the one-line reason users read.

Records, log lines, ``validate --connect`` and the CLI all show reasons; they all come from
:func:`reason_for`, so every reason is one line, bounded, and free of secrets.
"""

from __future__ import annotations

from agent_hooks._scrub import scrub
from agent_hooks.errors import AgentHooksError, ToolError

__all__ = ["MAX_REASON_CHARS", "one_line", "reason_for"]

MAX_REASON_CHARS = 500
"""Longest reason kept; the rest of a long server message is cut with ``...``."""


def reason_for(exc: BaseException) -> str:
    """Why ``exc`` happened, without the tool name (records carry that separately).

    Our own errors already say what happened in words; anything else is named by its type,
    since a bare message (``'x'`` for a ``KeyError``) says too little.
    """
    if isinstance(exc, ToolError):
        return one_line(exc.reason)
    text = str(exc)
    if isinstance(exc, AgentHooksError) and text:
        return one_line(text)
    kind = type(exc).__name__
    return one_line(f"{kind}: {text}" if text else kind)


def one_line(text: str) -> str:
    """``text`` scrubbed of secrets, on one line, at most :data:`MAX_REASON_CHARS` characters."""
    flat = " ".join(scrub(text).split())
    if len(flat) > MAX_REASON_CHARS:
        flat = flat[: MAX_REASON_CHARS - 3] + "..."
    return flat
