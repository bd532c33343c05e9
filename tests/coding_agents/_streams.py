"""The scripted upstream's answers as event streams, in each API's own events."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

from starlette.responses import StreamingResponse


def sse(events: Iterator[dict[str, Any]], named: bool) -> StreamingResponse:
    """Messages and Responses events carry ``event:`` lines (``named``); a Chat Completions
    stream has none and ends with ``data: [DONE]``."""

    def encode() -> Iterator[bytes]:
        for event in events:
            prefix = f"event: {event['type']}\n" if named else ""
            yield f"{prefix}data: {json.dumps(event)}\n\n".encode()
        if not named:
            yield b"data: [DONE]\n\n"

    return StreamingResponse(encode(), media_type="text/event-stream")


def message_events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A Messages answer as ``message_start``, a start, deltas and a stop per block (a thinking
    block's signature in a ``signature_delta``), ``message_delta`` and ``message_stop``."""
    yield {"type": "message_start", "message": {**message, "content": [], "stop_reason": None}}
    for index, block in enumerate(message["content"]):
        if block["type"] == "thinking":
            start = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]},
            ]
        elif block["type"] == "text":
            start = {"type": "text", "text": ""}
            deltas = [{"type": "text_delta", "text": block["text"]}]
        else:
            start = {**block, "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": json.dumps(block["input"])}]
        yield {"type": "content_block_start", "index": index, "content_block": start}
        for delta in deltas:
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    stop = {"stop_reason": message["stop_reason"], "stop_sequence": None}
    yield {"type": "message_delta", "delta": stop, "usage": {"output_tokens": 5}}
    yield {"type": "message_stop"}


def response_events(response: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A Responses answer as the whole event sequence the SDKs' stream helpers expect."""
    sequence = itertools.count()
    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    yield {"type": "response.created", "response": pending, "sequence_number": next(sequence)}
    for index, item in enumerate(response["output"]):
        at = {"output_index": index, "item_id": item["id"]}
        if item["type"] == "message":
            added = {**item, "status": "in_progress", "content": []}
        elif item["type"] == "function_call":
            added = {**item, "status": "in_progress", "arguments": ""}
        else:
            added = item
        yield {
            "type": "response.output_item.added",
            "output_index": index,
            "item": added,
            "sequence_number": next(sequence),
        }
        if item["type"] == "message":
            part = item["content"][0]
            empty = {**part, "text": ""}
            yield {
                "type": "response.content_part.added",
                **at,
                "content_index": 0,
                "part": empty,
                "sequence_number": next(sequence),
            }
            for kind, key in (("delta", "delta"), ("done", "text")):
                yield {
                    "type": f"response.output_text.{kind}",
                    **at,
                    "content_index": 0,
                    key: part["text"],
                    "sequence_number": next(sequence),
                }
            yield {
                "type": "response.content_part.done",
                **at,
                "content_index": 0,
                "part": part,
                "sequence_number": next(sequence),
            }
        if item["type"] == "function_call":
            for kind, key in (("delta", "delta"), ("done", "arguments")):
                yield {
                    "type": f"response.function_call_arguments.{kind}",
                    **at,
                    key: item["arguments"],
                    "sequence_number": next(sequence),
                }
        yield {
            "type": "response.output_item.done",
            "output_index": index,
            "item": item,
            "sequence_number": next(sequence),
        }
    yield {"type": "response.completed", "response": response, "sequence_number": next(sequence)}


def chat_chunks(
    base: dict[str, Any],
    message: dict[str, Any],
    finish: str,
    usage: dict[str, Any] | None,
) -> Iterator[dict[str, Any]]:
    def chunk(delta: dict[str, Any], reason: str | None = None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "finish_reason": reason}
        return {**base, "object": "chat.completion.chunk", "choices": [choice]}

    yield chunk({"role": "assistant", "content": ""})
    if message["content"] is not None:
        yield chunk({"content": message["content"]})
    for index, call in enumerate(message.get("tool_calls") or []):
        head = {"name": call["function"]["name"], "arguments": ""}
        first = {"index": index, "id": call["id"], "type": "function", "function": head}
        yield chunk({"tool_calls": [first]})
        rest = {"arguments": call["function"]["arguments"]}
        yield chunk({"tool_calls": [{"index": index, "function": rest}]})
    yield chunk({}, finish)
    if usage is not None:
        yield {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage}
