"""Hooks inside the OpenAI Agents SDK: a model-input filter and run hooks (SPEC section 14).

::

    hooks = AgentHooks(runner, store=store)
    result = await Runner.run(agent, input, context=ctx,
                              run_config=RunConfig(call_model_input_filter=hooks.input_filter),
                              hooks=hooks.run_hooks)

``input_filter`` runs the ``on_request_start`` hooks before every model call of a run, on the
Responses items the model is about to get; pairs are a ``function_call`` item and its
``function_call_output`` (no ``id``: the API wants ``fc``-prefixed item ids). The SDK keeps
neither filtered items in its sessions nor in ``result.to_input_list()``, so the pairs are kept
here: in the store for the run's ``conversation_id``, else in memory for the run (keyed by the
``context=`` object, the one thing every model call of a run shares; a run without a context
keeps nothing between its model calls), and put back after the first user message on every model
call. ``run_hooks.on_agent_end`` runs the
``on_completion`` hooks with the final output (its JSON when it is not a ``str``).

Items the hooks cannot read (reasoning, hosted tool calls, files) stay where they were, in front
of the item that follows them; items the hooks do not touch are the very dicts the SDK gave.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from agents import Agent, RunContextWrapper, RunHooks
from agents.run_config import CallModelData, ModelInputData
from pydantic_core import to_jsonable_python

from agent_hooks import HookRunner
from agent_hooks.integrations._history import History, HistoryBuilder, rebuilt
from agent_hooks.integrations._seam import (
    completion_facts,
    contained,
    field_of,
    present,
    run_completion,
    turn_counts,
)
from agent_hooks.integrations._stored import RunPairs, keeper_for, run_with_pairs
from agent_hooks.messages import FunctionCall, Message, Role, ToolCall
from agent_hooks.state import ConversationStore

__all__ = ["AgentHooks"]

RequestFn: TypeAlias = Callable[[Any], Mapping[str, Any] | None]

_ROLES = {
    "user": Role.USER,
    "system": Role.SYSTEM,
    "developer": Role.DEVELOPER,
    "assistant": Role.ASSISTANT,
}
_TEXT_PARTS = frozenset({"input_text", "output_text", "text"})

MAX_OPEN_RUNS = 1024
"""Runs whose state is kept at once; a run that failed never reaches ``on_agent_end``, so the
oldest state goes when there are more."""


def _default_request(context: Any) -> dict[str, Any]:
    """``conversation_id`` and ``user_id`` of the ``Runner.run(context=...)`` object."""
    return present(
        conversation_id=field_of(context, "conversation_id"),
        user_id=field_of(context, "user_id"),
    )


@dataclass
class _Run:
    """What one run of the SDK needs between its model calls and its end."""

    context: Any
    pairs: RunPairs = field(default_factory=RunPairs)
    history: list[Message] = field(default_factory=list)
    """The last model call's history, as the hooks left it: ``on_completion`` adds the answer."""


class AgentHooks:
    """The SDK's two seams for one app: ``input_filter`` and ``run_hooks``.

    One instance serves every run; a run's state is keyed by its ``context=`` object (each
    model call of a run runs in a task of its own, so a context variable would not outlive it).
    """

    def __init__(
        self,
        runner: HookRunner,
        *,
        store: ConversationStore | None = None,
        request: RequestFn | None = None,
    ) -> None:
        self.runner = runner
        self.store = store
        self.request = request or _default_request
        self.run_hooks: RunHooks[Any] = _CompletionHooks(self)
        self._runs: dict[int, _Run] = {}

    async def input_filter(self, data: CallModelData[Any]) -> ModelInputData:
        """``RunConfig(call_model_input_filter=...)``: the hooks before each model call.

        Raises:
            HookFailedError: a hook with ``on_error: fail`` failed (the run fails with it).
        """
        with contained("openai_agents", "call_model_input_filter"):
            state = self._state(data.context)
            request = self.request(data.context)
            keeper = keeper_for(self.store, request, state.pairs)
            history = _to_history(data.model_data.input)
            run, save = await run_with_pairs(
                self.runner, history.messages, keeper, request, from_client=False
            )
            state.history = run.messages
            await save()
            items = rebuilt(history, run.messages, _native_items)
            if items is not None:
                return ModelInputData(input=items, instructions=data.model_data.instructions)
        return data.model_data

    async def complete(self, wrapper: RunContextWrapper[Any], output: Any) -> None:
        """The ``on_completion`` hooks after the run's final output; ends the run's state.

        Raises:
            HookFailedError: a hook with ``on_error: fail`` failed (the run fails with it).
        """
        state = self._runs.pop(id(wrapper.context), None) if wrapper.context is not None else None
        with contained("openai_agents", "on_agent_end"):
            history = list(state.history) if state is not None else []
            answer = output if isinstance(output, str) else _json(output)
            history.append(Message(role=Role.ASSISTANT, content=answer))
            _, tool_results = turn_counts(history)
            facts = completion_facts(wrapper.usage.requests, tool_results)
            await run_completion(self.runner, history, self.request(wrapper.context), facts)

    def _state(self, context: Any) -> _Run:
        """The run's state; a fresh one for every model call of a run without a context."""
        if context is None:
            return _Run(None)
        state = self._runs.get(id(context))
        if state is None or state.context is not context:
            state = self._runs[id(context)] = _Run(context)
            while len(self._runs) > MAX_OPEN_RUNS:
                del self._runs[next(iter(self._runs))]
        return state

    def __repr__(self) -> str:
        return f"AgentHooks({self.runner!r}, store={self.store!r})"


class _CompletionHooks(RunHooks[Any]):
    """The ``RunHooks`` whose ``on_agent_end`` runs the ``on_completion`` hooks."""

    def __init__(self, hooks: AgentHooks) -> None:
        self._hooks = hooks

    async def on_agent_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], output: Any
    ) -> None:
        await self._hooks.complete(context, output)


def _to_history(items: Sequence[Any]) -> History[Any]:
    builder: HistoryBuilder[Any] = HistoryBuilder()
    for item in items:
        builder.add(_message(item) if isinstance(item, Mapping) else None, item)
    return builder.build()


def _message(item: Mapping[str, Any]) -> Message | None:
    kind = item.get("type", "message" if "role" in item else None)
    if kind == "function_call":
        call = FunctionCall(name=item["name"], arguments=item.get("arguments") or "{}")
        return Message(
            role=Role.ASSISTANT, tool_calls=[ToolCall(id=item["call_id"], function=call)]
        )
    if kind == "function_call_output":
        output = item.get("output")
        return Message(role=Role.TOOL, tool_call_id=item["call_id"], content=_text(output))
    if kind == "message":
        role = (
            Role.ASSISTANT if item.get("role") == "assistant" else _ROLES.get(item.get("role", ""))
        )
        if role is not None:
            return Message(role=role, content=_text(item.get("content")))
    return None


def _text(content: Any) -> str:
    """A message's or an output's text: a string, or its text parts joined by newlines."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and part.get("type") in _TEXT_PARTS
        )
    return "" if content is None else json.dumps(content)


def _native_items(message: Message, names: Mapping[str, str]) -> list[dict[str, Any]]:
    """A message the hooks wrote as Responses items (SPEC 13's pair shape)."""
    if message.role is Role.TOOL:
        output = message.content if isinstance(message.content, str) else _text(message.content)
        return [{"type": "function_call_output", "call_id": message.tool_call_id, "output": output}]
    items: list[dict[str, Any]] = []
    if message.content:
        items.append({"role": message.role.value, "content": _text(message.content)})
    for call in message.tool_calls or []:
        if call.function is not None:
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.id,
                    "name": call.function.name,
                    "arguments": call.function.arguments,
                }
            )
    return items


def _json(output: Any) -> str:
    return json.dumps(to_jsonable_python(output), ensure_ascii=False)
