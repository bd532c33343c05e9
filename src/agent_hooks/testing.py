"""A test kit for manifests: run one event of a manifest with chosen tools, clock and request.

A host developer wants to pin what a manifest injects without starting its servers, setting
``ENABLE_PREVIEW_FEATURES`` or waiting for the real time to pass::

    run = await run_manifest(manifest, [{"role": "user", "content": "hi"}],
                             tools={"memory_server_get_memories": "- likes tea"})
    assert run.records[0].outcome == "injected"

The app is built exactly as a host builds it (:func:`~agent_hooks.open_app`), with preview
features on for this app only; replaced tools answer before any toolset is asked, so their
servers never start, and everything else (deadlines, templates, trust rules, records) is the real
runtime's.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, TypeAlias

import anyio
from injector import Binder, Module

# Modules under private names: this public module's namespace shows only what it exports.
from agent_hooks import app_factory as _app
from agent_hooks import clock as _clock
from agent_hooks import config as _config
from agent_hooks import messages as _messages
from agent_hooks import runtime as _runtime
from agent_hooks import tools as _tools
from agent_hooks import toolsets as _toolsets
from agent_hooks.config.diagnostics import _suggest

__all__ = ["ToolAnswer", "run_manifest"]

ToolAnswer: TypeAlias = (
    str | Callable[[dict[str, Any]], str | None] | Callable[[dict[str, Any]], Awaitable[str | None]]
)
"""What replaces a tool: its fixed answer, or a function of the rendered arguments (sync or
async) that returns the answer; raising from it is a failing tool."""


async def run_manifest(
    manifest: Mapping[str, Any],
    messages: Iterable[_messages.Message | Mapping[str, Any]],
    *,
    tools: Mapping[str, ToolAnswer] | None = None,
    now: float | None = None,
    request: Mapping[str, Any] | None = None,
    event: _config.HookEvent | str = _config.HookEvent.ON_REQUEST_START,
) -> _runtime.HookRun:
    """Run the hooks of ``event`` of ``manifest`` once on ``messages`` and close the app.

    ``tools`` maps final tool names (``memory_server_get_memories``, ``current_time``) to their
    replacements; ``now`` fixes the app clock (Unix seconds: TTLs, ``current_time``);
    ``request`` is the host's request context the templates see.

    Raises:
        ConfigError: the manifest does not validate (every issue names its JSON path).
        ValueError: a key of ``tools`` is no hook's final tool name.
        HookFailedError: a hook with ``"on_error": "fail"`` failed.
    """
    config = _config.ApplicationConfig.from_dict(dict(manifest), preview=True)
    replacements = _replacements(config, tools or {})
    modules: list[Module] = [_ReplacementModule(replacements)]
    if now is not None:
        modules.append(_app.ClockModule(_clock.FixedClock(now)))
    async with _app.open_app(config, modules, preview=True) as injector:
        runner = injector.get(_runtime.HookRunner)
        return await runner.run(_config.HookEvent(event), messages, request=request)


class _Replacement(_tools.StagedBaseTool):
    """A tool that answers with a fixed string or a test's function instead of the real one.

    A sync function runs in a worker thread, so the hook's deadline applies to it too: a
    function that blocks is abandoned when the hook times out, as a real tool would be.
    """

    def __init__(self, name: str, answer: ToolAnswer) -> None:
        super().__init__(name=name)
        self._answer = answer
        self.answers_at_once = isinstance(answer, str)

    async def execute(self, arguments: Mapping[str, Any]) -> str | None:
        """Raises:
        TypeError: the function returned something other than text or ``None``.
        Exception: whatever the test's function raised.
        """
        answer = self._answer
        if isinstance(answer, str):
            return answer
        if inspect.iscoroutinefunction(answer):
            result = await answer(dict(arguments))
        else:
            result = await anyio.to_thread.run_sync(
                lambda: answer(dict(arguments)), abandon_on_cancel=True
            )
            if inspect.isawaitable(result):  # a callable object with an async __call__
                result = await result
        if result is not None and not isinstance(result, str):
            raise TypeError(
                f"the replacement for {self.name!r} returned {type(result).__name__}, not str"
            )
        return result


class _ReplacementModule(Module):
    """Binds the replaced tools as overrides, and as registered Python tools, so an
    ``internal`` toolset may name a host tool that only the test provides."""

    def __init__(self, replacements: list[_Replacement]) -> None:
        self.replacements = replacements

    def configure(self, binder: Binder) -> None:
        by_name = {tool.name: tool for tool in self.replacements}
        binder.bind(_toolsets.ToolOverrides, to=_toolsets.ToolOverrides(tools=by_name))
        binder.multibind(list[_tools.StagedBaseTool], to=list(self.replacements))


def _replacements(
    config: _config.ApplicationConfig, tools: Mapping[str, ToolAnswer]
) -> list[_Replacement]:
    """One replacement per key of ``tools``, each checked against the hooks' final tool names.

    Raises:
        ValueError: a key names no hook's tool (a typo would silently run the real tool).
    """
    used = list(dict.fromkeys(hook.final_tool_name for hook in config.hooks or []))
    for name in tools:
        if name not in used:
            hint = _suggest.did_you_mean(name, used)
            hint = hint or f" (hooks use: {_suggest.quoted_list(used)})"
            raise ValueError(f"tools: no hook uses a tool named {name!r}{hint}")
    return [_Replacement(name, answer) for name, answer in tools.items()]
