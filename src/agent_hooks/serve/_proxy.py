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
from array import array
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from agent_hooks import HookEvent, HookFailedError, HookRunRecord
from agent_hooks.serve._dialects import (
    ANTHROPIC,
    ANTHROPIC_COUNT_TOKENS,
    CHAT,
    Answer,
    Dialect,
    ParsedRequest,
    RenderContext,
    ToolDefinition,
    is_role_only,
)
from agent_hooks.serve._errors import ProxyError
from agent_hooks.serve._families import FAMILIES, Family, FamilyRule, model_family
from agent_hooks.serve._fresh import FreshPairs
from agent_hooks.serve._generations import Generation, leased
from agent_hooks.serve._limits import DEFAULT_MAX_BODY_BYTES, check_conversation_header, read_body
from agent_hooks.serve._metrics import Metrics
from agent_hooks.serve._relay import (
    ClientGone,
    StreamRelay,
    log_client_gone,
    unless_client_leaves,
)
from agent_hooks.serve._runner_input import RunnerInput
from agent_hooks.serve._tenancy import tenant_of
from agent_hooks.serve._transport import UpstreamAnswer
from agent_hooks.serve._upstream import UpstreamClient, passthrough_headers
from agent_hooks.serve._work import Work
from agent_hooks.state import ConversationStore
from agent_hooks.state._conversation import (
    Conversation,
    ConversationSource,
    MessageDigests,
    StoredPair,
    collect_pairs,
    conversation_key,
    conversation_source,
    log_dropped,
    reapply,
    without_client_pairs,
)

__all__ = ["CLIENT_CLOSED_REQUEST", "HookFailed", "HooksProxy", "error_response"]

logger = logging.getLogger("agent_hooks.serve")

_COMPLETION_FACTS = {"iteration_count": 1, "total_tool_calls": 0}
"""The proxy sees one model call per request and runs none of the model's tools."""
_FAMILIES_REMEMBERED = 1024
_MODEL_NAME_REMEMBERED = 256
"""Longer ``model`` values are not remembered (model names are a few dozen characters)."""

CLIENT_CLOSED_REQUEST = 499
"""The status logged for a request whose client left before its answer (nginx's convention)."""


class HookFailed(ProxyError):
    """An ``on_request_start`` hook with ``on_error: fail`` failed: the upstream is not called."""

    status = 424
    type_ = "hook_error"
    code = "hook_failed"


def error_response(error: ProxyError, dialect: Dialect = CHAT) -> JSONResponse:
    """``error`` in the dialect's shape, so every client raises its matching exception."""
    return JSONResponse(
        error_body(error, dialect), status_code=error.status, headers=dict(error.headers) or None
    )


def error_body(error: ProxyError, dialect: Dialect) -> dict[str, Any]:
    return dialect.error_body(error.status, str(error), type_=error.type_, code=error.code)


class HooksProxy:
    """Runs the hooks around one upstream call per request; shared by all requests.

    Each request runs on the manifest generation it was given when it arrived (:func:`leased`),
    from its hooks to its completion hooks, so a reload never changes a request half-way.
    ``anthropic_upstream`` answers the Anthropic route (``--anthropic-upstream``); by default the
    same upstream answers every route. ``model_families`` are the ``--model-family`` rules, tried
    before the built-in ones (SPEC 15); ``None`` forwards every pair as the hooks wrote it (the
    echo model, which lists pairs by their ``ah_`` ids, is no provider).
    """

    def __init__(
        self,
        store: ConversationStore,
        upstream: UpstreamClient,
        *,
        tenant_header: str | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        metrics: Metrics | None = None,
        anthropic_upstream: UpstreamClient | None = None,
        model_families: Sequence[FamilyRule] | None = (),
    ) -> None:
        self._store = store
        self._upstream = upstream
        self._anthropic_upstream = anthropic_upstream or upstream
        self._tenant_header = tenant_header
        self._max_body_bytes = max_body_bytes
        self._metrics = metrics or Metrics()
        self._model_families = model_families
        self._fresh_pairs = FreshPairs()
        self._families: dict[str | None, Family] = {}
        """Each ``model`` sent lately and its family (an agent sends one model turn after turn)."""
        self._outcomes: tuple[Sequence[HookRunRecord], str] = ((), "-")
        """The last request-start records counted, and their access-log text."""

    async def handle(
        self, request: Request, dialect: Dialect, *, deployment: str | None = None
    ) -> Response:
        """The answer to one request; every refusal and failure in the dialect's error shape."""
        request.state.route = dialect.name
        try:
            return await self._handle(request, dialect, deployment, leased(request))
        except ProxyError as exc:
            return error_response(exc, dialect)
        except ClientGone:
            log_client_gone()
            return Response(status_code=CLIENT_CLOSED_REQUEST)  # nobody reads it; the log does

    async def _handle(
        self, request: Request, dialect: Dialect, deployment: str | None, generation: Generation
    ) -> Response:
        turn = await self._prepare(request, dialect, deployment, generation)
        return await self._exchange(request, dialect, turn)

    async def _prepare(
        self, request: Request, dialect: Dialect, deployment: str | None, generation: Generation
    ) -> _Turn:
        """Read the body, run the hooks and write the body to forward.

        Everything built from the body (its bytes, the parsed history, the hooks' models) is
        local here, so it is freed when the turn is ready: while the upstream works, a request
        holds only the body it forwards, and the history when completion hooks will read it
        (SPEC 16: a slow upstream does not multiply what a request holds).
        """
        check_conversation_header(request.headers)
        tenant = tenant_of(request.headers, tenant_header=self._tenant_header)
        raw = await read_body(request, limit=self._max_body_bytes)
        work = Work(len(raw))
        parsed = await work.run(lambda: dialect.parse(raw, deployment=deployment))
        messages, forged, item_of, read = await work.run(
            lambda: _without_client_pairs(parsed, whole=generation.reads_history)
        )
        if forged:
            logger.warning("removed %d synthetic pair(s) sent by the client", forged)
        digests = MessageDigests()
        owned: Conversation | None = None  # nobody's conversation without a tenant: no state
        if tenant is not None:
            owned = await self._conversation(request.headers, parsed, tenant, digests)
        context = _hook_context(parsed, owned)
        stored: list[StoredPair] = []
        if owned is not None and generation.hook_prefixes:  # no hook: no pair to re-apply
            stored = await self._store.load_entries(owned.key, tenant=tenant, shared=True)
        reapplied = await work.run(
            lambda: reapply(
                messages,
                stored,
                items=parsed.items,
                item_of=item_of,
                hook_prefixes=generation.hook_prefixes,
                held=parsed.held,
                build=None,
                digest_of=digests,
                without_pairs=True,
            )
        )
        log_dropped(reapplied, logger)
        hooks_input = reapplied.history
        history: list[dict[str, Any]] = hooks_input
        records: Sequence[HookRunRecord] = ()
        if not dialect.counts_tokens:
            history, records = await self._run_hooks(
                request, generation, hooks_input, context, work, reapplied.kept, parsed.held
            )
        untouched = _same_objects(history, hooks_input)  # the hooks added or dropped nothing
        if untouched and (parsed.held or all(e.anchor is not None for e in reapplied.kept)):
            pairs = reapplied.kept  # the history's pairs are the stored ones re-applied
        else:
            pairs = await work.run(
                lambda: collect_pairs(
                    history,
                    item_at=list(_client_items(history, messages, item_of)),
                    items=parsed.items,
                    reapplied=reapplied.kept,
                    held=parsed.held,
                    text_from=parsed.text_from,
                    to_dict=_same,
                )
            )
        if untouched and _as_sent(raw, parsed, hooks_input, read):
            forwarded = raw  # nothing to write: the client's own bytes go, not a re-dump
        else:
            del raw  # written anew: the client's bytes are not kept beside the new ones
            tools = (
                await _tool_definitions(generation, pairs)
                if parsed.needs_tool_definitions()
                else {}
            )
            render_context = self._render_context(parsed, pairs, reapplied.kept, records, tools)
            forwarded = await work.run(lambda: parsed.render(history, render_context))

        async def commit(response_id: str | None) -> None:
            """Save the turn's pairs once the client has the whole answer. A Responses answer
            also records which conversation its id belongs to (a first turn with none starts its
            own, named by that id), so a follow-up naming it finds the pairs."""
            if tenant is None or dialect.counts_tokens:
                return
            key = owned.key if owned is not None else None
            if response_id is not None and key is None:
                key = conversation_key(ConversationSource("response", response_id), None)
            if key and (pairs or stored or response_id is not None):
                await self._store.save(
                    key,
                    pairs,
                    tenant=tenant,
                    response_id=response_id,
                    as_loaded=owned is not None and key == owned.key and pairs == stored,
                )

        return _Turn(
            generation,
            forwarded,
            commit,
            history=history if generation.has_completion_hooks else [],
            context=context,
            names_answers=parsed.names_answers,
        )

    async def _exchange(self, request: Request, dialect: Dialect, turn: _Turn) -> Response:
        """Forward the turn's body and relay the answer; commit the turn once it succeeded."""
        upstream = self._upstream
        if dialect in (ANTHROPIC, ANTHROPIC_COUNT_TOKENS):
            upstream = self._anthropic_upstream
        answer = await unless_client_leaves(
            request.receive,
            upstream.send(
                dialect.upstream_path, turn.forwarded, request.headers, dialect.credentials
            ),
        )
        if answer.is_success and answer.headers.get("content-type", "").startswith(
            "text/event-stream"
        ):
            return self._relay(dialect, answer, turn)
        # An error is read whole, streamed or not, so the client gets it scrubbed (SPEC 12.1).
        content = await unless_client_leaves(request.receive, upstream.read(answer))
        task = None
        if answer.is_success and not dialect.counts_tokens:
            completes = turn.generation.has_completion_hooks
            read = completes or turn.names_answers  # parse only when needed
            final = (
                dialect.answer_from_json(content)
                if read
                else Answer(None, usage=dialect.usage_from_json(content))
            )
            await turn.commit(final.response_id)
            self._metrics.upstream_tokens(dialect.name, final.usage)
            if completes and final.message is not None:
                task = BackgroundTask(self._complete, turn, final.message)
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
        tenant: str,
        digests: MessageDigests,
    ) -> Conversation | None:
        """SPEC 15: which conversation the request belongs to, and the key of its state.

        A Responses request that continues an answer the proxy relayed belongs to that answer's
        conversation, whatever else it names: the store recorded the key when it relayed it.
        """
        previous = parsed.previous_response_id
        if previous is not None:
            linked = await self._store.linked(previous, tenant=tenant)
            if linked is not None:
                return Conversation(linked, linked)
        source = conversation_source(
            headers, named=parsed.named_conversation, end_user=parsed.end_user
        )
        if source is None:
            return None
        first_user = None if parsed.held else parsed.first_user_item
        key = conversation_key(source, first_user, digest_of=digests)
        return Conversation(key, source.value if source.kind != "user" else key)

    def _render_context(
        self,
        parsed: ParsedRequest,
        pairs: Sequence[StoredPair],
        reapplied: Sequence[StoredPair],
        records: Sequence[HookRunRecord],
        tools: Mapping[str, ToolDefinition],
    ) -> RenderContext:
        """Which pairs the upstream already holds, which go in text form, the definitions
        of the tools of the pairs forwarded as tool calls (``tools``), and the model family
        whose rules the pairs follow."""
        unsent: frozenset[str] = frozenset()
        if parsed.held:
            unsent = frozenset(
                {
                    *(entry.call_id for entry in reapplied),
                    *(r.call_id for r in records if r.outcome == "replaced" and r.call_id),
                }
            )
        text_form = frozenset(entry.call_id for entry in pairs if entry.form == "text")
        family = self._family(parsed.model)
        if not (unsent or tools or text_form):
            return _PLAIN_CONTEXTS[family]
        return RenderContext(unsent=unsent, tools=tools, text_form=text_form, family=family)

    def _family(self, model: str | None) -> Family:
        """:func:`model_family` of ``model`` under the ``--model-family`` rules, remembered."""
        family = self._families.get(model)
        if family is None:
            rules = self._model_families
            family = model_family(model, rules) if rules is not None else "openai"
            if model is None or len(model) <= _MODEL_NAME_REMEMBERED:
                if len(self._families) >= _FAMILIES_REMEMBERED:
                    self._families.clear()  # a client names models at will: memory stays bounded
                self._families[model] = family
        return family

    async def _run_hooks(
        self,
        request: Request,
        generation: Generation,
        messages: list[dict[str, Any]],
        context: dict[str, str],
        work: Work,
        stored: Sequence[StoredPair],
        held: bool,
    ) -> tuple[list[dict[str, Any]], Sequence[HookRunRecord]]:
        """The history to forward and the hooks' records: ``messages`` itself without hooks,
        or when every hook is fresh in the ``stored`` pairs re-applied to it (:class:`FreshPairs`:
        no model and no run).

        The runner gets a model only for the messages it reads (:class:`RunnerInput`; a hook
        that reads the history reads the dicts of ``messages`` themselves, as its context), and
        returns the very objects it was given for the messages it left alone, so those go
        upstream as the client's (or the store's) own dicts, never dumped again; only what the
        hooks wrote is. Preparing a large history is ``work`` off the event loop.

        Raises:
            HookFailed: a hook with ``on_error: fail`` failed (424).
        """
        runner = generation.runner
        if runner is None or not generation.has_start_hooks:
            return messages, []
        fresh = self._fresh_pairs.records(generation, stored, held=held)
        if fresh is not None:
            self._counted(request, fresh)
            return messages, fresh
        event = HookEvent.ON_REQUEST_START
        given = await work.run(lambda: RunnerInput(messages))
        try:
            run = await runner.run_hooks(
                generation.start_hooks,
                event,
                given.models,
                request=context,
                context_history=messages,
            )
        except HookFailedError as exc:
            self._counted(request, exc.run.records)
            raise HookFailed(str(exc)) from exc
        self._counted(request, run.records)
        return await work.run(lambda: given.history(run.messages)), run.records

    def _counted(self, request: Request, records: Sequence[HookRunRecord]) -> None:
        """The request-start hooks' records into the metrics and the request's access line."""
        self._metrics.hooks(records)
        last, outcomes = self._outcomes
        if records is not last:  # a fresh turn's records are often the last turn's very own
            outcomes = _outcomes(records)
            self._outcomes = (records, outcomes)
        request.state.hooks = outcomes

    def _relay(self, dialect: Dialect, answer: UpstreamAnswer, turn: _Turn) -> StreamRelay:
        """Pass a successful answer's events on as they arrive; reassemble it on the way.

        The turn is committed (with a Responses answer's id) before the stream's last frame.
        """
        headers = passthrough_headers(answer)

        def shaped(error: ProxyError) -> dict[str, Any]:
            return error_body(error, dialect)

        streamed = dialect.reader()

        async def after() -> None:
            final = streamed.answer()
            self._metrics.upstream_tokens(dialect.name, final.usage)
            if turn.generation.has_completion_hooks and final.message is not None:
                await self._complete(turn, final.message)

        return StreamRelay(
            answer,
            headers=headers,
            error_body=shaped,
            reader=streamed,
            error_event=dialect.error_event,
            before_end=lambda: turn.commit(streamed.response_id),
            after=after,
        )

    async def _complete(self, turn: _Turn, answer: dict[str, Any]) -> None:
        """``on_completion`` hooks on the turn's history and ``answer``, after the answer went
        out, on the turn's own manifest: failures can only be logged."""
        runner = turn.generation.runner
        assert runner is not None  # completion hooks are collected only with a runner
        event = HookEvent.ON_COMPLETION
        history = [*turn.history, answer]
        try:
            run = await runner.run_hooks(
                turn.generation.completion_hooks,
                event,
                RunnerInput(history).models,
                request=turn.context,
                completion=_COMPLETION_FACTS,
                context_history=history,
            )
        except HookFailedError as exc:
            self._metrics.hooks(exc.run.records)
            logger.error("on_completion hook failed after the answer was sent: %s", exc)
        else:
            self._metrics.hooks(run.records)


@dataclass(frozen=True)
class _Turn:
    """What a request still needs once its body is written: the manifest generation it runs on,
    the bytes to forward, the commit of its pairs, and for completion hooks the history and their
    context (``history`` is empty without completion hooks, so nothing else of the body outlives
    :meth:`HooksProxy._prepare`).
    """

    generation: Generation
    forwarded: bytes
    commit: Callable[[str | None], Awaitable[None]]
    history: list[dict[str, Any]]
    context: dict[str, str]
    names_answers: bool


def _as_sent(
    raw: bytes, parsed: ParsedRequest, history: Sequence[object], read: Sequence[object]
) -> bool:
    """Whether the client's body can go upstream as it came: the hooks and the stored state
    changed no message (``history`` is the very objects the dialect read, ``read``, in order)
    and reading it changed no field. A body that starts with a byte order mark is rendered, so
    the upstream never gets one (any other body is UTF-8:
    :func:`~agent_hooks.serve._json_body.load_json` refuses the rest)."""
    return (
        not parsed.edited and _same_objects(history, read) and json.detect_encoding(raw) == "utf-8"
    )


def _same(message: dict[str, Any]) -> dict[str, Any]:
    """Stored pairs go into the history as the very dicts the store decoded."""
    return message


def _without_client_pairs(
    parsed: ParsedRequest, *, whole: bool
) -> tuple[list[dict[str, Any]], int, Sequence[int], Sequence[Any]]:
    """The history without the pairs the client sent, how many there were, the client item of
    each message left, and the messages they were removed from: the whole history, or the
    dialect's outline unless a hook reads it (one step: a long history's passes go off the loop
    together)."""
    read = parsed.history if whole else parsed.outline.messages
    messages, forged = without_client_pairs(read)
    return messages, forged, _items_of(messages, read, parsed.outline.item_of), read


def _items_of(
    messages: Sequence[object], read: Sequence[object], item_of: Sequence[int]
) -> Sequence[int]:
    """The client item of each message left once the client's pairs are removed from ``read``
    (a message rebuilt without a forged call belongs to the item of the message before it); the
    dialect's own when none was."""
    if _same_objects(messages, read):
        return item_of
    items = array("i")
    last = 0
    for item in _client_items(messages, read, item_of):
        last = last if item is None else item
        items.append(last)
    return items


def _client_items(
    these: Sequence[object], client: Sequence[object], item_of: Sequence[int]
) -> Iterator[int | None]:
    """For each of ``these``, the item of the ``client`` message it is; ``None`` for any other.

    A shared role-only message (:func:`is_role_only`) is the next such one of ``client``: those
    are matched by order, as the hooks and the removal of client pairs keep them, in order.
    Any other message is found by identity.
    """
    in_order = (item for m, item in zip(client, item_of, strict=True) if is_role_only(m))
    by_id = {id(m): item for m, item in zip(client, item_of, strict=True) if not is_role_only(m)}
    for message in these:
        yield next(in_order) if is_role_only(message) else by_id.get(id(message))


def _same_objects(these: Sequence[object], those: Sequence[object]) -> bool:
    return these is those or (len(these) == len(those) and all(map(operator.is_, these, those)))


def _hook_context(parsed: ParsedRequest, conversation: Conversation | None) -> dict[str, str]:
    """The hooks' ``request``: conversation id, user and model, absent ones left out."""
    context = {
        "conversation_id": conversation.name if conversation is not None else None,
        "user": parsed.user,
        "model": parsed.model,
    }
    return {key: value for key, value in context.items() if value is not None}


_PLAIN_CONTEXTS = {family: RenderContext(family=family) for family in FAMILIES}
"""The context of most turns, one per model family: every pair goes as a tool call, the upstream
holds none of them, no tool is declared."""


async def _tool_definitions(
    generation: Generation, pairs: Sequence[StoredPair]
) -> Mapping[str, ToolDefinition]:
    """The definitions of the tools of ``pairs`` forwarded as tool calls (a dialect that must
    declare them: Anthropic without tools of its own)."""
    names = sorted(
        {
            entry.assistant["tool_calls"][0]["function"]["name"]
            for entry in pairs
            if entry.form == "pair"
        }
    )
    return await generation.tools.definitions(names) if names else {}


def _outcomes(records: Sequence[HookRunRecord]) -> str:
    return ",".join(f"{record.hook}:{record.outcome}" for record in records) or "-"
