"""The proxy's ASGI app: routes, lifespan and the access log; the work is in ``_proxy``.

The lifespan opens the hooks app (MCP sessions and HTTP clients shared by every request), the
conversation store and the upstream client, runs the manifest's reloads, and closes them all
when the server stops, after the in-flight requests and their completion hooks finished.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from agent_hooks.serve._dialects import ANTHROPIC, ANTHROPIC_COUNT_TOKENS, CHAT, RESPONSES
from agent_hooks.serve._errors import BadRequest
from agent_hooks.serve._families import FamilyRule
from agent_hooks.serve._generations import Generations, LeaseMiddleware
from agent_hooks.serve._limits import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_INFLIGHT_BYTES,
    InflightLimit,
)
from agent_hooks.serve._metrics import CONTENT_TYPE_LATEST, Metrics
from agent_hooks.serve._proxy import HooksProxy, error_response
from agent_hooks.serve._reload import Reloader
from agent_hooks.serve._upstream import UpstreamClient
from agent_hooks.state import ConversationStore

__all__ = ["ServeSettings", "create_app"]

logger = logging.getLogger("agent_hooks.serve")


@dataclass(frozen=True)
class ServeSettings:
    """What ``agent-hooks serve`` was started with; ``upstream=None`` means the echo model.

    The app closes the manifest's sessions and clients, and the store, when it stops.
    """

    generations: Generations
    """The manifest requests run on (SPEC 17: replaced by a reload)."""
    store: ConversationStore
    upstream: str | None
    upstream_timeout_seconds: float
    upstream_api_key: str | None
    forward_auth: bool
    tenant_header: str | None = None
    """Who owns a conversation: this header's value (a gateway sets it) instead of the client's
    credential; requests without it are 401 (SPEC 12.1)."""
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    max_inflight_bytes: int = DEFAULT_MAX_INFLIGHT_BYTES
    """The request bodies held at once (SPEC 16): beyond it new requests get 503."""
    metrics: Metrics = field(default_factory=Metrics)
    """Served at ``GET /metrics``; the store's ``on_error`` counts into it too."""
    anthropic_upstream: str | None = None
    """``--anthropic-upstream``: where ``/v1/messages`` goes; ``upstream`` when not given."""
    model_families: tuple[FamilyRule, ...] = ()
    """``--model-family`` rules, tried in order before the built-in ones (SPEC 15). Without an
    upstream (the echo model) no family applies: the echo lists pairs by their own ids."""
    reloader: Reloader | None = None
    """Reloads the manifest into ``generations`` while the app runs (SIGHUP, ``--watch``)."""


def create_app(settings: ServeSettings) -> Starlette:
    """The proxy app; nothing is opened until the server runs its lifespan."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            stack.push_async_callback(settings.generations.aclose)
            stack.push_async_callback(settings.store.aclose)

            def upstream_client(base_url: str | None) -> UpstreamClient:
                client = UpstreamClient(
                    base_url,
                    timeout_seconds=settings.upstream_timeout_seconds,
                    api_key=settings.upstream_api_key,
                    forward_auth=settings.forward_auth,
                )
                stack.push_async_callback(client.aclose)
                return client

            app.state.proxy = HooksProxy(
                settings.store,
                upstream_client(settings.upstream),
                tenant_header=settings.tenant_header,
                max_body_bytes=settings.max_body_bytes,
                metrics=settings.metrics,
                anthropic_upstream=(
                    upstream_client(settings.anthropic_upstream)
                    if settings.anthropic_upstream
                    else None
                ),
                model_families=settings.model_families if settings.upstream else None,
            )
            if settings.reloader is not None:
                reloads = asyncio.create_task(settings.reloader.run())
                stack.push_async_callback(_cancelled, reloads)
            yield

    async def chat_completions(request: Request) -> Response:
        proxy: HooksProxy = request.app.state.proxy
        return await proxy.handle(request, CHAT, deployment=request.path_params.get("name"))

    async def responses(request: Request) -> Response:
        proxy: HooksProxy = request.app.state.proxy
        return await proxy.handle(request, RESPONSES)

    async def messages(request: Request) -> Response:
        proxy: HooksProxy = request.app.state.proxy
        return await proxy.handle(request, ANTHROPIC)

    async def count_tokens(request: Request) -> Response:
        proxy: HooksProxy = request.app.state.proxy
        return await proxy.handle(request, ANTHROPIC_COUNT_TOKENS)

    async def models(request: Request) -> Response:
        proxy: HooksProxy = request.app.state.proxy
        return await proxy.models(request)

    async def healthz(request: Request) -> Response:
        request.state.route = "healthz"
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        """200 when the manifest is loaded and the store answers; 503 with the reason otherwise
        (SPEC 17). ``/healthz`` stays "the process is up", for a liveness probe."""
        request.state.route = "readyz"
        proxy: HooksProxy | None = getattr(request.app.state, "proxy", None)
        if proxy is None:
            return JSONResponse(
                {"status": "unavailable", "reason": "the manifest is not loaded yet"}, 503
            )
        reason = await settings.store.unready()
        if reason is not None:
            return JSONResponse({"status": "unavailable", "reason": reason}, 503)
        return JSONResponse({"status": "ready"})

    async def metrics(request: Request) -> Response:
        request.state.route = "metrics"
        return Response(settings.metrics.render(), media_type=CONTENT_TYPE_LATEST)

    app = Starlette(
        routes=[
            Route("/v1/chat/completions", chat_completions, methods=["POST"]),
            Route(
                "/openai/deployments/{name}/chat/completions", chat_completions, methods=["POST"]
            ),
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/v1/messages", messages, methods=["POST"]),
            Route("/v1/messages/count_tokens", count_tokens, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
            Route("/healthz", healthz, methods=["GET"]),
            Route("/readyz", readyz, methods=["GET"]),
            Route("/metrics", metrics, methods=["GET"]),
        ],
        lifespan=lifespan,
        exception_handlers={HTTPException: _http_error},
    )
    app.add_middleware(LeaseMiddleware, generations=settings.generations)
    app.add_middleware(InflightLimit, limit=settings.max_inflight_bytes)
    app.add_middleware(AccessLog, metrics=settings.metrics)
    return app


async def _cancelled(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def _http_error(request: Request, exc: Exception) -> Response:
    """Unknown routes and methods answer in the error shape of the client's dialect too."""
    assert isinstance(exc, HTTPException)
    dialect = ANTHROPIC if "anthropic-version" in request.headers else CHAT
    return error_response(BadRequest(exc.detail, status=exc.status_code), dialect)


class AccessLog:
    """One line per request when its last byte is sent, and its count and duration in the
    metrics under its route's label (``other`` for unknown paths): no bodies, no headers, no
    secrets, no ids."""

    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500
        logged = False

        def log() -> None:
            nonlocal logged
            logged = True
            state = scope.get("state", {})
            hooks = state.get("hooks", "-")
            seconds = time.perf_counter() - started
            self.metrics.request(state.get("route", "other"), status, seconds)
            logger.info(
                "request method=%s path=%s status=%d latency_ms=%.1f hooks=%s",
                scope["method"],
                scope["path"],
                status,
                seconds * 1000,
                hooks,
            )

        async def logging_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)
            if message["type"] == "http.response.body" and not message.get("more_body", False):
                log()

        try:
            await self.app(scope, receive, logging_send)
        finally:
            if not logged:  # the client went away, or the app failed before answering
                log()
