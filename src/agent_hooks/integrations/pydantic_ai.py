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

With an Anthropic model that thinks (SPEC 15), a pair placed in the current tool cycle is a
``UserPromptPart`` holding its text form instead, added to the ``ModelRequest`` it follows
(``AnthropicModel`` sends it as a text block of that user message); it is read back as the pair
on later turns (:mod:`agent_hooks.integrations._text_pairs`). Its arguments, which the text
leaves out, are kept in that request's ``metadata`` (never sent to the model) so a signed pair
still verifies.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeAlias

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
from agent_hooks.injection._text_form import read_tool_result_text
from agent_hooks.integrations._history import History, HistoryBuilder, rebuilt
from agent_hooks.integrations._seam import (
    completion_facts,
    contained,
    field_of,
    present,
    run_completion,
)
from agent_hooks.integrations._text_pairs import (
    ARGUMENTS_KEY,
    pair_from_text,
    text_form_arguments,
    text_form_calls,
    text_of_pair,
)
from agent_hooks.messages import FunctionCall, Message, Role, ToolCall

__all__ = ["AgentHooksCapability"]

RequestFn: TypeAlias = Callable[[RunContext[Any]], Mapping[str, Any] | None]

_Unit: TypeAlias = tuple[int, Any]
"""A part of the history's message ``index``; index -1 holds a whole message the hooks wrote."""

_NEW = -1
_JOIN = -2
"""The unit of a text-form pair: a part joining the request before it (:class:`_Joined`)."""
_NEW_REQUEST = -3
"""A request the hooks' text-form parts open when no request comes right before them."""


class _Joined(NamedTuple):
    """A text-form pair the hooks wrote, as the part it joins its request with."""

    part: UserPromptPart
    call_id: str
    arguments: str


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
            history, read_as_text = _to_history(ctx.messages)
            run = await self.runner.run(
                HookEvent.ON_REQUEST_START, history.messages, request=self.request(ctx)
            )
            text_form = text_form_calls(
                history.messages,
                run.messages,
                read_as_text=read_as_text,
                thinking=_anthropic_thinking(request_context),
            )
            changed = _from_history(history, run.messages, ctx.messages, text_form)
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
            messages = _to_history(result.all_messages())[0].messages
            if not isinstance(result.output, str):  # structured output: its JSON is the answer
                answer = json.dumps(to_jsonable_python(result.output), ensure_ascii=False)
                messages.append(Message(role=Role.ASSISTANT, content=answer))
            facts = completion_facts(ctx.usage.requests, ctx.usage.tool_calls)
            await run_completion(self.runner, messages, self.request(ctx), facts)
        return result

    def __repr__(self) -> str:
        return f"AgentHooksCapability({self.runner!r})"


def _anthropic_thinking(request_context: ModelRequestContext) -> bool:
    """Whether this request goes to an Anthropic model that thinks (SPEC 15: ``thinking.type``
    other than ``disabled``), read as ``AnthropicModel`` reads it: a ``thinking`` object in
    ``extra_body``, then ``anthropic_thinking``, then the unified ``thinking`` setting, then the
    model's profile (models that think by default, or cannot stop)."""
    model = request_context.model
    if model.system != "anthropic":
        return False
    settings: dict[str, Any] = {**(model.settings or {}), **(request_context.model_settings or {})}
    extra_body = settings.get("extra_body")
    for explicit in (
        extra_body.get("thinking") if isinstance(extra_body, Mapping) else None,
        settings.get("anthropic_thinking"),
    ):
        if isinstance(explicit, Mapping) and explicit:
            return explicit.get("type") != "disabled"
    unified = request_context.model_request_parameters.thinking
    if unified is None:
        unified = settings.get("thinking")
    if unified:
        return True
    profile = model.profile
    if unified is False:  # a model that cannot stop thinks at its least; or it thinks between tools
        return bool(
            profile.get("thinking_always_enabled")
            or profile.get("anthropic_disables_thinking_with_between_tools")
        )
    return bool(
        profile.get("thinking_always_enabled") or profile.get("thinking_enabled_by_default")
    )


def _to_history(messages: Sequence[ModelMessage]) -> tuple[History[_Unit], frozenset[str]]:
    """A response is one assistant message; a request one message per part it converts, a
    text-form part two (its pair's call and result). Also the call ids read from text form."""
    builder: HistoryBuilder[_Unit] = HistoryBuilder()
    read_as_text: set[str] = set()
    for index, native in enumerate(messages):
        if isinstance(native, ModelResponse):
            builder.extend(_response_message(native), [(index, part) for part in native.parts])
            continue
        for part in native.parts:
            pair = _text_pair(part, native)
            if pair is None:
                builder.add(_request_part_message(part), (index, part))
                continue
            call, result = pair
            builder.extend(call, [])  # the part stands for both; it goes back with the result
            builder.add(result, (index, part))
            read_as_text.add(result.tool_call_id or "")
    return builder.build(), frozenset(read_as_text)


def _text_pair(part: Any, request: ModelRequest) -> tuple[Message, Message] | None:
    if not isinstance(part, UserPromptPart) or not isinstance(part.content, str):
        return None
    pair = pair_from_text(part.content)
    if pair is None:
        return None
    kept = _kept_arguments(request).get(pair[1].tool_call_id or "")
    return pair if kept is None else pair_from_text(part.content, kept)


def _kept_arguments(request: ModelRequest) -> dict[str, str]:
    kept = (request.metadata or {}).get(ARGUMENTS_KEY)
    if not isinstance(kept, Mapping):
        return {}
    return {key: value for key, value in kept.items() if isinstance(value, str)}


def _from_history(
    history: History[_Unit],
    messages: Sequence[Message],
    natives: Sequence[ModelMessage],
    text_form: frozenset[str] = frozenset(),
) -> list[ModelMessage] | None:
    """The native history of ``messages``; ``None`` when the hooks changed nothing.

    The pairs of ``text_form`` become parts of the request before them (:class:`_Joined`).
    """
    arguments = text_form_arguments(messages, text_form)

    def build(message: Message, names: Mapping[str, str]) -> list[_Unit]:
        return _native_message(message, names, arguments)

    units = rebuilt(history, messages, build)
    if units is None:
        return None
    result: list[ModelMessage] = []
    group: list[Any] = []
    group_index = _NEW

    def close() -> None:
        if group_index == _NEW:
            return
        original = natives[group_index] if group_index >= 0 else ModelRequest(parts=[])
        same = len(original.parts) == len(group) and all(
            a is b for a, b in zip(original.parts, group, strict=True)
        )
        result.append(original if same else _with_parts(original, group))

    for index, payload in units:
        if index == _JOIN:
            in_request = group_index == _NEW_REQUEST or (
                group_index >= 0 and isinstance(natives[group_index], ModelRequest)
            )
            if not in_request:
                close()
                group, group_index = [], _NEW_REQUEST
            group.append(payload)
            continue
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
    """A copy of ``message`` (its metadata kept) holding only ``parts``; a request keeps the
    arguments of exactly the text-form pairs it then holds (:data:`ARGUMENTS_KEY`)."""
    # One branch per class: mypy types ``dataclasses.replace`` per dataclass, not per union.
    if isinstance(message, ModelResponse):
        return dataclasses.replace(message, parts=parts)
    kept = _kept_arguments(message)
    arguments: dict[str, str] = {}
    for part in parts:
        if isinstance(part, _Joined):
            arguments[part.call_id] = part.arguments
        elif (call_id := _text_call_id(part)) is not None and call_id in kept:
            arguments[call_id] = kept[call_id]
    metadata = {
        key: value for key, value in (message.metadata or {}).items() if key != ARGUMENTS_KEY
    }
    if arguments:
        metadata[ARGUMENTS_KEY] = arguments
    own = [part.part if isinstance(part, _Joined) else part for part in parts]
    return dataclasses.replace(
        message, parts=own, metadata=metadata or (None if message.metadata is None else {})
    )


def _text_call_id(part: Any) -> str | None:
    if isinstance(part, UserPromptPart) and isinstance(part.content, str):
        read = read_tool_result_text(part.content)
        return read[1] if read is not None else None
    return None


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


def _native_message(
    message: Message, names: Mapping[str, str], text_form: Mapping[str, str]
) -> list[_Unit]:
    """A message the hooks wrote: a pair's call or answer (or a message they refreshed).

    A pair in ``text_form`` (call id to its arguments) is one :class:`_Joined` part, made from
    its answer; its call message has no native unit.
    """
    calls = message.tool_calls or []
    if calls and all(call.id in text_form for call in calls):
        return []
    if message.role is Role.TOOL:
        call_id = message.tool_call_id or ""
        if call_id in text_form:
            text = text_of_pair(message, names.get(call_id, ""))
            return [(_JOIN, _Joined(UserPromptPart(text), call_id, text_form[call_id]))]
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
