"""A model upstream for the real agents: it plays a scripted tool loop and refuses, in each
provider's own 400 shape, every request that breaks a rule of ``provider_rules``.

Run as ``python -m tests.coding_agents.scripted_upstream PORT`` (from the repository root). Routes:
``POST /v1/messages`` (and ``/v1/messages/count_tokens``), ``/v1/responses``,
``/v1/chat/completions``, streamed or not. The script, per request: a request without tools gets
:data:`ASIDE` (titles, summaries); a request whose history ends with the result of a call this
upstream issued gets :data:`FINAL`; any other request gets a call to a harmless tool the agent
itself declared (:data:`HARMLESS`). With Anthropic thinking on, every answer starts with a signed
thinking block; a Responses request with ``reasoning`` gets a reasoning item before its item.

``GET /tool/preferences`` is the hook's REST tool: its answer numbers the call (``hook-call-N``),
so a hook that runs again changes its pair, and each forwarded request shows which call it got.
``GET /_received`` lists every request (path, query, headers, raw body text, violations);
``DELETE /_received`` forgets them. Anything else is recorded and answered 404.
"""

from __future__ import annotations

import itertools
import json
import sys
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.coding_agents._streams import chat_chunks, message_events, response_events, sse
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
STAMP = "hook-call-"
"""Each answer of the tool carries ``hook-call-N``, N counting its calls."""
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
    return sse(message_events(message), named=True)


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
    return sse(response_events(response), named=True)


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
    return sse(chat_chunks(base, message, finish, usage if with_usage else None), named=False)


# -- the record -------------------------------------------------------------------------------


async def received(request: Request) -> Response:
    if request.method == "DELETE":
        _received.clear()
    return JSONResponse(_received)


async def preferences(request: Request) -> Response:
    await _record(request)
    calls = sum(1 for entry in _received if entry["path"] == TOOL_PATH)
    return JSONResponse({"units": "metric", "language": "en-GB", "stamp": f"{STAMP}{calls}"})


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
