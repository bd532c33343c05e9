"""An upstream that records what it received, for the proxy tests: Chat Completions, the
Responses API, Anthropic Messages and the model list.

Run as ``python upstream_server.py PORT``. The request's ``model`` picks the behaviour: an
ordinary answer (streamed when asked), ``gated`` (streams one chunk, then waits for
``POST /_release``), ``tool-call``, ``teapot`` (answers 418) and ``slow`` (never in time).
Faults: ``leaky`` (a 401 quoting the credentials it got, in its body and a header),
``broken`` (the body, or the stream, stops half-way: the connection is cut), ``stalled`` (the
body stops half-way and the connection stays open) and ``hold`` (nothing after the headers, or
after the first chunk, until the proxy closes the request; ``GET /_closed`` counts those
closes). Streamed, in every dialect: ``cut-short`` (the first delta, then a clean end with no
end marker) and ``fails`` (the first delta, then the dialect's error event and a clean end).
Careless servers, in every dialect: ``leaky-forms`` (a 401 quoting the credentials it got with
every ``/`` escaped as ``\\/``, as PHP writes JSON, and percent-encoded, in its body and a header)
and ``leaky-event`` (a 200 event stream up to the first delta, then the dialect's error event
quoting them in those forms, sent in two pieces split inside the credentials; on Responses
``leaky-failed`` sends a ``response.failed`` event instead of an ``error`` event).
Responses answers have ids ``resp_up_{n}``, one per request.
``GET /_received`` returns each request's headers and body (parsed, and as its text);
``DELETE /_received`` forgets them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import quote

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

ANSWER = "Hello from upstream"
_RECORDED_HEADERS = (
    "authorization",
    "api-key",
    "x-conversation-id",
    "x-api-key",
    "anthropic-version",
    "anthropic-beta",
)
_received: list[dict[str, Any]] = []
_release: anyio.Event | None = None
_closed: list[str] = []


def _chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    body = {"id": "up-1", "object": "chat.completion.chunk", "model": "m", "choices": [choice]}
    return f"data: {json.dumps(body)}\n\n".encode()


async def _stream(gate: anyio.Event | None) -> AsyncIterator[bytes]:
    yield _chunk({"role": "assistant", "content": "Hello"})
    if gate is not None:
        await gate.wait()
    yield _chunk({"content": " from upstream"})
    yield _chunk({}, "stop")
    yield b"data: [DONE]\n\n"


def _ended_early(
    events: AsyncIterator[bytes], first: int, error: bytes | None = None
) -> StreamingResponse:
    """The ``first`` events of a streamed answer, then ``error`` (if any) and a clean end."""

    async def early() -> AsyncIterator[bytes]:
        count = 0
        async for event in events:
            if count == first:
                break
            count += 1
            yield event
        if error is not None:
            yield error

    return StreamingResponse(early(), media_type="text/event-stream")


_CHAT_ERROR = b'data: {"error": {"message": "overloaded", "type": "server_error"}}\n\n'


def _chat_error(text: str) -> bytes:
    error = {"error": {"message": text, "type": "invalid_request_error"}}
    return b"data: " + _php_json(error) + b"\n\n"


async def _tool_call_stream() -> AsyncIterator[bytes]:
    call = {"index": 0, "id": "call_9", "type": "function", "function": {"name": "f"}}
    yield _chunk({"role": "assistant", "tool_calls": [call]})
    yield _chunk({}, "tool_calls")
    yield b"data: [DONE]\n\n"


async def _record(request: Request) -> dict[str, Any]:
    text = (await request.body()).decode() if request.method == "POST" else None
    body = json.loads(text) if text is not None else None
    headers = {k: v for k, v in request.headers.items() if k in _RECORDED_HEADERS}
    _received.append({"path": request.url.path, "headers": headers, "body": body, "text": text})
    return body or {}


def _gate(model: Any) -> anyio.Event | None:
    global _release
    _release = anyio.Event() if model == "gated" else None
    return _release


async def chat_completions(request: Request) -> Response:
    body = await _record(request)
    model = body.get("model")
    if model in _FAULTS:
        return _FAULTS[model](request, body.get("stream") is True)
    if model == "teapot":
        error = {"error": {"message": "short and stout", "type": "teapot", "code": "418"}}
        return JSONResponse(error, status_code=418, headers={"x-upstream": "kept"})
    if model == "slow":
        await anyio.sleep(5)
    if body.get("stream"):
        if model in ("cut-short", "fails"):
            return _ended_early(_stream(None), 1, _CHAT_ERROR if model == "fails" else None)
        if model == "leaky-event":
            return _leaky_events(request, _stream(None), 1, _chat_error)
        gate = _gate(model)
        chunks = _tool_call_stream() if model == "tool-call" else _stream(gate)
        return StreamingResponse(chunks, media_type="text/event-stream")
    message: dict[str, Any] = {"role": "assistant", "content": ANSWER, "refusal": None}
    if model == "tool-call":
        call = {"id": "call_9", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
    answer = {
        "id": "up-1",
        "object": "chat.completion",
        "created": 1,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
    }
    return JSONResponse(answer, headers={"x-upstream": "kept"})


def _leaky(request: Request, stream: bool) -> Response:
    """A 401 quoting the credentials it got in its body and in a header (an event stream when
    the request streams)."""
    got = str(request.headers.get("authorization"))
    error = {"error": {"message": f"Incorrect API key provided: {got}", "code": "invalid_api_key"}}
    headers = {"x-seen-authorization": got}
    if stream:
        event = f"data: {json.dumps(error)}\n\n"
        return Response(event, 401, headers=headers, media_type="text/event-stream")
    return JSONResponse(error, 401, headers=headers)


def _credentials(request: Request) -> str:
    return request.headers.get("authorization") or request.headers.get("x-api-key") or ""


def _leaky_text(request: Request) -> str:
    got = _credentials(request)
    return f"Incorrect API key provided: {got} (as a URL: {quote(got, safe='')})"


def _php_json(payload: dict[str, Any]) -> bytes:
    """JSON with every ``/`` escaped, as PHP's ``json_encode`` writes it."""
    return json.dumps(payload).replace("/", "\\/").encode()


def _leaky_headers(request: Request) -> dict[str, str]:
    got = _credentials(request)
    return {"x-seen-authorization": got, "x-seen-quoted": quote(got, safe="")}


def _leaky_forms(request: Request, stream: bool) -> Response:
    """A 401 quoting the credentials escaped and percent-encoded, in its body and headers."""
    error = {"error": {"message": _leaky_text(request), "code": "invalid_api_key"}}
    if request.url.path == "/v1/messages":
        error = {"type": "error", "error": {"type": "authentication_error", **error["error"]}}
    body = _php_json(error)
    media = "application/json"
    if stream:
        body, media = b"data: " + body + b"\n\n", "text/event-stream"
    return Response(body, 401, headers=_leaky_headers(request), media_type=media)


def _leaky_events(
    request: Request, events: AsyncIterator[bytes], first: int, error: Callable[[str], bytes]
) -> StreamingResponse:
    """A 200 event stream: the ``first`` events of ``events``, then ``error(text)`` quoting the
    credentials, written in two pieces split inside the credentials' first quote."""
    got = _credentials(request)
    event = error(_leaky_text(request))
    cut = event.index(got.encode()[:8]) + 4 if got else len(event) // 2

    async def leak() -> AsyncIterator[bytes]:
        count = 0
        async for each in events:
            if count == first:
                break
            count += 1
            yield each
        yield event[:cut]
        await anyio.sleep(0.05)  # the two pieces reach the proxy as two chunks
        yield event[cut:]

    return StreamingResponse(
        leak(), media_type="text/event-stream", headers=_leaky_headers(request)
    )


def _broken(request: Request, stream: bool) -> Response:
    async def cut() -> AsyncIterator[bytes]:
        yield _chunk({"role": "assistant", "content": "Hel"}) if stream else b'{"id": "up-1", "ch'
        raise ConnectionResetError("cut")  # uvicorn closes the connection mid-body

    media = "text/event-stream" if stream else "application/json"
    return StreamingResponse(cut(), media_type=media, headers={"content-length": "4000"})


def _stalled(request: Request, stream: bool) -> Response:
    async def stall() -> AsyncIterator[bytes]:
        yield b'{"id": "up-1", "ch'
        await anyio.sleep(30)

    return StreamingResponse(stall(), media_type="application/json")


def _hold(request: Request, stream: bool) -> Response:
    async def hold() -> AsyncIterator[bytes]:
        try:
            if stream:
                yield _chunk({"role": "assistant", "content": "Hello"})
            await anyio.sleep_forever()  # Starlette cancels this when the proxy disconnects
        finally:
            _closed.append(request.url.path)

    media = "text/event-stream" if stream else "application/json"
    return StreamingResponse(hold(), media_type=media)


_FAULTS = {
    "leaky": _leaky,
    "leaky-forms": _leaky_forms,
    "broken": _broken,
    "stalled": _stalled,
    "hold": _hold,
}


async def closed(_: Request) -> Response:
    return JSONResponse(len(_closed))


def _event(payload: dict[str, Any]) -> bytes:
    return f"event: {payload['type']}\ndata: {json.dumps(payload)}\n\n".encode()


async def responses(request: Request) -> Response:
    body = await _record(request)
    model = body.get("model")
    if model == "leaky-forms":
        return _leaky_forms(request, body.get("stream") is True)
    response_id = f"resp_up_{len(_received)}"
    item: dict[str, Any] = {
        "type": "message",
        "id": f"msg_{response_id}",
        "status": "completed",
        "role": "assistant",
        "content": [{"type": "output_text", "text": ANSWER, "annotations": []}],
    }
    if model == "tool-call":
        item = {
            "type": "function_call",
            "id": "fc_9",
            "call_id": "call_9",
            "name": "f",
            "arguments": "{}",
            "status": "completed",
        }
    response = {
        "id": response_id,
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": model,
        "output": [item],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }
    if not body.get("stream"):
        return JSONResponse(response, headers={"x-upstream": "kept"})
    gate = _gate(model)

    async def events() -> AsyncIterator[bytes]:
        yield _event({"type": "response.created", "response": {**response, "output": []}})
        delta = {"item_id": item["id"], "output_index": 0, "content_index": 0}
        yield _event({"type": "response.output_text.delta", **delta, "delta": "Hello"})
        if gate is not None:
            await gate.wait()
        yield _event({"type": "response.output_text.delta", **delta, "delta": " from upstream"})
        yield _event({"type": "response.completed", "response": response})

    if model == "cut-short":
        return _ended_early(events(), 2)
    if model == "fails":
        failed = {**response, "status": "failed", "output": []}
        return _ended_early(events(), 2, _event({"type": "response.failed", "response": failed}))
    if model == "leaky-event":
        return _leaky_events(request, events(), 2, _responses_error)
    if model == "leaky-failed":

        def failed_event(text: str) -> bytes:
            error = {"code": "invalid_api_key", "message": text}
            failed = {**response, "status": "failed", "output": [], "error": error}
            return _sse({"type": "response.failed", "response": failed})

        return _leaky_events(request, events(), 2, failed_event)
    return StreamingResponse(events(), media_type="text/event-stream")


def _responses_error(text: str) -> bytes:
    """The Responses API's ``error`` event: its message is not inside an ``error`` object."""
    return _sse({"type": "error", "code": "invalid_api_key", "message": text, "param": None})


def _sse(payload: dict[str, Any]) -> bytes:
    """An event written as PHP writes JSON (``_event`` writes it as Python does)."""
    return f"event: {payload['type']}\n".encode() + b"data: " + _php_json(payload) + b"\n\n"


async def count_tokens(request: Request) -> Response:
    await _record(request)
    return JSONResponse({"input_tokens": 7})


async def messages(request: Request) -> Response:
    body = await _record(request)
    model = body.get("model")
    if model == "leaky-forms":
        return _leaky_forms(request, body.get("stream") is True)
    block: dict[str, Any] = {"type": "text", "text": ANSWER}
    if model == "tool-call":
        block = {"type": "tool_use", "id": "toolu_9", "name": "f", "input": {}}
    message = {
        "id": f"msg_up_{len(_received)}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block],
        "stop_reason": "tool_use" if model == "tool-call" else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    if not body.get("stream"):
        return JSONResponse(message, headers={"x-upstream": "kept"})
    gate = _gate(model)

    async def events() -> AsyncIterator[bytes]:
        start = {**message, "content": [], "stop_reason": None}
        yield _event({"type": "message_start", "message": start})
        empty = {**block, "text": ""} if block["type"] == "text" else block
        yield _event({"type": "content_block_start", "index": 0, "content_block": empty})
        if block["type"] == "text":
            for piece in ("Hello", " from upstream"):
                delta = {"type": "text_delta", "text": piece}
                yield _event({"type": "content_block_delta", "index": 0, "delta": delta})
                if gate is not None and piece == "Hello":
                    await gate.wait()
        yield _event({"type": "content_block_stop", "index": 0})
        stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
        yield _event({"type": "message_delta", "delta": stop, "usage": {"output_tokens": 1}})
        yield _event({"type": "message_stop"})

    if model == "cut-short":
        return _ended_early(events(), 3)
    if model == "fails":
        error = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
        return _ended_early(events(), 3, _event(error))
    if model == "leaky-event":

        def error_event(text: str) -> bytes:
            return _sse(
                {"type": "error", "error": {"type": "authentication_error", "message": text}}
            )

        return _leaky_events(request, events(), 3, error_event)
    return StreamingResponse(events(), media_type="text/event-stream")


async def models(request: Request) -> Response:
    await _record(request)
    model = {"id": "up-model", "object": "model", "created": 1, "owned_by": "upstream"}
    return JSONResponse({"object": "list", "data": [model]})


async def received(request: Request) -> Response:
    if request.method == "DELETE":
        _received.clear()
    return JSONResponse(_received)


async def release(_: Request) -> Response:
    if _release is not None:
        _release.set()
    return JSONResponse({})


def main() -> None:
    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/_received", received, methods=["GET", "DELETE"]),
            Route("/_release", release, methods=["POST"]),
            Route("/_closed", closed),
        ]
    )
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=int(sys.argv[1]),
        log_level="warning",
        timeout_graceful_shutdown=1,
    )


if __name__ == "__main__":
    main()
