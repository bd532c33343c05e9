"""The hook runner: every hook of one event, concurrently, applied as if one after another.

A run indexes the history once (:class:`~agent_hooks.injection._index.HistoryIndex`), groups the
hooks by identity (final tool + identity arguments), and runs the groups concurrently, at most
``hooks_max_concurrency`` hooks at once. Hooks of one group run in manifest order, each seeing the
pair of the one before; hooks of different groups never read each other's pairs, so the spliced
history equals running the hooks one after another (SPEC section 8).

Only the tool call (resolving the tool, starting its session, the call) runs in a task that may be
abandoned at the hook's deadline; every decision about the history is made here, after the wait,
so an abandoned call can never change a history it no longer owns. Calls of tools that never wait
(the built-in clock, the test kit's fixed answers) are simply awaited instead,
and hooks that call nothing (a false condition, a fresh result) are decided before any task is
scheduled: a run pays for tasks only where there is I/O.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agent_hooks._reasons import reason_for
from agent_hooks.clock import Clock
from agent_hooks.config.hooks import HookEvent
from agent_hooks.errors import ToolTimeoutError
from agent_hooks.injection._context import hook_context
from agent_hooks.injection._ids import arguments_json
from agent_hooks.injection._index import HistoryIndex, Placement, PrefixState
from agent_hooks.injection._pairs import build_pair
from agent_hooks.injection._templates import TemplateError, condition_holds, render_arguments
from agent_hooks.injection._trust import SigningKeys, remove_unverified
from agent_hooks.messages import Message
from agent_hooks.runtime._prepared import PreparedHook
from agent_hooks.runtime._records import (
    HookFailedError,
    HookObserver,
    HookOutcome,
    HookRun,
    HookRunRecord,
)
from agent_hooks.runtime._telemetry import RunSpan, record_hook_span, run_span, tracing
from agent_hooks.tools import ToolCallResult, ToolCallResultEnricher
from agent_hooks.tools._call_context import ToolCallContext, call_context
from agent_hooks.tools._stages import StageReporter

__all__ = ["ABANDON_GRACE_SECONDS", "FreshRun", "HookRunner"]

logger = logging.getLogger("agent_hooks.hooks")

ABANDON_GRACE_SECONDS = 0.5
"""After a hook's deadline, how long its cancelled call may take to unwind before the run stops
waiting for it (a tool that ignores cancellation is left behind, never waited for)."""

_UNLIMITED: AbstractAsyncContextManager[object] = nullcontext()
"""The concurrency bound of a run that has no more hooks than it: nothing to wait for."""

_TRUNCATION_MARKER = "\n[truncated at {limit} characters]"


# The records built per hook and run are NamedTuples: a frozen dataclass's ``__init__`` sets each
# field through ``object.__setattr__``, several times slower, on the path of every hook call.


class _Called(NamedTuple):
    """What the tool call of one hook produced (the part that may be abandoned)."""

    result: ToolCallResult
    notes: tuple[str, ...]


_Inputs = tuple[Mapping[str, Any], str]
"""A hook's rendered arguments and the JSON text its synthetic call shows."""


@dataclass(slots=True)
class _RunState:
    """What every hook of one run shares."""

    index: HistoryIndex
    now: float
    context: Mapping[str, Any]
    limit: AbstractAsyncContextManager[object]
    """Held by each hook while it runs: ``hooks_max_concurrency`` at once."""
    outcomes: dict[int, tuple[_Outcome, int, int]] = field(default_factory=dict)
    """By manifest index: the outcome, and when the hook started and ended (ns)."""


class _Outcome(NamedTuple):
    outcome: HookOutcome
    reason: str | None = None
    content_chars: int | None = None
    call_id: str | None = None
    cut: bool = False
    """The content was longer than ``max_content_chars`` (logged as a warning)."""


_FRESH = _Outcome(HookOutcome.SKIPPED_FRESH)


class FreshRun(NamedTuple):
    """A request-start run :meth:`HookRunner.fresh_run` decided from the pairs alone."""

    records: tuple[HookRunRecord, ...]
    since: float
    """When it was decided (by the runner's clock)."""
    until: float
    """The earliest expiry of the pairs that made the hooks fresh: the same hooks on the same
    pairs are decided the same way from ``since`` until then."""


class HookRunner:
    """Runs the manifest's hooks for one event at a time; one instance serves every request."""

    def __init__(
        self,
        hooks: Sequence[PreparedHook],
        *,
        clock: Clock,
        enrichers: Sequence[ToolCallResultEnricher] = (),
        observers: Sequence[HookObserver] = (),
        signing_keys: SigningKeys | None = None,
        max_concurrency: int = 8,
        stage_reporter: StageReporter | None = None,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.hooks = tuple(hooks)
        self.clock = clock
        self.enrichers = tuple(enrichers)
        self.observers = tuple(observers)
        self.signing_keys = signing_keys or SigningKeys()
        self.max_concurrency = max_concurrency
        self.stage_reporter = stage_reporter
        self._fresh_records: dict[int, HookRunRecord] = {}
        """Each hook's last ``skipped_fresh`` record, by manifest index (:meth:`_record`)."""
        self._decides_by_freshness: tuple[Sequence[PreparedHook], bool] = ((), False)
        """The hooks :meth:`fresh_run` was last asked about, and whether it can answer."""

    async def run(
        self,
        event: HookEvent,
        messages: Iterable[Message | Mapping[str, Any]],
        *,
        request: Mapping[str, Any] | None = None,
        completion: Mapping[str, Any] | None = None,
    ) -> HookRun:
        """Run every hook of ``event`` on ``messages``.

        ``request`` is the host's request context; ``completion`` (``on_completion`` only) is
        ``{"iteration_count": int, "total_tool_calls": int}`` when the host knows them.

        Raises:
            HookFailedError: a hook with ``on_error: "fail"`` failed; raised after every other
                hook finished, carrying the whole run.
        """
        if type(event) is not HookEvent:
            event = HookEvent(event)  # a plain "on_request_start" means the same event
        hooks = [hook for hook in self.hooks if hook.event is event]
        return await self.run_hooks(hooks, event, messages, request=request, completion=completion)

    async def run_hooks(
        self,
        hooks: Sequence[PreparedHook],
        event: HookEvent,
        messages: Iterable[Message | Mapping[str, Any]],
        *,
        request: Mapping[str, Any] | None = None,
        completion: Mapping[str, Any] | None = None,
        context_history: Sequence[Message | Mapping[str, Any]] | None = None,
    ) -> HookRun:
        """:meth:`run` for a chosen subset of hooks (a seed transformer runs its one hook).

        ``context_history`` is the history the hook context is built from when it is not
        ``messages``: a chain of transformers is one run, so each sees the history the first
        one received (SPEC section 10); the proxy gives the client's dicts, so a long history
        is not a model per message (SPEC 16).

        Raises:
            HookFailedError: as :meth:`run`.
        """
        if type(event) is not HookEvent:
            event = HookEvent(event)
        received = [m if isinstance(m, Message) else Message.model_validate(m) for m in messages]
        history = received
        checked = event is HookEvent.ON_REQUEST_START and bool(self.signing_keys)
        if checked:
            history, removed = remove_unverified(received, self.signing_keys)
            if removed:
                logger.warning(
                    "outcome=removed_unverified_pairs count=%d reason=signature does not verify",
                    removed,
                )
        now = self.clock.now()
        context: Mapping[str, Any] = {}
        if any(hook.needs_context for hook in hooks):
            seen = received if context_history is None else context_history
            context = hook_context(event, seen, request=request, completion=completion, now=now)
        with run_span(event) as span:
            if not hooks:
                return HookRun(history, [])
            index = HistoryIndex(history, signatures_checked=checked)
            return await self._run_traced(hooks, event, index, context, now, span)

    async def _run_traced(
        self,
        hooks: Sequence[PreparedHook],
        event: HookEvent,
        index: HistoryIndex,
        context: Mapping[str, Any],
        now: float,
        span: RunSpan,
    ) -> HookRun:
        limit = _UNLIMITED  # no more hooks than the bound: it can never be exceeded
        if len(hooks) > self.max_concurrency:
            limit = asyncio.Semaphore(self.max_concurrency)
        run = _RunState(index, now, context, limit)
        groups: dict[str, list[PreparedHook]] = {}
        for hook in hooks:
            groups.setdefault(hook.prefix, []).append(hook)
        waiting = [
            pending
            for group in groups.values()
            if (pending := self._start_group(group, run)) is not None
        ]
        if len(waiting) == 1:  # nothing to overlap with: no task to schedule
            await waiting[0]
        elif waiting:
            try:
                async with asyncio.TaskGroup() as tasks:  # one group failing cancels the others
                    for pending in waiting:
                        tasks.create_task(pending)
            except BaseExceptionGroup as group_error:
                raise group_error.exceptions[0] from None
        records = self._records(hooks, event, run.outcomes, span)
        result = HookRun(index.splice(), records)
        failures = [
            record
            for hook, record in zip(hooks, records, strict=True)
            if record.failed and hook.config.on_error == "fail"
        ]
        if failures:
            span.fail(f"{len(failures)} hook(s) with on_error=fail failed")
            raise HookFailedError(failures, result)
        return result

    def index_pairs(self, pairs: Sequence[Message]) -> HistoryIndex | None:
        """The index :meth:`fresh_run` reads: of ``pairs``, the synthetic pairs of a
        history whose other messages carry no synthetic-looking id (``serve`` removes the
        client's), in the history's order. ``None`` when one of them does not verify with the
        signing keys: a run would remove it, which only :meth:`run_hooks` does.

        It depends on the pairs alone, not on the rest of the history, so a host keeps it for
        as long as it has the same pairs (``serve``: one conversation's stored pairs, turn after
        turn while they are fresh).
        """
        checked = bool(self.signing_keys)
        if checked and remove_unverified(pairs, self.signing_keys)[1]:
            return None
        return HistoryIndex(pairs, signatures_checked=checked)

    @staticmethod
    def decides_by_freshness(hooks: Sequence[PreparedHook]) -> bool:
        """Whether :meth:`fresh_run` can answer for ``hooks`` when they are fresh: each has
        a TTL and reads no context (no condition, no template, no host precondition)."""
        return bool(hooks) and all(
            hook.ttl_seconds is not None and not hook.needs_context and hook.precondition is None
            for hook in hooks
        )

    def fresh_run(
        self, hooks: Sequence[PreparedHook], pairs: HistoryIndex, last: FreshRun | None = None
    ) -> FreshRun | None:
        """The records :meth:`run_hooks` would return for ``hooks`` at request start when each
        of them is TTL-fresh in ``pairs`` (of :meth:`index_pairs`) and reads no context (no
        condition, no template, no host precondition): such a run changes nothing and calls
        nothing, so it is decided here without the history. ``None`` when a hook is not decided
        that way; then :meth:`run_hooks` runs them all, as if this had not been asked.

        The records are logged, traced and given to the observers as a run's are. ``last``, this
        method's answer before for the same ``hooks`` and ``pairs``, is the answer again while it
        holds (every hook stays fresh until the earliest expiry) and nothing would see this run's
        records (no observer, no tracer provider, the hook log below INFO): a long conversation's
        fresh turns are then decided by a comparison, their records (latencies included) those of
        the turn that decided first.
        """
        asked, decides = self._decides_by_freshness
        if hooks is not asked:  # a host asks about the same hooks every time (serve's manifest)
            decides = self.decides_by_freshness(hooks)
            self._decides_by_freshness = (hooks, decides)
        if not decides:
            return None
        now = self.clock.now()
        if last is not None and last.since <= now < last.until and not self._records_seen():
            return last
        outcomes: dict[int, tuple[_Outcome, int, int]] = {}
        until = math.inf
        for hook in hooks:
            started = time.time_ns()
            expiry = pairs.fresh_until(hook.prefix, hook.rules(now), self.signing_keys)
            if expiry is None:
                return None
            until = min(until, expiry)
            outcomes[hook.index] = (_FRESH, started, time.time_ns())
        event = HookEvent.ON_REQUEST_START
        with run_span(event) as span:
            return FreshRun(tuple(self._records(hooks, event, outcomes, span)), now, until)

    def _records_seen(self) -> bool:
        """Whether anything sees a run's records beyond its caller: an observer, a tracer
        provider, the hook log at INFO (where every record is a line)."""
        return bool(self.observers) or logger.isEnabledFor(logging.INFO) or tracing()

    def _records(
        self,
        hooks: Sequence[PreparedHook],
        event: HookEvent,
        outcomes: Mapping[int, tuple[_Outcome, int, int]],
        span: RunSpan,
    ) -> list[HookRunRecord]:
        """Each hook's record from its outcome and when it was decided, logged, traced and
        given to the observers."""
        records = []
        for hook in hooks:
            outcome, started, ended = outcomes[hook.index]
            record = self._record(hook, event, outcome, (ended - started) / 1e6)
            if span.recording:
                record_hook_span(record, start_time_ns=started, end_time_ns=ended)
            records.append(record)
        self._notify(records)
        return records

    def _start_group(
        self, group: Sequence[PreparedHook], run: _RunState
    ) -> Coroutine[Any, Any, None] | None:
        """Decide the group's hooks that need no call (condition, freshness) at once; the rest,
        from the first hook that calls its tool, is a coroutine to wait for (``None``: none)."""
        state = run.index.state(group[0].prefix)
        for position, hook in enumerate(group):
            started = time.time_ns()
            inputs = self._inputs(hook, state, run.now, run.context)
            if isinstance(inputs, _Outcome):
                run.outcomes[hook.index] = (inputs, started, time.time_ns())
                continue
            return self._finish_group(group[position:], inputs, state, run)
        return None

    async def _finish_group(
        self,
        group: Sequence[PreparedHook],
        first_inputs: _Inputs,
        state: PrefixState,
        run: _RunState,
    ) -> None:
        """The group's hooks from the first that calls its tool on, one after another."""
        inputs: _Inputs | _Outcome | None = first_inputs
        for hook in group:
            async with run.limit:
                started = time.time_ns()
                if inputs is None:
                    inputs = self._inputs(hook, state, run.now, run.context)
                if isinstance(inputs, _Outcome):
                    outcome = inputs
                else:
                    outcome = await self._call_and_inject(hook, inputs, state, run)
                run.outcomes[hook.index] = (outcome, started, time.time_ns())
            inputs = None

    async def _call_and_inject(
        self, hook: PreparedHook, inputs: _Inputs, state: PrefixState, run: _RunState
    ) -> _Outcome:
        """The hook's call within its deadline, then the pair its result becomes."""
        arguments, arguments_text = inputs
        try:
            called = await self._call_within_deadline(hook, arguments)
        except TimeoutError as exc:
            reason = reason_for(exc) if isinstance(exc, ToolTimeoutError) else None
            return _Outcome(HookOutcome.TIMED_OUT, reason or _deadline_reason(hook))
        except Exception as exc:  # the seam: a hook never fails the request
            logger.debug("hook=%s failure detail", hook.label, exc_info=True)
            return _Outcome(HookOutcome.SKIPPED_ERROR, reason_for(exc))
        return self._inject(hook, called, arguments_text, run.index, state, run.now)

    def _inputs(
        self, hook: PreparedHook, state: PrefixState, now: float, context: Mapping[str, Any]
    ) -> _Inputs | _Outcome:
        """The rendered arguments and their JSON text, or why the hook does not call its tool
        (its condition, a template that cannot render, a result that is still fresh)."""
        arguments: Mapping[str, Any] = hook.arguments
        arguments_text = hook.arguments_text
        try:
            if hook.precondition is not None and not hook.precondition():
                return _Outcome(HookOutcome.SKIPPED_CONDITION, "should_inject is false")
        except Exception as exc:  # a host's own precondition failing skips only its hook
            return _Outcome(HookOutcome.SKIPPED_ERROR, reason_for(exc))
        try:
            if hook.config.condition is not None and not condition_holds(
                hook.config.condition, context
            ):
                return _Outcome(HookOutcome.SKIPPED_CONDITION, "condition is false")
            if hook.templated:
                arguments = render_arguments(hook.arguments, context)
                arguments_text = arguments_json(arguments)
        except TemplateError as exc:
            return _Outcome(HookOutcome.SKIPPED_ERROR, reason_for(exc))
        if hook.ttl_seconds is not None and state.is_fresh(hook.rules(now), self.signing_keys):
            return _FRESH
        return arguments, arguments_text

    def _inject(
        self,
        hook: PreparedHook,
        called: _Called,
        arguments_text: str,
        index: HistoryIndex,
        state: PrefixState,
        now: float,
    ) -> _Outcome:
        """The pair the call's result becomes (cut, enriched, identified, signed), placed by
        SPEC section 4; for ``on_completion``, only the outcome."""
        content = called.result.content
        notes = list(called.notes)
        if content is None and hook.event is HookEvent.ON_COMPLETION:
            return _Outcome(HookOutcome.COMPLETED, _joined(notes))  # a side effect, nothing to say
        if content is None:
            return _Outcome(
                HookOutcome.SKIPPED_ERROR, _joined([*notes, "tool returned no content"])
            )
        if not isinstance(content, str):
            reason = f"tool returned {type(content).__name__}, not text"
            return _Outcome(HookOutcome.SKIPPED_ERROR, reason)
        original_chars = len(content)
        limit = hook.config.max_content_chars
        cut = original_chars > limit
        if cut:
            content = content[:limit] + _TRUNCATION_MARKER.format(limit=limit)
            notes.append(f"content of {original_chars} characters cut at {limit}")
        if hook.event is HookEvent.ON_COMPLETION:
            return _Outcome(HookOutcome.COMPLETED, _joined(notes), original_chars, cut=cut)
        try:
            pair = build_pair(
                hook.pair_spec(arguments_text, now),
                content,
                keys=self.signing_keys,
                enrichers=self.enrichers,
            )
        except Exception as exc:  # a host's enricher failing is the hook failing, not the request
            logger.debug("hook=%s enrichment failure detail", hook.label, exc_info=True)
            return _Outcome(HookOutcome.SKIPPED_ERROR, reason_for(exc), original_chars)
        placement = index.place(
            state,
            hook=hook.index,
            pair=pair,
            frequency=hook.config.frequency,
            rules=hook.rules(now),
            keys=self.signing_keys,
        )
        outcome = HookOutcome.REPLACED if placement is Placement.REPLACE else HookOutcome.INJECTED
        return _Outcome(outcome, _joined(notes), original_chars, pair.call_id, cut)

    async def _call_within_deadline(
        self, hook: PreparedHook, arguments: Mapping[str, Any]
    ) -> _Called:
        """Call the tool in a task of its own, given up at the hook's deadline.

        A call of a tool that never waits (:attr:`PreparedHook.inline`) is simply awaited: it
        returns before any deadline could pass, so there is nothing to schedule or abandon.
        Any other call runs in a task that hands its outcome to ``answer``, and the deadline's
        timer releases ``answer`` empty: the run waits for whichever comes first, never for the
        task itself, so a call that swallows the cancel cannot hold the run. (``asyncio.wait``
        does the same with a set, a waiter and done-callbacks, one more loop iteration per call.)
        The timer is armed for the deadline only when the call is still running after its first
        step (:class:`_Deadline`): a host tool that answers at once never pays for one.

        Raises:
            TimeoutError: the deadline passed. The task is cancelled, and left behind when it
                does not unwind within :data:`ABANDON_GRACE_SECONDS`; whatever it raised or
                returned while unwinding, the hook timed out.
            Exception: whatever resolving or calling the tool raised.
        """
        if hook.inline:  # it never waits, so no deadline can pass while it runs
            return await self._call(hook, arguments)
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[_Called | None] = loop.create_future()
        deadline = _Deadline(answer, loop.time() + hook.timeout_seconds)
        context = self._context(hook, deadline.when)
        call = self._answer(hook, arguments, context, answer)
        task = loop.create_task(call, name=f"hook-{hook.label}")
        check = loop.call_soon(deadline.arm)  # runs right after the task's first step
        try:
            called = await answer
        except asyncio.CancelledError:  # the run itself was cancelled: take the call with it
            await _abandon(task, context.late_deadline)
            raise
        finally:
            check.cancel()
            deadline.cancel()
        if called is None:
            await _abandon(task, context.late_deadline)
            raise TimeoutError
        return called

    async def _answer(
        self,
        hook: PreparedHook,
        arguments: Mapping[str, Any],
        context: ToolCallContext,
        answer: asyncio.Future[_Called | None],
    ) -> None:
        """The body of a call's task: the call's outcome goes to ``answer`` unless the deadline
        released it first (then the task ends as the call did, for :func:`_forget` to see)."""
        try:
            called = await self._call(hook, arguments, context)
        except (Exception, asyncio.CancelledError) as exc:
            if answer.done():
                raise
            answer.set_exception(exc)
            return
        if not answer.done():
            answer.set_result(called)

    async def _call(
        self,
        hook: PreparedHook,
        arguments: Mapping[str, Any],
        context: ToolCallContext | None = None,
    ) -> _Called:
        context = context or self._context(hook, None)
        with call_context(context):
            result = await hook.call(arguments)
        return _Called(result, tuple(context.notes))

    def _context(self, hook: PreparedHook, deadline: float | None) -> ToolCallContext:
        return ToolCallContext(
            max_content_chars=hook.config.max_content_chars,
            stage_reporter=self.stage_reporter,
            deadline=deadline,
        )

    def _record(
        self, hook: PreparedHook, event: HookEvent, outcome: _Outcome, latency_ms: float
    ) -> HookRunRecord:
        latency = round(latency_ms, 3)
        if outcome is _FRESH:
            # A hook's fresh records differ in their latency at most: an equal one (immutable)
            # is handed out again, not built anew on every turn of a long conversation.
            last = self._fresh_records.get(hook.index)
            if last is not None and last.latency_ms == latency and last.event is event:
                record = last
            else:
                record = self._fresh_records[hook.index] = _new_record(hook, event, _FRESH, latency)
        else:
            record = _new_record(hook, event, outcome, latency)
        level = logging.WARNING if record.failed or outcome.cut else logging.INFO
        if not logger.isEnabledFor(level):
            return record
        logger.log(
            level,
            "hook=%s event=%s tool=%s outcome=%s reason=%s latency_ms=%.1f",
            record.hook,
            record.event,
            record.tool,
            record.outcome,
            record.reason,
            record.latency_ms,
            extra={
                "hook": record.hook,
                "event": str(record.event),
                "tool": record.tool,
                "outcome": str(record.outcome),
                "reason": record.reason,
                "latency_ms": record.latency_ms,
            },
        )
        return record

    def _notify(self, records: Sequence[HookRunRecord]) -> None:
        for record in records:
            for observer in self.observers:
                try:
                    observer.on_record(record)
                except Exception as exc:  # an observer must not break the run it observes
                    logger.warning(
                        "observer=%s outcome=observer_failed reason=%s",
                        type(observer).__name__,
                        reason_for(exc),
                    )

    def __repr__(self) -> str:
        return f"<HookRunner hooks={len(self.hooks)} max_concurrency={self.max_concurrency}>"


def _new_record(
    hook: PreparedHook, event: HookEvent, outcome: _Outcome, latency_ms: float
) -> HookRunRecord:
    return HookRunRecord(
        hook=hook.label,
        event=event,
        tool=hook.tool,
        outcome=outcome.outcome,
        reason=outcome.reason,
        latency_ms=latency_ms,
        content_chars=outcome.content_chars,
        call_id=outcome.call_id,
    )


def _deadline_reason(hook: PreparedHook) -> str:
    return f"hook timed out after {hook.timeout_seconds:g} seconds"


def _joined(parts: Sequence[str]) -> str | None:
    return "; ".join(parts) or None


class _Deadline:
    """The timer that releases a call's ``answer`` empty at its deadline, armed lazily.

    Every timer costs a heap push and a cancel on the event loop's timer heap (where cancelled
    timers linger until cleaned up), several microseconds where most tool calls take one. So the
    timer is armed only when :meth:`arm`, scheduled right behind the task's first step, finds the
    call still running; it fires at the same moment it would have, counted from the call's start.
    """

    __slots__ = ("_answer", "_timer", "when")

    def __init__(self, answer: asyncio.Future[_Called | None], when: float) -> None:
        self._answer = answer
        self.when = when
        """Event-loop time of the deadline."""
        self._timer: asyncio.TimerHandle | None = None

    def arm(self) -> None:
        if not self._answer.done():
            self._timer = self._answer.get_loop().call_at(self.when, self._release)

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def _release(self) -> None:
        """The deadline passed: the run stops waiting for the call (``None``: no outcome)."""
        if not self._answer.done():
            self._answer.set_result(None)


async def _abandon(task: asyncio.Task[None], late_deadline: float | None) -> None:
    """Cancel a call the run gives up on, and wait for it to unwind at most
    :data:`ABANDON_GRACE_SECONDS`; a call that takes longer is left behind.

    ``late_deadline`` is the toolset timeout its guard left to the runner
    (:attr:`ToolCallContext.late_deadline`): a call still running then is cancelled again.
    """
    task.cancel()
    task.add_done_callback(_forget)
    if late_deadline is not None:
        again = task.get_loop().call_at(late_deadline, task.cancel)
        task.add_done_callback(lambda _: again.cancel())
    await asyncio.wait({task}, timeout=ABANDON_GRACE_SECONDS)


def _forget(task: asyncio.Task[Any]) -> None:
    """Retrieve an abandoned call's outcome so asyncio does not report it as never retrieved."""
    if not task.cancelled():
        task.exception()
