"""OpenAI chat-completions messages, as a host receives them and passes them on.

The models keep every field they do not know (``extra="allow"``) and remember which fields were
actually sent, and in which order, so a history that goes through the hooks comes out
byte-for-byte the same where the hooks did not touch it: no added ``null``\\s, no defaults, no
dropped vendor fields, keys in the order the client wrote them. Every dump (``model_dump``,
``model_dump_json``, :meth:`~Message.to_openai`) leaves out the fields that were never set and
follows the sent order, so the default pydantic calls already round-trip.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    ModelWrapValidatorHandler,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

__all__ = ["FunctionCall", "Message", "Role", "ToolCall"]


class Role(StrEnum):
    """Who wrote a message."""

    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    FUNCTION = "function"


_SENT_ORDER = "_sent_key_order"
"""Where a model keeps the order of the keys it was validated from.

It lives in the instance ``__dict__`` beside the fields (as a ``cached_property`` value would):
pydantic's equality and hashing look at fields only, so two messages that differ only in key
order stay equal, and copies (``model_copy``) keep the order.
"""


class _OpenAIModel(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    @model_validator(mode="wrap")
    @classmethod
    def _remember_sent_order(cls, data: Any, handler: ModelWrapValidatorHandler[Self]) -> Self:
        model = handler(data)
        # ``type() is dict`` first: the ABC check alone was a third of the recorder's cost on a
        # long history (a call per message, tool call and function)
        if type(data) is dict or isinstance(data, Mapping):
            model.__dict__[_SENT_ORDER] = tuple(data)
        return model

    @model_serializer(mode="wrap")
    def _only_what_was_sent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """The set fields, in the order they were sent; fields set later (a copy's update) last."""
        dumped: dict[str, Any] = handler(self)
        sent = self.model_fields_set | set(self.model_extra or {})
        order: tuple[str, ...] = self.__dict__.get(_SENT_ORDER, ())
        keys = [key for key in order if key in dumped and key in sent]
        keys += [key for key in dumped if key in sent and key not in order]
        return {key: dumped[key] for key in keys}

    def to_openai(self) -> dict[str, Any]:
        """The JSON-ready dict of the fields that were set, unknown ones included."""
        return self.model_dump(mode="json")


class FunctionCall(_OpenAIModel):
    """The function a tool call invokes; ``arguments`` is JSON text, as OpenAI sends it."""

    name: str
    arguments: str = "{}"


class ToolCall(_OpenAIModel):
    """One entry of an assistant message's ``tool_calls``.

    ``type`` is usually ``"function"``; other kinds (OpenAI's ``"custom"`` tools) carry their
    payload under their own key, kept as an extra field.
    """

    id: str
    type: str = "function"
    function: FunctionCall | None = None


class Message(_OpenAIModel):
    """One chat message; ``content`` may be text, a list of parts, or ``None``."""

    role: Role
    content: str | list[Any] | None = None
    name: str | None = None
    tool_calls: list[ToolCall] | None = None
    tool_call_id: str | None = None
