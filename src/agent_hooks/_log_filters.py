"""Log filters put on for a while and taken off again: the logging tree is process-wide.

A command run in-process (tests, a host's own tooling) must leave the loggers and handlers as it
found them, and running it again must not stack a second copy of its filters (SPEC 16).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

__all__ = ["filter_added", "handlers_reached"]


def handlers_reached(logger: logging.Logger) -> list[logging.Handler]:
    """The handlers a record logged on ``logger`` reaches now: its own, then its ancestors' as
    long as records propagate."""
    reached: list[logging.Handler] = []
    current: logging.Logger | None = logger
    while current is not None:
        reached += current.handlers
        current = current.parent if current.propagate else None
    return reached


@contextmanager
def filter_added(filter_: logging.Filter, targets: Iterable[logging.Filterer]) -> Iterator[None]:
    """``filter_`` on every one of ``targets`` until the block ends; then taken off where the
    block put it (a target that already had it keeps it), so nested or repeated blocks never
    stack copies and the last one out leaves nothing behind."""
    added = [target for target in dict.fromkeys(targets) if filter_ not in target.filters]
    for target in added:
        target.addFilter(filter_)
    try:
        yield
    finally:
        for target in added:
            target.removeFilter(filter_)
