"""Hooks inside DIAL applications: a wrapping ``ChatCompletion`` (SPEC section 14).

::

    app = DIALApp()
    app.add_chat_completion("assistant", AgentHooksChatCompletion(inner, runner, store=store))

``chat_completion`` runs the ``on_request_start`` hooks on ``request.messages``, calls ``inner``
with the new history, then runs the ``on_completion`` hooks with the content ``inner`` appended to
choice 0. DIAL clients send whole histories and never see the hooks' pairs, so the pairs are kept
in the store, keyed by the request's API key (hashed) and ``X-Conversation-Id``, and put back
after the first user message on the next request; pairs a client sends are removed first and
never stored. (The SDK's models are pydantic v1 models by default, hence ``dict`` and
``parse_obj``.) ``configuration``, ``tokenize``, ``truncate_prompt`` and ``rate_response`` are
``inner``'s. A hook with ``on_error: fail`` that fails is a 424 ``hook_error``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, TypeAlias

from aidial_sdk.chat_completion import ChatCompletion, Choice, Request, Response
from aidial_sdk.chat_completion import Message as DialMessage
from aidial_sdk.deployment.configuration import ConfigurationRequest, ConfigurationResponse
from aidial_sdk.deployment.rate import RateRequest
from aidial_sdk.deployment.tokenize import TokenizeRequest, TokenizeResponse
from aidial_sdk.deployment.truncate_prompt import TruncatePromptRequest, TruncatePromptResponse
from aidial_sdk.exceptions import HTTPException

from agent_hooks import HookFailedError, HookRunner
from agent_hooks.integrations._history import History, HistoryBuilder, openai_message, rebuilt
from agent_hooks.integrations._seam import completion_facts, contained, present, run_completion
from agent_hooks.integrations._stored import RunPairs, keeper_for, run_with_pairs
from agent_hooks.messages import Message, Role
from agent_hooks.state import ConversationStore

__all__ = ["AgentHooksChatCompletion"]

RequestFn: TypeAlias = Callable[[Request], Mapping[str, Any] | None]


def _default_request(request: Request) -> dict[str, Any]:
    return present(conversation_id=request.conversation_id, user_id=request.user)


class AgentHooksChatCompletion(ChatCompletion):
    """``inner`` with a manifest's hooks around each chat completion."""

    def __init__(
        self,
        inner: ChatCompletion,
        runner: HookRunner,
        *,
        store: ConversationStore | None = None,
        request: RequestFn | None = None,
    ) -> None:
        self.inner = inner
        self.runner = runner
        self.store = store
        self.request = request or _default_request

    async def chat_completion(self, request: Request, response: Response) -> None:
        """Raises:
        HTTPException: 424 ``hook_error``, a hook with ``on_error: fail`` failed.
        """
        context = None
        history: list[Message] = []
        save = None
        with _as_dial_error(), contained("dial", "chat_completion"):
            context = self.request(request)
            keeper = keeper_for(
                self.store, context, RunPairs(), tenant=request.api_key, needs_tenant=True
            )
            converted = _to_history(request.messages)
            run, save = await run_with_pairs(
                self.runner, converted.messages, keeper, context, from_client=True
            )
            history = run.messages
            messages = rebuilt(converted, run.messages, _native_message)
            if messages is not None:
                request.messages = messages  # this request's own object; a copy costs a deep copy
        answer = _Answer(response)
        await self.inner.chat_completion(request, response)
        with _as_dial_error(), contained("dial", "completion"):
            if save is not None:
                await save()
            final = Message(role=Role.ASSISTANT, content="".join(answer.parts))
            facts = completion_facts(1, 0)
            await run_completion(self.runner, [*history, final], context, facts)

    async def rate_response(self, request: RateRequest) -> None:
        await self.inner.rate_response(request)

    async def tokenize(self, request: TokenizeRequest) -> TokenizeResponse:
        return await self.inner.tokenize(request)

    async def truncate_prompt(self, request: TruncatePromptRequest) -> TruncatePromptResponse:
        return await self.inner.truncate_prompt(request)

    async def configuration(self, request: ConfigurationRequest) -> ConfigurationResponse | dict:  # type: ignore[type-arg]
        return await self.inner.configuration(request)

    def __repr__(self) -> str:
        return f"AgentHooksChatCompletion({self.inner!r}, {self.runner!r})"


class _Answer:
    """Collects the content ``inner`` appends to choice 0 (the SDK has no getter for it)."""

    def __init__(self, response: Response) -> None:
        self.parts: list[str] = []
        create = response.create_choice

        def create_choice() -> Choice:
            choice = create()
            if choice.index == 0:
                append = choice.append_content

                def append_content(content: str) -> None:
                    append(content)
                    self.parts.append(content)

                choice.append_content = append_content  # type: ignore[method-assign]
            return choice

        response.create_choice = create_choice  # type: ignore[method-assign]


@contextmanager
def _as_dial_error() -> Iterator[None]:
    """Turns :class:`HookFailedError` into DIAL's 424 ``hook_error``."""
    try:
        yield
    except HookFailedError as exc:
        raise HTTPException(
            str(exc), status_code=424, type="hook_error", code="hook_failed"
        ) from exc


def _to_history(messages: Sequence[DialMessage]) -> History[DialMessage]:
    builder: HistoryBuilder[DialMessage] = HistoryBuilder()
    for message in messages:
        builder.add(openai_message(message.dict(exclude_unset=True)), message)
    return builder.build()


def _native_message(message: Message, names: Mapping[str, str]) -> list[DialMessage]:
    return [DialMessage.parse_obj(message.to_openai())]
