"""What manifest authors write: toolsets, hooks, and the app manifest that holds them."""

from agent_hooks.config._preview import FeatureSettings, PreviewField
from agent_hooks.config.application import ApplicationConfig
from agent_hooks.config.hooks import (
    HookConfig,
    HookEvent,
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
    "StdioServerConfig",
    "StreamableHttpServerConfig",
    "TTLRefreshCondition",
    "ToolCallHookConfig",
    "ToolsetConfig",
]
