"""Injecting a synthetic ``tool_calls`` + ``tool`` pair, with dedup by content and TTL reuse."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from agent_hooks.clock import Clock, SystemClock
from agent_hooks.config.hooks import InjectionFrequency
from agent_hooks.injection._ids import arguments_json, call_id_prefix
from agent_hooks.injection._index import HistoryIndex
from agent_hooks.injection._pairs import SyntheticPair, build_pair, new_call_id
from agent_hooks.injection._transformer import MessagesTransformer
from agent_hooks.injection._trust import SigningKeys, TrustRules
from agent_hooks.messages import Message
from agent_hooks.tools import ToolCallResultEnricher

__all__ = ["SyntheticToolCallInjector"]


class SyntheticToolCallInjector(MessagesTransformer):
    """Adds the result of one tool call to the history as if the model had asked for it.

    Subclasses say which tool (:meth:`get_tool_name`), with which arguments, and produce the
    content (:meth:`get_content`); placement, ids and TTL handling are fixed here (SPEC section
    4), on the same index and trust rules as the hook runner (only pairs that count are looked
    at; these classes do not sign). ``ttl_seconds`` turns on the TTL: while the latest result
    is fresh, nothing is called.
    """

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
        """False while a TTL-stamped result for this tool and these arguments is still fresh."""
        if self.ttl_seconds is None:
            return True
        state = HistoryIndex(messages).state(self._prefix())
        return not state.is_fresh(self._rules(messages), SigningKeys())

    def _prefix(self) -> str:
        return call_id_prefix(self.get_tool_name(), self.get_arguments())

    def _rules(self, messages: Sequence[Message]) -> TrustRules:
        frequency = self.get_frequency(messages)
        return TrustRules(
            now=self.clock.now(),
            ttl_seconds=self.ttl_seconds,
            check_content=frequency is InjectionFrequency.APPEND_IF_CHANGED,
        )

    def make_call_id(self, content: str, frequency: InjectionFrequency) -> str:
        """A fresh id; ``always`` hashes a random token instead of the content so ids differ."""
        expiry = None
        if self.ttl_seconds is not None:
            expiry = int(self.clock.now()) + self.ttl_seconds
        return new_call_id(
            self._prefix(),
            content,
            checks_content=frequency is InjectionFrequency.APPEND_IF_CHANGED,
            expiry=expiry,
        )

    async def transform(self, messages: Sequence[Message]) -> list[Message]:
        if not self.should_inject(messages):
            return list(messages)
        content = await self.get_content(messages)
        if content is None:
            return list(messages)
        return self.inject_content(messages, content)

    def inject_content(self, messages: Sequence[Message], content: str) -> list[Message]:
        """The history with a new pair carrying ``content``, placed by the frequency rules."""
        frequency = self.get_frequency(messages)
        pair = self.build_pair(self.make_call_id(content, frequency), content)
        index = HistoryIndex(messages)
        rules = self._rules(messages)
        state = index.state(self._prefix())
        index.place(state, hook=0, pair=pair, frequency=frequency, rules=rules, keys=SigningKeys())
        return index.splice()

    def build_pair(self, call_id: str, content: str) -> SyntheticPair:
        """The assistant call and the enriched tool answer for one injection."""
        arguments_text = arguments_json(self.get_arguments())
        return build_pair(self.get_tool_name(), call_id, content, arguments_text, self.enrichers)
