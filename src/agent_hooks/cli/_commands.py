"""The commands behind :func:`agent_hooks.cli.main`, and the one place that maps their
exceptions to messages and exit codes.

Each command imports what it uses: ``validate`` and ``schema`` load the manifest models only,
``run`` the runtime too, ``serve`` its server stack.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from pydantic import ValidationError

from agent_hooks._reasons import reason_for
from agent_hooks.cli._inputs import UserInputError
from agent_hooks.cli._main import (
    EXIT_HOOK_FAILED,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_OK,
)
from agent_hooks.config import ApplicationConfig, FeatureSettings
from agent_hooks.config.diagnostics._references import reference_warnings
from agent_hooks.config.diagnostics._suggest import clip
from agent_hooks.errors import AgentHooksError, ConfigError, ConfigIssue

__all__ = ["run_command"]

MAX_LISTED_ERRORS = 50
"""Error listings stop after this many lines, then say how many more there were."""

logger = logging.getLogger("agent_hooks.cli")


def run_command(args: argparse.Namespace) -> int:
    try:
        FeatureSettings()  # a bad ENABLE_PREVIEW_FEATURES is named here, not deep in validation
        if args.command == "validate":
            return _validate(args.manifest, connect=args.connect)
        if args.command == "schema":
            return _schema()
        if args.command == "serve":
            from agent_hooks.serve import run_serve

            return run_serve(args)
        from agent_hooks.cli._run import run

        return run(args)
    except ConfigError as exc:
        _print_listing([str(issue) for issue in exc.issues], sys.stderr)
        return EXIT_INVALID
    except UserInputError as exc:
        stream = sys.stdout if exc.stream == "stdout" else sys.stderr
        _print_listing([str(issue) for issue in exc.issues], stream)
        return EXIT_INVALID
    except AgentHooksError as exc:
        return _failed(exc)
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


def _failed(exc: AgentHooksError) -> int:
    """A hook with ``on_error: fail`` failed (exit 3), or another failure of ours (exit 1)."""
    from agent_hooks.runtime import HookFailedError  # only ``run`` raises it, so it is loaded

    if isinstance(exc, HookFailedError):
        failures = [f"error: hook '{f.hook}' failed: {f.reason or f.outcome}" for f in exc.failures]
        _print_listing(failures, sys.stderr)
        return EXIT_HOOK_FAILED
    print(f"error: {exc}", file=sys.stderr)
    return EXIT_INTERNAL


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
