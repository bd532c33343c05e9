"""Load-time checks of hook templates: JSON-e ``arguments`` and ``condition`` (SPEC section 10).

A template that names a context value the hook's event does not have, or that does not parse,
would fail on every request, and only as a warning in the host's log. So every expression is parsed
here with json-e's own parser and its root names are checked against what the event offers, the
JSON-e built-ins and the names bound by ``$let`` and ``each(...)``/``by(...)``. A few structural
mistakes JSON-e would reject at render time (an unknown key next to an operator, ``$let`` without
``in``) are reported too. Problems carry their location inside the checked value so the manifest
error names the exact string (``hooks[0].arguments.q``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from jsone import AST
from jsone import builtins as jsone_builtins
from jsone.parser import Parser
from jsone.parser import SyntaxError as JsoneSyntaxError
from jsone.render import tokenizer as jsone_tokenizer

from agent_hooks.config.diagnostics._suggest import clip

__all__ = [
    "BUILTIN_NAMES",
    "COMPLETION_CONTEXT",
    "REQUEST_START_CONTEXT",
    "TemplateProblem",
    "context_names",
    "is_templated",
    "template_problems",
]

REQUEST_START_CONTEXT = (
    "event",
    "messages",
    "last_user_message",
    "last_assistant_message",
    "request",
)
"""The context of an ``on_request_start`` hook."""

COMPLETION_CONTEXT = (*REQUEST_START_CONTEXT, "iteration_count", "total_tool_calls")
"""The context of an ``on_completion`` hook: the request's, plus what the agent loop did."""

BUILTIN_NAMES = frozenset(jsone_builtins.build()) | {"now"}
"""JSON-e's built-in functions, plus ``now``, which ``jsone.render`` adds to every context."""

Loc = tuple[str | int, ...]

_INTERPOLATION_START = re.compile(r"\$?\$\{")
"""JSON-e's own rule: ``${`` opens an interpolation, ``$${`` is an escaped literal ``${``."""

_IDENTIFIER = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")

_BINDING_KEY = re.compile(r"(each|by)\(([^()]*)\)")

_OPERATOR_KEYS: Mapping[str, tuple[str, ...]] = {
    "$eval": (),
    "$if": ("then", "else"),
    "$let": ("in",),
    "$map": ("each",),
    "$reduce": ("each", "initial"),
    "$find": ("each",),
    "$sort": ("by",),
    "$match": (),
    "$switch": (),
    "$fromNow": ("from",),
    "$json": (),
    "$flatten": (),
    "$flattenDeep": (),
    "$merge": (),
    "$mergeDeep": (),
    "$reverse": (),
}
"""Every JSON-e operator and the keys it allows next to it (``each``/``by`` stand for
``each(...)``/``by(...)``)."""

_BINDING_ARITY = {"$map": (1, 2), "$find": (1, 2), "$reduce": (2, 3), "$sort": (1, 1)}
"""How many names the ``each(...)``/``by(...)`` key of an operator binds."""

_EXPRESSION_BODIES = ("$find", "$sort")
"""Operators whose ``each(...)``/``by(...)`` value is an expression, not a template."""


@dataclass(frozen=True)
class TemplateProblem:
    """One thing wrong with a template, at ``loc`` inside the checked value."""

    loc: Loc
    message: str


def context_names(event: str | None) -> frozenset[str]:
    """The root names a hook of ``event`` may use; every event's names when it is unknown."""
    if event == "on_request_start":
        return frozenset(REQUEST_START_CONTEXT)
    return frozenset(COMPLETION_CONTEXT)


def is_templated(arguments: Mapping[str, Any]) -> bool:
    """Whether JSON-e would change ``arguments``: some string holds ``${`` (not the escape
    ``$${``) or some object key starts with ``$``."""
    pending: list[object] = [arguments]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            if _has_interpolation(value):
                return True
        elif isinstance(value, Mapping):
            for key, child in value.items():
                if key.startswith("$") or _has_interpolation(key):
                    return True
                pending.append(child)
        elif isinstance(value, list):
            pending.extend(value)
    return False


def template_problems(
    template: object, names: frozenset[str], *, expression: bool = False
) -> list[TemplateProblem]:
    """Every problem in ``template`` (an ``arguments`` value, or with ``expression`` a
    ``condition`` string), for a hook whose context has ``names``."""
    checker = _Checker(names)
    if expression and isinstance(template, str):
        checker.expression(template, (), BUILTIN_NAMES | names)
    else:
        checker.template(template, (), BUILTIN_NAMES | names)
    return checker.problems


def _has_interpolation(text: str) -> bool:
    return any(match.group() == "${" for match in _INTERPOLATION_START.finditer(text))


class _Checker:
    """Walks a template the way ``jsone.render`` would, with the names in scope at each place."""

    def __init__(self, context: frozenset[str]) -> None:
        self.context = context
        self.problems: list[TemplateProblem] = []

    def report(self, loc: Loc, message: str) -> None:
        self.problems.append(TemplateProblem(loc, message))

    def template(self, value: object, loc: Loc, scope: frozenset[str]) -> None:
        if isinstance(value, str):
            self.interpolations(value, loc, scope)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                self.template(item, (*loc, index), scope)
        elif isinstance(value, dict):
            operators = [key for key in value if key in _OPERATOR_KEYS]
            if len(operators) > 1:
                self.report(
                    loc, f"invalid JSON-e template: one operator per object, got {operators}"
                )
            elif operators:
                self.operator(operators[0], value, loc, scope)
            else:
                self.plain_object(value, loc, scope)

    def plain_object(self, value: dict[str, Any], loc: Loc, scope: frozenset[str]) -> None:
        for key, child in value.items():
            here = (*loc, key)
            if key.startswith("$") and not key.startswith("$$") and _IDENTIFIER.match(key[1:]):
                self.report(
                    here,
                    f"invalid JSON-e template: {clip(key)!r} is not an operator; write"
                    f" {clip('$' + key)!r} for a literal key",
                )
            elif not key.startswith("$$"):
                self.interpolations(key, here, scope)
            self.template(child, here, scope)

    def operator(self, name: str, value: dict[str, Any], loc: Loc, scope: frozenset[str]) -> None:
        here = (*loc, name)
        body = value[name]
        bindings = self.sibling_keys(name, value, loc)
        if name in ("$eval", "$if"):
            if isinstance(body, str):
                self.expression(body, here, scope)
            else:
                self.report(here, f"invalid JSON-e template: {name} takes an expression string")
        elif name in ("$match", "$switch"):
            self.conditional_branches(name, body, here, scope)
        else:
            self.template(body, here, scope)
        if name == "$let":
            self.let(body, value, loc, scope)
        for key, bound in bindings:
            if name in _EXPRESSION_BODIES:
                self.expression_value(value[key], (*loc, key), scope | bound)
            else:
                self.template(value[key], (*loc, key), scope | bound)
        for key in ("then", "else", "from"):
            if key in value and key in _OPERATOR_KEYS[name]:
                self.template(value[key], (*loc, key), scope)

    def sibling_keys(
        self, name: str, value: dict[str, Any], loc: Loc
    ) -> list[tuple[str, frozenset[str]]]:
        """Report keys the operator does not take; return its binding keys and their names."""
        allowed = _OPERATOR_KEYS[name]
        bindings: list[tuple[str, frozenset[str]]] = []
        for key in value:
            if key == name or key in allowed:
                continue
            match = _BINDING_KEY.fullmatch(key)
            if match is None or match.group(1) not in allowed:
                self.report(
                    (*loc, key), f"invalid JSON-e template: {name} takes no key {clip(key)!r}"
                )
                continue
            bound = [part.strip() for part in match.group(2).split(",")]
            low, high = _BINDING_ARITY[name]
            if not low <= len(bound) <= high or not all(_IDENTIFIER.fullmatch(n) for n in bound):
                self.report((*loc, key), f"invalid JSON-e template: bad binding {clip(key)!r}")
                continue
            bindings.append((key, frozenset(bound)))
        if name in _BINDING_ARITY and not any(_BINDING_KEY.fullmatch(key) for key in value):
            self.report(loc, f"invalid JSON-e template: {name} needs an each(...) or by(...) key")
        if name == "$let" and "in" not in value:
            self.report(loc, "invalid JSON-e template: $let needs an 'in' key")
        return bindings

    def let(self, body: object, value: dict[str, Any], loc: Loc, scope: frozenset[str]) -> None:
        if not isinstance(body, dict):
            self.report((*loc, "$let"), "invalid JSON-e template: $let takes an object")
            return
        if "in" in value:
            bound = frozenset(key for key in body if _IDENTIFIER.fullmatch(key))
            self.template(value["in"], (*loc, "in"), scope | bound)

    def conditional_branches(
        self, name: str, body: object, loc: Loc, scope: frozenset[str]
    ) -> None:
        if not isinstance(body, dict):
            self.report(loc, f"invalid JSON-e template: {name} takes an object")
            return
        for condition, branch in body.items():
            if not (name == "$switch" and condition == "$default"):
                self.expression(condition, (*loc, condition), scope)
            self.template(branch, (*loc, condition), scope)

    def expression_value(self, value: object, loc: Loc, scope: frozenset[str]) -> None:
        if isinstance(value, str):
            self.expression(value, loc, scope)
        else:
            self.report(loc, "invalid JSON-e template: this value must be an expression string")

    def expression(self, source: str, loc: Loc, scope: frozenset[str]) -> None:
        """A whole string is one expression (``condition``, ``$eval``, ``$if``...)."""
        parsed = _parse(source, terminator=None)
        self.check(parsed, source, loc, scope)

    def interpolations(self, text: str, loc: Loc, scope: frozenset[str]) -> None:
        """Every ``${...}`` in a string (or key); the first broken one ends the scan."""
        position = 0
        while (match := _INTERPOLATION_START.search(text, position)) is not None:
            position = match.end()
            if match.group() == "$${":
                continue
            parsed = _parse(text[position:], terminator="}")
            if not self.check(parsed, text, loc, scope):
                return
            position += parsed.end

    def check(self, parsed: _Parsed, text: str, loc: Loc, scope: frozenset[str]) -> bool:
        if parsed.error is not None:
            where = f" in {clip(text)!r}" if text.strip() else ""
            self.report(loc, f"invalid JSON-e expression: {parsed.error}{where}")
            return False
        for name in dict.fromkeys(parsed.names):
            if name not in scope:
                hint = " (on_completion hooks only)" if name in COMPLETION_CONTEXT else ""
                self.report(loc, f"unknown context value {clip(name)!r}{hint}")
        return True


@dataclass(frozen=True)
class _Parsed:
    """An expression's root names and where it ended, or why it does not parse."""

    names: tuple[str, ...] = ()
    end: int = 0
    """Offset just past the terminator (interpolations only)."""
    error: str | None = None


class _TrackingTokenizer:
    """json-e's tokenizer, remembering where the last good token ended, so a character it cannot
    read is reported as such rather than through json-e's message (which repeats the source)."""

    def __init__(self) -> None:
        self.offset = 0
        self.unreadable: bool = False

    def generate_tokens(self, source: str) -> Iterator[Any]:
        tokens = jsone_tokenizer.generate_tokens(source)
        while True:
            try:
                token = next(tokens)
            except StopIteration:
                return
            except JsoneSyntaxError:
                self.unreadable = True
                raise
            self.offset = token.end
            yield token


def _parse(source: str, *, terminator: str | None) -> _Parsed:
    tokens = _TrackingTokenizer()
    parser: Any = None
    try:
        parser = Parser(source, tokens)
        tree = parser.parse()
        names = () if tree is None else _root_names(tree)
    except StopIteration:  # the parser asks for a first token the source does not have
        return _Parsed(error="empty expression")
    except JsoneSyntaxError:
        return _Parsed(error=_syntax_reason(source, tokens, parser, terminator))
    except _MissingOperandError:
        return _Parsed(error="an operand is missing")
    except AttributeError:  # json-e's parser reads past the end of some truncated expressions
        return _Parsed(error="the expression ends too early")
    except RecursionError:
        return _Parsed(error="nested too deeply")
    token = parser.current_token
    if terminator is None:
        return _Parsed(names) if token is None else _Parsed(error=_unexpected(token))
    if token is None:
        return _Parsed(error="unterminated '${'")
    if token.kind != terminator:
        return _Parsed(error=_unexpected(token))
    if tree is None:
        return _Parsed(error="empty expression")
    return _Parsed(names, end=token.start + 1)


def _syntax_reason(
    source: str, tokens: _TrackingTokenizer, parser: Any, terminator: str | None
) -> str:
    if tokens.unreadable:
        return f"unexpected character {source[tokens.offset :].lstrip()[:1]!r}"
    token = parser.current_token if parser is not None else None
    if token is not None:
        return _unexpected(token)
    return "unterminated '${'" if terminator else "unexpected end of expression"


def _unexpected(token: Any) -> str:
    return f"unexpected {clip(token.value, 20)!r}"


class _MissingOperandError(Exception):
    """json-e's parser accepts some incomplete expressions (``a +`` before ``}``) that crash its
    interpreter; they surface as ``None`` operands in the tree."""


def _root_names(tree: Any) -> tuple[str, ...]:
    """The context names an expression reads, in source order (iteratively: it may be deep)."""
    found: list[tuple[int, str]] = []
    pending: list[Any] = [tree]
    while pending:
        node = pending.pop()
        if node is None:
            raise _MissingOperandError
        if isinstance(node, AST.ContextValue):
            found.append((node.token.start, node.token.value))
        elif isinstance(node, AST.BinOp):
            # ``a.b``: the right side is a property name, not a context value
            pending.extend([node.left] if node.token.kind == "." else [node.left, node.right])
        elif isinstance(node, AST.UnaryOp):
            pending.append(node.expr)
        elif isinstance(node, AST.FunctionCall):
            pending.extend([node.name, *node.args])
        elif isinstance(node, AST.List):
            if node.list != [None]:  # ``[]`` parses as a list holding one None
                pending.extend(node.list)
        elif isinstance(node, AST.ValueAccess):
            pending.extend(part for part in (node.arr, node.left, node.right) if part is not None)
        elif isinstance(node, AST.Object):
            pending.extend(node.obj.values())
    return tuple(name for _, name in sorted(found))
