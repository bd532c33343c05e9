"""A model upstream for the real agents: it plays a scripted tool loop and refuses, in each
provider's own 400 shape, every request that breaks a rule of ``provider_rules``.

Run as ``python -m tests.coding_agents.scripted_upstream PORT`` (from the repository root). Routes:
``POST /v1/messages`` (and ``/v1/messages/count_tokens``), ``/v1/responses``,
``/v1/chat/completions``, streamed or not. The script, per request: a request without tools gets
:data:`ASIDE` (titles, summaries); a request whose history ends with the result of a call this
upstream issued gets :data:`FINAL`; any other request gets a call to a harmless tool the agent
itself declared (:data:`HARMLESS`). With Anthropic thinking on, every answer starts with a signed
thinking block; a Responses request with ``reasoning`` gets a reasoning item before its item.

``GET /tool/preferences`` is the hook's REST tool: its answer numbers the call, so a hook that runs
again changes its pair. ``GET /_received`` lists every request (path, query, headers, raw body
text, violations); ``DELETE /_received`` forgets them. Anything else is recorded and answered 404.
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Iterator
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.coding_agents.provider_rules import (
    THINKING_ON,
    Issued,
    chat_violations,
    messages_violations,
    responses_violations,
)

FINAL = "SCRIPTED-FINAL: the tool loop is done."
ASIDE = "Scripted aside"
TOOL_PATH = "/tool/preferences"
HARMLESS: dict[str, dict[str, Any]] = {
    "Bash": {"command": "echo scripted", "description": "Print a word"},
    "bash": {"command": "echo scripted", "description": "Print a word"},
    "shell": {"command": ["echo", "scripted"]},
    "shell_command": {"command": "echo scripted"},
    "exec_command": {"cmd": "echo scripted"},
}
"""Read-only calls each agent runs without asking, by the name it declares the tool under."""

_received: list[dict[str, Any]] = []
_issued = Issued()
_calls: set[str] = set()
_counter = itertools.count(1)


async def _record(request: Request, violations: list[str] | None = None) -> dict[str, Any]:
    text = (await request.body()).decode()
    entry = {
        "path": request.url.path,
        "query": request.url.query,
        "headers": dict(request.headers),
        "text": text,
        "violations": violations or [],
    }
    _received.append(entry)
    return entry


def _pick_tool(names: list[str]) -> tuple[str, dict[str, Any]] | None:
    for name, arguments in HARMLESS.items():
        if name in names:
            return name, arguments
    return None


def _sse(events: Iterator[dict[str, Any]], named: bool) -> StreamingResponse:
    def encode() -> Iterator[bytes]:
        for event in events:
            prefix = f"event: {event['type']}\n" if named else ""
            yield f"{prefix}data: {json.dumps(event)}\n\n".encode()
        if not named:
            yield b"data: [DONE]\n\n"

    return StreamingResponse(encode(), media_type="text/event-stream")


def _plan(names: list[str], answered: bool) -> tuple[str, dict[str, Any]] | str:
    """A tool call ``(name, arguments)`` or the text to answer with."""
    if not names:
        return ASIDE
    if answered:
        return FINAL
    return _pick_tool(names) or f"no harmless tool among {sorted(names)}"


# -- Anthropic Messages -----------------------------------------------------------------------


def _anthropic_error(violations: list[str]) -> JSONResponse:
    error = {"type": "invalid_request_error", "message": "; ".join(violations)}
    return JSONResponse({"type": "error", "error": error}, status_code=400)


async def messages(request: Request) -> Response:
    body = json.loads(await request.body())
    violations = messages_violations(body, request.headers.get("anthropic-beta", ""), _issued)
    await _record(request, violations)
    if violations:
        return _anthropic_error(violations)
    if request.url.path.endswith("/count_tokens"):
        return JSONResponse({"input_tokens": len(json.dumps(body)) // 4})
    last = (body.get("messages") or [{}])[-1]
    content = last.get("content") if isinstance(last.get("content"), list) else []
    answered = any(
        b.get("type") == "tool_result" and b.get("tool_use_id") in _calls for b in content
    )
    plan = _plan([str(t.get("name")) for t in body.get("tools") or []], answered)
    blocks: list[dict[str, Any]] = []
    if (body.get("thinking") or {}).get("type") in THINKING_ON:
        signature = f"scripted-signature-{next(_counter)}"
        thought = f"Scripted thought {signature}."
        _issued.thoughts[signature] = thought
        blocks.append({"type": "thinking", "thinking": thought, "signature": signature})
    if isinstance(plan, str):
        blocks.append({"type": "text", "text": plan})
    else:
        call_id = f"toolu_scripted{next(_counter)}"
        _calls.add(call_id)
        blocks.append({"type": "tool_use", "id": call_id, "name": plan[0], "input": plan[1]})
    usage = {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }
    message = {
        "id": f"msg_scripted{next(_counter)}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model"),
        "content": blocks,
        "stop_reason": "end_turn" if isinstance(plan, str) else "tool_use",
        "stop_sequence": None,
        "usage": usage,
    }
    if not body.get("stream"):
        return JSONResponse(message)
    return _sse(_message_events(message), named=True)


def _message_events(message: dict[str, Any]) -> Iterator[dict[str, Any]]:
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


# -- OpenAI Responses -------------------------------------------------------------------------


def _openai_error(violations: list[str]) -> JSONResponse:
    error = {
        "message": "; ".join(violations),
        "type": "invalid_request_error",
        "param": None,
        "code": None,
    }
    return JSONResponse({"error": error}, status_code=400)


async def responses(request: Request) -> Response:
    body = json.loads(await request.body())
    violations = responses_violations(body, _issued)
    await _record(request, violations)
    if violations:
        return _openai_error(violations)
    items = body.get("input") if isinstance(body.get("input"), list) else []
    last_user = max((i for i, item in enumerate(items) if item.get("role") == "user"), default=-1)
    answered = any(
        item.get("type") == "function_call_output" and item.get("call_id") in _calls
        for item in items[last_user + 1 :]
    )
    names = [str(t.get("name")) for t in body.get("tools") or [] if t.get("name")]
    plan = _plan(names, answered)
    n = next(_counter)
    output: list[dict[str, Any]] = []
    if isinstance(plan, str):
        item: dict[str, Any] = {
            "type": "message",
            "id": f"msg_scripted{n}",
            "status": "completed",
            "role": "assistant",
            "content": [{"type": "output_text", "text": plan, "annotations": []}],
        }
    else:
        _calls.add(f"call_scripted{n}")
        item = {
            "type": "function_call",
            "id": f"fc_scripted{n}",
            "call_id": f"call_scripted{n}",
            "name": plan[0],
            "arguments": json.dumps(plan[1]),
            "status": "completed",
        }
    if body.get("reasoning") is not None:
        reasoning: dict[str, Any] = {"type": "reasoning", "id": f"rs_scripted{n}", "summary": []}
        if "reasoning.encrypted_content" in (body.get("include") or []):
            reasoning["encrypted_content"] = f"scripted-encrypted-{n}"
            _issued.encrypted[reasoning["id"]] = reasoning["encrypted_content"]
        _issued.reasoning_of[item["id"]] = reasoning["id"]
        output.append(reasoning)
    output.append(item)
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    response = {
        "id": f"resp_scripted{n}",
        "object": "response",
        "created_at": 1,
        "status": "completed",
        "model": body.get("model"),
        "output": output,
        "parallel_tool_calls": False,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
    }
    if not body.get("stream"):
        return JSONResponse(response)
    return _sse(_response_events(response), named=True)


def _response_events(response: dict[str, Any]) -> Iterator[dict[str, Any]]:
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


# -- OpenAI Chat Completions ------------------------------------------------------------------


async def chat_completions(request: Request) -> Response:
    body = json.loads(await request.body())
    violations = chat_violations(body)
    await _record(request, violations)
    if violations:
        return _openai_error(violations)
    history = body.get("messages") or [{}]
    answered = history[-1].get("role") == "tool" and history[-1].get("tool_call_id") in _calls
    names = [str((t.get("function") or {}).get("name")) for t in body.get("tools") or []]
    plan = _plan(names, answered)
    n = next(_counter)
    message: dict[str, Any] = {"role": "assistant", "content": None}
    if isinstance(plan, str):
        message["content"] = plan
    else:
        _calls.add(f"call_scripted{n}")
        function = {"name": plan[0], "arguments": json.dumps(plan[1])}
        call = {"id": f"call_scripted{n}", "type": "function", "function": function}
        message["tool_calls"] = [call]
    finish = "stop" if isinstance(plan, str) else "tool_calls"
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    base = {"id": f"chatcmpl-scripted{n}", "created": 1, "model": body.get("model")}
    if not body.get("stream"):
        choice = {"index": 0, "message": message, "finish_reason": finish}
        return JSONResponse(
            {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        )
    with_usage = bool((body.get("stream_options") or {}).get("include_usage"))
    return _sse(_chat_chunks(base, message, finish, usage if with_usage else None), named=False)


def _chat_chunks(
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


# -- the record -------------------------------------------------------------------------------


async def received(request: Request) -> Response:
    if request.method == "DELETE":
        _received.clear()
    return JSONResponse(_received)


async def preferences(request: Request) -> Response:
    await _record(request)
    calls = sum(1 for entry in _received if entry["path"] == TOOL_PATH)
    return JSONResponse({"units": "metric", "language": "en-GB", "call": calls})


async def elsewhere(request: Request) -> Response:
    await _record(request)
    return JSONResponse({"error": {"message": f"no route {request.url.path}"}}, status_code=404)


def main() -> None:
    app = Starlette(
        routes=[
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", messages, methods=["POST"]),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route(TOOL_PATH, preferences, methods=["GET"]),
            Route("/_received", received, methods=["GET", "DELETE"]),
            Route("/{path:path}", elsewhere, methods=["GET", "POST", "PUT", "DELETE", "HEAD"]),
        ]
    )
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")


if __name__ == "__main__":
    main()
