"""Decoding manifest text as strict JSON, with errors that say where the text went wrong.

:func:`json.loads` is lenient where leniency hides a manifest author's mistake: it accepts ``NaN``
and ``Infinity`` (not JSON), and when an object repeats a key it silently keeps the last value, so a
second ``"hooks"`` would quietly replace the first. Here both are errors naming their place.
"""

from __future__ import annotations

import json
from typing import Any

from agent_hooks.config.diagnostics._validation_errors import format_path
from agent_hooks.errors import ConfigError, ConfigIssue

__all__ = ["decode_json_text", "parse_json_text"]


def parse_json_text(text: str, *, source: str | None = None) -> object:
    """Decode manifest text as strict JSON; a leading byte-order mark is allowed.

    Stricter than :func:`json.loads` where its leniency would hide a mistake: ``NaN`` and
    ``Infinity`` are not JSON, and a key repeated in one object would silently lose all but its
    last value.

    Raises:
        ConfigError: the text is not JSON, or an object repeats a key (every repeat is listed).
    """
    data, repeated = decode_json_text(text, source=source)
    if repeated:
        raise ConfigError(repeated, source=source)
    return data


def decode_json_text(text: str, *, source: str | None = None) -> tuple[object, list[ConfigIssue]]:
    """:func:`parse_json_text` that hands back the data of a text whose objects repeat keys
    (the last value of each, as :func:`json.loads` keeps) with one issue per repeat, so the
    manifest can still be checked for its other errors in the same pass.

    Raises:
        ConfigError: the text is not JSON.
    """
    repeats: list[tuple[int, str]] = []

    def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj = dict(pairs)
        if len(obj) != len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    repeats.append((id(obj), key))
                seen.add(key)
        return obj

    try:
        data = json.loads(
            text.removeprefix("\ufeff"),
            object_pairs_hook=unique_keys,
            parse_constant=_reject_constant,
            parse_int=_bounded_int,
        )
    except json.JSONDecodeError as exc:
        reason = exc.msg[:1].lower() + exc.msg[1:]
        message = f"invalid JSON: {reason} (line {exc.lineno}, column {exc.colno})"
        raise ConfigError([ConfigIssue("$", message)], source=source) from exc
    except RecursionError as exc:
        issue = ConfigIssue("$", "invalid JSON: nested too deeply")
        raise ConfigError([issue], source=source) from exc
    except _NotJsonError as exc:
        raise ConfigError([ConfigIssue("$", f"invalid JSON: {exc}")], source=source) from exc
    return data, _repeated_key_issues(data, repeats) if repeats else []


class _NotJsonError(ValueError):
    """A token :mod:`json` would accept although it is not JSON (or not usable as a number)."""


def _reject_constant(name: str) -> object:
    raise _NotJsonError(f"{name} is not a JSON value")


def _bounded_int(digits: str) -> int:
    try:
        return int(digits)
    except ValueError:  # Python refuses to convert integers of thousands of digits
        raise _NotJsonError(f"an integer of {len(digits)} digits is too long") from None


def _repeated_key_issues(data: object, repeats: list[tuple[int, str]]) -> list[ConfigIssue]:
    """Locate each repeated key by walking the decoded tree (iteratively: it may be deep)."""
    wanted: dict[int, list[str]] = {}
    for obj_id, key in repeats:
        wanted.setdefault(obj_id, []).append(key)
    issues: list[ConfigIssue] = []
    pending: list[tuple[object, tuple[str | int, ...]]] = [(data, ())]
    while pending:
        node, path = pending.pop()
        if isinstance(node, dict):
            for key in wanted.get(id(node), []):
                message = "key appears more than once in this object; only the last would count"
                issues.append(ConfigIssue(format_path([*path, key]), message))
            pending.extend((child, (*path, key)) for key, child in node.items())
        elif isinstance(node, list):
            pending.extend((child, (*path, index)) for index, child in enumerate(node))
    return sorted(issues, key=lambda issue: issue.path)
