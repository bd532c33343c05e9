"""One proxied request in any dialect: state in, hooks, upstream, state out, completion hooks.

The steps are separate pieces (the dialect that reads and writes bodies, conversation state, the
hook runner, the upstream client); this module only orders them, once for every route, and turns
their failures into answers in the dialect's own error shape. The HTTP routes in
:mod:`agent_hooks.serve._app` hand each request to :meth:`HooksProxy.handle` with its dialect.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from agent_hooks import HookEvent, HookFailedError, HookRunner, HookRunRecord
from agent_hooks.serve._conversation import (
    conversation_id,
    reapply_pairs,
    synthetic_pairs,
)
from agent_hooks.serve._dialects import (
    CHAT,
    Dialect,
    InvalidRequest,
    ParsedRequest,
    RenderContext,
)
from agent_hooks.serve._upstream import UpstreamClient, UpstreamError, passthrough_headers
from agent_hooks.state import ConversationStore

__all__ = ["HooksProxy", "error_response"]

logger = logging.getLogger("agent_hooks.serve")

_COMPLETION_FACTS = {"iteration_count": 1, "total_tool_calls": 0}
"""The proxy sees one model call per request and runs none of the model's tools."""


def error_response(
    status: int, message: str, *, type_: str, code: str | None, dialect: Dialect = CHAT
) -> JSONResponse:
    """An error in the dialect's shape, so every client raises its matching exception."""
    return JSONResponse(
        dialect.error_body(status, message, type_=type_, code=code), status_code=status
    )


class HooksProxy:
    """Runs the hooks around one upstream call per request; shared by all requests."""

    def __init__(
        self,
        runner: HookRunner,
        store: ConversationStore,
        upstream: UpstreamClient,
        *,
        has_completion_hooks: bool,
    ) -> None:
        self._runner = runner
        self._store = store
        self._upstream = upstream
        self._has_completion_hooks = has_completion_hooks

    async def handle(
        self, request: Request, dialect: Dialect, *, deployment: str | None = None
    ) -> Response:
        try:
            parsed = dialect.parse(await request.body(), deployment=deployment)
        except InvalidRequest as exc:
            return error_response(
                400, str(exc), type_="invalid_request_error", code=exc.code, dialect=dialect
            )
        conversation = conversation_id(request.headers, parsed.user, parsed.history)
        context = _hook_context(parsed, conversation)
        stored = await self._store.load(conversation, tenant=None) if conversation else []
        try:
            run = await self._runner.run(
                HookEvent.ON_REQUEST_START, reapply_pairs(parsed.history, stored), request=context
            )
        except HookFailedError as exc:
            request.state.hooks = _outcomes(exc.run.records)
            return error_response(
                424, str(exc), type_="hook_error", code="hook_failed", dialect=dialect
            )
        request.state.hooks = _outcomes(run.records)
        history = [message.to_openai() for message in run.messages]
        forwarded = parsed.render(history, RenderContext())
        try:
            answer = await self._upstream.send(dialect.upstream_path, forwarded, request.headers)
        except UpstreamError as exc:
            return error_response(
                exc.status, str(exc), type_="upstream_error", code=exc.code, dialect=dialect
            )
        if answer.is_success and conversation:
            pairs = synthetic_pairs(history)
            if pairs or stored:
                await self._store.save(conversation, pairs, tenant=None)
        if answer.headers.get("content-type", "").startswith("text/event-stream"):
            return self._relay(dialect, answer, history, context)
        body = await answer.aread()
        await answer.aclose()
        task = None
        if answer.is_success and self._has_completion_hooks:
            final = dialect.answer_from_json(body).message
            if final is not None:
                task = BackgroundTask(self._complete, [*history, final], context)
        return Response(
            body,
            status_code=answer.status_code,
            headers=passthrough_headers(answer),
            background=task,
        )

    def _relay(
        self,
        dialect: Dialect,
        answer: httpx.Response,
        history: list[dict[str, Any]],
        context: dict[str, str],
    ) -> StreamingResponse:
        """Pass the upstream's events on as they arrive; reassemble the answer on the way."""
        collect = answer.is_success and self._has_completion_hooks
        streamed = dialect.reader() if collect else None
        finished = False

        async def chunks() -> AsyncIterator[bytes]:
            nonlocal finished
            try:
                async for chunk in answer.aiter_bytes():
                    if streamed is not None:
                        streamed.feed(chunk)
                    yield chunk
                finished = True
            except httpx.HTTPError as exc:
                logger.warning("upstream stream broke off: %s", type(exc).__name__)
            finally:
                await answer.aclose()

        async def after() -> None:
            final = streamed.answer().message if streamed is not None and finished else None
            if final is not None:
                await self._complete([*history, final], context)

        return StreamingResponse(
            chunks(),
            status_code=answer.status_code,
            headers=passthrough_headers(answer),
            background=BackgroundTask(after),
        )

    async def _complete(self, history: list[dict[str, Any]], context: dict[str, str]) -> None:
        """``on_completion`` hooks, after the answer went out: failures can only be logged."""
        try:
            await self._runner.run(
                HookEvent.ON_COMPLETION, history, request=context, completion=_COMPLETION_FACTS
            )
        except HookFailedError as exc:
            logger.error("on_completion hook failed after the answer was sent: %s", exc)


def _hook_context(parsed: ParsedRequest, conversation: str | None) -> dict[str, str]:
    """The hooks' ``request``: conversation id, user and model, absent ones left out."""
    context = {"conversation_id": conversation, "user": parsed.user, "model": parsed.model}
    return {key: value for key, value in context.items() if value is not None}


def _outcomes(records: Sequence[HookRunRecord]) -> str:
    return ",".join(f"{record.hook}:{record.outcome}" for record in records) or "-"
