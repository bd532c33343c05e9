"""What manifest authors write: toolsets, hooks, and the app manifest that holds them.

The public names are SPEC section 2's list, nothing more. The layers above import the rest from
its private module: diagnostics (``PATH: message`` lines, did-you-mean suggestions, strict JSON
text, reference and template checks) from :mod:`agent_hooks.config.diagnostics`.

Each name is imported when first used (:mod:`agent_hooks._lazy`): ``run --event`` lists the
events without building the manifest models.
"""

import typing

import agent_hooks._lazy as _lazy

if typing.TYPE_CHECKING:
    from agent_hooks.config._events import HookEvent
    from agent_hooks.config._preview import FeatureSettings, PreviewField
    from agent_hooks.config._signing import SigningSettings
    from agent_hooks.config.application import ApplicationConfig
    from agent_hooks.config.hooks import (
        HookConfig,
        InjectionFrequency,
        RefreshConditionConfig,
        ToolCallHookConfig,
        TTLRefreshCondition,
    )
    from agent_hooks.config.toolsets import (
        DeploymentToolConfig,
        DeploymentToolsetConfig,
        EnvRef,
        ErrorMessageFallbackConfig,
        InternalToolsetConfig,
        McpToolsetConfig,
        RestApiToolsetConfig,
        RestToolConfig,
        StdioServerConfig,
        StreamableHttpServerConfig,
        ToolsetConfig,
    )

__all__ = [
    "ApplicationConfig",
    "DeploymentToolConfig",
    "DeploymentToolsetConfig",
    "EnvRef",
    "ErrorMessageFallbackConfig",
    "FeatureSettings",
    "HookConfig",
    "HookEvent",
    "InjectionFrequency",
    "InternalToolsetConfig",
    "McpToolsetConfig",
    "PreviewField",
    "RefreshConditionConfig",
    "RestApiToolsetConfig",
    "RestToolConfig",
    "SigningSettings",
    "StdioServerConfig",
    "StreamableHttpServerConfig",
    "TTLRefreshCondition",
    "ToolCallHookConfig",
    "ToolsetConfig",
]

__getattr__, __dir__ = _lazy.lazy_exports(
    __name__,
    {
        "ApplicationConfig": "agent_hooks.config.application",
        "DeploymentToolConfig": "agent_hooks.config.toolsets",
        "DeploymentToolsetConfig": "agent_hooks.config.toolsets",
        "EnvRef": "agent_hooks.config.toolsets",
        "ErrorMessageFallbackConfig": "agent_hooks.config.toolsets",
        "FeatureSettings": "agent_hooks.config._preview",
        "HookConfig": "agent_hooks.config.hooks",
        "HookEvent": "agent_hooks.config._events",
        "InjectionFrequency": "agent_hooks.config.hooks",
        "InternalToolsetConfig": "agent_hooks.config.toolsets",
        "McpToolsetConfig": "agent_hooks.config.toolsets",
        "PreviewField": "agent_hooks.config._preview",
        "RefreshConditionConfig": "agent_hooks.config.hooks",
        "RestApiToolsetConfig": "agent_hooks.config.toolsets",
        "RestToolConfig": "agent_hooks.config.toolsets",
        "SigningSettings": "agent_hooks.config._signing",
        "StdioServerConfig": "agent_hooks.config.toolsets",
        "StreamableHttpServerConfig": "agent_hooks.config.toolsets",
        "TTLRefreshCondition": "agent_hooks.config.hooks",
        "ToolCallHookConfig": "agent_hooks.config.hooks",
        "ToolsetConfig": "agent_hooks.config.toolsets",
    },
    globals(),
)
