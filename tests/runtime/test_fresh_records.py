"""``HookRunner.fresh_run``: a run decided from a history's synthetic pairs alone.

``serve`` asks it on every turn with stored pairs: whenever it answers, a full run of the same
hooks on the whole history must have given the same records and left the history as it was; and
it must answer whenever such a run would have been that (hooks fresh, nothing read, nothing
removed), or the fast path would never be taken.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from agent_hooks import HookEvent, HookOutcome, HookRun, HookRunner, HookRunRecord
from agent_hooks.clock import FixedClock
from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.messages import Message
from agent_hooks.runtime import _runner, _telemetry
from tests._support import msg
from tests._support.manifests import hook
from tests.runtime._kit import NOW, dumped
from tests.runtime.test_equivalence import (
    ARGUMENTS,
    KEY,
    SETTINGS,
    TOOL_CHOICES,
    build,
    histories,
    with_key,
)
from tests.runtime.test_telemetry import exporter

pytestmark = pytest.mark.usefixtures("preview_on")

fresh_hooks = st.lists(
    st.fixed_dictionaries(
        {
            "tool_name": st.sampled_from(TOOL_CHOICES),
            "arguments": st.sampled_from([*ARGUMENTS, {"q": "${request.user}"}]),
            "frequency": st.sampled_from(["always", "append_if_changed"]),
            "refresh_condition": st.none()
            | st.builds(lambda m: {"kind": "ttl", "ttl_minutes": m}, st.integers(1, 3)),
            "condition": st.sampled_from([None, None, None, "true"]),
        }
    ),
    min_size=1,
    max_size=4,
)
"""Hooks that :meth:`~HookRunner.fresh_run` may decide (a TTL, nothing read) and hooks it
must leave to a run (no TTL, a template, a condition)."""


REQUEST = {"user": "u"}


def _synthetic(message: Message) -> bool:
    ids = [message.tool_call_id, *(call.id for call in message.tool_calls or [])]
    return any(i is not None and is_synthetic_call_id(i) for i in ids)


@SETTINGS
@given(
    data=st.data(),
    hooks=fresh_hooks,
    key=st.sampled_from([None, KEY]),
)
def test_fresh_records_are_the_records_of_a_run_that_changed_nothing(
    monkeypatch: pytest.MonkeyPatch,
    data: st.DataObject,
    hooks: list[dict[str, Any]],
    key: str | None,
) -> None:
    with_key(monkeypatch, key)
    # Client messages and whole pairs (the stored ones: written, edited or ``always``), as in
    # serve once the client's own pairs are removed.
    items = data.draw(histories(key, shapes=("written", "edited", "always")))
    history = [msg(**item) for item in items]
    decidable = data.draw(st.booleans(), label="every hook has a TTL and reads nothing")
    for config in hooks:
        if decidable:
            config["refresh_condition"] = config["refresh_condition"] or {
                "kind": "ttl",
                "ttl_minutes": 2,
            }
            config["condition"] = None
            if "${" in repr(config["arguments"]):
                config["arguments"] = {}
        elif "${" in repr(config["arguments"]):
            config["refresh_condition"] = None  # a TTL does not go with a template
    configs = [hook(**{k: v for k, v in h.items() if v is not None}) for h in hooks]
    fast_app, fast_records = build(configs, version=0, concurrency=8)
    full_app, _ = build(configs, version=0, concurrency=8)
    fast, full = fast_app.get(HookRunner), full_app.get(HookRunner)
    if data.draw(st.booleans(), label="a turn after a run of the same hooks"):
        writer, _ = build(configs, version=0, concurrency=8)
        first = writer.get(HookRunner).run(HookEvent.ON_REQUEST_START, history, request=REQUEST)
        history = asyncio.run(first).messages

    pairs = [m for m in history if _synthetic(m)]
    index = fast.index_pairs(pairs)
    first = fast.fresh_run(fast.hooks, index) if index is not None else None
    records = list(first.records) if first is not None else None
    run = asyncio.run(full.run(HookEvent.ON_REQUEST_START, history, request=REQUEST))
    read_nothing = all(
        h["refresh_condition"] and h["condition"] is None and "${" not in repr(h["arguments"])
        for h in hooks
    )
    event("answered" if records is not None else "left to a run")
    if records is None:
        assert fast_records.records == []  # nothing logged or observed for an unanswered ask
    else:
        assert fast_records.records == records  # the observers saw them as a run's
    _assert_as_a_run(records, run, history, read_nothing)
    if index is None:
        return
    # The same index asked again at another time, as serve asks it turn after turn, with the
    # first answer: it answers as a run at that time would, whatever it answered and remembered
    # before, whether the first answer is given again (a runner nothing watches) or not (one
    # with an observer).
    later = data.draw(st.sampled_from(LATER), label="asked again at")
    late = build(configs, version=0, concurrency=8, now=later)[0].get(HookRunner)
    late_run = asyncio.run(late.run(HookEvent.ON_REQUEST_START, history, request=REQUEST))
    unwatched = HookRunner(fast.hooks, clock=FixedClock(NOW), signing_keys=fast.signing_keys)
    unwatched_first = unwatched.fresh_run(unwatched.hooks, index)
    for runner, last in ((fast, first), (unwatched, unwatched_first)):
        runner.clock = FixedClock(later)
        again = runner.fresh_run(runner.hooks, index, last)
        _assert_as_a_run(
            None if again is None else list(again.records), late_run, history, read_nothing
        )


def test_a_runner_nothing_watches_gives_its_last_fresh_run_again_while_it_holds(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """serve's fresh turns: the last answer on the same pairs is given again from when it was
    decided until the earliest expiry, unless something sees each run's records."""
    # No tracer provider at first: the process may hold one another test installed (a global
    # is set once), which the runner learns from ``tracing()``.
    monkeypatch.setattr(_runner, "tracing", lambda: False)
    configs = [
        hook(tool_name=name, refresh_condition={"kind": "ttl", "ttl_minutes": minutes})
        for name, minutes in (("alpha", 2), ("beta", 3))
    ]
    writer = build(configs, version=0, concurrency=8)[0].get(HookRunner)
    start = [msg(role="user", content="hello")]
    written = asyncio.run(writer.run(HookEvent.ON_REQUEST_START, start, request=REQUEST))
    watched_app, observed = build(configs, version=0, concurrency=8)
    watched = watched_app.get(HookRunner)
    index = watched.index_pairs([m for m in written.messages if _synthetic(m)])
    assert index is not None
    runner = HookRunner(watched.hooks, clock=FixedClock(NOW), signing_keys=watched.signing_keys)

    def at(now: float, last: Any, by: HookRunner = runner) -> Any:
        by.clock = FixedClock(now)
        return by.fresh_run(by.hooks, index, last)

    first = at(NOW, None)
    assert first is not None
    assert (first.since, first.until) == (NOW, NOW + 120)  # alpha's 2 minutes end first
    assert [r.outcome for r in first.records] == [HookOutcome.SKIPPED_FRESH] * 2
    assert at(NOW + 119, first) is first
    assert at(NOW + 120, first) is None  # alpha's pair expired
    before = at(NOW - 1, first)  # decided afresh: a clock set back is no part of the window
    assert before is not None
    assert before is not first
    assert before.since == NOW - 1
    # Each run's records seen: by an observer, in the hook log.
    again = at(NOW + 1, first, by=watched)
    assert again is not None
    assert again is not first
    assert observed.records == list(again.records)
    with caplog.at_level(logging.INFO, logger="agent_hooks.hooks"):
        logged = at(NOW + 2, first)
    assert logged is not None
    assert logged is not first
    assert [r.getMessage().split()[0] for r in caplog.records] == [
        f"hook={r.hook}" for r in logged.records
    ]
    # ... and by a tracer provider: the run and its hooks are spans.
    monkeypatch.setattr(_runner, "tracing", _telemetry.tracing)
    spans = exporter()
    spans.clear()
    traced = at(NOW + 3, first)
    assert traced is not None
    assert traced is not first
    assert sorted(span.name for span in spans.get_finished_spans()) == [
        "agent_hooks.hook",
        "agent_hooks.hook",
        "agent_hooks.run",
    ]
    spans.clear()


LATER = [NOW - 3600, NOW - 61, NOW - 1, NOW, NOW + 30, NOW + 119, NOW + 120, NOW + 121, NOW + 400]
"""Times a kept index is asked again: before the pairs were stamped (where a pair's expiry looks
forged), around the 2-minute TTLs' expiries, after them."""


def _assert_as_a_run(
    records: list[HookRunRecord] | None, run: HookRun, history: list[Message], read_nothing: bool
) -> None:
    """``records`` are what ``run`` (of the same hooks on ``history``) recorded, when they are
    not ``None``; ``None`` only when the run changed something, was not all fresh or read
    something."""
    unchanged = dumped(run.messages) == dumped(history)
    all_fresh = all(r.outcome is HookOutcome.SKIPPED_FRESH for r in run.records)
    if records is None:
        assert not (unchanged and all_fresh and read_nothing)
        return
    assert unchanged
    assert all_fresh
    assert [(r.hook, r.tool, r.outcome) for r in records] == [
        (r.hook, r.tool, r.outcome) for r in run.records
    ]
