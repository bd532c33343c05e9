"""Hooks inside LangChain v1 agents: a middleware (SPEC section 14).

::

    agent = create_agent(model, tools, middleware=[AgentHooksMiddleware(runner)])

``before_model`` runs the ``on_request_start`` hooks on the state's messages and, only when they
changed something, rewrites the state (``RemoveMessage(REMOVE_ALL_MESSAGES)`` and the new
history), so the pairs are checkpointed like any message and the next turn's TTLs and dedupe
read them from the thread. ``after_agent`` runs the ``on_completion`` hooks with the final
answer. Pairs are ``AIMessage(tool_calls=[...])`` + ``ToolMessage``; messages the hooks do not
touch are handed back as the very objects the state holds (ids, names, metadata kept).

The sync methods (``invoke``) run the hooks on one background event loop per middleware, so the
app's sessions and clients are reused across calls instead of reopened per call.

With ``ChatAnthropic`` and ``thinking`` set (SPEC 15), a pair in the current tool cycle is a text
block of its text form appended to the ``HumanMessage`` it follows (a new ``HumanMessage`` after
a ``ToolMessage``: ``ChatAnthropic`` merges it into that user message). ``before_model`` cannot
see the model, so ``wrap_model_call`` writes the current cycle's new pairs in that form, for the
request and, through its ``Command``, for the state (as LangChain itself rewrites a history whose
tool calls it repairs); ``before_model`` reads such blocks back as the pairs they stand for and
keeps them text, a TTL refresh included. Their arguments ride in the ``HumanMessage``'s
``additional_kwargs``, which ``ChatAnthropic`` does not send.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeAlias, cast

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import (
    ExtendedModelResponse,
    ModelRequest,
    ModelResponse,
)
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.graph.message import REMOVE_ALL_MESSAGES
from langgraph.runtime import Runtime
from langgraph.types import Command

from agent_hooks import HookEvent, HookRunner
from agent_hooks.integrations._history import History, HistoryBuilder, rebuilt
from agent_hooks.integrations._loop import BackgroundLoop
from agent_hooks.integrations._seam import (
    completion_facts,
    contained,
    field_of,
    present,
    run_completion,
    turn_counts,
)
from agent_hooks.integrations._text_pairs import (
    ARGUMENTS_KEY,
    pair_from_text,
    text_form_arguments,
    text_form_calls,
    text_of_pair,
)
from agent_hooks.messages import FunctionCall, Message, Role, ToolCall

try:  # an optional package: without it, no model is ``ChatAnthropic``
    from langchain_anthropic import ChatAnthropic as _ChatAnthropic
except ImportError:  # pragma: no cover - installed wherever the tests run
    _ChatAnthropic = None  # type: ignore[assignment,misc]

__all__ = ["AgentHooksMiddleware"]

RequestFn: TypeAlias = Callable[[Runtime[Any]], Mapping[str, Any] | None]

_ROLES = {role.value: role for role in Role}


class _Block(NamedTuple):
    """A text-form block of a ``HumanMessage``, read back as the pair it stands for."""

    owner: HumanMessage
    block: Any


class _Joined(NamedTuple):
    """A pair the hooks wrote in text form: a block for the human message before it."""

    block: dict[str, Any]
    call_id: str
    arguments: str


def _default_request(runtime: Runtime[Any]) -> dict[str, Any]:
    """``conversation_id``/``user_id`` from ``runtime.context`` (attributes or keys); the
    thread id is the conversation when the context names none."""
    context = runtime.context
    conversation = field_of(context, "conversation_id")
    if conversation is None and runtime.execution_info is not None:
        conversation = runtime.execution_info.thread_id
    return present(conversation_id=conversation, user_id=field_of(context, "user_id"))


class AgentHooksMiddleware(AgentMiddleware[AgentState[Any], Any]):
    """Runs a manifest's hooks before each model call and after the agent's run."""

    def __init__(self, runner: HookRunner, *, request: RequestFn | None = None) -> None:
        super().__init__()
        self.runner = runner
        self.request = request or _default_request
        self._loop = BackgroundLoop("agent-hooks-langchain")

    def before_model(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Raises:
        HookFailedError: a hook with ``on_error: fail`` failed (the run fails with it).
        """
        return self._loop.run(self.abefore_model(state, runtime))

    async def abefore_model(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Raises:
        HookFailedError: a hook with ``on_error: fail`` failed (the run fails with it).
        """
        with contained("langchain", "before_model"):
            history, read_as_text = _to_history(state["messages"])
            run = await self.runner.run(
                HookEvent.ON_REQUEST_START, history.messages, request=self.request(runtime)
            )
            # the model is not known here: only a text pair replaced in place is written as text
            text_form = text_form_calls(
                history.messages, run.messages, read_as_text=read_as_text, thinking=False
            )
            changed = _rebuilt(history, run.messages, text_form)
            if changed is not None:
                return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *changed]}
        return None

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """With Anthropic thinking, the current cycle's pairs as text (:func:`_in_text_form`)."""
        converted = _in_text_form(request)
        if converted is None:
            return handler(request)
        return _kept(
            converted, handler(request.override(messages=cast("list[AnyMessage]", converted)))
        )

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any] | AIMessage | ExtendedModelResponse[Any]:
        """With Anthropic thinking, the current cycle's pairs as text (:func:`_in_text_form`)."""
        converted = _in_text_form(request)
        if converted is None:
            return await handler(request)
        return _kept(
            converted, await handler(request.override(messages=cast("list[AnyMessage]", converted)))
        )

    def after_agent(self, state: AgentState[Any], runtime: Runtime[Any]) -> dict[str, Any] | None:
        """Raises:
        HookFailedError: a hook with ``on_error: fail`` failed (the run fails with it).
        """
        return self._loop.run(self.aafter_agent(state, runtime))

    async def aafter_agent(
        self, state: AgentState[Any], runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        """Raises:
        HookFailedError: a hook with ``on_error: fail`` failed (the run fails with it).
        """
        with contained("langchain", "after_agent"):
            messages = _to_history(state["messages"])[0].messages
            facts = completion_facts(*turn_counts(messages))
            await run_completion(self.runner, messages, self.request(runtime), facts)
        return None

    def __repr__(self) -> str:
        return f"AgentHooksMiddleware({self.runner!r})"


def _anthropic_thinking(request: ModelRequest[Any]) -> bool:
    """Whether the request goes to ``ChatAnthropic`` with ``thinking`` set to anything but
    ``disabled``, as ``ChatAnthropic`` resolves it (its field, then the call's settings, then
    ``model_kwargs``). A model that thinks without being told (Claude 5 models) is not seen."""
    model = request.model
    if _ChatAnthropic is None or not isinstance(model, _ChatAnthropic):
        return False
    for thinking in (
        model.thinking,
        request.model_settings.get("thinking"),
        model.model_kwargs.get("thinking"),
    ):
        if isinstance(thinking, Mapping):
            return thinking.get("type") != "disabled"
    return False


def _in_text_form(request: ModelRequest[Any]) -> list[BaseMessage] | None:
    """``request.messages`` with the pairs in its current tool cycle written as text, when the
    model thinks; ``None`` when there is nothing to change (or it could not be done)."""
    with contained("langchain", "wrap_model_call"):
        if not _anthropic_thinking(request):
            return None
        history, read_as_text = _to_history(request.messages)
        text_form = text_form_calls(
            history.messages,
            history.messages,
            read_as_text=read_as_text,
            thinking=True,
            afresh=True,
        )
        if not text_form - read_as_text:
            return None
        # copies, so the pairs are built anew, in their text form
        messages = [
            message.model_copy() if _call_id(message) in text_form else message
            for message in history.messages
        ]
        return _rebuilt(history, messages, text_form)
    return None


def _kept(converted: list[BaseMessage], response: ModelResponse[Any]) -> ExtendedModelResponse[Any]:
    """``response``, and the state rewritten to the history the model was given."""
    update = [RemoveMessage(id=REMOVE_ALL_MESSAGES), *converted, *response.result]
    return ExtendedModelResponse(
        model_response=response, command=Command(update={"messages": update})
    )


def _call_id(message: Message) -> str | None:
    if message.role is Role.TOOL:
        return message.tool_call_id
    calls = message.tool_calls or []
    return calls[0].id if len(calls) == 1 else None


def _to_history(messages: Sequence[BaseMessage]) -> tuple[History[Any], frozenset[str]]:
    """The hooks' history, and the call ids read from text-form blocks (a human message's
    blocks become its pairs' call and result messages, after what else it says)."""
    builder: HistoryBuilder[Any] = HistoryBuilder()
    read_as_text: set[str] = set()
    for native in messages:
        pairs = _text_pairs(native)
        if not pairs:
            builder.add(_message(native), native)
            continue
        assert isinstance(native, HumanMessage)
        own = [block for block in native.content if not any(block is b for b, _ in pairs)]
        if own:
            builder.add(Message(role=Role.USER, content=own), native)
        for block, (call, result) in pairs:
            builder.extend(call, [])  # the block stands for both; it goes back with the result
            builder.add(result, _Block(native, block))
            read_as_text.add(result.tool_call_id or "")
    return builder.build(), frozenset(read_as_text)


def _text_pairs(native: BaseMessage) -> list[tuple[Any, tuple[Message, Message]]]:
    """The text-form blocks of a human message, each with the pair it stands for."""
    if not isinstance(native, HumanMessage) or not isinstance(native.content, list):
        return []
    kept = _kept_arguments(native)
    found = []
    for block in native.content:
        if isinstance(block, Mapping) and block.get("type") == "text":
            text = block.get("text")
            pair = pair_from_text(text) if isinstance(text, str) else None
            if pair is not None and isinstance(text, str):
                arguments = kept.get(pair[1].tool_call_id or "")
                found.append(
                    (block, pair if arguments is None else pair_from_text(text, arguments))
                )
    return [(block, pair) for block, pair in found if pair is not None]


def _kept_arguments(native: BaseMessage) -> dict[str, str]:
    kept = native.additional_kwargs.get(ARGUMENTS_KEY)
    if not isinstance(kept, Mapping):
        return {}
    return {key: value for key, value in kept.items() if isinstance(value, str)}


def _rebuilt(
    history: History[Any], messages: Sequence[Message], text_form: frozenset[str]
) -> list[BaseMessage] | None:
    """The native history of ``messages``; ``None`` when nothing changed. The pairs of
    ``text_form`` join the human message before them as text blocks (:func:`_assembled`)."""
    arguments = text_form_arguments(messages, text_form)

    def build(message: Message, names: Mapping[str, str]) -> list[Any]:
        return _native_message(message, names, arguments)

    units = rebuilt(history, messages, build)
    return None if units is None else _assembled(units)


def _assembled(units: Sequence[Any]) -> list[BaseMessage]:
    """Native messages from units: each human message with the text-form blocks that follow it
    (a new human message holds those that follow anything else)."""
    out: list[BaseMessage] = []
    group: _Human | None = None
    for unit in units:
        if isinstance(unit, _Block | _Joined):
            owner = unit.owner if isinstance(unit, _Block) else None
            if group is None or (owner is not None and owner is not group.owner):
                if group is not None:
                    out.append(group.message())
                group = _Human(owner)
            group.add(unit)
            continue
        if group is not None:
            out.append(group.message())
            group = None
        if isinstance(unit, HumanMessage):
            group = _Human(unit)
        else:
            out.append(unit)
    if group is not None:
        out.append(group.message())
    return out


class _Human:
    """A human message put back together: its own content, then the text-form blocks that
    follow it (those read from it that are still there, and those the hooks wrote). One whose
    content comes out the same is the very object it was."""

    def __init__(self, owner: HumanMessage | None) -> None:
        self.owner = owner
        self.content: list[Any] | str = []
        if owner is not None:
            pairs = [block for block, _ in _text_pairs(owner)]
            own = owner.content
            self.content = (
                own if isinstance(own, str) else [b for b in own if all(b is not p for p in pairs)]
            )
        self.added: dict[str, str] = {}

    def add(self, unit: _Block | _Joined) -> None:
        if isinstance(self.content, str):
            self.content = [{"type": "text", "text": self.content}]
        self.content = [*self.content, unit.block]
        if isinstance(unit, _Joined):
            self.added[unit.call_id] = unit.arguments

    def message(self) -> HumanMessage:
        content, owner = self.content, self.owner
        if owner is not None and _same(content, owner.content):
            return owner
        present = {
            pair[1].tool_call_id
            for block in content
            if isinstance(block, Mapping)
            and isinstance(block.get("text"), str)
            and (pair := pair_from_text(block["text"])) is not None
        }
        kept = _kept_arguments(owner) if owner is not None else {}
        arguments = {k: v for k, v in {**kept, **self.added}.items() if k in present}
        extra = {
            key: value
            for key, value in (owner.additional_kwargs if owner is not None else {}).items()
            if key != ARGUMENTS_KEY
        }
        if arguments:
            extra[ARGUMENTS_KEY] = arguments
        if owner is None:
            return HumanMessage(content=content, additional_kwargs=extra)
        return owner.model_copy(update={"content": content, "additional_kwargs": extra})


def _same(content: list[Any] | str, original: Any) -> bool:
    if isinstance(content, str):
        return content is original
    return (
        isinstance(original, list)
        and len(content) == len(original)
        and all(a is b for a, b in zip(content, original, strict=True))
    )


def _message(native: BaseMessage) -> Message | None:
    content = native.content
    if isinstance(native, HumanMessage):
        return Message(role=Role.USER, content=content)
    if isinstance(native, SystemMessage):
        return Message(role=Role.SYSTEM, content=content)
    if isinstance(native, AIMessage):
        calls = [
            ToolCall(
                id=call["id"] or "",
                function=FunctionCall(name=call["name"], arguments=json.dumps(call["args"])),
            )
            for call in native.tool_calls
        ]
        if calls:
            return Message(role=Role.ASSISTANT, content=content, tool_calls=calls)
        return Message(role=Role.ASSISTANT, content=content)
    if isinstance(native, ToolMessage):
        return Message(role=Role.TOOL, content=content, tool_call_id=native.tool_call_id)
    if isinstance(native, FunctionMessage):
        return Message(role=Role.FUNCTION, content=content, name=native.name)
    if isinstance(native, ChatMessage) and native.role in _ROLES:
        return Message(role=_ROLES[native.role], content=content)
    return None  # a kind the hooks cannot read: kept in place, never shown to them


def _native_message(
    message: Message, names: Mapping[str, str], text_form: Mapping[str, str]
) -> list[Any]:
    """A message the hooks wrote: a pair's call or answer (or a message they refreshed).

    A pair in ``text_form`` (call id to its arguments) is one :class:`_Joined` block, made from
    its answer; its call message has no native unit.
    """
    if message.tool_calls and all(call.id in text_form for call in message.tool_calls):
        return []
    content = message.content if message.content is not None else ""
    if message.role is Role.TOOL:
        call_id = message.tool_call_id or ""
        if call_id in text_form:
            block = {"type": "text", "text": text_of_pair(message, names.get(call_id, ""))}
            return [_Joined(block, call_id, text_form[call_id])]
        return [ToolMessage(content=content, tool_call_id=call_id, name=names.get(call_id))]
    if message.role is Role.ASSISTANT:
        calls = [
            {
                "name": call.function.name,
                "args": json.loads(call.function.arguments or "{}"),
                "id": call.id,
                "type": "tool_call",
            }
            for call in message.tool_calls or []
            if call.function is not None
        ]
        return [AIMessage(content=content, tool_calls=calls)]
    if message.role is Role.SYSTEM:
        return [SystemMessage(content=content)]
    return [HumanMessage(content=content)]
