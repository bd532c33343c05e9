"""Hooks inside the LiteLLM proxy: a ``CustomLogger`` callback (SPEC section 14).

In the proxy's config::

    litellm_settings:
      callbacks: agent_hooks.integrations.litellm.handler

with ``AGENT_HOOKS_MANIFEST`` (the manifest's path), optionally ``AGENT_HOOKS_STATE`` (a store
URL, ``sqlite:///PATH`` or ``redis://...``) and ``ENABLE_PREVIEW_FEATURES=true`` in the proxy's
environment; or, in Python, ``AgentHooksCallback(runner, store=store)``.

``async_pre_call_hook`` runs the ``on_request_start`` hooks on ``data["messages"]`` of
``completion``/``acompletion`` calls (other call types pass through untouched). Clients send
whole histories and never see the hooks' pairs, so the pairs are kept in the store, keyed by the
caller's key (hashed) and ``x-litellm-session-id``, and put back after the first user message on
the next call; pairs a client sends are removed first and never stored. After a successful
answer (plain or streamed) the pairs are saved and, when the answer is final (no tool call),
the ``on_completion`` hooks run with it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from litellm.integrations.custom_logger import CustomLogger
from litellm.proxy._types import UserAPIKeyAuth

from agent_hooks import HookRunner, create_injector
from agent_hooks.config import ApplicationConfig
from agent_hooks.errors import UsageError
from agent_hooks.integrations._history import History, HistoryBuilder, openai_message, rebuilt
from agent_hooks.integrations._seam import (
    completion_facts,
    contained,
    field_of,
    present,
    run_completion,
)
from agent_hooks.integrations._stored import RunPairs, keeper_for, run_with_pairs
from agent_hooks.messages import Message, Role
from agent_hooks.state import ConversationStore, open_store

__all__ = ["AgentHooksCallback", "handler"]

RequestFn: TypeAlias = Callable[[UserAPIKeyAuth, Mapping[str, Any]], Mapping[str, Any] | None]

MANIFEST_VARIABLE = "AGENT_HOOKS_MANIFEST"
STATE_VARIABLE = "AGENT_HOOKS_STATE"
_CALL_TYPES = frozenset({"completion", "acompletion"})
MAX_OPEN_CALLS = 4096
"""Calls between their pre-call and post-call hooks kept at once (a call that failed upstream
never reaches its post-call hook, so the oldest go when there are more)."""


def _default_request(key: UserAPIKeyAuth, data: Mapping[str, Any]) -> dict[str, Any]:
    """The session id (``x-litellm-session-id``) and the key's user, else the body's ``user``."""
    return present(
        conversation_id=data.get("litellm_session_id"),
        user_id=field_of(key, "user_id") or data.get("user"),
    )


@dataclass(frozen=True)
class _Call:
    """What the post-call hook needs from the pre-call hook of the same call."""

    history: list[Message]
    request: Mapping[str, Any] | None
    save: Callable[[], Awaitable[None]]


class AgentHooksCallback(CustomLogger):
    """Runs a manifest's hooks around the proxy's chat completions."""

    def __init__(
        self,
        runner: HookRunner,
        *,
        store: ConversationStore | None = None,
        request: RequestFn | None = None,
    ) -> None:
        super().__init__()
        self.runner = runner
        self.store = store
        self.request = request or _default_request
        self._calls: dict[str, _Call] = {}

    @classmethod
    def from_env(cls) -> AgentHooksCallback:
        """The callback for ``$AGENT_HOOKS_MANIFEST``, with ``$AGENT_HOOKS_STATE`` when set.

        The app lives as long as the proxy process: its sessions are closed when it exits.

        Raises:
            UsageError: ``AGENT_HOOKS_MANIFEST`` is not set.
            ConfigError: the manifest does not validate.
            ValueError: ``AGENT_HOOKS_STATE`` names no store we have.
        """
        path = os.environ.get(MANIFEST_VARIABLE, "").strip()
        if not path:
            raise UsageError(
                f"{MANIFEST_VARIABLE} is not set: give it the path of the manifest whose hooks"
                " the LiteLLM proxy runs"
            )
        runner = create_injector(ApplicationConfig.from_file(path)).get(HookRunner)
        state = os.environ.get(STATE_VARIABLE, "").strip()
        return cls(runner, store=open_store(state) if state else None)

    async def async_pre_call_hook(
        self, user_api_key_dict: UserAPIKeyAuth, cache: Any, data: dict[str, Any], call_type: Any
    ) -> dict[str, Any]:
        """Raises:
        HookFailedError: a hook with ``on_error: fail`` failed (the proxy answers with an error).
        """
        if call_type not in _CALL_TYPES or not isinstance(data.get("messages"), list):
            return data
        with contained("litellm", "async_pre_call_hook"):
            request = self.request(user_api_key_dict, data)
            tenant = user_api_key_dict.token or user_api_key_dict.api_key
            keeper = keeper_for(self.store, request, RunPairs(), tenant=tenant, needs_tenant=True)
            history = _to_history(data["messages"])
            run, save = await run_with_pairs(
                self.runner, history.messages, keeper, request, from_client=True
            )
            self._remember(data, _Call(run.messages, request, save))
            messages = rebuilt(history, run.messages, _native_message)
            if messages is not None:
                data["messages"] = messages
        return data

    async def async_post_call_success_hook(
        self, data: dict[str, Any], user_api_key_dict: UserAPIKeyAuth, response: Any
    ) -> Any:
        """Raises:
        HookFailedError: an ``on_completion`` hook with ``on_error: fail`` failed.
        """
        call = self._calls.pop(str(data.get("litellm_call_id")), None)
        if call is not None:
            choices = field_of(response, "choices") or []
            answer = field_of(choices[0], "message") if choices else None
            await self._finish(call, _answer_message(answer))
        return response

    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict: UserAPIKeyAuth, response: Any, request_data: dict[str, Any]
    ) -> AsyncGenerator[Any, None]:
        """Passes the chunks on as they come; the answer they spell out is the completion's.

        Raises:
            HookFailedError: an ``on_completion`` hook with ``on_error: fail`` failed.
        """
        call = self._calls.pop(str(request_data.get("litellm_call_id")), None)
        text: list[str] = []
        tool_call = False
        async for chunk in response:
            for choice in field_of(chunk, "choices") or []:
                delta = field_of(choice, "delta")
                if field_of(choice, "index") not in (0, None) or delta is None:
                    continue
                tool_call = tool_call or bool(field_of(delta, "tool_calls"))
                if isinstance(content := field_of(delta, "content"), str):
                    text.append(content)
            yield chunk
        if call is not None:
            answer = None if tool_call else Message(role=Role.ASSISTANT, content="".join(text))
            await self._finish(call, answer)

    async def _finish(self, call: _Call, answer: Message | None) -> None:
        """Save the turn's pairs; with a final answer, run the ``on_completion`` hooks."""
        with contained("litellm", "post_call"):
            await call.save()
            if answer is not None:
                facts = completion_facts(1, 0)
                await run_completion(self.runner, [*call.history, answer], call.request, facts)

    def _remember(self, data: Mapping[str, Any], call: _Call) -> None:
        self._calls[str(data.get("litellm_call_id"))] = call
        while len(self._calls) > MAX_OPEN_CALLS:
            del self._calls[next(iter(self._calls))]

    def __repr__(self) -> str:
        return f"AgentHooksCallback({self.runner!r}, store={self.store!r})"


def _to_history(messages: Sequence[Any]) -> History[Any]:
    builder: HistoryBuilder[Any] = HistoryBuilder()
    for message in messages:
        builder.add(openai_message(message), message)
    return builder.build()


def _native_message(message: Message, names: Mapping[str, str]) -> list[dict[str, Any]]:
    return [message.to_openai()]


def _answer_message(message: Any) -> Message | None:
    """The final answer of a plain response; ``None`` for a tool call or no message."""
    if message is None or field_of(message, "tool_calls") or field_of(message, "function_call"):
        return None
    content = field_of(message, "content")
    return Message(role=Role.ASSISTANT, content=content if isinstance(content, str) else "")


handler: AgentHooksCallback
"""The callback a proxy config names (``callbacks: agent_hooks.integrations.litellm.handler``):
:meth:`AgentHooksCallback.from_env`, built on first access by the module's ``__getattr__``."""

_handler: AgentHooksCallback | None = None


def __getattr__(name: str) -> Any:
    """``handler``: :meth:`AgentHooksCallback.from_env`, built on first access."""
    global _handler
    if name != "handler":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _handler is None:
        _handler = AgentHooksCallback.from_env()
    return _handler
