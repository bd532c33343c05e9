"""Building an app's injector from its manifest (seed Component 5), and closing what it opened."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Coroutine, Iterable
from contextlib import asynccontextmanager
from typing import Any

from injector import Binder, Injector, Module, multiprovider, provider, singleton

from agent_hooks._preview_module import is_preview_module
from agent_hooks.agent_hooks_module import AgentHooksModule
from agent_hooks.clock import Clock, SystemClock
from agent_hooks.config import ApplicationConfig, FeatureSettings, SigningSettings
from agent_hooks.injection import MessagesTransformer
from agent_hooks.injection._trust import SigningKeys
from agent_hooks.runtime import HookObserver, HookRunner, PreparedHook
from agent_hooks.tools import StagedBaseTool, ToolCallResultEnricher
from agent_hooks.tools._stages import NullStageReporter, StageReporter
from agent_hooks.toolsets import (
    CurrentTimeTool,
    ReusedToolsets,
    ToolOverrides,
    ToolRegistry,
    Toolset,
    build_toolsets,
    close_toolsets,
)

__all__ = [
    "AppModule",
    "ClockModule",
    "aclose_app",
    "aclose_toolsets",
    "create_injector",
    "open_app",
]

logger = logging.getLogger("agent_hooks.app")

_SHUTDOWN_TIMEOUT_SECONDS = 10.0
"""Longest wait for toolsets to close (child processes, HTTP clients) when an app shuts down."""


class AppModule(Module):
    """Binds the manifest, the app clock, the built-in tools, the toolset registry and the runner.

    Hosts override any of these from their own modules (passed after this one): a fixed
    :class:`~agent_hooks.clock.Clock`, a :class:`~agent_hooks.tools._stages.StageReporter`, more
    ``list[StagedBaseTool]``, ``list[ToolCallResultEnricher]`` or ``list[HookObserver]``
    entries, :class:`~agent_hooks.toolsets.ToolOverrides` (the test kit's seam),
    :class:`~agent_hooks.toolsets.ReusedToolsets` (live toolsets taken over from an app this one
    replaces: ``serve``'s reload).
    """

    def __init__(self, config: ApplicationConfig) -> None:
        self.config = config

    def configure(self, binder: Binder) -> None:
        binder.bind(ApplicationConfig, to=self.config)
        binder.bind(Clock, to=SystemClock, scope=singleton)  # type: ignore[type-abstract]
        binder.bind(StageReporter, to=NullStageReporter, scope=singleton)  # type: ignore[type-abstract]
        binder.multibind(list[ToolCallResultEnricher], to=[])
        binder.multibind(list[MessagesTransformer], to=[])
        binder.multibind(list[PreparedHook], to=[])
        binder.multibind(list[HookObserver], to=[])
        binder.bind(ToolOverrides, to=ToolOverrides())
        binder.bind(ReusedToolsets, to=ReusedToolsets())

    @provider
    def provide_signing_keys(self) -> SigningKeys:
        return SigningKeys(SigningSettings().keys())

    @multiprovider
    def provide_builtin_tools(self, clock: Clock) -> list[StagedBaseTool]:
        return [CurrentTimeTool(clock)]

    @singleton
    @provider
    def provide_tool_registry(
        self,
        config: ApplicationConfig,
        internal_tools: list[StagedBaseTool],
        overrides: ToolOverrides,
        reused: ReusedToolsets,
    ) -> ToolRegistry:
        toolsets = build_toolsets(config.toolsets, internal_tools=internal_tools, reused=reused)
        return ToolRegistry(toolsets, registered_tools=internal_tools, overrides=overrides)

    @singleton
    @provider
    def provide_runner(
        self,
        config: ApplicationConfig,
        hooks: list[PreparedHook],
        clock: Clock,
        enrichers: list[ToolCallResultEnricher],
        observers: list[HookObserver],
        signing_keys: SigningKeys,
        stage_reporter: StageReporter,
    ) -> HookRunner:
        return HookRunner(
            hooks,
            clock=clock,
            enrichers=enrichers,
            observers=observers,
            signing_keys=signing_keys,
            max_concurrency=config.max_concurrency,
            stage_reporter=stage_reporter,
        )


class ClockModule(Module):
    """Binds the app clock, for hosts and tests that decide what "now" is (``--now`` uses it)."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def configure(self, binder: Binder) -> None:
        binder.bind(Clock, to=self.clock)  # type: ignore[type-abstract]


def create_injector(
    config: ApplicationConfig, modules: Iterable[Any] = (), *, preview: bool | None = None
) -> Injector:
    """The app's injector: config, toolsets, enrichers, the runner and (with preview on) the
    hooks module.

    ``modules`` (a host's internal tools, enrichers, clock) are installed after ours, so their
    bindings win. Modules decorated with ``@preview_module`` are skipped while preview features
    are off; ``preview`` overrides ``ENABLE_PREVIEW_FEATURES`` for this app only (the test kit
    uses it). Nothing is connected yet: toolsets open on first use.

    Raises:
        ConfigError: the manifest asks for something the process cannot provide (for example an
            internal tool nobody registered).
    """
    if preview is None:
        preview = FeatureSettings().enable_preview_features
    host_modules = list(modules)
    # A host may install the hooks module itself (SPEC section 1); it must not run twice.
    hooks_module = [] if any(map(_is_hooks_module, host_modules)) else [AgentHooksModule()]
    candidates = [AppModule(config), *hooks_module, *host_modules]
    installed = [m for m in candidates if preview or not is_preview_module(m)]
    injector = Injector(installed, auto_bind=False)
    injector.get(HookRunner)  # surfaces configuration errors now, not on the first request
    return injector


def _is_hooks_module(module: Any) -> bool:
    if isinstance(module, type):
        return issubclass(module, AgentHooksModule)
    return isinstance(module, AgentHooksModule)


async def aclose_app(injector: Injector) -> None:
    """Close every connection the app opened; safe to call twice, bounded by
    :data:`_SHUTDOWN_TIMEOUT_SECONDS`. A cancelled caller still waits for the close (within the
    same bound) before the cancellation goes on, so no server outlives the app."""
    await _bounded(injector.get(ToolRegistry).aclose())


async def aclose_toolsets(toolsets: Iterable[Toolset]) -> None:
    """Close ``toolsets`` as :func:`aclose_app` closes an app's, within the same bound.

    For a host whose apps share live toolsets (``serve`` reloading its manifest hands the
    unchanged ones to the new app): it closes those no app uses any more, not a whole app.
    """
    await _bounded(close_toolsets(toolsets))


async def _bounded(close: Coroutine[Any, Any, None]) -> None:
    """Wait for ``close`` at most :data:`_SHUTDOWN_TIMEOUT_SECONDS`, shielded from the caller's
    cancellation (which goes on once the close is over or out of time)."""
    closing = asyncio.ensure_future(close)
    try:
        await asyncio.wait_for(asyncio.shield(closing), _SHUTDOWN_TIMEOUT_SECONDS)
    except TimeoutError:
        closing.cancel()
        logger.warning("outcome=close_timed_out after=%gs", _SHUTDOWN_TIMEOUT_SECONDS)
    except asyncio.CancelledError:
        await asyncio.wait([closing], timeout=_SHUTDOWN_TIMEOUT_SECONDS)
        raise


@asynccontextmanager
async def open_app(
    config: ApplicationConfig, modules: Iterable[Any] = (), *, preview: bool | None = None
) -> AsyncIterator[Injector]:
    """``async with open_app(config) as injector:`` — the injector, closed on exit."""
    injector = create_injector(config, modules, preview=preview)
    try:
        yield injector
    finally:
        await aclose_app(injector)
