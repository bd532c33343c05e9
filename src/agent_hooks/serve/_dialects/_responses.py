"""The OpenAI Responses API (``POST /v1/responses``): ``input`` items are the history.

Each item the hooks can read becomes one history message (SPEC 13): a ``message`` item (or an
item with a ``role`` and no ``type``) a message of its role with the text of its
``input_text``/``output_text`` parts, a ``function_call`` an assistant message with one tool call
(``call_id`` is the id), a ``function_call_output`` a tool message. Reasoning, files, hosted tool
calls and every other item stay where they were, untouched, and so does every field but ``input``.
A pair is written as a ``function_call`` item and a ``function_call_output`` item, without ``id``
or ``status`` (the API fills them in).

With upstream-held context (``previous_response_id`` or ``conversation``) the hooks also see the
stored pairs, which the upstream already holds: those are not sent again, nor are pairs the
hooks replaced in place; a first-time pair goes to the start of the forwarded ``input``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from agent_hooks.injection._ids import is_synthetic_call_id, parse_call_id
from agent_hooks.serve._dialects._base import (
    OPENAI_CREDENTIALS,
    Answer,
    Entry,
    InvalidRequest,
    ParsedRequest,
    RenderContext,
    SSELines,
    align,
    as_forwarded,
    forged_half,
    role_only,
    splice,
    synthetic_call_id,
)
from agent_hooks.serve._dialects._chat import json_object, openai_error
from agent_hooks.serve._dialects._usage import Usage, find_usage, openai_usage
from agent_hooks.serve._limits import check_message_count

__all__ = ["RESPONSES", "ResponsesRequest"]

_TEXT_PARTS = frozenset({"input_text", "output_text", "text"})


class ResponsesRequest(ParsedRequest):
    """A Responses body; ``items`` is its ``input`` as a list (a string is one user item)."""

    def __init__(self, body: dict[str, Any], items: list[Any]) -> None:
        self.body = body
        self._items = items

    def _read(self, *, whole: bool) -> Iterator[Entry]:
        return _entries(self._items, whole=whole)

    @property
    def user(self) -> str | None:
        user = self.body.get("user")
        return user if isinstance(user, str) and user else None

    @property
    def items(self) -> Sequence[Any]:
        return self._items

    @property
    def previous_response_id(self) -> str | None:
        previous = self.body.get("previous_response_id")
        return previous if isinstance(previous, str) and previous else None

    names_answers = True

    @property
    def named_conversation(self) -> str | None:
        """The id of the ``conversation`` parameter (a string or ``{"id": ...}``)."""
        conversation = self.body.get("conversation")
        if isinstance(conversation, Mapping):
            conversation = conversation.get("id")
        return conversation if isinstance(conversation, str) and conversation else None

    @property
    def held(self) -> bool:
        return self.previous_response_id is not None or self.named_conversation is not None

    def render(self, history: Sequence[Mapping[str, Any]], context: RenderContext) -> bytes:
        """Every field as it came; ``input`` with the pairs this turn forwards in place.

        A string ``input`` stays a string when no pair is forwarded.
        """
        before = self.outline
        after = _forwarded(before.messages, history, context) if self.held else list(history)
        items = splice(
            self._items,
            before,
            after,
            render=lambda added: _pair_items(as_forwarded(added, context.family)),
            without_blocks=lambda item, blocks: item,  # items are never split
        )
        original = self.body.get("input")
        if isinstance(original, str) and items == self._items:
            return self.dump(self.body)
        if "input" not in self.body and not items:
            return self.dump(self.body)
        return self.dump({**self.body, "input": items})


def _forwarded(
    before: Sequence[Mapping[str, Any]],
    history: Sequence[Mapping[str, Any]],
    context: RenderContext,
) -> list[Mapping[str, Any]]:
    """The hooks' history as the upstream-held turn forwards it.

    Added messages whose call id the upstream holds (stored pairs, pairs replaced in place) are
    left out. An added pair whose tool and arguments have no earlier pair is a first-time pair
    and moves to the front; one that has (its content changed) stays where the hooks appended it.
    """
    matches = align(before, history)
    earlier = {
        _identity(call_id)
        for message, match in zip(history, matches, strict=True)
        if (call_id := synthetic_call_id(message)) is not None
        and (match is not None or call_id in context.unsent)
    }
    front: list[Mapping[str, Any]] = []
    rest: list[Mapping[str, Any]] = []
    for message, match in zip(history, matches, strict=True):
        call_id = synthetic_call_id(message)
        if match is not None or call_id is None:
            rest.append(message)
        elif call_id not in context.unsent:
            (rest if _identity(call_id) in earlier else front).append(message)
    return [*front, *rest]


def _identity(call_id: str) -> str | None:
    """The "this tool with these arguments" start of a synthetic id (SPEC 4)."""
    parsed = parse_call_id(call_id)
    return parsed.prefix if parsed is not None else None


def _pair_items(messages: Sequence[Mapping[str, Any]]) -> list[Any]:
    """Added messages (synthetic pairs) as ``function_call`` and ``function_call_output`` items."""
    items: list[Any] = []
    for message in messages:
        if message.get("role") == "assistant":
            items += [
                {
                    "type": "function_call",
                    "call_id": call["id"],
                    "name": call["function"]["name"],
                    "arguments": call["function"]["arguments"],
                }
                for call in message["tool_calls"]
            ]
        else:
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message["tool_call_id"],
                    "output": _text(message.get("content")),
                }
            )
    return items


def _text(content: Any) -> str:
    """A pair's content as an ``output`` string (the hooks write a string or text parts)."""
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return content if isinstance(content, str) else ""


def _entries(items: Sequence[Any], *, whole: bool) -> Iterator[Entry]:
    """The history messages of ``items``, in order; without ``whole``, each message without a
    synthetic id as its shared role-only message, not built (:func:`role_only`)."""
    for index, item in enumerate(items):
        entry = _entry(item, index, whole=whole)
        if entry is not None:
            yield entry


def _entry(item: Any, index: int, *, whole: bool) -> Entry | None:
    """The history message an input item stands for; ``None`` for items the hooks cannot read."""
    if not isinstance(item, Mapping):
        return None
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "message" and item.get("role") in ("user", "assistant", "system", "developer"):
        content = item.get("content")
        if not isinstance(content, str | list):
            return None
        if not whole:
            return Entry(role_only(item["role"]), index)
        if isinstance(content, list):
            # Other parts (images, files, a ``type`` that is not a string) are not read: the
            # item is copied back as it came.
            content = [
                {"type": "text", "text": part["text"]}
                for part in content
                if isinstance(part, Mapping)
                and isinstance(part.get("type"), str)
                and part["type"] in _TEXT_PARTS
                and isinstance(part.get("text"), str)
            ]
        return Entry({"role": item["role"], "content": content}, index)
    call_id = item.get("call_id")
    if not isinstance(call_id, str):
        return None
    built = whole or is_synthetic_call_id(call_id)
    if kind == "function_call" and isinstance(item.get("name"), str):
        if not built:
            return Entry(role_only("assistant"), index)
        arguments = item.get("arguments")
        function = {
            "name": item["name"],
            "arguments": arguments if isinstance(arguments, str) else "{}",
        }
        call = {"id": call_id, "type": "function", "function": function}
        return Entry({"role": "assistant", "tool_calls": [call]}, index)
    if kind == "function_call_output":
        output = item.get("output")
        if isinstance(output, str) or (
            isinstance(output, list)
            and all(
                isinstance(part, Mapping) and isinstance(part.get("text"), str) for part in output
            )
        ):
            if not built:
                return Entry(role_only("tool"), index)
            content = _text(output)
            return Entry({"role": "tool", "tool_call_id": call_id, "content": content}, index)
    if kind in ("function_call", "function_call_output"):
        # Not read (images, files, a malformed item): kept in place, untouched, unless forged.
        forged = forged_half(call_id, result=kind == "function_call_output")
        return Entry(forged, index) if forged is not None else None
    return None


class _ResponsesDialect:
    name = "responses"
    counts_tokens = False
    error_event: str | None = "error"
    credentials = OPENAI_CREDENTIALS
    upstream_path = "/v1/responses"

    def parse(self, raw: bytes, *, deployment: str | None = None) -> ResponsesRequest:
        """Read a body; ``input`` may be absent, a string, or a list of items.

        Raises:
            InvalidRequest: not a JSON object, or ``input`` is neither a string nor a list.
            BadRequest: more than 100,000 input items (SPEC 12.1), or JSON past its limits.
        """
        body, long_strings = json_object(raw)
        raw_input = body.get("input")
        if isinstance(raw_input, str):
            items: list[Any] = [{"role": "user", "content": raw_input}]
        elif isinstance(raw_input, list):
            items = raw_input
        elif raw_input is None and "input" not in body:
            items = []
        else:
            raise InvalidRequest(
                "'input' must be a string or an array of items", code="invalid_input"
            )
        check_message_count(len(items))
        request = ResponsesRequest(body, items)
        request.long_strings = long_strings
        return request

    def error_body(
        self, status: int, message: str, *, type_: str, code: str | None
    ) -> dict[str, Any]:
        return openai_error(message, type_=type_, code=code)

    def answer_from_json(self, raw: bytes) -> Answer:
        try:
            response = json.loads(raw)
        except ValueError:
            return Answer(None)
        return _answer(response)

    def usage_from_json(self, raw: bytes) -> Usage | None:
        return openai_usage(find_usage(raw))

    def reader(self) -> StreamedResponse:
        return StreamedResponse()


def _answer(response: Any) -> Answer:
    """The text of the ``message`` items of ``output`` (none when it holds a function call),
    the response id and the usage."""
    if not isinstance(response, Mapping):
        return Answer(None)
    response_id = response.get("id") if isinstance(response.get("id"), str) else None
    usage = openai_usage(response.get("usage"))
    output = response.get("output")
    if not isinstance(output, list):
        return Answer(None, response_id, usage)
    items = [item for item in output if isinstance(item, Mapping)]
    messages = [item for item in items if item.get("type") == "message"]
    if not messages or any(item.get("type") == "function_call" for item in items):
        return Answer(None, response_id, usage)
    text = "".join(
        part["text"]
        for item in messages
        for part in item.get("content") or ()
        if isinstance(part, Mapping)
        and part.get("type") == "output_text"
        and isinstance(part.get("text"), str)
    )
    return Answer({"role": "assistant", "content": text}, response_id, usage)


class StreamedResponse:
    """Reads the response id from the first event naming it, the answer from
    ``response.completed``."""

    def __init__(self) -> None:
        self._lines = SSELines()
        self.response_id: str | None = None
        self.done = False
        """A final event (completed, failed, incomplete, error) went by."""
        self.failed = False
        """The final event was not ``response.completed``."""
        self._completed: Any = None

    def feed(self, chunk: bytes) -> None:
        for data in self._lines.feed(chunk):
            self._event(data)

    def answer(self) -> Answer:
        for data in self._lines.flush():
            self._event(data)
        if self._completed is None or self.failed:
            return Answer(None, self.response_id)
        return _answer(self._completed)

    def _event(self, data: bytes) -> None:
        # Only final events, errors and (until the id is known) events carrying the whole
        # response are parsed; deltas are skipped unread.
        if not any(kind in data for kind in _FINAL_EVENTS) and (
            self.response_id is not None or b'"response"' not in data
        ):
            return
        try:
            event = json.loads(data)
        except ValueError:
            return
        if not isinstance(event, dict):
            return
        if event.get("type") == "error":
            self.done = self.failed = True
            return
        response = event.get("response")
        if not isinstance(response, dict):
            return
        if self.response_id is None and isinstance(response.get("id"), str):
            self.response_id = response["id"]
        kind = event.get("type")
        if isinstance(kind, str) and kind.encode() in _FINAL_EVENTS:
            self.done = True
            if kind == "response.completed":
                self._completed = response
            else:
                self.failed = True


_FINAL_EVENTS = (b"response.completed", b"response.failed", b"response.incomplete", b'"error"')


RESPONSES = _ResponsesDialect()
