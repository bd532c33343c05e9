"""The model's final answer, read from what the upstream sent, for the ``on_completion`` hooks.

A plain answer is the first choice's message. A streamed one is reassembled from the deltas of
its server-sent events while the bytes pass through to the client untouched. An answer that asks
for a tool call is not final, so it yields no message. Pure: bytes in, a message dict out.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["StreamedAnswer", "answer_from_json"]


def answer_from_json(raw: bytes) -> dict[str, Any] | None:
    """The first choice's assistant message, or ``None`` for a tool call or an unreadable body."""
    try:
        body = json.loads(raw)
        message = body["choices"][0]["message"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None
    if not isinstance(message, dict) or message.get("tool_calls") or message.get("function_call"):
        return None
    return message


class StreamedAnswer:
    """Collects the first choice's deltas from SSE bytes fed in the order they arrive."""

    def __init__(self) -> None:
        self._pending = b""
        self._parts: list[str] = []
        self._role = "assistant"
        self._tool_call = False
        self._seen = False

    def feed(self, chunk: bytes) -> None:
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            self._line(line.rstrip(b"\r"))

    def message(self) -> dict[str, Any] | None:
        """The reassembled assistant message; ``None`` for a tool call or no content at all."""
        if self._pending:
            self._line(self._pending.rstrip(b"\r"))
            self._pending = b""
        if self._tool_call or not self._seen:
            return None
        return {"role": self._role, "content": "".join(self._parts)}

    def _line(self, line: bytes) -> None:
        if not line.startswith(b"data:"):
            return
        data = line[5:].strip()
        if data == b"[DONE]":
            return
        try:
            choices = json.loads(data)["choices"]
            choice = next(c for c in choices if isinstance(c, dict) and c.get("index", 0) == 0)
        except (ValueError, KeyError, TypeError, StopIteration):
            return  # usage-only chunks and other choices say nothing about the first answer
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return
        self._seen = True
        if delta.get("tool_calls") or delta.get("function_call"):
            self._tool_call = True
        if choice.get("finish_reason") in ("tool_calls", "function_call"):
            self._tool_call = True
        if isinstance(delta.get("role"), str):
            self._role = delta["role"]
        if isinstance(delta.get("content"), str):
            self._parts.append(delta["content"])
