"""What the hook runner is given for a history of dicts, and the dicts back from its answer.

The runner reads more of a message than its role only where a synthetic-looking id is (SPEC 4
and 9: its pairs, their callers, signatures, freshness). Every other message is read by its role
alone: the first user message places a first-time pair, and the runner never drops, changes or
reorders such a message. So each of them goes in as a role-only stand-in shared by every message
of its role, and comes back as the client's own dict, matched by order; only the messages with a
synthetic-looking id are validated into :class:`~agent_hooks.messages.Message`\\ s. A hook whose
arguments or condition read the history (the hook context, SPEC 10) reads it from the dicts
themselves (the runner's ``context_history``), not from a model per message.

A model is several times the JSON it came from (a tool call message: ~1.3 KB, three models), so
one per message of a long history of short messages would pass SPEC 16's 8x on its own; the
stand-ins cost a reference each.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, cast

from agent_hooks.messages import Message, Role
from agent_hooks.serve._dialects import reads_more_than_role, validate_messages

__all__ = ["RunnerInput"]

_STAND_INS: dict[str, Message] = {role.value: Message(role=role) for role in Role}
"""One role-only message per role, shared: frozen, so no run can change it."""
_STAND_IN_IDS = frozenset(map(id, _STAND_INS.values()))


class RunnerInput:
    """The runner's messages for ``history`` (:attr:`models`), and :meth:`history` to turn the
    messages of its answer back into dicts: the very dicts of ``history`` for the messages it
    left alone, new ones only for what the hooks wrote.

    Raises:
        InvalidMessages: a message to validate does not (none of a dialect's does).
    """

    def __init__(self, history: Sequence[dict[str, Any]]) -> None:
        self._history = history
        stand_ins = [
            _STAND_INS.get(role)
            if type(role := message.get("role")) is str
            and "tool_calls" not in message
            and "tool_call_id" not in message
            else _stand_in(message)
            for message in history
        ]  # the first test is most messages' whole test: a call to _stand_in each took twice
        read = [at for at, stand_in in enumerate(stand_ins) if stand_in is None]
        if read:
            validated = validate_messages([history[at] for at in read])
            for at, model in zip(read, validated, strict=True):
                stand_ins[at] = model
        self.models: list[Message] = cast("list[Message]", stand_ins)  # no None is left

    def history(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """``messages`` (the runner's answer) as dicts.

        A stand-in is the next message of ``history`` that went in as one (the runner keeps
        them in order); a model that went in is its dict; anything else the hooks wrote.
        """
        models, history = self.models, self._history
        plain = iter([r for m, r in zip(models, history, strict=True) if id(m) in _STAND_IN_IDS])
        originals = {
            id(m): r for m, r in zip(models, history, strict=True) if id(m) not in _STAND_IN_IDS
        }
        out = [
            next(plain)
            if id(message) in _STAND_IN_IDS
            else originals.get(id(message)) or message.to_openai()
            for message in messages
        ]
        assert next(plain, None) is None, "the runner dropped a message it does not read"
        return out


def _stand_in(message: Mapping[str, Any]) -> Message | None:
    """The shared stand-in for ``message``; ``None`` when the runner reads more than its role
    (:func:`~agent_hooks.serve._dialects.reads_more_than_role`), or the role is not one of
    :class:`Role` (validation then says so)."""
    if reads_more_than_role(message):
        return None
    role = message.get("role")
    return _STAND_INS.get(role) if type(role) is str else None
