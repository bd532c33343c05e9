"""Real helpers shared by tests: a scripted tool, OpenAI-shaped messages, host tools in DI.

The rest lives beside this module: :mod:`tests._support.manifests` (the clock toolset and a hook),
:mod:`tests._support.flaky` (the flaky MCP test server in a manifest, its start log) and
:mod:`tests._support.clocks` (a clock the test moves). One helper has one home here; a test
module that needs it imports it rather than writing its own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from injector import Module, multiprovider

from agent_hooks.injection._ids import call_id_prefix, prefixed_call_id
from agent_hooks.messages import Message
from agent_hooks.tools import StagedBaseTool


class ScriptedTool(StagedBaseTool):
    """A real tool whose answers are scripted: each run returns the next item (repeating the last).

    An item that is an exception is raised instead, so failure paths run through ``arun``.
    """

    def __init__(self, name: str, *answers: str | Exception | None) -> None:
        super().__init__(name=name)
        self.answers = list(answers) or ["ok"]
        self.calls: list[dict[str, Any]] = []

    async def execute(self, arguments: Mapping[str, Any]) -> str | None:
        self.calls.append(dict(arguments))
        answer = self.answers[min(len(self.calls), len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer


def msg(**fields: Any) -> Message:
    """A message exactly as an OpenAI client would send it."""
    return Message.model_validate(fields)


class HostTools(Module):
    """How a host registers its own Python tools: a multiprovider of ``list[StagedBaseTool]``."""

    def __init__(self, *tools: StagedBaseTool) -> None:
        self.tools = list(tools)

    @multiprovider
    def provide_tools(self) -> list[StagedBaseTool]:
        return self.tools


def synthetic_id(
    tool: str, arguments: Mapping[str, Any], content: str, *, ttl_expiry_seconds: int | None = None
) -> str:
    """The unsigned SPEC section 4 id of a pair of ``tool`` with ``arguments`` and ``content``."""
    return prefixed_call_id(
        call_id_prefix(tool, arguments), content, ttl_expiry_seconds=ttl_expiry_seconds
    )


SYSTEM = {"role": "system", "content": "be brief"}
USER = {"role": "user", "content": "hello", "x-vendor": 1}


def pair(tool: str, content: str, **ttl: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """A synthetic pair of ``tool`` without arguments, as OpenAI chat dicts (``ttl``:
    ``ttl_expiry_seconds=...`` stamps an expiry)."""
    call_id = synthetic_id(tool, {}, content, **ttl)
    call = {"id": call_id, "type": "function", "function": {"name": tool, "arguments": "{}"}}
    return (
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": content},
    )
