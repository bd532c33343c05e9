"""A local Anthropic Messages upstream for the adapters' thinking tests (SPEC 15).

The frameworks' own fake models cannot claim to be Anthropic, and the thinking rule lives in what
an Anthropic client puts on the wire, so the tests run the frameworks' real Anthropic models
(Pydantic AI's ``AnthropicModel``, LangChain's ``ChatAnthropic``) against this server on
127.0.0.1. It checks every request with the rules of ``tests.coding_agents.provider_rules`` and
answers a violation with Anthropic's 400; otherwise it plays a tool loop: a signed thinking block
first when thinking is on, then a call to the first tool the request declares, or, once that call
is answered, :data:`FINAL`.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.coding_agents._streams import message_events
from tests.coding_agents.provider_rules import THINKING_ON, Issued, messages_violations

FINAL = "The weather is fine."


@dataclass
class Upstream:
    """What the server received and handed out; ``base_url`` is where it listens."""

    base_url: str = ""
    bodies: list[dict[str, Any]] = field(default_factory=list)
    violations: list[list[str]] = field(default_factory=list)
    issued: Issued = field(default_factory=Issued)
    calls: set[str] = field(default_factory=set)
    _counter: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def answer(self, body: dict[str, Any], beta: str) -> tuple[int, dict[str, Any]]:
        found = messages_violations(body, beta, self.issued)
        self.bodies.append(body)
        self.violations.append(found)
        if found:
            error = {"type": "invalid_request_error", "message": "; ".join(found)}
            return 400, {"type": "error", "error": error}
        blocks: list[dict[str, Any]] = []
        if (body.get("thinking") or {}).get("type") in THINKING_ON:
            signature = f"signature-{next(self._counter)}"
            self.issued.thoughts[signature] = f"Thought {signature}."
            blocks.append(
                {"type": "thinking", "thinking": f"Thought {signature}.", "signature": signature}
            )
        last = (body.get("messages") or [{}])[-1].get("content")
        answered = isinstance(last, list) and any(
            isinstance(b, dict) and b.get("tool_use_id") in self.calls for b in last
        )
        tools = [str(tool.get("name")) for tool in body.get("tools") or []]
        if tools and not answered:
            call_id = f"toolu_{next(self._counter)}"
            self.calls.add(call_id)
            blocks.append({"type": "tool_use", "id": call_id, "name": tools[0], "input": {}})
            stop = "tool_use"
        else:
            blocks.append({"type": "text", "text": FINAL})
            stop = "end_turn"
        return 200, {
            "id": f"msg_{next(self._counter)}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model"),
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        }


@contextmanager
def anthropic_upstream() -> Iterator[Upstream]:
    """A running :class:`Upstream`, stopped on exit."""
    upstream = Upstream()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["content-length"])))
            status, answer = upstream.answer(body, self.headers.get("anthropic-beta", ""))
            if status == 200 and body.get("stream"):
                events = message_events(answer)
                raw = b"".join(
                    f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events
                )
                kind = "text/event-stream"
            else:
                raw, kind = json.dumps(answer).encode(), "application/json"
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    upstream.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield upstream
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
