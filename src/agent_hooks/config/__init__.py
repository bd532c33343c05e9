"""What manifest authors write: toolsets, hooks, and the app manifest that holds them.

The public names are SPEC section 2's list, nothing more. The layers above import the rest from
its private module: diagnostics (``PATH: message`` lines, did-you-mean suggestions, strict JSON
text, reference and template checks) from :mod:`agent_hooks.config.diagnostics`.
"""

from agent_hooks.config._preview import FeatureSettings, PreviewField
from agent_hooks.config._signing import SigningSettings
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
    "SigningSettings",
    "StdioServerConfig",
    "StreamableHttpServerConfig",
    "TTLRefreshCondition",
    "ToolCallHookConfig",
    "ToolsetConfig",
]
