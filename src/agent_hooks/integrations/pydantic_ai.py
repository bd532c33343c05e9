"""Hooks inside Pydantic AI: a capability (SPEC section 14).

::

    agent = Agent(model, capabilities=[AgentHooksCapability(runner)])

``before_model_request`` runs the ``on_request_start`` hooks on the run's persistent history
(``ctx.messages``) and writes their pairs there, so they stay in ``result.all_messages()`` and
the next turn's ``message_history`` carries them: TTLs and dedupe work from the history itself,
no store needed. ``after_run`` runs the ``on_completion`` hooks with the final answer.

Pairs are ``ModelResponse([ToolCallPart])`` + ``ModelRequest([ToolReturnPart])``. Parts the
hooks do not touch stay the very objects Pydantic AI made; a request whose parts a pair splits
(the system prompt and the user prompt of a first turn, when the pair goes after the prompt)
keeps its metadata on both halves.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from pydantic_ai.capabilities import AbstractCapability, CapabilityOrdering
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.run import AgentRunResult
from pydantic_ai.tools import RunContext
from pydantic_core import to_jsonable_python

from agent_hooks import HookEvent, HookRunner
from agent_hooks.integrations._history import History, HistoryBuilder, rebuilt
from agent_hooks.integrations._seam import (
    completion_facts,
    contained,
    field_of,
    present,
    run_completion,
)
from agent_hooks.messages import FunctionCall, Message, Role, ToolCall

__all__ = ["AgentHooksCapability"]

RequestFn: TypeAlias = Callable[[RunContext[Any]], Mapping[str, Any] | None]

_Unit: TypeAlias = tuple[int, Any]
"""A part of the history's message ``index``; index -1 holds a whole message the hooks wrote."""

_NEW = -1


def _default_request(ctx: RunContext[Any]) -> dict[str, Any]:
    """``conversation_id`` from the run, ``user_id`` from its deps (attribute or key)."""
    return present(conversation_id=ctx.conversation_id, user_id=field_of(ctx.deps, "user_id"))


class AgentHooksCapability(AbstractCapability[Any]):
    """Runs a manifest's hooks around each model request and after each run.

    It places itself outermost, so its pairs are in the history before any other capability
    makes request-only changes.
    """

    def __init__(self, runner: HookRunner, *, request: RequestFn | None = None) -> None:
        self.runner = runner
        self.request = request or _default_request

    def get_ordering(self) -> CapabilityOrdering:
        return CapabilityOrdering(position="outermost")

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Raises:
        HookFailedError: a hook with ``on_error: fail`` failed (the run fails with it).
        """
        with contained("pydantic_ai", "before_model_request"):
            history = _to_history(ctx.messages)
            run = await self.runner.run(
                HookEvent.ON_REQUEST_START, history.messages, request=self.request(ctx)
            )
            changed = _from_history(history, run.messages, ctx.messages)
            if changed is not None:
                ctx.messages[:] = changed
                return dataclasses.replace(request_context, messages=list(changed))
        return request_context

    async def after_run(
        self, ctx: RunContext[Any], *, result: AgentRunResult[Any]
    ) -> AgentRunResult[Any]:
        """Raises:
        HookFailedError: a hook with ``on_error: fail`` failed (the run fails with it).
        """
        with contained("pydantic_ai", "after_run"):
            messages = _to_history(result.all_messages()).messages
            if not isinstance(result.output, str):  # structured output: its JSON is the answer
                answer = json.dumps(to_jsonable_python(result.output), ensure_ascii=False)
                messages.append(Message(role=Role.ASSISTANT, content=answer))
            facts = completion_facts(ctx.usage.requests, ctx.usage.tool_calls)
            await run_completion(self.runner, messages, self.request(ctx), facts)
        return result

    def __repr__(self) -> str:
        return f"AgentHooksCapability({self.runner!r})"


def _to_history(messages: Sequence[ModelMessage]) -> History[_Unit]:
    """A response is one assistant message; a request one message per part it converts."""
    builder: HistoryBuilder[_Unit] = HistoryBuilder()
    for index, native in enumerate(messages):
        if isinstance(native, ModelResponse):
            builder.extend(_response_message(native), [(index, part) for part in native.parts])
            continue
        for part in native.parts:
            builder.add(_request_part_message(part), (index, part))
    return builder.build()


def _from_history(
    history: History[_Unit], messages: Sequence[Message], natives: Sequence[ModelMessage]
) -> list[ModelMessage] | None:
    """The native history of ``messages``; ``None`` when the hooks changed nothing."""
    units = rebuilt(history, messages, _native_message)
    if units is None:
        return None
    result: list[ModelMessage] = []
    group: list[Any] = []
    group_index = _NEW

    def close() -> None:
        if group_index == _NEW:
            return
        original = natives[group_index]
        same = len(original.parts) == len(group) and all(
            a is b for a, b in zip(original.parts, group, strict=True)
        )
        result.append(original if same else _with_parts(original, group))

    for index, payload in units:
        if index != group_index or index == _NEW:
            close()
            group, group_index = [], index
        if index == _NEW:
            result.append(payload)
        else:
            group.append(payload)
    close()
    return result


def _with_parts(message: ModelMessage, parts: list[Any]) -> ModelMessage:
    """A copy of ``message`` (its metadata kept) holding only ``parts``."""
    # One branch per class: mypy types ``dataclasses.replace`` per dataclass, not per union.
    if isinstance(message, ModelResponse):
        return dataclasses.replace(message, parts=parts)
    return dataclasses.replace(message, parts=parts)


def _response_message(response: ModelResponse) -> Message:
    text = [part.content for part in response.parts if isinstance(part, TextPart)]
    calls = [
        ToolCall(
            id=part.tool_call_id,
            function=FunctionCall(name=part.tool_name, arguments=part.args_as_json_str()),
        )
        for part in response.parts
        if isinstance(part, ToolCallPart)
    ]
    if calls:
        return Message(role=Role.ASSISTANT, content="".join(text) or None, tool_calls=calls)
    return Message(role=Role.ASSISTANT, content="".join(text))


def _request_part_message(part: Any) -> Message | None:
    if isinstance(part, SystemPromptPart):
        return Message(role=Role.SYSTEM, content=part.content)
    if isinstance(part, UserPromptPart):
        return Message(role=Role.USER, content=_user_content(part.content))
    if isinstance(part, ToolReturnPart):
        return Message(
            role=Role.TOOL, tool_call_id=part.tool_call_id, content=part.model_response_str()
        )
    return None  # retries, files, bookkeeping parts: kept, never shown to the hooks


def _user_content(content: str | Sequence[Any]) -> str | list[Any]:
    if isinstance(content, str):
        return content
    return [
        {"type": "text", "text": item}
        if isinstance(item, str)
        else {"type": str(getattr(item, "kind", type(item).__name__))}
        for item in content
    ]


def _native_message(message: Message, names: Mapping[str, str]) -> list[_Unit]:
    """A message the hooks wrote: a pair's call or answer (or a message they refreshed)."""
    if message.role is Role.TOOL:
        call_id = message.tool_call_id or ""
        part = ToolReturnPart(
            tool_name=names.get(call_id, ""),
            content=message.content if isinstance(message.content, str) else "",
            tool_call_id=call_id,
        )
        return [(_NEW, ModelRequest(parts=[part]))]
    parts: list[Any] = []
    if isinstance(message.content, str) and message.content:
        parts.append(TextPart(content=message.content))
    for call in message.tool_calls or []:
        if call.function is not None:
            args = json.loads(call.function.arguments or "{}")
            parts.append(ToolCallPart(call.function.name, args, tool_call_id=call.id))
    if message.role is Role.ASSISTANT:
        return [(_NEW, ModelResponse(parts=parts))]
    prompt = message.content if isinstance(message.content, str) else ""
    part_type = SystemPromptPart if message.role is Role.SYSTEM else UserPromptPart
    return [(_NEW, ModelRequest(parts=[part_type(prompt)]))]
