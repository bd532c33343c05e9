"""OpenTelemetry spans: one ``agent_hooks.run`` per run, one ``agent_hooks.hook`` per hook.

Only ``opentelemetry-api`` is used, so every call is a no-op until the host installs an SDK. The
tracer provider is looked up per run, not at import, so a host that configures its SDK after
importing us is still honoured. While none is installed a run opens no span at all: the API's
no-op spans would cost a run more than a whole hook's bookkeeping, and change nothing (a tool
sees its caller's span context either way).

Spans carry only what the record says about the hook (its label, final tool name, outcome and
latency), never arguments, tool content, user text or the record's reason: a reason may quote a
server's error body, which can echo what the user asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING

from opentelemetry import trace
from opentelemetry.trace import (
    NoOpTracerProvider,
    ProxyTracerProvider,
    Span,
    Status,
    StatusCode,
)

from agent_hooks.config import HookEvent

if TYPE_CHECKING:
    from agent_hooks.runtime import HookRunRecord

__all__ = ["RunSpan", "record_hook_span", "run_span", "tracing"]

TRACER_NAME = "agent_hooks"

_TRACER = trace.get_tracer(TRACER_NAME)
"""A proxy until the host installs an SDK, then the SDK's tracer: getting it once is enough
(and saves reading the environment on every run)."""


def tracing() -> bool:
    """Whether the host installed a tracer provider (an SDK): without one, every span is a no-op.

    Asked once per run; the global provider can be set only once, at any time.
    """
    return not isinstance(trace.get_tracer_provider(), (ProxyTracerProvider, NoOpTracerProvider))


class RunSpan:
    """The ``agent_hooks.run`` span as the runner sees it: it can only be marked failed.

    ``recording`` is false when no tracer provider is installed: there is no span, and the runner
    records no hook spans either.
    """

    def __init__(self, span: Span | None) -> None:
        self._span = span
        self.failed = False

    @property
    def recording(self) -> bool:
        return self._span is not None

    def fail(self, message: str) -> None:
        """Mark the run failed (the runner is about to raise ``HookFailedError``).

        ``message`` becomes the status description, so it must name hooks, not quote content.
        """
        self.failed = True
        if self._span is not None:
            self._span.set_status(Status(StatusCode.ERROR, message))


def run_span(event: HookEvent) -> AbstractContextManager[RunSpan]:
    """Open ``agent_hooks.run`` as the current span, so hook spans recorded inside are its children.

    An unexpected exception marks the span ERROR with the exception's type only; the exception
    itself is not recorded, as its message may hold content. Without a tracer provider, nothing
    is opened (:func:`tracing`).
    """
    if not tracing():
        return nullcontext(RunSpan(None))
    return _recorded_run_span(event)


@contextmanager
def _recorded_run_span(event: HookEvent) -> Iterator[RunSpan]:
    tracer = _TRACER
    with tracer.start_as_current_span(
        "agent_hooks.run",
        attributes={"agent_hooks.event": str(event)},
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        run = RunSpan(span)
        try:
            yield run
        except Exception as exc:
            if not run.failed:
                span.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            raise


def record_hook_span(record: HookRunRecord, *, start_time_ns: int, end_time_ns: int) -> None:
    """Record one finished hook as a child of the current span, with its real start and end.

    The span is created after the hook ended (the runner knows the outcome only then), so its
    times come from the caller rather than from the span's own clock.
    """
    tracer = _TRACER
    span = tracer.start_span(
        "agent_hooks.hook",
        start_time=start_time_ns,
        attributes={
            "agent_hooks.hook": record.hook,
            "agent_hooks.tool": record.tool,
            "agent_hooks.outcome": str(record.outcome),
            "agent_hooks.latency_ms": float(record.latency_ms),
        },
    )
    if record.failed:
        span.set_status(Status(StatusCode.ERROR, str(record.outcome)))
    span.end(end_time=end_time_ns)
