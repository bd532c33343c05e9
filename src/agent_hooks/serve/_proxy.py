"""One proxied request in any dialect: state in, hooks, upstream, state out, completion hooks.

The steps are separate pieces (the dialect that reads and writes bodies, tenancy and limits,
conversation state, the hook runner, the upstream client, the relay); this module only orders
them, once for every route, and turns every refusal and failure (a :class:`ProxyError`) into an
answer in the dialect's own error shape, in :meth:`HooksProxy.handle`. The HTTP routes in
:mod:`agent_hooks.serve._app` hand each request to it with its dialect.
"""

from __future__ import annotations

import json
import logging
import operator
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_hooks import HookEvent, HookFailedError, HookRunner, HookRunRecord
from agent_hooks.messages import Message
from agent_hooks.serve._conversation import (
    CONVERSATION_HEADER,
    conversation_id,
    reapply_pairs,
    synthetic_pairs,
)
from agent_hooks.serve._dialects import (
    ANTHROPIC,
    CHAT,
    RELAYED_MESSAGES,
    Answer,
    Dialect,
    ParsedRequest,
    RenderContext,
    synthetic_call_id,
)
from agent_hooks.serve._errors import ProxyError
from agent_hooks.serve._limits import DEFAULT_MAX_BODY_BYTES, check_conversation_header, read_body
from agent_hooks.serve._metrics import Metrics
from agent_hooks.serve._relay import (
    ClientGone,
    StreamRelay,
    log_client_gone,
    unless_client_leaves,
)
from agent_hooks.serve._tenancy import remove_client_pairs, tenant_of
from agent_hooks.serve._tools import ToolCatalog
from agent_hooks.serve._transport import UpstreamAnswer
from agent_hooks.serve._upstream import UpstreamClient, passthrough_headers
from agent_hooks.state import ConversationStore

__all__ = ["CLIENT_CLOSED_REQUEST", "HookFailed", "HooksProxy", "error_response"]

logger = logging.getLogger("agent_hooks.serve")

_COMPLETION_FACTS = {"iteration_count": 1, "total_tool_calls": 0}
"""The proxy sees one model call per request and runs none of the model's tools."""

CLIENT_CLOSED_REQUEST = 499
"""The status logged for a request whose client left before its answer (nginx's convention)."""


class HookFailed(ProxyError):
    """An ``on_request_start`` hook with ``on_error: fail`` failed: the upstream is not called."""

    status = 424
    type_ = "hook_error"
    code = "hook_failed"


def error_response(error: ProxyError, dialect: Dialect = CHAT) -> JSONResponse:
    """``error`` in the dialect's shape, so every client raises its matching exception."""
    return JSONResponse(error_body(error, dialect), status_code=error.status)


def error_body(error: ProxyError, dialect: Dialect) -> dict[str, Any]:
    return dialect.error_body(error.status, str(error), type_=error.type_, code=error.code)


class HooksProxy:
    """Runs the hooks around one upstream call per request; shared by all requests.

    ``runner`` is ``None`` when preview features are off: requests are forwarded without hooks.
    ``anthropic_upstream`` answers the Anthropic route (``--anthropic-upstream``); by default the
    same upstream answers every route.
    """

    def __init__(
        self,
        runner: HookRunner | None,
        store: ConversationStore,
        upstream: UpstreamClient,
        *,
        has_completion_hooks: bool,
        tools: ToolCatalog,
        tenant_header: str | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        metrics: Metrics | None = None,
        anthropic_upstream: UpstreamClient | None = None,
    ) -> None:
        self._runner = runner
        self._store = store
        self._upstream = upstream
        self._anthropic_upstream = anthropic_upstream or upstream
        self._tools = tools
        self._has_completion_hooks = has_completion_hooks and runner is not None
        self._has_start_hooks = runner is not None and any(
            hook.event is HookEvent.ON_REQUEST_START for hook in runner.hooks
        )
        self._tenant_header = tenant_header
        self._max_body_bytes = max_body_bytes
        self._metrics = metrics or Metrics()

    async def handle(
        self, request: Request, dialect: Dialect, *, deployment: str | None = None
    ) -> Response:
        """The answer to one request; every refusal and failure in the dialect's error shape."""
        request.state.route = dialect.name
        try:
            return await self._handle(request, dialect, deployment)
        except ProxyError as exc:
            return error_response(exc, dialect)
        except ClientGone:
            log_client_gone()
            return Response(status_code=CLIENT_CLOSED_REQUEST)  # nobody reads it; the log does

    async def _handle(self, request: Request, dialect: Dialect, deployment: str | None) -> Response:
        check_conversation_header(request.headers)
        tenant = tenant_of(request.headers, tenant_header=self._tenant_header)
        raw = await read_body(request, limit=self._max_body_bytes)
        parsed = dialect.parse(raw, deployment=deployment)
        messages, forged = remove_client_pairs(parsed.history)
        if forged:
            logger.warning("removed %d synthetic pair(s) sent by the client", forged)
        owned: str | None = None  # nobody's conversation without a tenant: no stored state
        if tenant is not None:
            owned = await self._conversation(request.headers, parsed, messages, tenant)
        context = _hook_context(parsed, owned)
        stored = await self._store.load(owned, tenant=tenant) if owned else []
        hooks_input = reapply_pairs(messages, stored, before=parsed.held)
        history, records = await self._run_hooks(request, hooks_input, parsed, context)
        untouched = _same_objects(history, hooks_input)  # the hooks added or dropped nothing
        as_sent = untouched and _as_sent(raw, parsed, hooks_input)
        if as_sent:
            forwarded = raw  # nothing to write: the client's own bytes go, not a re-dump
        else:
            render_context = await self._render_context(parsed, history, stored, records)
            forwarded = parsed.render(history, render_context)

        async def commit(response_id: str | None) -> None:
            """Save the turn's pairs once the client has the whole answer. A Responses answer
            also records which conversation its id belongs to (a first turn with none starts its
            own, named by that id), so a follow-up naming it finds the pairs."""
            if tenant is None:
                return
            conversation = owned
            if response_id is not None:
                conversation = conversation or f"response:{response_id}"
            # Untouched, the history's pairs are the stored ones the proxy re-applied (the
            # client's were removed first): no need to look for them.
            pairs = stored if untouched else synthetic_pairs(history)
            if conversation and (pairs or stored or response_id is not None):
                await self._store.save(
                    conversation,
                    pairs,
                    tenant=tenant,
                    response_id=response_id,
                    as_loaded=conversation == owned and pairs == stored,
                )

        upstream = self._anthropic_upstream if dialect is ANTHROPIC else self._upstream
        answer = await unless_client_leaves(
            request.receive,
            upstream.send(dialect.upstream_path, forwarded, request.headers, dialect.credentials),
        )
        if answer.is_success and answer.headers.get("content-type", "").startswith(
            "text/event-stream"
        ):
            return self._relay(dialect, answer, history, context, commit)
        # An error is read whole, streamed or not, so the client gets it scrubbed (SPEC 12.1).
        content = await unless_client_leaves(request.receive, upstream.read(answer))
        task = None
        if answer.is_success:
            read = self._has_completion_hooks or parsed.names_answers  # parse only when needed
            final = dialect.answer_from_json(content) if read else Answer(None)
            await commit(final.response_id)
            if self._has_completion_hooks and final.message is not None:
                task = BackgroundTask(self._complete, [*history, final.message], context)
        return Response(
            content,
            status_code=answer.status_code,
            headers=passthrough_headers(answer),
            background=task,
        )

    async def models(self, request: Request) -> Response:
        """The upstream's model list as it came, or the echo model's (SPEC 13).

        A client that sends ``anthropic-version`` is an Anthropic client: its list comes from the
        Anthropic upstream, with Anthropic's credentials and error shape. With
        ``--tenant-header``, a request without it is 401 here too (SPEC 12.1).
        """
        request.state.route = "models"
        dialect = ANTHROPIC if "anthropic-version" in request.headers else CHAT
        upstream = self._anthropic_upstream if dialect is ANTHROPIC else self._upstream
        try:
            tenant_of(request.headers, tenant_header=self._tenant_header)
            answer = await upstream.get("/v1/models", request.headers, dialect.credentials)
            content = await upstream.read(answer)
        except ProxyError as exc:
            return error_response(exc, dialect)
        return Response(
            content, status_code=answer.status_code, headers=passthrough_headers(answer)
        )

    async def _conversation(
        self,
        headers: Mapping[str, str],
        parsed: ParsedRequest,
        messages: Sequence[Mapping[str, Any]],
        tenant: str,
    ) -> str | None:
        """SPEC 12 and 13: the header, the conversation the body names (Responses: its
        ``conversation``, or the one recorded for its ``previous_response_id``), the user."""
        named = parsed.named_conversation
        previous = parsed.previous_response_id
        if named is None and previous is not None and CONVERSATION_HEADER not in headers:
            named = await self._store.linked(previous, tenant=tenant)
        return conversation_id(headers, parsed.user, messages, named=named)

    async def _render_context(
        self,
        parsed: ParsedRequest,
        history: list[dict[str, Any]],
        stored: Sequence[tuple[dict[str, Any], dict[str, Any]]],
        records: Sequence[HookRunRecord],
    ) -> RenderContext:
        """Which pairs the upstream already holds, which go in text form (thinking), and the
        definitions of the other pairs' tools."""
        unsent: frozenset[str] = frozenset()
        if parsed.held:
            unsent = frozenset(
                {
                    *(tool["tool_call_id"] for _, tool in stored),
                    *(r.call_id for r in records if r.outcome == "replaced" and r.call_id),
                }
            )
        text_form = parsed.text_form_calls(history)
        tools = {}
        if parsed.needs_tool_definitions():
            names = [
                message["tool_calls"][0]["function"]["name"]
                for message in history
                if message.get("role") == "assistant"
                and (call_id := synthetic_call_id(message))
                and call_id not in text_form
            ]
            tools = await self._tools.definitions(names) if names else {}
        return RenderContext(unsent=unsent, tools=tools, text_form=text_form)

    async def _run_hooks(
        self,
        request: Request,
        messages: list[dict[str, Any]],
        parsed: ParsedRequest,
        context: dict[str, str],
    ) -> tuple[list[dict[str, Any]], list[HookRunRecord]]:
        """The history to forward and the hooks' records: ``messages`` itself without hooks.

        Each message is validated once: the models the dialect validated are handed to the
        runner as they are (only stored pairs and messages rebuilt since are new to it). The
        runner returns the very objects it was given for the messages it left alone, so those
        go upstream as the client's (or the store's) own dicts, never dumped again; only what
        the hooks wrote is.

        Raises:
            HookFailed: a hook with ``on_error: fail`` failed (424).
        """
        if self._runner is None or not self._has_start_hooks:
            return messages, []
        known: dict[int, Message] = {}
        if parsed.models is not None:
            known = {
                id(raw): model for raw, model in zip(parsed.history, parsed.models, strict=True)
            }
        unknown = [raw for raw in messages if id(raw) not in known]
        if unknown:  # stored pairs; every message of a dialect that did not validate its own
            validated = RELAYED_MESSAGES.validate_python(unknown)
            known.update({id(raw): model for raw, model in zip(unknown, validated, strict=True)})
        models = [known[id(raw)] for raw in messages]
        try:
            run = await self._runner.run(HookEvent.ON_REQUEST_START, models, request=context)
        except HookFailedError as exc:
            self._metrics.hooks(exc.run.records)
            request.state.hooks = _outcomes(exc.run.records)
            raise HookFailed(str(exc)) from exc
        self._metrics.hooks(run.records)
        request.state.hooks = _outcomes(run.records)
        originals = {id(model): raw for model, raw in zip(models, messages, strict=True)}
        history = [originals.get(id(message)) or message.to_openai() for message in run.messages]
        return history, run.records

    def _relay(
        self,
        dialect: Dialect,
        answer: UpstreamAnswer,
        history: list[dict[str, Any]],
        context: dict[str, str],
        commit: Callable[[str | None], Awaitable[None]],
    ) -> StreamRelay:
        """Pass a successful answer's events on as they arrive; reassemble it on the way.

        The turn is committed (with a Responses answer's id) before the stream's last frame.
        """
        headers = passthrough_headers(answer)

        def shaped(error: ProxyError) -> dict[str, Any]:
            return error_body(error, dialect)

        streamed = dialect.reader()

        async def after() -> None:
            final = streamed.answer().message if self._has_completion_hooks else None
            if final is not None:
                await self._complete([*history, final], context)

        return StreamRelay(
            answer,
            headers=headers,
            error_body=shaped,
            reader=streamed,
            before_end=lambda: commit(streamed.response_id),
            after=after,
        )

    async def _complete(self, history: list[dict[str, Any]], context: dict[str, str]) -> None:
        """``on_completion`` hooks, after the answer went out: failures can only be logged."""
        assert self._runner is not None  # completion hooks are collected only with a runner
        try:
            run = await self._runner.run(
                HookEvent.ON_COMPLETION, history, request=context, completion=_COMPLETION_FACTS
            )
        except HookFailedError as exc:
            self._metrics.hooks(exc.run.records)
            logger.error("on_completion hook failed after the answer was sent: %s", exc)
        else:
            self._metrics.hooks(run.records)


def _as_sent(raw: bytes, parsed: ParsedRequest, history: Sequence[Mapping[str, Any]]) -> bool:
    """Whether the client's body can go upstream as it came: the hooks and the stored state
    changed no message (the very objects the dialect read, in order) and reading it changed no
    field. UTF-8 only: a body in another encoding the parser accepts is rendered, so the
    upstream always gets UTF-8."""
    return (
        not parsed.edited
        and _same_objects(history, parsed.history)
        and json.detect_encoding(raw) == "utf-8"
    )


def _same_objects(these: Sequence[object], those: Sequence[object]) -> bool:
    return len(these) == len(those) and all(map(operator.is_, these, those))


def _hook_context(parsed: ParsedRequest, conversation: str | None) -> dict[str, str]:
    """The hooks' ``request``: conversation id, user and model, absent ones left out."""
    context = {"conversation_id": conversation, "user": parsed.user, "model": parsed.model}
    return {key: value for key, value in context.items() if value is not None}


def _outcomes(records: Sequence[HookRunRecord]) -> str:
    return ",".join(f"{record.hook}:{record.outcome}" for record in records) or "-"
