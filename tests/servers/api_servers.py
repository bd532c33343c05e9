"""A REST API and a chat-completions endpoint for testing the HTTP toolsets against real sockets.

Run as ``python api_servers.py rest PORT`` or ``python api_servers.py chat PORT``. Both record
every request they answer; ``GET /_received`` returns the records and ``DELETE /_received``
forgets them, so a test can check exactly what went over the wire. Streamed bodies (``/big``,
``/drip``, the ``huge`` and ``endless`` deployments) count the bytes they handed to the socket
before the client went away; ``GET /_streamed`` waits for the streams in progress to end and
returns the counts.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.lowlevel
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Route

CHAT_KEY_ENV = "CHAT_SERVER_API_KEY"
"""The chat server accepts only requests whose ``api-key`` header equals this variable."""

_RECORDED_HEADERS = ("api-key", "authorization", "x-tenant", "content-type")
_received: list[dict[str, Any]] = []
_streamed: list[int] = []
_streams_open = 0
_streams_idle: anyio.Event | None = None
_STREAM_CHUNK_BYTES = 64 * 1024
_STREAM_WAIT_SECONDS = 10.0


async def _record(request: Request) -> dict[str, Any]:
    body = (await request.body()).decode()
    params = request.query_params
    entry = {
        "method": request.method,
        "raw_path": request.scope["raw_path"].decode(),
        "query": {key: params.getlist(key) for key in params},
        "headers": {k: v for k, v in request.headers.items() if k in _RECORDED_HEADERS},
        "body": json.loads(body) if body else None,
        "client_port": request.client.port if request.client else None,
    }
    _received.append(entry)
    return entry


async def received(request: Request) -> Response:
    if request.method == "DELETE":
        _received.clear()
        _streamed.clear()
    return JSONResponse(_received)


async def streamed(request: Request) -> Response:
    """Bytes sent by each finished stream, once no stream is in progress (bounded wait)."""
    global _streams_idle
    if _streams_open:
        _streams_idle = anyio.Event()
        with anyio.move_on_after(_STREAM_WAIT_SECONDS):
            await _streams_idle.wait()
    return JSONResponse(_streamed)


async def _counted(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """``chunks``, recording how many bytes were handed on before the stream ended or the client
    disconnected."""
    global _streams_open
    _streams_open += 1
    sent = 0
    try:
        async for chunk in chunks:
            yield chunk
            sent += len(chunk)
    finally:
        _streamed.append(sent)
        _streams_open -= 1
        if not _streams_open and _streams_idle is not None:
            _streams_idle.set()


async def _repeated(fill: bytes, total: int) -> AsyncIterator[bytes]:
    """``fill`` repeated to ``total`` bytes (endless when ``total`` is 0), in large chunks."""
    chunk = fill * max(1, _STREAM_CHUNK_BYTES // len(fill))
    sent = 0
    while total == 0 or sent < total:
        part = chunk if total == 0 else chunk[: total - sent]
        sent += len(part)
        yield part
        await anyio.lowlevel.checkpoint()  # lets the server notice a client that went away


async def big(request: Request) -> Response:
    """``?bytes=N`` (0: endless) of ``?fill=TEXT`` repeated; ``?status=`` sets the status."""
    await _record(request)
    fill = request.query_params.get("fill", "x").encode()
    total = int(request.query_params.get("bytes", "0"))
    status = int(request.query_params.get("status", "200"))
    return StreamingResponse(_counted(_repeated(fill, total)), status_code=status)


async def _dripping(seconds: float) -> AsyncIterator[bytes]:
    with anyio.move_on_after(seconds):
        while True:
            yield b"."
            await anyio.sleep(0.05)


async def drip(request: Request) -> Response:
    """One byte every 50 ms for ``?seconds=`` (default 30): never idle long enough for a read
    timeout, so only a deadline on the whole call stops it."""
    await _record(request)
    seconds = float(request.query_params.get("seconds", "30"))
    return StreamingResponse(_counted(_dripping(seconds)), media_type="text/plain")


async def loop(request: Request) -> Response:
    """Redirects to itself, for ever."""
    await _record(request)
    return RedirectResponse(request.url.path, status_code=302)


async def echo_secrets(request: Request) -> Response:
    """A 401 that quotes what a careless server quotes: credentials headers and the full URL."""
    await _record(request)
    quoted = {k: v for k, v in request.headers.items() if k in ("authorization", "x-api-key")}
    return PlainTextResponse(f"denied {quoted} for {request.url}", status_code=401)


async def echo_headers(request: Request) -> Response:
    """A 200 that reflects every request header, as a careless debugging endpoint does."""
    await _record(request)
    return JSONResponse(dict(request.headers))


async def preferences(request: Request) -> Response:
    await _record(request)
    user = request.path_params.get("user_id", request.query_params.get("user_id", "current"))
    return JSONResponse({"user_id": user, "language": "en-GB", "units": "metric"})


async def notes(request: Request) -> Response:
    entry = await _record(request)
    return JSONResponse({"user_id": request.path_params["user_id"], "saved": entry["body"]})


async def status(request: Request) -> Response:
    await _record(request)
    code = int(request.path_params["code"])
    return PlainTextResponse(f"the server says {code}\n  with    details", status_code=code)


async def slow(request: Request) -> Response:
    await _record(request)
    await anyio.sleep(float(request.query_params.get("seconds", "5")))
    return PlainTextResponse("finally")


async def chat_completions(request: Request) -> Response:
    entry = await _record(request)
    key = request.headers.get("api-key")
    if key != os.environ.get(CHAT_KEY_ENV):
        return JSONResponse({"error": {"message": f"bad api key {key!r}"}}, status_code=401)
    deployment = request.path_params["deployment"]
    if deployment == "loop":
        return RedirectResponse(request.url.path, status_code=307)
    if deployment in ("huge", "endless"):
        start = b'{"choices": [{"message": {"content": "'
        body = _counted(_repeated(b"x", 10 * 1024 * 1024 if deployment == "huge" else 0))
        return StreamingResponse(_framed(start, body, b'"}}]}'), media_type="application/json")
    if deployment == "broken":
        return PlainTextResponse("upstream model failed", status_code=500)
    if deployment == "garbled":
        return PlainTextResponse("<html>this is not json</html>")
    if deployment == "empty":
        return JSONResponse({"choices": []})
    if deployment == "slow":
        await anyio.sleep(5)
    question = entry["body"]["messages"][0]["content"]
    answer = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": f"{deployment} read {question}"},
                "finish_reason": "stop",
            }
        ],
    }
    return JSONResponse(answer)


async def _framed(start: bytes, body: AsyncIterator[bytes], end: bytes) -> AsyncIterator[bytes]:
    yield start
    async for chunk in body:
        yield chunk
    yield end


REST_ROUTES = [
    Route("/preferences", preferences),
    Route("/users/{user_id:path}/preferences", preferences),
    Route("/users/{user_id}/notes", notes, methods=["POST", "PUT"]),
    Route("/status/{code:int}", status, methods=["GET", "POST", "DELETE"]),
    Route("/slow", slow),
    Route("/big", big),
    Route("/drip", drip),
    Route("/loop", loop),
    Route("/echo-secrets", echo_secrets),
    Route("/echo-headers", echo_headers),
]
CHAT_ROUTES = [
    Route("/openai/deployments/{deployment}/chat/completions", chat_completions, methods=["POST"]),
]


def main() -> None:
    kind, port = sys.argv[1], int(sys.argv[2])
    routes = REST_ROUTES if kind == "rest" else CHAT_ROUTES
    app = Starlette(
        routes=[
            *routes,
            Route("/_received", received, methods=["GET", "DELETE"]),
            Route("/_streamed", streamed),
        ]
    )
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1)


if __name__ == "__main__":
    main()
