"""The adapters' package: no framework imported until an adapter is, one public name each."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

FRAMEWORKS = ("agents", "pydantic_ai", "langchain", "langgraph", "litellm", "aidial_sdk")

ADAPTERS = {
    "agent_hooks.integrations.openai_agents": ["AgentHooks"],
    "agent_hooks.integrations.pydantic_ai": ["AgentHooksCapability"],
    "agent_hooks.integrations.langchain": ["AgentHooksMiddleware"],
    "agent_hooks.integrations.litellm": ["AgentHooksCallback", "handler"],
    "agent_hooks.integrations.dial": ["AgentHooksChatCompletion"],
}


def test_importing_the_package_and_the_state_imports_no_framework() -> None:
    code = (
        "import sys, agent_hooks, agent_hooks.integrations, agent_hooks.state\n"
        f"print(sorted(set({FRAMEWORKS!r}) & set(sys.modules)))"
    )
    found = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert found.strip() == "[]"


@pytest.mark.parametrize(("module_name", "adapter"), sorted(ADAPTERS.items()))
def test_each_adapter_module_exports_its_adapter_only(module_name: str, adapter: list[str]) -> None:
    module = importlib.import_module(module_name)
    assert module.__all__ == adapter
    public = {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and getattr(value, "__module__", None) == module_name
    }
    assert public == {adapter[0]}
