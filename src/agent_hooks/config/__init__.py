"""What manifest authors write: toolsets, hooks, and the app manifest that holds them.

Also the layer's API for the layers above: diagnostics (``PATH: message`` lines, did-you-mean
suggestions), strict JSON text, reference warnings, the template rule, and the signing settings.
"""

from agent_hooks.config._preview import FeatureSettings, PreviewField
from agent_hooks.config._signing import SigningSettings
from agent_hooks.config.application import ApplicationConfig
from agent_hooks.config.diagnostics._jsontext import parse_json_text
from agent_hooks.config.diagnostics._references import reference_warnings
from agent_hooks.config.diagnostics._suggest import clip, did_you_mean, quoted_list
from agent_hooks.config.diagnostics._template_checks import is_templated
from agent_hooks.config.diagnostics._validation_errors import (
    format_path,
    issues_from_validation_error,
)
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
    "clip",
    "did_you_mean",
    "format_path",
    "is_templated",
    "issues_from_validation_error",
    "parse_json_text",
    "quoted_list",
    "reference_warnings",
]
