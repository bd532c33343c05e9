"""An upstream whose answers say how many tokens they used, in each dialect, streamed and not.

Run as ``python usage_upstream.py PORT``. Every answer reports 100 input tokens of which 60 were
cache reads, 5 cache writes (Anthropic only) and 7 output tokens, each dialect in its own words;
the model ``garbage`` answers with a usage that is no usage at all.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

CHAT_USAGE = {
    "prompt_tokens": 100,
    "completion_tokens": 7,
    "total_tokens": 107,
    "prompt_tokens_details": {"cached_tokens": 60, "audio_tokens": 0},
}
RESPONSES_USAGE = {
    "input_tokens": 100,
    "input_tokens_details": {"cached_tokens": 60},
    "output_tokens": 7,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 107,
}
ANTHROPIC_USAGE = {
    "input_tokens": 40,
    "cache_read_input_tokens": 60,
    "cache_creation_input_tokens": 5,
    "output_tokens": 7,
}
GARBAGE = {"prompt_tokens": "many", "input_tokens": [1], "output_tokens": -3}


def _sse(events: list[dict[str, Any]], *, named: bool, done: bool = False) -> Response:
    def stream() -> Iterator[bytes]:
        for event in events:
            name = f"event: {event['type']}\n" if named else ""
            yield f"{name}data: {json.dumps(event)}\n\n".encode()
        if done:
            yield b"data: [DONE]\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream")


async def chat(request: Request) -> Response:
    body = json.loads(await request.body())
    usage = GARBAGE if body.get("model") == "garbage" else CHAT_USAGE
    message = {"role": "assistant", "content": "It is noon."}
    if not body.get("stream"):
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return JSONResponse(
            {"id": "c1", "object": "chat.completion", "choices": [choice], "usage": usage}
        )
    base = {"id": "c1", "object": "chat.completion.chunk"}
    chunks = [
        {**base, "choices": [{"index": 0, "delta": message, "finish_reason": None}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {**base, "choices": [], "usage": usage},
    ]
    return _sse(chunks, named=False, done=True)


async def responses(request: Request) -> Response:
    body = json.loads(await request.body())
    usage = GARBAGE if body.get("model") == "garbage" else RESPONSES_USAGE
    part = {"type": "output_text", "text": "It is noon.", "annotations": []}
    item = {
        "type": "message",
        "id": "m1",
        "role": "assistant",
        "status": "completed",
        "content": [part],
    }
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "output": [item],
        "usage": usage,
    }
    if not body.get("stream"):
        return JSONResponse(response)
    started = {**response, "status": "in_progress", "output": [], "usage": None}
    return _sse(
        [
            {"type": "response.created", "response": started},
            {"type": "response.output_text.delta", "item_id": "m1", "delta": "It is noon."},
            {"type": "response.completed", "response": response},
        ],
        named=True,
    )


async def messages(request: Request) -> Response:
    body = json.loads(await request.body())
    usage = GARBAGE if body.get("model") == "garbage" else ANTHROPIC_USAGE
    text = {"type": "text", "text": "It is noon."}
    message = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "content": [text],
        "stop_reason": "end_turn",
        "usage": usage,
    }
    if not body.get("stream"):
        return JSONResponse(message)
    start_usage = {**usage, "output_tokens": 1} if usage is ANTHROPIC_USAGE else usage
    delta_usage = {"output_tokens": usage["output_tokens"], "cache_read_input_tokens": None}
    return _sse(
        [
            {"type": "message_start", "message": {**message, "content": [], "usage": start_usage}},
            {"type": "content_block_start", "index": 0, "content_block": {**text, "text": ""}},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "It is noon."},
            },
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": delta_usage},
            {"type": "message_stop"},
        ],
        named=True,
    )


app = Starlette(
    routes=[
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/responses", responses, methods=["POST"]),
        Route("/v1/messages", messages, methods=["POST"]),
    ]
)

if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
