"""The embedded echo model: lets a manifest author try hooks with any OpenAI client, no model.

It answers with one assistant message listing the synthetic pairs it received, one line each
(``{function name}: {content}``, the content on one line), or ``no synthetic pairs``. It is an
ordinary ASGI app, so the proxy reaches it through the same upstream client as a real model, and
the benchmark serves it on its own as a fast upstream.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agent_hooks.injection._ids import is_synthetic_call_id

__all__ = ["echo_app", "echo_text"]

_NEWLINES = re.compile(r"\r\n|\r|\n")


def echo_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """One line per synthetic pair in ``messages``, or ``no synthetic pairs``."""
    names = {
        call["id"]: (call.get("function") or {}).get("name", "")
        for message in messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or ()
        if isinstance(call, Mapping) and isinstance(call.get("id"), str)
    }
    lines = [
        f"{names[message['tool_call_id']]}: {_one_line(message.get('content'))}"
        for message in messages
        if message.get("role") == "tool"
        and is_synthetic_call_id(message.get("tool_call_id"))
        and message.get("tool_call_id") in names
    ]
    return "\n".join(lines) or "no synthetic pairs"


def _one_line(content: Any) -> str:
    if isinstance(content, list):
        content = "\n".join(part.get("text", "") for part in content if isinstance(part, Mapping))
    return _NEWLINES.sub(" ", content if isinstance(content, str) else "")


async def _chat_completions(request: Request) -> Response:
    body = json.loads(await request.body())
    text = echo_text(body.get("messages") or [])
    model = body.get("model") or "echo"
    created = int(time.time())
    if body.get("stream") is True:
        return StreamingResponse(_chunks(text, model, created), media_type="text/event-stream")
    return JSONResponse(
        {
            "id": "chatcmpl-echo",
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }
    )


async def _chunks(text: str, model: str, created: int) -> AsyncIterator[bytes]:
    """The answer as OpenAI stream chunks: the role, one chunk per line, the finish, ``[DONE]``."""
    lines = text.split("\n")
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [
        {"content": line + ("\n" if i < len(lines) - 1 else "")} for i, line in enumerate(lines)
    ]
    for delta in [*deltas, None]:
        chunk = {
            "id": "chatcmpl-echo",
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "delta": delta if delta is not None else {},
                    "finish_reason": None if delta is not None else "stop",
                }
            ],
        }
        yield f"data: {json.dumps(chunk)}\n\n".encode()
    yield b"data: [DONE]\n\n"


def echo_app() -> Starlette:
    """The echo model's app: ``POST /v1/chat/completions``, streaming or not."""
    return Starlette(routes=[Route("/v1/chat/completions", _chat_completions, methods=["POST"])])
