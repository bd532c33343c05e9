"""Running out of file descriptors says so once a minute, never in a flood (SPEC 12.1).

When the process hits its descriptor limit, every accept and every connect fails and the event
loop, uvicorn and httpx log each failure: hundreds of thousands of identical lines a minute, which
fill the disk and hide everything else. This filter, on the handlers, lets one such line through
per minute and counts the ones it held back in the next.
"""

from __future__ import annotations

import errno
import logging
import threading
import time
from collections.abc import Callable

__all__ = ["OutOfDescriptorsFilter"]

_EVERY_SECONDS = 60.0
_ERRNOS = frozenset({errno.EMFILE, errno.ENFILE})
_TEXTS = ("Too many open files", "out of system resource")
"""How the OS error and asyncio's accept failure read when no exception is attached."""


class OutOfDescriptorsFilter(logging.Filter):
    """Passes every record, except all but one a minute about running out of descriptors."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self._clock = clock
        self._lock = threading.Lock()
        self._next = float("-inf")
        self._held_back = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not _about_descriptors(record):
            return True
        with self._lock:
            now = self._clock()
            if now < self._next:
                self._held_back += 1
                return False
            self._next = now + _EVERY_SECONDS
            held_back, self._held_back = self._held_back, 0
        if held_back:
            record.msg = f"{record.getMessage()} ({held_back} more like it in the last minute)"
            record.args = ()
        return True


def _about_descriptors(record: logging.LogRecord) -> bool:
    error = record.exc_info[1] if record.exc_info else None
    if isinstance(error, OSError) and error.errno in _ERRNOS:
        return True
    text = record.getMessage()
    return any(marker in text for marker in _TEXTS)
