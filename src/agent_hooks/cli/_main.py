"""The ``agent-hooks`` command: validate a manifest, print its schema, run its hooks, serve them.

A thin shell over the public API: :func:`main` parses ``argv``, and :func:`_run_command` is the one
place that maps exceptions to messages and exit codes. No traceback reaches the user, and every
log line (ours and the libraries' underneath) is one scrubbed line on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from injector import Module
from pydantic import ValidationError

from agent_hooks._reasons import reason_for
from agent_hooks.app_factory import ClockModule, open_app
from agent_hooks.cli._inputs import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_MESSAGES,
    UserInputError,
    load_messages,
    parse_now,
    parse_request,
)
from agent_hooks.cli._logging import stderr_logging
from agent_hooks.clock import FixedClock
from agent_hooks.config import ApplicationConfig, FeatureSettings, HookEvent
from agent_hooks.config.diagnostics._references import reference_warnings
from agent_hooks.config.diagnostics._suggest import clip
from agent_hooks.errors import AgentHooksError, ConfigError, ConfigIssue
from agent_hooks.messages import Message
from agent_hooks.runtime import HookFailedError, HookRun, HookRunner, HookRunRecord

__all__ = ["main"]

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INVALID = 2
EXIT_HOOK_FAILED = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for Ctrl-C

MAX_LISTED_ERRORS = 50
"""Error listings stop after this many lines, then say how many more there were."""

logger = logging.getLogger("agent_hooks.cli")

_LOG_LEVELS = (logging.WARNING, logging.INFO, logging.DEBUG)
"""Log level by the number of ``-v`` flags."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code.

    0 ok, 1 unexpected failure, 2 invalid input, 3 a hook with ``on_error: fail`` failed,
    130 interrupted (Ctrl-C).
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse reports usage errors by exiting
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID
    verbosity = min(args.verbose + args.verbose_after, len(_LOG_LEVELS) - 1)
    with stderr_logging(_LOG_LEVELS[verbosity]):
        return _run_command(args)


def _parser() -> argparse.ArgumentParser:
    from agent_hooks.serve import add_serve_parser  # its server stack loads only when it runs

    parser = argparse.ArgumentParser(
        prog="agent-hooks", description="Config-driven synthetic tool-call injection."
    )
    _add_verbosity(parser, dest="verbose")
    commands = parser.add_subparsers(dest="command", required=True)

    validate = commands.add_parser("validate", help="check a manifest; exit 0 or 2")
    validate.add_argument("manifest", type=Path)
    validate.add_argument(
        "--connect", action="store_true", help="contact every toolset and check hook tools exist"
    )

    commands.add_parser("schema", help="print the manifest JSON schema")

    run = commands.add_parser("run", help="run the hooks of one event on a history")
    run.add_argument("manifest", type=Path)
    run.add_argument(
        "--messages", required=True, help="JSON array of OpenAI messages; '-' reads stdin"
    )
    run.add_argument(
        "--now", metavar="UNIX_SECONDS", help="the app clock's time (TTLs, current_time)"
    )
    run.add_argument("--request", metavar="JSON", help="the host's request context, a JSON object")
    run.add_argument(
        "--event",
        choices=[event.value for event in HookEvent],
        default=HookEvent.ON_REQUEST_START.value,
        help="which hooks run (default: on_request_start)",
    )
    run.add_argument("--explain", action="store_true", help="print what each hook did on stderr")
    run.add_argument(
        "--max-messages",
        type=_positive_int,
        default=DEFAULT_MAX_MESSAGES,
        metavar="N",
        help=f"refuse longer histories (default {DEFAULT_MAX_MESSAGES})",
    )
    run.add_argument(
        "--max-bytes",
        type=_positive_int,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help=f"refuse larger messages files (default {DEFAULT_MAX_BYTES}, 64 MiB)",
    )

    add_serve_parser(commands)
    for command in commands.choices.values():
        _add_verbosity(command, dest="verbose_after")
    return parser


def _add_verbosity(parser: argparse.ArgumentParser, *, dest: str) -> None:
    """``-v`` before or after the subcommand; the two counts add up (``dest`` keeps them apart,
    or the subcommand's default would overwrite the count given before it)."""
    parser.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        dest=dest,
        help="-v logs every hook decision (INFO), -vv everything (DEBUG)",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {clip(repr(text))}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _run_command(args: argparse.Namespace) -> int:
    try:
        FeatureSettings()  # a bad ENABLE_PREVIEW_FEATURES is named here, not deep in validation
        if args.command == "validate":
            return _validate(args.manifest, connect=args.connect)
        if args.command == "schema":
            return _schema()
        if args.command == "serve":
            from agent_hooks.serve import run_serve

            return run_serve(args)
        return _run(args)
    except ConfigError as exc:
        _print_listing([str(issue) for issue in exc.issues], sys.stderr)
        return EXIT_INVALID
    except UserInputError as exc:
        stream = sys.stdout if exc.stream == "stdout" else sys.stderr
        _print_listing([str(issue) for issue in exc.issues], stream)
        return EXIT_INVALID
    except HookFailedError as exc:
        failures = [f"error: hook '{f.hook}' failed: {f.reason or f.outcome}" for f in exc.failures]
        _print_listing(failures, sys.stderr)
        return EXIT_HOOK_FAILED
    except AgentHooksError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    except ValidationError as exc:
        if exc.title != FeatureSettings.__name__:
            return _unexpected(exc)
        _print_listing([str(issue) for issue in _settings_issues(exc)], sys.stderr)
        return EXIT_INVALID
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader of our stdout went away (``| head``): nothing left to tell it. Point stdout
        # at devnull so the interpreter's final flush does not fail a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_INTERNAL
    except Exception as exc:  # the last line of defence: never a traceback
        return _unexpected(exc)


def _unexpected(exc: Exception) -> int:
    logger.debug("unexpected failure", exc_info=True)
    print(f"error: unexpected {reason_for(exc)}", file=sys.stderr)
    return EXIT_INTERNAL


def _settings_issues(exc: ValidationError) -> list[ConfigIssue]:
    """pydantic-settings names the field; the user wrote an environment variable."""
    return [
        ConfigIssue(
            str(error["loc"][0]).upper(),
            f"must be true or false (or 1/0, yes/no, on/off), got {clip(repr(error['input']))}",
        )
        for error in exc.errors(include_url=False)
    ]


def _print_listing(lines: Sequence[str], stream: TextIO) -> None:
    for line in lines[:MAX_LISTED_ERRORS]:
        print(line, file=stream)
    if len(lines) > MAX_LISTED_ERRORS:
        print(f"... and {len(lines) - MAX_LISTED_ERRORS} more", file=stream)


def _validate(manifest: Path, *, connect: bool) -> int:
    """Errors are the command's result, so they go to stdout; the preview warning to stderr.

    Hooks are validated with preview on whatever the environment says, so an author can check
    them before a host enables them. ``--connect`` runs only on a valid manifest.
    """
    try:
        config = ApplicationConfig.from_file(manifest, preview=True)
        if config.hooks:
            _warn_when_preview_is_off()
        for warning in reference_warnings(config):
            print(f"warning: {warning}", file=sys.stderr)
        issues = asyncio.run(_connection_issues(config)) if connect else []
    except ConfigError as exc:
        if any(issue.path.startswith("hooks") for issue in exc.issues):
            _warn_when_preview_is_off()
        raise UserInputError(exc.issues, stream="stdout") from exc
    if issues:
        raise UserInputError(issues, stream="stdout")
    return EXIT_OK


def _warn_when_preview_is_off() -> None:
    if not FeatureSettings().enable_preview_features:
        print(
            "warning: hooks are a preview feature and ENABLE_PREVIEW_FEATURES is off;"
            " a host would ignore them",
            file=sys.stderr,
        )


async def _connection_issues(config: ApplicationConfig) -> list[ConfigIssue]:
    """``--connect``: imported here, as it loads ``jsonschema``, which only this check needs."""
    from agent_hooks.cli._connect import connection_issues

    return await connection_issues(config)


def _schema() -> int:
    print(json.dumps(ApplicationConfig.model_json_schema(), indent=2))
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    """Inputs are checked cheapest first. The manifest is validated as ``validate`` does (hooks
    included); while preview features are off its hooks are then dropped with a warning, so
    the history comes back unchanged."""
    now = parse_now(args.now)
    request = parse_request(args.request)
    event = HookEvent(args.event)
    config = ApplicationConfig.from_file(args.manifest, preview=True)  # bad hooks exit 2 anyway
    if not FeatureSettings().enable_preview_features:
        config = ApplicationConfig.from_file(args.manifest)  # warns that the hooks are ignored
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


if __name__ == "__main__":
    raise SystemExit(main())
