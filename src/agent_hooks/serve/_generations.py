"""The manifest each request runs on, and handing requests over to a reloaded one (SPEC 17).

A :class:`Generation` is one loaded manifest and what was built from it (the injector, its hook
runner, the tool catalogue); it never changes. A request takes the current generation once, when
it arrives (:class:`LeaseMiddleware`), and keeps it to its end: its hooks, its streamed answer
and its completion hooks all run on the manifest it started with, whatever reloads meanwhile.

:class:`Generations` holds the current one and counts the requests on each. A reload builds the
next generation with the live toolsets of the current one whose declarations did not change, so
their MCP sessions and HTTP clients go on serving. The generation it replaces is retired when
its last request ends: then its toolsets that no live generation uses are closed.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass

from injector import Binder, Injector
from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from agent_hooks import HookEvent, HookRunner, create_injector
from agent_hooks.app_factory import aclose_toolsets
from agent_hooks.config import ApplicationConfig
from agent_hooks.runtime import PreparedHook
from agent_hooks.serve._tools import ToolCatalog
from agent_hooks.toolsets import ReusedToolsets, ToolRegistry, Toolset

__all__ = ["Generation", "Generations", "LeaseMiddleware", "leased"]

logger = logging.getLogger("agent_hooks.serve")

_SCOPE_KEY = "agent_hooks.generation"
"""Where a request's generation is kept in its ASGI scope's ``state``."""


@dataclass(frozen=True, eq=False)
class Generation:
    """One loaded manifest and what the proxy built from it; shared by the requests it serves.

    ``runner`` is ``None`` while preview features are off: requests are forwarded without hooks.
    """

    config: ApplicationConfig
    injector: Injector
    runner: HookRunner | None
    tools: ToolCatalog
    start_hooks: tuple[PreparedHook, ...]
    completion_hooks: tuple[PreparedHook, ...]
    reads_history: bool
    """A hook's arguments or condition read the history (the hook context, SPEC 10): its
    messages are then read whole, not as a dialect's outline of shared role-only ones."""
    hook_prefixes: frozenset[str] | None
    """The identities (``ah_{i8}_``) of the request-start hooks: a stored pair of no current
    hook is not re-applied; ``None`` while hooks are off (none is)."""
    decides_by_freshness: bool
    """Every request-start hook has a TTL and reads no context, so a turn whose stored pairs
    are fresh for all of them is decided from those pairs alone
    (:meth:`~agent_hooks.HookRunner.fresh_run`)."""

    @classmethod
    def build(
        cls, config: ApplicationConfig, *, hooks: bool, reused: ReusedToolsets | None = None
    ) -> Generation:
        """Build the app for ``config``; nothing is connected. ``reused``: live toolsets of the
        generation this one replaces, taken over where their declarations did not change.

        Raises:
            ConfigError: the manifest asks for what the process cannot provide.
        """

        def bind_reused(binder: Binder) -> None:
            binder.bind(ReusedToolsets, to=reused or ReusedToolsets())

        injector = create_injector(config, [bind_reused], preview=hooks)
        runner = injector.get(HookRunner) if hooks else None
        every = runner.hooks if runner is not None else ()
        start_hooks = tuple(hook for hook in every if hook.event is HookEvent.ON_REQUEST_START)
        return cls(
            config=config,
            injector=injector,
            runner=runner,
            tools=ToolCatalog(runner, injector.get(ToolRegistry)),
            start_hooks=start_hooks,
            completion_hooks=tuple(h for h in every if h.event is HookEvent.ON_COMPLETION),
            reads_history=any(hook.needs_context for hook in every),
            hook_prefixes=(
                frozenset(hook.prefix for hook in start_hooks) if runner is not None else None
            ),
            decides_by_freshness=runner is not None and runner.decides_by_freshness(start_hooks),
        )

    @property
    def has_start_hooks(self) -> bool:
        return bool(self.start_hooks)

    @property
    def has_completion_hooks(self) -> bool:
        return bool(self.completion_hooks)

    @property
    def hook_names(self) -> tuple[str, ...]:
        """The manifest's hooks by name (their tool's when unnamed), in manifest order."""
        return tuple(hook.name or hook.tool_name for hook in self.config.hooks or ())

    @property
    def toolsets(self) -> Sequence[Toolset]:
        """The live toolsets, one per declaration, in manifest order."""
        return self.injector.get(ToolRegistry).toolsets

    def reusable(self) -> ReusedToolsets:
        """This generation's toolsets with their declarations, for the next one to take over."""
        return ReusedToolsets(tuple(zip(self.config.toolsets, self.toolsets, strict=True)))


class Generations:
    """The current generation, and the requests in flight on each live one."""

    def __init__(self, first: Generation) -> None:
        self._current = first
        self._requests: dict[Generation, int] = {first: 0}
        """Every live generation: the current one, and replaced ones with requests in flight."""
        self._closing: set[asyncio.Task[None]] = set()

    @property
    def current(self) -> Generation:
        return self._current

    def acquire(self) -> Generation:
        """The generation a request arriving now runs on, until it :meth:`release`\\ s it."""
        generation = self._current
        self._requests[generation] += 1
        return generation

    def release(self, generation: Generation) -> None:
        """A request on ``generation`` ended; a replaced generation's last one retires it."""
        self._requests[generation] -= 1
        if self._requests[generation] == 0 and generation is not self._current:
            self._retire(generation)

    def replace(self, generation: Generation) -> None:
        """New requests run on ``generation``; the one it replaces retires once it is idle."""
        previous, self._current = self._current, generation
        self._requests[generation] = 0
        if self._requests[previous] == 0:
            self._retire(previous)

    def _retire(self, generation: Generation) -> None:
        """Forget ``generation`` and close, in the background, its toolsets no live generation
        took over (a request's last byte is not held up by a server shutting down)."""
        del self._requests[generation]
        in_use = {id(toolset) for live in self._requests for toolset in live.toolsets}
        unused = [toolset for toolset in generation.toolsets if id(toolset) not in in_use]
        if not unused:
            return
        logger.info(
            "closing toolsets of the previous manifest, its last request over: %s",
            ", ".join(toolset.name for toolset in unused),
        )
        task = asyncio.get_running_loop().create_task(aclose_toolsets(unused))
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        """Close every live generation's toolsets, once each, after those being retired."""
        if self._closing:
            await asyncio.wait(set(self._closing))
        live = {id(t): t for generation in self._requests for t in generation.toolsets}
        await aclose_toolsets(live.values())


class LeaseMiddleware:
    """Gives each HTTP request the current generation for its whole life (hooks, the answer's
    last byte, completion hooks); :func:`leased` reads it."""

    def __init__(self, app: ASGIApp, *, generations: Generations) -> None:
        self.app = app
        self.generations = generations

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        generation = self.generations.acquire()
        scope.setdefault("state", {})[_SCOPE_KEY] = generation
        try:
            await self.app(scope, receive, send)
        finally:
            self.generations.release(generation)


def leased(request: Request) -> Generation:
    """The generation ``request`` runs on."""
    generation: Generation = request.scope["state"][_SCOPE_KEY]
    return generation
