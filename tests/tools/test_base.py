"""The StagedBaseTool contract: stages, fallback strategies, subclass rules."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from agent_hooks.errors import ToolError
from agent_hooks.tools import ErrorMessageStrategy, StagedBaseTool, StageLevel, ToolCallResult
from agent_hooks.tools._fallback import FallbackProcessor
from tests._support import ScriptedTool


class RecordingReporter:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, StageLevel, str | None]] = []

    def stage_started(self, *, tool_call_id: str, tool_name: str, level: StageLevel) -> None:
        self.events.append(("start", tool_name, level, None))

    def stage_finished(
        self, *, tool_call_id: str, tool_name: str, level: StageLevel, error: BaseException | None
    ) -> None:
        self.events.append(("end", tool_name, level, type(error).__name__ if error else None))


async def test_arun_reports_a_stage_around_the_run() -> None:
    reporter = RecordingReporter()
    tool = ScriptedTool("t", "done")
    tool.stage_reporter = reporter
    result = await tool.arun("call_1", stage_level=StageLevel.HIDDEN, q="x")
    assert result == ToolCallResult(tool_call_id="call_1", content="done", tool_name="t")
    assert tool.calls == [{"q": "x"}]
    assert reporter.events == [
        ("start", "t", StageLevel.HIDDEN, None),
        ("end", "t", StageLevel.HIDDEN, None),
    ]


async def test_without_a_matching_strategy_the_exception_propagates() -> None:
    tool = ScriptedTool("t", ValueError("bad"))
    tool.fallback = FallbackProcessor([ErrorMessageStrategy(exception_types=(ToolError,))])
    with pytest.raises(ValueError, match="bad"):
        await tool.arun("call_1")


async def test_a_matching_strategy_turns_the_exception_into_content() -> None:
    reporter = RecordingReporter()
    tool = ScriptedTool("t", ToolError("t", "server down"))
    tool.stage_reporter = reporter
    tool.fallback = FallbackProcessor(
        [
            ErrorMessageStrategy("never", exception_types=(KeyError,)),
            ErrorMessageStrategy("{tool}: {error}", exception_types=(ToolError,)),
        ]
    )
    result = await tool.arun("call_1")
    assert result.content == "t: tool 't' failed: server down"
    assert result.from_fallback
    assert reporter.events[-1] == ("end", "t", StageLevel.VISIBLE, "ToolError")


def test_a_tool_must_implement_execute_or_arun_but_an_intermediate_base_need_not() -> None:
    class HostToolBase(StagedBaseTool):
        """A host's own shared base class: defining it is fine."""

    class Nothing(HostToolBase):
        name = "nothing"

    with pytest.raises(TypeError, match="execute"):
        Nothing()


async def test_a_subclass_that_skips_super_init_still_runs() -> None:
    class NoSuper(StagedBaseTool):
        name = "no_super"

        def __init__(self) -> None:
            pass

        async def execute(self, arguments: Mapping[str, Any]) -> str:
            return "fine"

    result = await NoSuper().arun("c")
    assert result == ToolCallResult(content="fine", tool_call_id="c", tool_name="no_super")


async def test_a_subclass_may_override_arun_and_use_a_class_attribute_name() -> None:
    class Echo(StagedBaseTool):
        name = "echo"

        async def arun(
            self, tool_call_id: str, *, stage_level: StageLevel = StageLevel.VISIBLE, **kw: Any
        ) -> ToolCallResult:
            return ToolCallResult(content=str(kw))

    assert (await Echo().arun("c", a=1)).content == "{'a': 1}"


def test_a_tool_needs_a_name() -> None:
    class Anonymous(StagedBaseTool):
        async def execute(self, arguments: Mapping[str, Any]) -> str:
            return ""

    with pytest.raises(TypeError, match="needs a name"):
        Anonymous()


class Recorder(StagedBaseTool):
    name = "recorder"

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        return json.dumps(dict(arguments), sort_keys=True)


async def test_arguments_of_any_name_reach_the_tool() -> None:
    arguments = {"tool_call_id": "mine", "stage_level": "also mine", "arguments": 1}
    result = await Recorder().invoke("call_1", arguments, stage_level=StageLevel.HIDDEN)
    assert json.loads(result.content or "") == arguments
    assert result.tool_call_id == "call_1"


class LegacyOverride(StagedBaseTool):
    """A host subclass written against 0.1: ``arun`` overridden with keyword arguments."""

    name = "legacy"

    async def arun(
        self, tool_call_id: str, *, stage_level: StageLevel = StageLevel.VISIBLE, **arguments: Any
    ) -> ToolCallResult:
        return ToolCallResult(tool_call_id=tool_call_id, content=f"{stage_level}:{arguments}")


async def test_an_old_shape_arun_override_is_still_called_with_keyword_arguments() -> None:
    result = await LegacyOverride().invoke("c", {"q": "x"}, stage_level=StageLevel.HIDDEN)
    assert result.content == "hidden:{'q': 'x'}"
