"""The seed's injector seam: a host subclass names a tool, its arguments and its content.

There is one decision path for every seam (SPEC section 8): an injector does not place pairs
itself, it hands its one hook to the hook runtime, which gives it the same ids, signing, trust
rules, deadline and records as a manifest hook. The runtime sits above this layer, so an injector
looks it up by name when it first runs (``agent_hooks`` binds the name to the runtime module,
:func:`agent_hooks._lazy.resolve_late`): importing this class alone is enough for a host.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal, Protocol

import agent_hooks._lazy as _lazy
from agent_hooks.clock import Clock, SystemClock
from agent_hooks.config import SigningSettings
from agent_hooks.config.hooks import DEFAULT_MAX_CONTENT_CHARS, InjectionFrequency
from agent_hooks.injection._transformer import MessagesTransformer
from agent_hooks.injection._trust import SigningKeys
from agent_hooks.messages import Message
from agent_hooks.tools import ToolCallResultEnricher

__all__ = ["InjectorEngine", "SyntheticToolCallInjector"]


class InjectorEngine(Protocol):
    """Runs one injector's hook on a history: the hook runtime, seen from below."""

    async def transform(
        self, injector: SyntheticToolCallInjector, messages: Sequence[Message]
    ) -> list[Message]: ...


class SyntheticToolCallInjector(MessagesTransformer):
    """Adds the result of one tool call to the history as if the model had asked for it.

    Subclasses say which tool (:meth:`get_tool_name`), with which arguments, and produce the
    content (:meth:`get_content`); placement, ids, TTL handling, signing, the deadline and the
    record are the hook runtime's (SPEC sections 4, 8, 9). ``ttl_seconds`` turns on the TTL: while
    the latest result is fresh, nothing is called. Signing keys are read from the environment
    (``AGENT_HOOKS_SIGNING_KEY`` / ``_KEYS``) when the injector is constructed, so its pairs survive
    a signed run of the same app.

    Like a manifest hook, a failing :meth:`get_content` does not fail the request (the history
    comes back unchanged and a warning is logged) unless ``on_error`` is ``"fail"``, and it is
    abandoned after ``timeout_seconds``.
    """

    timeout_seconds: ClassVar[float] = 15.0
    """The hook's deadline: everything :meth:`get_content` waits for (SPEC section 8)."""
    max_content_chars: ClassVar[int] = DEFAULT_MAX_CONTENT_CHARS
    """Longer content is cut and marked, as for manifest hooks (SPEC section 9)."""
    on_error: ClassVar[Literal["skip", "fail"]] = "skip"
    """``fail`` raises :class:`~agent_hooks.runtime.HookFailedError` from :meth:`transform`."""

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        ttl_seconds: int | None = None,
        enrichers: Sequence[ToolCallResultEnricher] = (),
    ) -> None:
        if ttl_seconds is not None and ttl_seconds <= 0:
            raise ValueError(f"ttl_seconds must be positive, got {ttl_seconds!r}")
        self.clock: Clock = clock or SystemClock()
        self.ttl_seconds = ttl_seconds
        self.enrichers = tuple(enrichers)
        self.signing_keys = SigningKeys(SigningSettings().keys())

    @abstractmethod
    def get_tool_name(self) -> str:
        """The final function name shown in the synthetic call."""

    def get_arguments(self) -> Mapping[str, Any]:
        return {}

    def get_frequency(self, messages: Sequence[Message]) -> InjectionFrequency:
        return InjectionFrequency.APPEND_IF_CHANGED

    @abstractmethod
    async def get_content(self, messages: Sequence[Message]) -> str | None:
        """The tool message's text; ``None`` skips the injection."""

    def should_inject(self, messages: Sequence[Message]) -> bool:
        """A host's own precondition (like a manifest hook's ``condition``); TTL freshness is
        checked by the runtime before this injector's content is asked for."""
        return True

    @property
    def label(self) -> str:
        """The name its records and log lines carry."""
        return type(self).__name__

    async def transform(self, messages: Sequence[Message]) -> list[Message]:
        """Raises:
        HookFailedError: ``on_error`` is ``"fail"`` and the hook failed.
        """
        engine: InjectorEngine = _lazy.resolve_late("INJECTOR_ENGINE")
        return await engine.transform(self, messages)
