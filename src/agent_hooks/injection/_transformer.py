"""The seam a host calls at request start."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from agent_hooks.messages import Message

__all__ = ["MessagesTransformer"]


class MessagesTransformer(ABC):
    """Takes a history and returns the history the model should see.

    Implementations never mutate the list or the messages they are given; a host applies
    transformers in order: ``messages = await transformer.transform(messages)``.
    """

    @abstractmethod
    async def transform(self, messages: Sequence[Message]) -> list[Message]: ...
