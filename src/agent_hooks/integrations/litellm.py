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
the next call; pairs a client sends are removed first and never stored, also from messages the
hooks cannot read. After a successful answer (plain or streamed) the pairs are saved and, when
the answer is final (no tool call), the ``on_completion`` hooks run with it.

The pre-call and post-call hooks of one call meet by the caller's key and ``litellm_call_id``
together (:class:`_OpenCalls`): the call id is the client's to choose (``x-litellm-call-id``).
"""

from __future__ import annotations

import logging
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
from agent_hooks.state._conversation import without_client_pairs

__all__ = ["AgentHooksCallback", "handler"]

RequestFn: TypeAlias = Callable[[UserAPIKeyAuth, Mapping[str, Any]], Mapping[str, Any] | None]

MANIFEST_VARIABLE = "AGENT_HOOKS_MANIFEST"
STATE_VARIABLE = "AGENT_HOOKS_STATE"
_CALL_TYPES = frozenset({"completion", "acompletion"})
MAX_OPEN_CALLS = 1024
"""Calls of one caller kept between their pre-call and post-call hooks at once (a call that
failed upstream never reaches its post-call hook, so that caller's oldest go when there are
more); other callers' calls are never touched."""

logger = logging.getLogger("agent_hooks.integrations")


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


class _OpenCalls:
    """Calls between their pre-call and post-call hooks, by caller and ``litellm_call_id``.

    A client picks its call's id (``x-litellm-call-id``), so an id names a call only together
    with the caller: another caller naming the same id neither completes nor replaces it (which
    would hand it the first caller's history), and each caller's calls are bounded on their
    own, so one caller's never-ending calls push out only its own. Callers without a key share
    one bound: the proxy cannot tell them apart either.
    """

    def __init__(self) -> None:
        self._by_caller: dict[str | None, dict[str, _Call]] = {}

    def add(self, caller: str | None, call_id: str, call: _Call) -> None:
        calls = self._by_caller.setdefault(caller, {})
        calls.pop(call_id, None)  # an id used again is that caller's newest call
        calls[call_id] = call
        if len(calls) > MAX_OPEN_CALLS:
            del calls[next(iter(calls))]
            logger.info(
                "framework=litellm outcome=oldest_call_dropped reason=over %d calls of one"
                " caller open (its completion hooks will not run)",
                MAX_OPEN_CALLS,
            )

    def pop(self, caller: str | None, call_id: str) -> _Call | None:
        calls = self._by_caller.get(caller)
        if calls is None:
            return None
        call = calls.pop(call_id, None)
        if not calls:
            del self._by_caller[caller]
        return call


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
        self._calls = _OpenCalls()

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
            tenant = _tenant(user_api_key_dict)
            keeper = keeper_for(self.store, request, RunPairs(), tenant=tenant, needs_tenant=True)
            history, unread_forged = _to_history(data["messages"])
            run, save = await run_with_pairs(
                self.runner, history.messages, keeper, request, from_client=True
            )
            self._calls.add(tenant, _call_id(data), _Call(run.messages, request, save))
            messages = rebuilt(history, run.messages, _native_message)
            if messages is None and unread_forged:
                messages = history.native()
            if messages is not None:
                data["messages"] = messages
        return data

    async def async_post_call_success_hook(
        self, data: dict[str, Any], user_api_key_dict: UserAPIKeyAuth, response: Any
    ) -> Any:
        """Raises:
        HookFailedError: an ``on_completion`` hook with ``on_error: fail`` failed.
        """
        call = self._calls.pop(_tenant(user_api_key_dict), _call_id(data))
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
        call = self._calls.pop(_tenant(user_api_key_dict), _call_id(request_data))
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

    def __repr__(self) -> str:
        return f"AgentHooksCallback({self.runner!r}, store={self.store!r})"


def _tenant(key: UserAPIKeyAuth | None) -> str | None:
    """The caller: its key's hash (``token``), else the key itself; ``None`` without a key."""
    tenant = field_of(key, "token") or field_of(key, "api_key")
    return tenant if isinstance(tenant, str) else None


def _call_id(data: Mapping[str, Any]) -> str:
    return str(data.get("litellm_call_id"))


def _to_history(messages: Sequence[Any]) -> tuple[History[Any], int]:
    """The client's messages as a history, and how many synthetic ids were removed from the
    messages that do not validate.

    Such a message stays in place, unread by the hooks, unless it carries a synthetic id: our
    pairs never reach clients, so it is forged or replayed and goes as a forged pair does (the
    tool message, or its synthetic tool calls), however malformed the rest of it (SPEC 16).
    """
    builder: HistoryBuilder[Any] = HistoryBuilder()
    forged = 0
    for message in messages:
        read = openai_message(message)
        units = [message]
        if read is None:
            units, removed = without_client_pairs(units)
            forged += removed
        for unit in units:  # none when a forged message went whole
            builder.add(read, unit)
    if forged:
        logger.warning(
            "removed %d synthetic call id(s) sent by the client in messages the hooks cannot read",
            forged,
        )
    return builder.build(), forged


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
