"""Manifest values that may name an environment variable (``{"env": "NAME"}``) instead of a secret.

They are resolved when a call is made, never when the manifest loads, so a rotated key is picked
up without a restart and a secret never sits in a config object. Errors name the variable, never
a value.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from agent_hooks.config.toolsets import EnvRef, SecretValue
from agent_hooks.errors import ToolError

__all__ = ["read_env_secret", "resolve_secret", "resolve_secrets"]


def read_env_secret(variable: str, *, tool_name: str) -> str:
    """The value of environment variable ``variable``.

    Raises:
        ToolError: the variable is not set (the error names the variable for ``tool_name``).
    """
    try:
        return os.environ[variable]
    except KeyError:
        raise ToolError(tool_name, f"environment variable {variable!r} is not set") from None


def resolve_secret(value: SecretValue, *, tool_name: str) -> str:
    """A literal as is; an :class:`EnvRef` read from the environment now.

    Raises:
        ToolError: the referenced variable is not set.
    """
    if isinstance(value, EnvRef):
        return read_env_secret(value.env, tool_name=tool_name)
    return value


def resolve_secrets(values: Mapping[str, SecretValue], *, tool_name: str) -> dict[str, str]:
    """Every value of ``values`` resolved, keys unchanged (headers, child environments).

    Raises:
        ToolError: a referenced variable is not set.
    """
    return {key: resolve_secret(value, tool_name=tool_name) for key, value in values.items()}
