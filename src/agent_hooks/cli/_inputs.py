"""The ``run`` command's inputs besides the manifest: ``--now``, ``--request`` and the messages
file, each refused with ``PATH: message`` lines (exit 2) before anything runs."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agent_hooks.config.diagnostics._jsontext import parse_json_text
from agent_hooks.config.diagnostics._suggest import clip
from agent_hooks.config.diagnostics._validation_errors import issues_from_validation_error
from agent_hooks.errors import ConfigError, ConfigIssue

if TYPE_CHECKING:
    from agent_hooks.messages import Message

__all__ = [
    "MAX_NOW_SECONDS",
    "UserInputError",
    "load_messages",
    "parse_now",
    "parse_request",
]

MAX_NOW_SECONDS = 10**10


class UserInputError(Exception):
    """Bad input the user must fix: printed as ``PATH: message`` lines, exit code 2."""

    def __init__(self, issues: Sequence[ConfigIssue], *, stream: str = "stderr") -> None:
        super().__init__("\n".join(str(issue) for issue in issues))
        self.issues = tuple(issues)
        self.stream = stream


def parse_now(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 <= value <= MAX_NOW_SECONDS:  # also rejects nan
        message = f"must be Unix seconds from 0 to {MAX_NOW_SECONDS}, got {clip(repr(text))}"
        raise UserInputError([ConfigIssue("--now", message)])
    return value


def parse_request(text: str | None) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        data = parse_json_text(text, source="--request")
    except ConfigError as exc:
        raise UserInputError([ConfigIssue("--request", i.message) for i in exc.issues]) from exc
    if not isinstance(data, dict):
        got = clip(json.dumps(data))
        raise UserInputError([ConfigIssue("--request", f"must be a JSON object, got {got}")])
    return data


def load_messages(source: str, *, max_bytes: int, limit: int) -> list[Message]:
    """The history to run on, refused before validation when it is over the limits.

    Raises:
        UserInputError: the file cannot be read, is too large, is not JSON, has too many
            messages, or a message is not an OpenAI message (one line per problem).
    """
    where = "stdin" if source == "-" else source
    raw = _read_at_most(source, max_bytes + 1)
    if len(raw) > max_bytes:
        message = f"{where} is larger than {max_bytes} bytes; --max-bytes raises the limit"
        raise UserInputError([ConfigIssue("$", message)])
    try:
        data: Any = parse_json_text(raw.decode("utf-8"), source=where)
    except UnicodeDecodeError as exc:
        message = f"{where} is not UTF-8 text (byte {exc.start})"
        raise UserInputError([ConfigIssue("$", message)]) from exc
    except ConfigError as exc:
        raise UserInputError(exc.issues) from exc
    if isinstance(data, list) and len(data) > limit:
        message = f"{len(data)} messages, more than {limit}; --max-messages raises the limit"
        raise UserInputError([ConfigIssue("$", message)])
    from pydantic import TypeAdapter, ValidationError  # only ``run`` reads messages

    from agent_hooks.messages import Message

    try:
        return TypeAdapter(list[Message]).validate_python(data)
    except ValidationError as exc:
        raise UserInputError(issues_from_validation_error(exc, data, Message)) from exc


def _read_at_most(source: str, size: int) -> bytes:
    """At most ``size`` bytes of the file, or of stdin for ``-``: a huge input is never loaded."""
    try:
        if source != "-":
            with open(source, "rb") as file:
                return file.read(size)
        if hasattr(sys.stdin, "buffer"):
            return sys.stdin.buffer.read(size)
        return sys.stdin.read(size).encode("utf-8")  # a text-only stdin (an in-process caller)
    except OSError as exc:
        where = "stdin" if source == "-" else source
        message = f"cannot read messages from {where}: {exc.strerror or exc}"
        raise UserInputError([ConfigIssue("$", message)]) from exc
