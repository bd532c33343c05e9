"""Running a manifest's request-start hooks the way a host does: ``open_app``, then transform."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from itertools import pairwise
from typing import Any

import pytest
from injector import Injector

from agent_hooks.injection import MessagesTransformer
from agent_hooks.messages import Message
from tests._support import msg

HISTORY = (
    msg(role="system", content="You are a helpful assistant."),
    msg(role="user", content="What do you know about me?"),
)


async def run_hooks(injector: Injector, messages: Iterable[Message]) -> list[Message]:
    """One request: every request-start transformer, in manifest order."""
    history = list(messages)
    for transformer in injector.get(list[MessagesTransformer]):
        history = await transformer.transform(history)
    return history


def tool_pairs(messages: Sequence[Message]) -> list[tuple[str, str, Any]]:
    """``(function name, arguments JSON, tool content)`` of each synthetic pair, in order."""
    pairs = []
    for call, result in pairwise(messages):
        if call.tool_calls and result.tool_call_id == call.tool_calls[0].id:
            function = call.tool_calls[0].function
            pairs.append((function.name, function.arguments, result.content))
    return pairs


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [record for record in caplog.records if record.levelno >= logging.WARNING]
