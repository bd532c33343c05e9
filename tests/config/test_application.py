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


def test_two_unnamed_deployment_toolsets_must_be_told_apart() -> None:
    with pytest.raises(ConfigError) as caught:
        ApplicationConfig.from_dict({"toolsets": [DEPLOYMENT, DEPLOYMENT]})
    assert [str(issue) for issue in caught.value.issues] == [
        "toolsets[1].name: duplicate toolset name 'deployment' (first used at toolsets[0])"
    ]
