"""Toolset declarations: where the tools that hooks call live.

Secrets never need to be written into a manifest: a header or environment value written as
``{"env": "NAME"}`` is read from the environment variable ``NAME`` when the call is made.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from agent_hooks.config._base import JsonNumber, StrictModel, require_in_schema

__all__ = [
    "DEFAULT_TIMEOUT_SECONDS",
    "DeploymentToolConfig",
    "DeploymentToolsetConfig",
    "EnvRef",
    "ErrorMessageFallbackConfig",
    "InternalToolsetConfig",
    "McpServerConfig",
    "McpToolsetConfig",
    "RestApiToolsetConfig",
    "RestToolConfig",
    "SecretValue",
    "StdioServerConfig",
    "StreamableHttpServerConfig",
    "ToolsetConfig",
]


class EnvRef(StrictModel):
    """A value read from an environment variable at call time, so it never sits in the manifest."""

    env: str = Field(min_length=1, examples=["MEMORY_API_TOKEN"])
    """Name of the environment variable."""


SecretValue = str | EnvRef
"""A literal string, or ``{"env": "NAME"}`` to read it from the environment."""


class ErrorMessageFallbackConfig(StrictModel):
    """Turn any tool error into this text, which is then injected as the tool's result."""

    model_config = ConfigDict(json_schema_extra=require_in_schema("kind"))

    kind: Literal["error_message"] = "error_message"
    """Discriminator: a fixed message template."""

    template: str = Field(
        default="The tool {tool} is unavailable: {error}",
        examples=["Memories are unavailable right now ({error})."],
    )
    """Text shown instead of the result; ``{tool}`` and ``{error}`` are filled in."""


FallbackConfig = Annotated[ErrorMessageFallbackConfig, Field(discriminator="kind")]

DEFAULT_TIMEOUT_SECONDS = 30.0
"""How long a tool call may take when nothing says otherwise."""


class _ToolsetBase(StrictModel):
    name: str = Field(min_length=1, examples=["memory_server"])
    """Unique name of the toolset; prefixes the final names of ``mcp`` and ``rest-api`` tools."""

    timeout_seconds: JsonNumber = Field(default=DEFAULT_TIMEOUT_SECONDS, gt=0, examples=[10])
    """Longest time one tool call (and, for ``mcp``, starting the session) may take before it
    counts as failed. Must be greater than 0."""

    fallback: FallbackConfig | None = Field(
        default=None,
        examples=[{"kind": "error_message", "template": "Memories are unavailable ({error})."}],
    )
    """What the model sees when a tool fails. Without one, a failing tool skips the injection."""


class StdioServerConfig(StrictModel):
    """An MCP server started as a child process speaking over stdin/stdout."""

    model_config = ConfigDict(json_schema_extra=require_in_schema("transport"))

    transport: Literal["stdio"] = "stdio"
    """Discriminator: a child process."""

    command: str = Field(min_length=1, examples=["python"])
    """Executable to start."""

    args: list[str] = Field(default_factory=list, examples=[["-m", "memory_server"]])
    """Command-line arguments."""

    env: dict[str, SecretValue] = Field(
        default_factory=dict,
        examples=[{"MEMORY_DB": "/var/lib/memories.sqlite3", "TOKEN": {"env": "MEMORY_TOKEN"}}],
    )
    """Variables merged over the MCP SDK's default child environment (``HOME``, ``PATH`` and a
    few others, not the whole parent environment); ``{"env": "NAME"}`` copies a variable."""

    cwd: str | None = Field(default=None, examples=["/srv/memory-server"])
    """Working directory of the child process; ours when omitted."""


class StreamableHttpServerConfig(StrictModel):
    """An MCP server reached over the streamable HTTP transport."""

    model_config = ConfigDict(json_schema_extra=require_in_schema("transport"))

    transport: Literal["streamable_http"] = "streamable_http"
    """Discriminator: streamable HTTP."""

    url: str = Field(min_length=1, examples=["http://127.0.0.1:8000/mcp"])
    """The server's MCP endpoint."""

    headers: dict[str, SecretValue] = Field(
        default_factory=dict, examples=[{"Authorization": {"env": "MEMORY_SERVER_AUTH"}}]
    )
    """Headers sent with every request; ``{"env": "NAME"}`` reads a value from the environment."""


McpServerConfig = Annotated[
    StdioServerConfig | StreamableHttpServerConfig, Field(discriminator="transport")
]


class McpToolsetConfig(_ToolsetBase):
    """Tools of an MCP server; final names are ``{toolset}_{tool}``, sanitised."""

    model_config = ConfigDict(json_schema_extra=require_in_schema("type"))

    type: Literal["mcp"] = "mcp"
    """Discriminator: an MCP server."""

    server: McpServerConfig = Field(
        examples=[
            {
                "transport": "stdio",
                "command": "python",
                "args": ["examples/memory-server/memory_server.py"],
            }
        ]
    )
    """How to reach the server: a child process (``stdio``) or a URL (``streamable_http``)."""

    allowed_tools: list[str] | None = Field(default=None, examples=[["get_memories"]])
    """Only these server tools (server names, not prefixed) are offered; all when omitted."""


class RestToolConfig(StrictModel):
    """One endpoint of a REST API, offered as a tool."""

    name: str = Field(min_length=1, examples=["get_preferences"])
    """Tool name within the toolset."""

    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = Field(
        default="GET", examples=["POST"]
    )
    """HTTP method. Arguments not used in the path go to the query (GET, DELETE) or JSON body."""

    path: str = Field(examples=["/users/{user_id}/preferences"])
    """Path under ``base_url``; each ``{param}`` placeholder is filled from the argument of that
    name as one percent-encoded segment (``/`` becomes ``%2F``); an empty, ``.`` or ``..`` value
    is a tool error, so an argument never leads the request to another endpoint."""

    description: str = Field(default="", examples=["The user's language, tone and units."])
    """What the tool does, for the model."""

    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}},
        examples=[
            {
                "type": "object",
                "properties": {"user_id": {"type": "string"}},
                "required": ["user_id"],
            }
        ],
    )
    """JSON schema of the arguments, shown to the model."""


class RestApiToolsetConfig(_ToolsetBase):
    """Endpoints of a REST API; final names are ``{toolset}_{tool}``, sanitised."""

    model_config = ConfigDict(json_schema_extra=require_in_schema("type"))

    type: Literal["rest-api"] = "rest-api"
    """Discriminator: a REST API."""

    base_url: str = Field(min_length=1, examples=["https://prefs.example.com/api"])
    """URL the tool paths are appended to."""

    headers: dict[str, SecretValue] = Field(
        default_factory=dict, examples=[{"Authorization": {"env": "PREFS_API_TOKEN"}}]
    )
    """Headers sent with every request; ``{"env": "NAME"}`` reads a value from the environment."""

    tools: list[RestToolConfig] = Field(
        default_factory=list,
        examples=[[{"name": "get_preferences", "path": "/users/{user_id}/preferences"}]],
    )
    """The endpoints offered as tools."""


class DeploymentToolConfig(StrictModel):
    """A chat-completion deployment offered as a tool under its verbatim name."""

    name: str = Field(min_length=1, examples=["My_Summarizer_tool"])
    """Final function name (not prefixed)."""

    deployment: str = Field(min_length=1, examples=["gpt-4o-mini"])
    """Deployment id in ``/openai/deployments/{deployment}/chat/completions``."""

    description: str = Field(default="", examples=["Summarises a text in three sentences."])
    """What the tool does, for the model."""


class DeploymentToolsetConfig(_ToolsetBase):
    """Model deployments behind an OpenAI-compatible (DIAL-shaped) chat-completions endpoint."""

    model_config = ConfigDict(json_schema_extra=require_in_schema("type"))

    type: Literal["deployment"] = "deployment"
    """Discriminator: chat-completion deployments."""

    name: str = Field(default="deployment", min_length=1, examples=["dial"])
    """Unique name of the toolset, for diagnostics only (deployment tools keep their own names).
    Optional; give one when you declare more than one deployment toolset."""

    endpoint: str = Field(min_length=1, examples=["https://dial.example.com"])
    """Base URL; requests go to ``{endpoint}/openai/deployments/{deployment}/chat/completions``."""

    api_key_env: str | None = Field(default=None, examples=["DIAL_API_KEY"])
    """Environment variable holding the key sent as the ``api-key`` header."""

    tools: list[DeploymentToolConfig] = Field(
        default_factory=list,
        examples=[[{"name": "My_Summarizer_tool", "deployment": "gpt-4o-mini"}]],
    )
    """The deployments offered as tools."""


class InternalToolsetConfig(_ToolsetBase):
    """Python tools the host registered through DI, selected by name (used verbatim)."""

    model_config = ConfigDict(json_schema_extra=require_in_schema("type"))

    type: Literal["internal"] = "internal"
    """Discriminator: tools registered in the host process."""

    tools: list[str] = Field(default_factory=list, examples=[["current_time"]])
    """Names of registered tools to offer; ``current_time`` is built in."""


ToolsetConfig = Annotated[
    McpToolsetConfig | RestApiToolsetConfig | DeploymentToolsetConfig | InternalToolsetConfig,
    Field(discriminator="type"),
]
"""Any toolset a manifest may declare (discriminated on ``type``)."""
