"""A REST API and a chat-completions endpoint for testing the HTTP toolsets against real sockets.

Run as ``python api_servers.py rest PORT`` or ``python api_servers.py chat PORT``. Both record
every request they answer; ``GET /_received`` returns the records and ``DELETE /_received``
forgets them, so a test can check exactly what went over the wire.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

CHAT_KEY_ENV = "CHAT_SERVER_API_KEY"
"""The chat server accepts only requests whose ``api-key`` header equals this variable."""

_RECORDED_HEADERS = ("api-key", "authorization", "x-tenant", "content-type")
_received: list[dict[str, Any]] = []


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
    return JSONResponse(_received)


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
    if request.headers.get("api-key") != os.environ.get(CHAT_KEY_ENV):
        return JSONResponse({"error": {"message": "bad api key"}}, status_code=401)
    deployment = request.path_params["deployment"]
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


REST_ROUTES = [
    Route("/preferences", preferences),
    Route("/users/{user_id:path}/preferences", preferences),
    Route("/users/{user_id}/notes", notes, methods=["POST", "PUT"]),
    Route("/status/{code:int}", status, methods=["GET", "POST", "DELETE"]),
    Route("/slow", slow),
]
CHAT_ROUTES = [
    Route("/openai/deployments/{deployment}/chat/completions", chat_completions, methods=["POST"]),
]


def main() -> None:
    kind, port = sys.argv[1], int(sys.argv[2])
    routes = REST_ROUTES if kind == "rest" else CHAT_ROUTES
    app = Starlette(routes=[*routes, Route("/_received", received, methods=["GET", "DELETE"])])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1)


if __name__ == "__main__":
    main()
