"""A framework's history as the ``Message`` list the runner reads, and the way back.

Every adapter converts its framework's messages into :class:`~agent_hooks.messages.Message`\\s
and remembers which native *units* (messages, parts or items) each one came from. The runner
hands untouched messages back as the very objects it was given, so the way back is exact: a
message the hooks did not touch becomes its native units again, unchanged (ids, names,
metadata, parts nobody converts); only what the hooks wrote (new or refreshed pairs, or a
forged pair removed under a signing key) is built anew from its OpenAI form.

Units with no ``Message`` of their own (reasoning items, a framework's bookkeeping parts) ride
with the next message, so they stay in front of what they belong to; trailing ones ride with the
last message.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import ValidationError

from agent_hooks.messages import Message

__all__ = ["History", "HistoryBuilder", "openai_message", "rebuilt", "tool_names"]

N = TypeVar("N")


@dataclass(frozen=True)
class History(Generic[N]):
    """``messages`` for the runner; ``units[i]`` the native units ``messages[i]`` came from."""

    messages: list[Message]
    units: list[list[N]]
    tail: list[N]
    """Units of a history with no message at all; they stay at the end."""

    def native(self) -> list[N]:
        """Every unit in order: the framework's history as the builder was given it (for an
        adapter that changed a unit the hooks never read)."""
        return [unit for units in self.units for unit in units] + self.tail


@dataclass
class HistoryBuilder(Generic[N]):
    """Collects a history in native order: :meth:`add` one unit at a time."""

    _messages: list[Message] = field(default_factory=list)
    _units: list[list[N]] = field(default_factory=list)
    _pending: list[N] = field(default_factory=list)

    def add(self, message: Message | None, unit: N) -> None:
        """``unit`` is ``message``; a unit with no message (``None``) rides with the next one."""
        if message is None:
            self._pending.append(unit)
            return
        self._messages.append(message)
        self._units.append([*self._pending, unit])
        self._pending = []

    def extend(self, message: Message, units: Sequence[N]) -> None:
        """Several units that together are one message (a response with several parts)."""
        self._messages.append(message)
        self._units.append([*self._pending, *units])
        self._pending = []

    def build(self) -> History[N]:
        if self._pending and self._units:
            self._units[-1].extend(self._pending)
            self._pending = []
        return History(self._messages, self._units, self._pending)


def rebuilt(
    history: History[N],
    messages: Sequence[Message],
    build: Callable[[Message, Mapping[str, str]], Sequence[N]],
) -> list[N] | None:
    """The native units of ``messages`` (a run's result on ``history.messages``).

    ``None`` when the run changed nothing, so a caller can leave its framework's state alone.
    ``build(message, names)`` makes the native units of a message the hooks wrote (several where
    the framework spells one message as several items); ``names`` maps
    every call id of ``messages`` to its function name (a ``tool`` message carries no name, and
    most frameworks want one on a tool result).
    """
    origin = {id(message): index for index, message in enumerate(history.messages)}
    if len(messages) == len(history.messages) and all(
        origin.get(id(message)) == index for index, message in enumerate(messages)
    ):
        return None
    names = tool_names(messages)
    units: list[N] = []
    for message in messages:
        index = origin.get(id(message))
        if index is None:
            units.extend(build(message, names))
        else:
            units.extend(history.units[index])
    units.extend(history.tail)
    return units


def tool_names(messages: Sequence[Message]) -> dict[str, str]:
    """Call id to function name, for every tool call of ``messages``."""
    return {
        call.id: call.function.name
        for message in messages
        for call in message.tool_calls or ()
        if call.function is not None
    }


def openai_message(data: Any) -> Message | None:
    """An OpenAI-format message a client sent; ``None`` for one that is not (it rides along)."""
    try:
        return Message.model_validate(data)
    except ValidationError:
        return None
