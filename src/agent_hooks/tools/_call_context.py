"""What one hook's tool call may know about the run that makes it, without widening ``execute``.

A tool's ``execute(arguments)`` is the whole contract a host implements, so the runtime passes
per-call limits the other way: it opens a :class:`ToolCallContext` around the call (a context
variable, so concurrent hooks each see their own), and toolsets read it. HTTP toolsets stop reading
a body past :attr:`ToolCallContext.max_body_bytes`; a tool that leaves something out of its result
(an image, a blob) says so with :func:`note`, and the note becomes part of the hook's record.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from dataclasses import dataclass, field

from agent_hooks.tools._stages import StageReporter

__all__ = [
    "BODY_BYTES_PER_CHAR",
    "DEFAULT_MAX_CONTENT_CHARS",
    "ToolCallContext",
    "call_context",
    "current_call_context",
    "note",
]

DEFAULT_MAX_CONTENT_CHARS = 20_000
"""A hook's ``max_content_chars`` when nothing says otherwise (the manifest default)."""

BODY_BYTES_PER_CHAR = 4
"""UTF-8 needs at most four bytes per character: reading more than this many bytes per allowed
character can only produce text that is cut anyway."""


@dataclass
class ToolCallContext:
    """Limits and notes of one tool call made for a hook."""

    max_content_chars: int = DEFAULT_MAX_CONTENT_CHARS
    notes: list[str] = field(default_factory=list)
    stage_reporter: StageReporter | None = None
    """The app's reporter, for tools that have none of their own."""
    deadline: float | None = None
    """When the runner gives up on this call (event-loop time): it cancels the call then and
    stops waiting for it. ``None``: nobody will (a direct call, a tool that never waits)."""
    late_deadline: float | None = None
    """Set by a toolset's guard whose own timeout would end after :attr:`deadline`, and which
    therefore set no timer of its own: the runner cancels a call it gave up on again at this
    moment, as that timeout would have (a call may have swallowed the first cancel)."""

    @property
    def max_body_bytes(self) -> int:
        """How many bytes of a response body are worth reading."""
        return self.max_content_chars * BODY_BYTES_PER_CHAR


_CURRENT: ContextVar[ToolCallContext | None] = ContextVar("agent_hooks_tool_call", default=None)


def current_call_context() -> ToolCallContext:
    """The context of the call being made; a default one outside any hook (a direct call)."""
    return _CURRENT.get() or ToolCallContext()


def note(text: str) -> None:
    """Record that the result left something out (``image content left out``)."""
    context = _CURRENT.get()
    if context is not None and text not in context.notes:
        context.notes.append(text)


class call_context:  # lowercase: it reads as the function it replaced
    """Make ``context`` current for the calls made inside the block.

    A class rather than a ``@contextmanager`` generator: it is entered around every hook's tool
    call, and the generator machinery cost more than the call of a tool that answers at once.
    """

    __slots__ = ("_context", "_token")
    _token: Token[ToolCallContext | None]

    def __init__(self, context: ToolCallContext) -> None:
        self._context = context

    def __enter__(self) -> ToolCallContext:
        self._token = _CURRENT.set(self._context)
        return self._context

    def __exit__(self, *exc_info: object) -> None:
        _CURRENT.reset(self._token)
