"""The ``agent-hooks`` command line: its parser and :func:`main`.

Parsing needs nothing but argparse, so ``agent-hooks --help`` (and a usage error) answers
without loading the manifest models or the runtime; each command imports what it uses when it
runs (:mod:`agent_hooks.cli._commands`, the one place that maps exceptions to messages and exit
codes). No traceback reaches the user, and every log line (ours and the libraries' underneath)
is one scrubbed line on stderr.
"""

from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from agent_hooks._version import DISTRIBUTION, __version__
from agent_hooks.cli._logging import stderr_logging
from agent_hooks.config import HookEvent
from agent_hooks.config.diagnostics._suggest import clip

__all__ = ["main"]

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_INVALID = 2
EXIT_HOOK_FAILED = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what shells report for Ctrl-C

DEFAULT_MAX_MESSAGES = 100_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

_LOG_LEVELS = (logging.WARNING, logging.INFO, logging.DEBUG)
"""Log level by the number of ``-v`` flags."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code.

    0 ok, 1 unexpected failure, 2 invalid input, 3 a hook with ``on_error: fail`` failed,
    130 interrupted (Ctrl-C).
    """
    parser, serve = _parser()
    try:
        args = parser.parse_args(argv)
        if args.command == "serve":
            from agent_hooks.serve import check_serve_args

            check_serve_args(serve, args)
    except SystemExit as exc:  # argparse reports usage errors by exiting
        return exc.code if isinstance(exc.code, int) else EXIT_INVALID
    verbosity = min(args.verbose + args.verbose_after, len(_LOG_LEVELS) - 1)
    from agent_hooks.cli._commands import run_command

    with stderr_logging(_LOG_LEVELS[verbosity]):
        return run_command(args)


def _parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """The CLI's parser, and its ``serve`` subcommand's (whose options are checked together
    once parsed)."""
    from agent_hooks.serve import add_serve_parser  # its server stack loads only when it runs

    parser = argparse.ArgumentParser(
        prog="agent-hooks", description="Config-driven synthetic tool-call injection."
    )
    parser.add_argument("--version", action="version", version=f"{DISTRIBUTION} {__version__}")
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

    serve = add_serve_parser(commands)
    for command in commands.choices.values():
        _add_verbosity(command, dest="verbose_after")
    return parser, serve


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


if __name__ == "__main__":
    raise SystemExit(main())
