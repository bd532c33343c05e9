"""A framework's history as the ``Message`` list the runner reads, and the way back.

Every adapter converts its framework's messages into :class:`~agent_hooks.messages.Message`\\s
and remembers which native *units* (messages, parts or items) each one came from. The runner
hands untouched messages back as the very objects it was given, so the way back is exact: a
message the hooks did not touch becomes its native units again, unchanged (ids, names,
metadata, parts nobody converts); only what the hooks wrote (new or refreshed pairs, or a
forged pair removed under a signing key) is built anew from its OpenAI form.

Units with no ``Message`` of their own (reasoning items, a framework's bookkeeping parts) ride
with the next message, so they stay in front of what they belong to; trailing ones stay at the
end. They are the client's and never go with their message: when the hooks drop or
rewrite it (a forged pair removed), its riders stay where they were.
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
    riders: list[int]
    """How many of ``units[i]`` lead it without being ``messages[i]`` (units with no message)."""
    tail: list[N]
    """Units after the last message (all of them in a history with no message); they stay at
    the end, after pairs the hooks append."""

    def native(self) -> list[N]:
        """Every unit in order: the framework's history as the builder was given it (for an
        adapter that changed a unit the hooks never read)."""
        return [unit for units in self.units for unit in units] + self.tail


@dataclass
class HistoryBuilder(Generic[N]):
    """Collects a history in native order: :meth:`add` one unit at a time."""

    _messages: list[Message] = field(default_factory=list)
    _units: list[list[N]] = field(default_factory=list)
    _riders: list[int] = field(default_factory=list)
    _pending: list[N] = field(default_factory=list)

    def add(self, message: Message | None, unit: N) -> None:
        """``unit`` is ``message``; a unit with no message (``None``) rides with the next one."""
        if message is None:
            self._pending.append(unit)
            return
        self.extend(message, [unit])

    def extend(self, message: Message, units: Sequence[N]) -> None:
        """Several units that together are one message (a response with several parts)."""
        self._messages.append(message)
        self._units.append([*self._pending, *units])
        self._riders.append(len(self._pending))
        self._pending = []

    def build(self) -> History[N]:
        """Units after the last message go to :attr:`History.tail`: no message owns them."""
        return History(self._messages, self._units, self._riders, self._pending)


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
    kept = {origin[id(m)] for m in messages if id(m) in origin}
    units: list[N] = []
    done = 0  # history messages before this one are written (kept) or left (riders written)

    def riders_of_left_before(end: int) -> None:
        nonlocal done
        for index in range(done, end):
            if index not in kept:
                units.extend(history.units[index][: history.riders[index]])
        done = max(done, end)

    for at, message in enumerate(messages):
        index = origin.get(id(message))
        if index is None:
            riders_of_left_before(_next_kept(messages, at, origin, len(history.messages)))
            units.extend(build(message, names))
        else:
            riders_of_left_before(index)
            units.extend(history.units[index])
            done = index + 1
    riders_of_left_before(len(history.messages))
    units.extend(history.tail)
    return units


def _next_kept(messages: Sequence[Message], at: int, origin: Mapping[int, int], end: int) -> int:
    """The history index of the first message after ``at`` that the hooks kept (``end``: none)."""
    return next(
        (origin[id(m)] for m in messages[at + 1 :] if id(m) in origin),
        end,
    )


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
