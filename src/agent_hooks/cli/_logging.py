"""How the CLI logs: every record, ours and the libraries', as one scrubbed line on stderr."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from agent_hooks._scrub import scrub, scrubbing_filter

__all__ = ["stderr_logging"]


class _OneLineFormatter(logging.Formatter):
    """One line per record, however it was logged: an exception is added to the line as
    ``ExcType: message`` instead of a traceback, stacks are left out, and line breaks inside a
    message become spaces. The line is scrubbed again, because exception text is not part of what
    the scrubbing filter rewrites unless it rendered a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line = f"{record.levelname} {record.name}: {record.getMessage()}"
        exc = record.exc_info[1] if record.exc_info else None
        if exc is not None:
            line = f"{line}: {type(exc).__name__}: {exc}"
        return scrub(" ".join(line.splitlines()))


@contextmanager
def stderr_logging(level: int) -> Iterator[None]:
    """Send every log record at ``level`` or above to stderr for one command, then put the
    logging configuration back as it was (:func:`main` also runs in-process: tests, a host's own
    tooling).

    The handler sits on the root logger, so the libraries underneath (the MCP SDK, httpx, anyio,
    uvicorn) print through it too: same format, same scrubbing.
    """
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLineFormatter())
    handler.addFilter(scrubbing_filter())
    touched = [logging.getLogger(), logging.getLogger("agent_hooks")]
    previous_levels = [each.level for each in touched]
    touched[0].addHandler(handler)
    for each in touched:
        each.setLevel(level)
    try:
        yield
    finally:
        touched[0].removeHandler(handler)
        for each, previous in zip(touched, previous_levels, strict=True):
            each.setLevel(previous)
