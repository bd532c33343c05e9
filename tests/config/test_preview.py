"""SPEC section 5: preview fields and preview modules."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from injector import Binder, Module, UnsatisfiedRequirement

from agent_hooks import AgentHooksModule, create_injector, preview_module
from agent_hooks.config import ApplicationConfig, FeatureSettings, PreviewField
from agent_hooks.injection import MessagesTransformer

MANIFEST: dict[str, Any] = {
    "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
    "hooks": [{"kind": "tool_call", "event": "on_request_start", "tool_name": "current_time"}],
}


def test_feature_settings_read_the_environment_each_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENABLE_PREVIEW_FEATURES", raising=False)
    assert FeatureSettings().enable_preview_features is False
    monkeypatch.setenv("ENABLE_PREVIEW_FEATURES", "true")
    assert FeatureSettings().enable_preview_features is True


@pytest.mark.usefixtures("preview_off")
def test_preview_off_nullifies_hooks_with_one_warning_naming_the_field(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        config = ApplicationConfig.model_validate(MANIFEST)
    assert config.hooks is None
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "hooks" in warnings[0].getMessage()


@pytest.mark.usefixtures("preview_off")
def test_preview_off_does_not_reject_hooks_it_ignores() -> None:
    config = ApplicationConfig.model_validate({"hooks": [{"kind": "no-such-kind"}]})
    assert config.hooks is None


@pytest.mark.usefixtures("preview_on")
def test_preview_on_keeps_hooks(caplog: pytest.LogCaptureFixture) -> None:
    config = ApplicationConfig.model_validate(MANIFEST)
    assert config.hooks is not None
    assert config.hooks[0].tool_name == "current_time"
    assert not caplog.records


@pytest.mark.usefixtures("preview_off")
def test_schema_without_preview_leaves_out_the_field_and_its_definitions() -> None:
    schema = ApplicationConfig.model_json_schema()
    assert "hooks" not in schema["properties"]
    assert "hooks" not in schema.get("required", [])
    for unused in ("ToolCallHookConfig", "TTLRefreshCondition"):
        assert unused not in schema.get("$defs", {})
    assert "McpToolsetConfig" in schema["$defs"]


@pytest.mark.usefixtures("preview_on")
def test_schema_with_preview_marks_the_field() -> None:
    schema = ApplicationConfig.model_json_schema()
    assert schema["properties"]["hooks"]["x-preview"] is True
    assert "ToolCallHookConfig" in schema["$defs"]


def test_preview_field_must_default_to_none() -> None:
    with pytest.raises(ValueError, match="default to None"):
        PreviewField(default=[])  # type: ignore[arg-type]


class _Marker:
    pass


@preview_module
class HostPreviewModule(Module):
    def configure(self, binder: Binder) -> None:
        binder.bind(_Marker, to=_Marker())


def _has_marker(modules: list[Any]) -> bool:
    injector = create_injector(ApplicationConfig.model_validate(MANIFEST), modules)
    try:
        injector.get(_Marker)
    except UnsatisfiedRequirement:
        return False
    return True


@pytest.mark.usefixtures("preview_off")
def test_preview_modules_are_not_installed_when_preview_is_off() -> None:
    injector = create_injector(ApplicationConfig.model_validate(MANIFEST), [HostPreviewModule()])
    assert injector.get(list[MessagesTransformer]) == []
    assert not _has_marker([HostPreviewModule()])
    assert not _has_marker([HostPreviewModule])


@pytest.mark.usefixtures("preview_on")
def test_preview_modules_are_installed_when_preview_is_on() -> None:
    assert _has_marker([HostPreviewModule()])
    injector = create_injector(ApplicationConfig.model_validate(MANIFEST))
    assert len(injector.get(list[MessagesTransformer])) == 1


def test_the_package_hooks_module_is_a_preview_module() -> None:
    from agent_hooks._preview_module import is_preview_module

    assert is_preview_module(AgentHooksModule)


@preview_module
def function_style_preview_module(binder: Binder) -> None:
    binder.bind(_Marker, to=_Marker())


@pytest.mark.usefixtures("preview_off")
def test_function_style_preview_modules_are_skipped_too() -> None:
    assert not _has_marker([function_style_preview_module])


@pytest.mark.usefixtures("preview_on")
def test_function_style_preview_modules_are_installed_with_preview_on() -> None:
    assert _has_marker([function_style_preview_module])
