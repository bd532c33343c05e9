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
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain_core.messages import (
    AIMessage,
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
from agent_hooks.messages import FunctionCall, Message, Role, ToolCall

__all__ = ["AgentHooksMiddleware"]

RequestFn: TypeAlias = Callable[[Runtime[Any]], Mapping[str, Any] | None]

_ROLES = {role.value: role for role in Role}


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
            history = _to_history(state["messages"])
            run = await self.runner.run(
                HookEvent.ON_REQUEST_START, history.messages, request=self.request(runtime)
            )
            changed = rebuilt(history, run.messages, _native_message)
            if changed is not None:
                return {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES), *changed]}
        return None

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
            messages = _to_history(state["messages"]).messages
            facts = completion_facts(*turn_counts(messages))
            await run_completion(self.runner, messages, self.request(runtime), facts)
        return None

    def __repr__(self) -> str:
        return f"AgentHooksMiddleware({self.runner!r})"


def _to_history(messages: Sequence[BaseMessage]) -> History[BaseMessage]:
    builder: HistoryBuilder[BaseMessage] = HistoryBuilder()
    for native in messages:
        builder.add(_message(native), native)
    return builder.build()


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


def _native_message(message: Message, names: Mapping[str, str]) -> list[BaseMessage]:
    """A message the hooks wrote: a pair's call or answer (or a message they refreshed)."""
    content = message.content if message.content is not None else ""
    if message.role is Role.TOOL:
        call_id = message.tool_call_id or ""
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
