"""OpenAI chat-completions messages, as a host receives them and passes them on.

The models keep every field they do not know (``extra="allow"``) and remember which fields were
actually sent, so a history that goes through the hooks comes out byte-for-byte the same where the
hooks did not touch it: no added ``null``\\s, no defaults, no dropped vendor fields. Every dump
(``model_dump``, ``model_dump_json``, :meth:`~Message.to_openai`) leaves out the fields that were
never set, so the default pydantic calls already round-trip.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

__all__ = ["FunctionCall", "Message", "Role", "ToolCall"]


class Role(StrEnum):
    """Who wrote a message."""

    SYSTEM = "system"
    DEVELOPER = "developer"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"
    FUNCTION = "function"


class _OpenAIModel(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)

    @model_serializer(mode="wrap")
    def _only_what_was_sent(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        sent = self.model_fields_set | set(self.model_extra or {})
        return {key: value for key, value in dumped.items() if key in sent}

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
