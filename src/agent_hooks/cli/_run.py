"""``agent-hooks run``: one event's hooks on a history given as a file, printed as JSON."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from injector import Module

from agent_hooks.app_factory import ClockModule, open_app
from agent_hooks.cli._inputs import load_messages, parse_now, parse_request
from agent_hooks.cli._main import EXIT_OK
from agent_hooks.clock import FixedClock
from agent_hooks.config import ApplicationConfig, FeatureSettings, HookEvent
from agent_hooks.config.application import read_manifest
from agent_hooks.messages import Message
from agent_hooks.runtime import HookFailedError, HookRun, HookRunner, HookRunRecord

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """Inputs are checked cheapest first. The manifest is validated as ``validate`` does (hooks
    included); while preview features are off its hooks are then dropped with a warning, so
    the history comes back unchanged."""
    now = parse_now(args.now)
    request = parse_request(args.request)
    event = HookEvent(args.event)
    manifest = read_manifest(args.manifest)  # once: it may be a pipe
    source = str(args.manifest)
    config = ApplicationConfig.from_bytes(manifest, preview=True, source=source)  # bad hooks exit 2
    if not FeatureSettings().enable_preview_features:
        config = ApplicationConfig.from_bytes(manifest, source=source)  # warns hooks are ignored
    messages = load_messages(args.messages, max_bytes=args.max_bytes, limit=args.max_messages)
    modules: list[Module] = [ClockModule(FixedClock(now))] if now is not None else []
    try:
        run = asyncio.run(_run_hooks(config, modules, event, messages, request))
    except HookFailedError as exc:
        if args.explain:
            _explain(exc.run.records)
        raise
    if args.explain:
        _explain(run.records)
    # on_completion hooks never change the history: print it as it came in.
    result = run.messages if event is HookEvent.ON_REQUEST_START else messages
    json.dump([message.to_openai() for message in result], sys.stdout, indent=2)
    sys.stdout.write("\n")
    return EXIT_OK


async def _run_hooks(
    config: ApplicationConfig,
    modules: Sequence[Module],
    event: HookEvent,
    messages: list[Message],
    request: Mapping[str, Any] | None,
) -> HookRun:
    """One run in a fresh app, closed afterwards (also when Ctrl-C cancels the run: the close
    is bounded, so the command still ends promptly)."""
    completion = {"iteration_count": 0, "total_tool_calls": 0}
    async with open_app(config, modules) as injector:
        return await injector.get(HookRunner).run(
            event,
            messages,
            request=request,
            completion=completion if event is HookEvent.ON_COMPLETION else None,
        )


def _explain(records: Sequence[HookRunRecord]) -> None:
    """A table on stderr: one row per hook, in manifest order, its name first."""
    rows = [("HOOK", "TOOL", "OUTCOME", "LATENCY", "REASON")]
    for record in records:
        latency = f"{record.latency_ms:.1f}ms"
        reason = record.reason or "-"
        rows.append((record.hook, record.tool, str(record.outcome), latency, reason))
    widths = [max(len(row[column]) for row in rows) for column in range(4)]
    for row in rows:
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        print("  ".join([*cells, row[4]]).rstrip(), file=sys.stderr)
