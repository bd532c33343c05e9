"""The public API of SPEC section 2: importable, and nothing else leaking out."""

from __future__ import annotations

import importlib

import pytest

PUBLIC = {
    "agent_hooks.messages": {"Message", "Role", "ToolCall", "FunctionCall"},
    "agent_hooks.config": {
        "ApplicationConfig", "HookConfig", "HookEvent", "ToolCallHookConfig",
        "TTLRefreshCondition", "RefreshConditionConfig", "PreviewField", "FeatureSettings",
    },
    "agent_hooks.injection": {
        "InjectionFrequency", "MessagesTransformer", "SyntheticToolCallInjector",
        "StagedToolSyntheticInjector",
    },
    "agent_hooks.tools": {
        "StagedBaseTool", "ToolCallResult", "ToolCallResultEnricher", "sanitize_toolname",
    },
    "agent_hooks": {
        "AgentHooksModule", "preview_module", "create_injector", "open_app", "ClockModule",
        "HookEvent", "HookRunner", "HookRun", "HookRunRecord", "HookOutcome", "HookObserver",
        "HookFailedError",
    },
    "agent_hooks.clock": {"Clock", "SystemClock", "FixedClock"},
    "agent_hooks.testing": {"run_manifest"},
    "agent_hooks.state": {"ConversationStore", "open_store"},
}  # fmt: skip


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_spec_names_are_exported(module_name: str) -> None:
    module = importlib.import_module(module_name)
    assert PUBLIC[module_name] <= set(module.__all__)
    for name in PUBLIC[module_name]:
        assert getattr(module, name) is not None


def _isort_style(name: str) -> tuple[int, str]:
    """CONSTANTS, then Classes, then functions — the order ruff's RUF022 keeps."""
    rank = 0 if name.isupper() else 1 if name[:1].isupper() else 2
    return rank, name


@pytest.mark.parametrize("module_name", sorted(PUBLIC))
def test_all_is_sorted_and_lists_only_public_names(module_name: str) -> None:
    module = importlib.import_module(module_name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_isort_style)
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_")
        and not isinstance(value, type(importlib))
        and getattr(value, "__module__", module_name).startswith("agent_hooks")
    }
    assert public <= set(exported), f"public but not in __all__: {public - set(exported)}"
