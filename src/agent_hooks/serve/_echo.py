"""The embedded echo model: lets a manifest author try hooks with any client, no model.

It answers with one assistant message listing the synthetic pairs it received, one line each
(``{function name}: {content}``, the content on one line), or ``no synthetic pairs``, in each
dialect's own answer and event stream, with a fresh id every time. It is an
ordinary ASGI app, so the proxy reaches it through the same upstream client as a real model, and
the benchmark serves it on its own as a fast upstream.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from agent_hooks.injection._ids import is_synthetic_call_id
from agent_hooks.injection._text_form import read_tool_result_text
from agent_hooks.serve._dialects import ANTHROPIC, RESPONSES
from agent_hooks.serve._work import Work

__all__ = ["MODELS", "echo_app", "echo_text"]

_NEWLINES = re.compile(r"\r\n|\r|\n")


def echo_text(messages: Sequence[Any]) -> str:
    """One line per synthetic pair in ``messages``, or ``no synthetic pairs``.

    Messages of any other shape are skipped: the proxy forwards messages it does not model as
    they came (SPEC 15).
    """
    readable = [message for message in messages if isinstance(message, Mapping)]
    names = {
        call["id"]: _name(call.get("function"))
        for message in readable
        if message.get("role") == "assistant" and isinstance(message.get("tool_calls"), list)
        for call in message["tool_calls"]
        if isinstance(call, Mapping) and isinstance(call.get("id"), str)
    }
    lines = [
        f"{names[message['tool_call_id']]}: {_one_line(message.get('content'))}"
        for message in readable
        if message.get("role") == "tool"
        and isinstance(message.get("tool_call_id"), str)
        and is_synthetic_call_id(message["tool_call_id"])
        and message.get("tool_call_id") in names
    ]
    return "\n".join(lines) or "no synthetic pairs"


def _with_text_form_pairs(history: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``history`` with each synthetic pair a user message carries in text form (Anthropic with
    thinking on, SPEC 15) also written as a pair after that message, so the echo lists it."""
    out: list[Mapping[str, Any]] = []
    for message in history:
        out.append(message)
        content = message.get("content")
        if message.get("role") != "user" or not isinstance(content, list):
            continue
        for part in content:
            read = (
                read_tool_result_text(part.get("text", "")) if isinstance(part, Mapping) else None
            )
            if read is None or not is_synthetic_call_id(read[1]):
                continue
            name, call_id, text = read
            call = {"id": call_id, "type": "function", "function": {"name": name}}
            out += [
                {"role": "assistant", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call_id, "content": text},
            ]
    return out


def _name(function: Any) -> str:
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) else ""


def _one_line(content: Any) -> str:
    if isinstance(content, list):
        content = "\n".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return _NEWLINES.sub(" ", content if isinstance(content, str) else "")


async def _read(request: Request, text_of: Callable[[Any], str]) -> tuple[Any, str]:
    """The request's JSON and the echo's text of it: a large body off the event loop, as the
    proxy reads it (the echo model answers in the proxy's own process)."""
    raw = await request.body()

    def read() -> tuple[Any, str]:
        body = json.loads(raw)
        return body, text_of(body)

    return await Work(len(raw)).run(read)


async def _chat_completions(request: Request) -> Response:
    body, text = await _read(request, lambda body: echo_text(body.get("messages") or []))
    model = body.get("model") or "echo"
    created = int(time.time())
    answer_id = _fresh_id("chatcmpl-")
    if body.get("stream") is True:
        return _events(_chunks(answer_id, text, model, created))
    return JSONResponse(
        {
            "id": answer_id,
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


def _chunks(answer_id: str, text: str, model: str, created: int) -> Iterator[bytes]:
    """The answer as OpenAI stream chunks: the role, one chunk per line, the finish, ``[DONE]``."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": piece} for piece in _pieces(text)]
    for delta in [*deltas, None]:
        chunk = {
            "id": answer_id,
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


async def _responses(request: Request) -> Response:
    body, text = await _read(
        request, lambda body: echo_text(RESPONSES.parse(json.dumps(body).encode()).history)
    )
    created = int(time.time())
    message_id = _fresh_id("msg_")
    part = {"type": "output_text", "text": text, "annotations": []}
    message = {
        "type": "message",
        "id": message_id,
        "status": "completed",
        "role": "assistant",
        "content": [part],
    }
    response: dict[str, Any] = {
        "id": _fresh_id("resp_"),
        "object": "response",
        "created_at": created,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "model": body.get("model") or "echo",
        "output": [message],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "previous_response_id": body.get("previous_response_id"),
        "usage": {
            "input_tokens": 0,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 0,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 0,
        },
    }
    if body.get("stream") is not True:
        return JSONResponse(response)
    return _events(
        _named_event({**event, "sequence_number": number})
        for number, event in enumerate(_response_events(response, message, part))
    )


def _response_events(
    response: Mapping[str, Any], message: Mapping[str, Any], part: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """A one-message response as the Responses API streams it, every event the SDKs' stream
    helpers (``responses.stream()``) follow: the response, its item and the item's text part
    each announced before their deltas and closed after them."""
    text = part["text"]
    started = {**response, "status": "in_progress", "output": [], "usage": None}
    at = {"item_id": message["id"], "output_index": 0, "content_index": 0}
    events: list[dict[str, Any]] = [
        {"type": "response.created", "response": started},
        {"type": "response.in_progress", "response": started},
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {**message, "status": "in_progress", "content": []},
        },
        {"type": "response.content_part.added", **at, "part": {**part, "text": ""}},
    ]
    events += [
        {"type": "response.output_text.delta", **at, "delta": piece, "logprobs": []}
        for piece in _pieces(text)
    ]
    events += [
        {"type": "response.output_text.done", **at, "text": text, "logprobs": []},
        {"type": "response.content_part.done", **at, "part": part},
        {"type": "response.output_item.done", "output_index": 0, "item": message},
        {"type": "response.completed", "response": response},
    ]
    return events


async def _messages(request: Request) -> Response:
    body, text = await _read(
        request,
        lambda body: echo_text(
            _with_text_form_pairs(ANTHROPIC.parse(json.dumps(body).encode()).history)
        ),
    )
    message: dict[str, Any] = {
        "id": _fresh_id("msg_"),
        "type": "message",
        "role": "assistant",
        "model": body.get("model") or "echo",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 0, "output_tokens": 0},
    }
    if body.get("stream") is not True:
        return JSONResponse(message)
    started = {**message, "content": [], "stop_reason": None}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": started},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    ]
    events += [
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}
        for piece in _pieces(text)
    ]
    events += [
        {"type": "content_block_stop", "index": 0},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn", "stop_sequence": None},
            "usage": {"output_tokens": 0},
        },
        {"type": "message_stop"},
    ]
    return _events(_named_event(event) for event in events)


async def _count_tokens(request: Request) -> Response:
    """A stand-in count: a token per four bytes of ``messages``, so a count that includes the
    proxy's pairs is visibly larger than one without."""
    body = json.loads(await request.body())
    size = len(json.dumps(body.get("messages", []), ensure_ascii=False).encode())
    return JSONResponse({"input_tokens": (size + 3) // 4})


MODELS = {
    "object": "list",
    "data": [{"id": "echo", "object": "model", "created": 0, "owned_by": "agent-hooks"}],
}
"""The echo model's ``GET /v1/models`` answer (SPEC 13)."""


async def _models(_: Request) -> Response:
    return JSONResponse(MODELS)


def _pieces(text: str) -> list[str]:
    """The text in stream-sized pieces: one per line, each but the last with its newline."""
    lines = text.split("\n")
    return [line + ("\n" if i < len(lines) - 1 else "") for i, line in enumerate(lines)]


def _fresh_id(prefix: str) -> str:
    """A new id for every answer, so clients that key on ids (caches, threads) never collide."""
    return f"{prefix}{uuid.uuid4().hex}"


def _named_event(event: Mapping[str, Any]) -> bytes:
    """One server-sent event named by its ``type``, as the Responses and Messages APIs send."""
    return f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()


def _events(chunks: Iterable[bytes]) -> StreamingResponse:
    async def stream() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return StreamingResponse(stream(), media_type="text/event-stream")


def echo_app() -> Starlette:
    """The echo model's app: the three dialects' routes, streaming or not, and its model list."""
    return Starlette(
        routes=[
            Route("/v1/chat/completions", _chat_completions, methods=["POST"]),
            Route("/v1/responses", _responses, methods=["POST"]),
            Route("/v1/messages", _messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", _count_tokens, methods=["POST"]),
            Route("/v1/models", _models, methods=["GET"]),
        ]
    )
