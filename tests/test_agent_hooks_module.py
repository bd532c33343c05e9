"""AgentHooksModule and the config-driven hook it builds (seed Components 3 and 4)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pytest
from injector import Binder, Module, multiprovider

from agent_hooks import AgentHooksModule, create_injector
from agent_hooks.clock import FixedClock
from agent_hooks.config import ApplicationConfig, ToolCallHookConfig
from agent_hooks.injection import MessagesTransformer
from agent_hooks.messages import Message, Role
from agent_hooks.tools import StagedBaseTool, ToolCallResult, ToolCallResultEnricher
from tests._support import HostTools, ScriptedTool, msg
from tests._support.manifests import hook

pytestmark = pytest.mark.usefixtures("preview_on")


def app(hooks: list[dict[str, Any]] | None, *tools: StagedBaseTool) -> list[MessagesTransformer]:
    names = [tool.name for tool in tools]
    config = ApplicationConfig.model_validate(
        {"toolsets": [{"type": "internal", "name": "host", "tools": names}], "hooks": hooks}
    )
    return create_injector(config, [HostTools(*tools)]).get(list[MessagesTransformer])


@pytest.mark.parametrize("hooks", [None, []])
def test_no_hooks_means_an_empty_transformer_list(hooks: list[dict[str, Any]] | None) -> None:
    assert app(hooks) == []


def test_transformers_come_in_manifest_order() -> None:
    tools = [ScriptedTool(name, name) for name in ("b_tool", "a_tool", "c_tool")]
    transformers = app([hook(t.name) for t in tools], *tools)
    assert [t.hook.tool for t in transformers] == ["b_tool", "a_tool", "c_tool"]  # type: ignore[attr-defined]


def test_completion_hooks_are_not_request_start_transformers() -> None:
    completion = {**hook("current_time"), "event": "on_completion"}
    (transformer,) = app([completion, hook("current_time")])
    assert transformer.hook.index == 1  # type: ignore[attr-defined]


def test_toolset_prefix_is_sanitized_into_the_final_name() -> None:
    config = ToolCallHookConfig.model_validate({**hook("get data"), "toolset_name": "my server"})
    assert config.final_tool_name == "my_server_get_data"


async def test_tool_name_without_toolset_is_used_verbatim() -> None:
    summarizer = ScriptedTool("My_Summarizer_tool", "summary")
    (transformer,) = app([hook("My_Summarizer_tool", frequency="always")], summarizer)
    result = await transformer.transform([msg(role="user", content="hi")])
    assert result[-1].content == "summary"
    assert result[-2].tool_calls is not None
    assert result[-2].tool_calls[0].function.name == "My_Summarizer_tool"


async def test_failing_tool_skips_the_injection_with_one_warning_naming_the_hook(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = ScriptedTool("broken", RuntimeError("backend exploded"))
    (transformer,) = app([hook("broken", name="memories")], broken)
    history = [msg(role="user", content="hi")]
    with caplog.at_level(logging.INFO, logger="agent_hooks"):
        result = await transformer.transform(history)
    assert result == history
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    text = warnings[0].getMessage()
    assert "hook=memories" in text
    assert "backend exploded" in text


async def test_missing_tool_skips_the_injection_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    (transformer,) = app([hook("nowhere")])
    history = [msg(role="user", content="hi")]
    assert await transformer.transform(history) == history
    (warning,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "hook=hooks[0]" in warning.getMessage()
    assert "nowhere" in warning.getMessage()


async def test_configured_fallback_text_is_injected_as_is() -> None:
    broken = ScriptedTool("broken", RuntimeError("down"))
    config = ApplicationConfig.model_validate(
        {
            "toolsets": [
                {
                    "type": "internal",
                    "name": "host",
                    "tools": ["broken"],
                    "fallback": {"kind": "error_message", "template": "{tool} is down ({error})"},
                }
            ],
            "hooks": [hook("broken")],
        }
    )
    (transformer,) = create_injector(config, [HostTools(broken)]).get(list[MessagesTransformer])
    result = await transformer.transform([msg(role="user", content="hi")])
    assert result[-1].role is Role.TOOL
    assert result[-1].content == "broken is down (down)"


async def test_hook_injects_the_built_in_current_time_from_the_app_clock() -> None:
    class Clock2030(Module):
        def configure(self, binder: Binder) -> None:
            from agent_hooks.clock import Clock

            binder.bind(Clock, to=FixedClock(1_900_000_000))  # type: ignore[type-abstract]

    config = ApplicationConfig.model_validate(
        {
            "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
            "hooks": [hook("current_time")],
        }
    )
    (transformer,) = create_injector(config, [Clock2030()]).get(list[MessagesTransformer])
    result = await transformer.transform([msg(role="user", content="what time is it?")])
    assert result[-1].content == "2030-03-17T17:46:40Z"


class NumberTool(StagedBaseTool):
    """A naive host tool that returns a number where text is expected."""

    name = "answer"

    async def execute(self, arguments: Mapping[str, Any]) -> Any:
        return 42


class ExplodingEnricher(ToolCallResultEnricher):
    def enrich(self, message: Message, result: ToolCallResult) -> Message:
        raise RuntimeError("enricher boom")


class Enrichers(Module):
    @multiprovider
    def provide(self) -> list[ToolCallResultEnricher]:
        return [ExplodingEnricher()]


async def test_a_tool_returning_something_other_than_text_is_skipped_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    (transformer,) = app([hook("answer")], NumberTool())
    history = [msg(role="user", content="hi")]
    assert await transformer.transform(history) == history
    (warning,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "tool returned int, not text" in warning.getMessage()


async def test_a_failing_enricher_skips_the_injection_instead_of_failing_the_request(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config = ApplicationConfig.model_validate(
        {
            "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
            "hooks": [hook("current_time")],
        }
    )
    (transformer,) = create_injector(config, [Enrichers()]).get(list[MessagesTransformer])
    history = [msg(role="user", content="hi")]
    assert await transformer.transform(history) == history
    (warning,) = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert "enricher boom" in warning.getMessage()


@pytest.mark.parametrize("module", [AgentHooksModule, AgentHooksModule()])
def test_a_host_installing_the_hooks_module_itself_gets_each_hook_once(module: Any) -> None:
    config = ApplicationConfig.model_validate(
        {
            "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
            "hooks": [hook("current_time")],
        }
    )
    assert len(create_injector(config, [module]).get(list[MessagesTransformer])) == 1


async def test_a_registered_tool_is_reachable_by_name_without_an_internal_toolset() -> None:
    config = ApplicationConfig.model_validate({"hooks": [hook("current_time")]})
    (transformer,) = create_injector(config).get(list[MessagesTransformer])
    result = await transformer.transform([msg(role="user", content="hi")])
    assert result[-1].role is Role.TOOL
    assert result[-1].content is not None
