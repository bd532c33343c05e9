"""What a run tells its host: one record per hook, and the history it produced."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from agent_hooks.config.hooks import HookEvent
from agent_hooks.errors import AgentHooksError
from agent_hooks.messages import Message

__all__ = [
    "FAILED_OUTCOMES",
    "HookFailedError",
    "HookObserver",
    "HookOutcome",
    "HookRun",
    "HookRunRecord",
]


class HookOutcome(StrEnum):
    """What one hook did in one run."""

    INJECTED = "injected"
    """A new pair was added to the history."""
    REPLACED = "replaced"
    """The latest pair had the same content; it was replaced in place with a new call id."""
    COMPLETED = "completed"
    """An ``on_completion`` hook ran its tool (nothing is injected after the answer)."""
    SKIPPED_FRESH = "skipped_fresh"
    """The latest pair's TTL has not expired, so the tool was not called."""
    SKIPPED_CONDITION = "skipped_condition"
    """The hook's ``condition`` was falsy."""
    SKIPPED_ERROR = "skipped_error"
    """Something failed (the tool, its toolset, a template); the history is unchanged."""
    TIMED_OUT = "timed_out"
    """The hook or its tool ran out of time; the history is unchanged."""


FAILED_OUTCOMES = frozenset({HookOutcome.SKIPPED_ERROR, HookOutcome.TIMED_OUT})
"""Outcomes that count as failures (``on_error: fail``, span status, warnings)."""


@dataclass(frozen=True)
class HookRunRecord:
    """One hook's part in one run: logged as one line and handed to every observer."""

    hook: str
    """The hook's ``name``, or ``hooks[i]`` with i its index in the manifest."""
    event: HookEvent
    tool: str
    """The final tool name."""
    outcome: HookOutcome
    reason: str | None
    """One line; ``None`` for injected, replaced, completed and skipped_fresh unless something
    was left out or cut."""
    latency_ms: float
    content_chars: int | None
    """Length of what the tool returned (before any cut); ``None`` when nothing came back."""
    call_id: str | None
    """The injected pair's call id; ``None`` when nothing was injected."""

    @property
    def failed(self) -> bool:
        return self.outcome in FAILED_OUTCOMES


@dataclass(frozen=True)
class HookRun:
    """The result of :meth:`HookRunner.run`: the new history and what each hook did."""

    messages: list[Message]
    records: list[HookRunRecord]


@runtime_checkable
class HookObserver(Protocol):
    """Receives every record (register a ``list[HookObserver]`` multiprovider in DI).

    Called after the run, in manifest order; an observer that raises is logged and ignored.
    """

    def on_record(self, record: HookRunRecord) -> None: ...


class HookFailedError(AgentHooksError):
    """Hooks with ``on_error: "fail"`` failed; raised after every other hook of the run finished.

    ``failures`` are their records (outcome ``skipped_error`` or ``timed_out``), in manifest
    order; ``run`` is the whole run, so a host can still log what the other hooks did.
    """

    def __init__(self, failures: Sequence[HookRunRecord], run: HookRun) -> None:
        self.failures = tuple(failures)
        self.run = run
        first = self.failures[0]
        self.hook = first.hook
        self.reason = first.reason or first.outcome
        more = f" (and {len(self.failures) - 1} more)" if len(self.failures) > 1 else ""
        super().__init__(f"hook {self.hook!r} failed: {self.reason}{more}")
