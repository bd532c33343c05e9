"""The ``agent-hooks`` command: validate a manifest, print its schema, run its hooks.

A thin shell over the public API: :func:`main` parses ``argv``, and :func:`_run_command` is the one
place that maps exceptions to messages and exit codes. No traceback reaches the user.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from injector import Module
from pydantic import TypeAdapter, ValidationError

from agent_hooks._connect import connection_issues
from agent_hooks.app_factory import ClockModule, open_app
from agent_hooks.clock import FixedClock
from agent_hooks.config import ApplicationConfig, FeatureSettings
from agent_hooks.config._diagnostics import issues_from_validation_error
from agent_hooks.config._jsontext import parse_json_text
from agent_hooks.config._references import reference_warnings
from agent_hooks.errors import AgentHooksError, ConfigError, ConfigIssue
from agent_hooks.injection import MessagesTransformer
from agent_hooks.messages import Message

__all__ = ["main"]

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INVALID = 2

logger = logging.getLogger("agent_hooks.cli")

_MESSAGES = TypeAdapter(list[Message])


class _UserInputError(Exception):
    """Bad input the user must fix: printed as ``PATH: message`` lines, exit code 2."""

    def __init__(self, issues: Sequence[ConfigIssue], *, stream: str = "stderr") -> None:
        super().__init__("\n".join(str(issue) for issue in issues))
        self.issues = tuple(issues)
        self.stream = stream


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (0 ok, 2 invalid input, 1 unexpected failure)."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse reports usage errors by exiting
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID
    with _stderr_logging(logging.INFO if args.verbose else logging.WARNING):
        return _run_command(args)


@contextmanager
def _stderr_logging(level: int) -> Iterator[None]:
    """Send the package's logs to stderr for one command, then put the logger back as it was.

    Only the ``agent_hooks`` logger is touched, never the root logger, so calling :func:`main`
    in-process (tests, a host's own tooling) leaves the caller's logging configuration alone.
    """
    package_logger = logging.getLogger("agent_hooks")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    previous_level = package_logger.level
    package_logger.addHandler(handler)
    package_logger.setLevel(level)
    try:
        yield
    finally:
        package_logger.removeHandler(handler)
        package_logger.setLevel(previous_level)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent-hooks", description="Config-driven synthetic tool-call injection."
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log every hook decision")
    commands = parser.add_subparsers(dest="command", required=True)

    validate = commands.add_parser("validate", help="check a manifest; exit 0 or 2")
    validate.add_argument("manifest", type=Path)
    validate.add_argument(
        "--connect", action="store_true", help="contact every toolset and check hook tools exist"
    )

    commands.add_parser("schema", help="print the manifest JSON schema")

    run = commands.add_parser("run", help="apply the request-start hooks to a history")
    run.add_argument("manifest", type=Path)
    run.add_argument(
        "--messages", required=True, help="JSON array of OpenAI messages; '-' reads stdin"
    )
    run.add_argument(
        "--now",
        type=_unix_seconds,
        default=None,
        metavar="UNIX_SECONDS",
        help="the app clock's time",
    )
    return parser


def _unix_seconds(text: str) -> float:
    """``--now``: finite, non-negative seconds since 1970 (argparse reports anything else)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be finite Unix seconds >= 0, got {text!r}")
    return value


def _run_command(args: argparse.Namespace) -> int:
    try:
        if args.command == "validate":
            return _validate(args.manifest, connect=args.connect)
        if args.command == "schema":
            return _schema()
        return _run(args.manifest, args.messages, now=args.now)
    except ConfigError as exc:
        _print_issues(exc.issues, sys.stderr)
        return EXIT_INVALID
    except _UserInputError as exc:
        _print_issues(exc.issues, sys.stdout if exc.stream == "stdout" else sys.stderr)
        return EXIT_INVALID
    except AgentHooksError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INTERNAL
    except BrokenPipeError:
        # The reader of our stdout went away (``| head``): nothing left to tell it. Point stdout
        # at devnull so the interpreter's final flush does not fail a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_INTERNAL
    except Exception as exc:  # the last line of defence: never a traceback
        logger.debug("unexpected failure", exc_info=True)
        print(f"error: unexpected {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INTERNAL


def _print_issues(issues: Sequence[ConfigIssue], stream: TextIO) -> None:
    for issue in issues:
        print(issue, file=stream)


def _validate(manifest: Path, *, connect: bool) -> int:
    """Errors are the command's result, so they go to stdout; the preview warning to stderr.

    Hooks are validated with preview on whatever the environment says, so an author can check
    them before a host enables them. ``--connect`` runs only on a valid manifest.
    """
    try:
        config = ApplicationConfig.from_file(manifest, preview=True)
        if config.hooks and not FeatureSettings().enable_preview_features:
            print(
                "warning: hooks are a preview feature and ENABLE_PREVIEW_FEATURES is off;"
                " a host would ignore them",
                file=sys.stderr,
            )
        for warning in reference_warnings(config):
            print(f"warning: {warning}", file=sys.stderr)
        issues = asyncio.run(connection_issues(config)) if connect else []
    except ConfigError as exc:
        raise _UserInputError(exc.issues, stream="stdout") from exc
    if issues:
        raise _UserInputError(issues, stream="stdout")
    return EXIT_OK


def _schema() -> int:
    print(json.dumps(ApplicationConfig.model_json_schema(), indent=2))
    return EXIT_OK


def _run(manifest: Path, messages_source: str, *, now: float | None) -> int:
    # With preview off, loading warns that the hooks are ignored: the history comes back unchanged.
    config = ApplicationConfig.from_file(manifest)
    messages = _load_messages(messages_source)
    modules: list[Module] = [ClockModule(FixedClock(now))] if now is not None else []
    result = asyncio.run(_apply_hooks(config, messages, modules))
    json.dump([message.to_openai() for message in result], sys.stdout, indent=2)
    sys.stdout.write("\n")
    return EXIT_OK


async def _apply_hooks(
    config: ApplicationConfig, messages: list[Message], modules: list[Module]
) -> list[Message]:
    async with open_app(config, modules) as injector:
        for transformer in injector.get(list[MessagesTransformer]):
            messages = await transformer.transform(messages)
    return messages


def _load_messages(source: str) -> list[Message]:
    where = "stdin" if source == "-" else source
    try:
        text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _UserInputError(
            [ConfigIssue("$", f"cannot read messages from {where}: {exc}")]
        ) from exc
    try:
        data: Any = parse_json_text(text, source=where)
    except ConfigError as exc:
        raise _UserInputError(exc.issues) from exc
    try:
        return _MESSAGES.validate_python(data)
    except ValidationError as exc:
        issues = issues_from_validation_error(exc, data, Message)
        raise _UserInputError(issues) from exc


if __name__ == "__main__":
    raise SystemExit(main())
