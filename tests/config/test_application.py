"""ApplicationConfig details pinned by SPEC section 3 beyond the error corpus."""

from __future__ import annotations

import pytest

from agent_hooks.config import ApplicationConfig, DeploymentToolsetConfig
from agent_hooks.errors import ConfigError

DEPLOYMENT = {
    "type": "deployment",
    "endpoint": "https://dial.example.com",
    "api_key_env": "DIAL_API_KEY",
    "tools": [{"name": "My_Summarizer_tool", "deployment": "gpt-4o-mini"}],
}


def test_a_deployment_toolset_needs_no_name() -> None:
    config = ApplicationConfig.from_dict({"toolsets": [DEPLOYMENT]})
    (toolset,) = config.toolsets
    assert isinstance(toolset, DeploymentToolsetConfig)
    assert toolset.name == "deployment"


def test_deployment_toolsets_without_a_name_may_coexist_but_a_name_given_twice_may_not() -> None:
    assert len(ApplicationConfig.from_dict({"toolsets": [DEPLOYMENT, DEPLOYMENT]}).toolsets) == 2
    named = {**DEPLOYMENT, "name": "dial"}
    with pytest.raises(ConfigError) as caught:
        ApplicationConfig.from_dict({"toolsets": [named, named]})
    assert [str(issue) for issue in caught.value.issues] == [
        "toolsets[1].name: duplicate toolset name 'dial' (first used at toolsets[0])"
    ]
