"""Rendering hook templates at run time: JSON-e ``arguments`` and ``condition`` (SPEC 10).

Load-time checks (``config/diagnostics/_template_checks.py``) catch unknown names and bad syntax,
so what fails here is data-dependent: a property the history does not have, a type mismatch.
JSON-e's messages often
quote the values involved, which come from users' messages and the host's request; a failure is
therefore reported as a short category (``type error``), never with JSON-e's text.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import jsone
from jsone.builtins import BuiltinError
from jsone.parser import SyntaxError as ParserSyntaxError
from jsone.render import SyntaxError as RenderSyntaxError
from jsone.shared import InterpreterError, JSONTemplateError

from agent_hooks.config.diagnostics._template_checks import is_templated
from agent_hooks.errors import AgentHooksError

__all__ = ["TemplateError", "condition_holds", "is_templated", "render_arguments"]

_PYTHON_EVALUATION_ERRORS = (ValueError, TypeError, ArithmeticError, LookupError, RecursionError)
"""What JSON-e's built-ins let through untranslated (``number('x')``, ``sqrt(-1)``, ...)."""

_INTERPRETER_KINDS = (
    ("unknown context value", "undefined name"),
    ("object has no property", "missing property"),
    ("division by zero", "division by zero"),
    ("index out of bounds", "index out of range"),
)
"""JSON-e's evaluation failures by the start of their message; any other one is a type error."""

_TEMPLATE_KINDS = (
    ("interpolation of", "interpolation of a non-string value"),
    ("evaluated template contained uncalled functions", "uncalled function"),
)


class TemplateError(AgentHooksError):
    """A hook's template cannot render against this run's context; the hook is skipped.

    ``path`` is where in the hook (``arguments.q``, ``condition``), ``kind`` what went wrong, in
    words that never quote a context value.
    """

    def __init__(self, path: str, kind: str) -> None:
        self.path = path
        self.kind = kind
        super().__init__(f"template {path} cannot render: {kind}")


def render_arguments(arguments: Mapping[str, Any], context: Mapping[str, Any]) -> dict[str, Any]:
    """The tool arguments for this run: ``arguments`` rendered as JSON-e against ``context``
    (a copy of them when they hold no template).

    Raises:
        TemplateError: rendering failed, or gave something other than an object.
    """
    if not is_templated(arguments):
        return copy.deepcopy(dict(arguments))
    rendered = _render(dict(arguments), context, "arguments")
    if not isinstance(rendered, dict):
        raise TemplateError("arguments", "result is not an object")
    return rendered


def condition_holds(condition: str, context: Mapping[str, Any]) -> bool:
    """Whether the hook runs: ``condition`` evaluated as ``{"$eval": condition}`` is JSON-e
    truthy (false, null, 0, "", [] and {} are not).

    Raises:
        TemplateError: the condition cannot be evaluated against ``context``.
    """
    return bool(_render({"$eval": condition}, context, "condition"))


def _render(template: dict[str, Any], context: Mapping[str, Any], path: str) -> Any:
    # ``from None``: JSON-e's exception quotes context values, which must not reach a log line
    try:
        return jsone.render(template, dict(context))
    except JSONTemplateError as exc:
        where = "".join(exc.location) if path == "arguments" else ""
        raise TemplateError(path + where, _kind(exc)) from None
    except _PYTHON_EVALUATION_ERRORS:
        raise TemplateError(path, "evaluation error") from None


def _kind(exc: JSONTemplateError) -> str:
    """A category for JSON-e's error; its message is not used as it may quote context values."""
    message = str(exc.args[0]) if exc.args else ""
    if isinstance(exc, ParserSyntaxError | RenderSyntaxError):
        return "syntax error"
    if isinstance(exc, BuiltinError):
        return "invalid arguments to a built-in"
    if isinstance(exc, InterpreterError):
        return next(
            (kind for start, kind in _INTERPRETER_KINDS if message.startswith(start)), "type error"
        )
    return next(
        (kind for start, kind in _TEMPLATE_KINDS if message.startswith(start)), "invalid template"
    )
