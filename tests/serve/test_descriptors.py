"""Running out of file descriptors logs one line a minute, whatever logs it how often."""

from __future__ import annotations

import errno
import logging

from agent_hooks.serve._descriptors import OutOfDescriptorsFilter


def record(message: str, *, error: OSError | None = None) -> logging.LogRecord:
    exc_info = (type(error), error, None) if error is not None else None
    return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, message, (), exc_info)


def test_one_line_a_minute_then_a_count_of_the_held_back_ones() -> None:
    now = 1000.0
    limiter = OutOfDescriptorsFilter(clock=lambda: now)
    accept_failed = "socket.accept() out of system resource"
    passed = [limiter.filter(record(accept_failed)) for _ in range(1000)]
    assert passed.count(True) == 1
    now += 30
    assert not limiter.filter(record("connect failed", error=OSError(errno.EMFILE, "Too many")))
    now += 31
    later = record("[Errno 24] Too many open files")
    assert limiter.filter(later)
    assert (
        later.getMessage()
        == "[Errno 24] Too many open files (1000 more like it in the last minute)"
    )


def test_other_records_always_pass() -> None:
    limiter = OutOfDescriptorsFilter(clock=lambda: 0.0)
    assert all(limiter.filter(record("upstream unreachable")) for _ in range(100))
    info = record("Too many open files")
    info.levelno = logging.INFO
    assert limiter.filter(info)
