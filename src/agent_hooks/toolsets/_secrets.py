"""Manifest values that may name an environment variable (``{"env": "NAME"}``) instead of a secret.

They are resolved when a call is made, never when the manifest loads, so a rotated key is picked
up without a restart and a secret never sits in a config object. Every resolved value, literal or
read from the environment, is registered with :mod:`agent_hooks._scrub` before it is used, so no
log line or reason can quote it, and no tool result either, unless it is a literal variable of a
child process. Errors name the variable or the key, never a value.

A value read from the environment has surrounding whitespace stripped (a trailing newline from
``$(cat key.txt)`` is the usual case). What may remain in it depends on where it goes: a header
value must be printable ASCII (HTTP libraries reject anything else with a message that quotes the
value), a child process's environment may hold any text without control characters.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from agent_hooks._scrub import register_secret
from agent_hooks.config.toolsets import EnvRef, SecretValue
from agent_hooks.errors import ToolError

__all__ = ["read_env_secret", "resolve_secret", "resolve_secrets"]

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def read_env_secret(variable: str, *, tool_name: str, for_child_env: bool = False) -> str:
    """The value of environment variable ``variable``, stripped, checked and registered.

    ``for_child_env`` allows non-ASCII text (a child's environment); otherwise the value must fit
    in an HTTP header.

    Raises:
        ToolError: the variable is not set, or holds a character its use does not allow (the
            error names the variable for ``tool_name``).
    """
    try:
        value = os.environ[variable].strip()
    except KeyError:
        raise ToolError(tool_name, f"environment variable {variable!r} is not set") from None
    if value:
        register_secret(value, always_whole=True)  # read from the environment: a secret, any size
    return _checked(value, f"environment variable {variable!r}", tool_name, for_child_env)


def resolve_secret(
    value: SecretValue, *, tool_name: str, key: str | None = None, for_child_env: bool = False
) -> str:
    """A literal as written; an :class:`EnvRef` read from the environment now. Either way the
    value is checked like :func:`read_env_secret` checks it, and registered for scrubbing.

    ``key`` (a header name, a variable name) lets an error about a literal say which one.

    Raises:
        ToolError: the referenced variable is not set, or the value holds a character its use
            does not allow.
    """
    if isinstance(value, EnvRef):
        return read_env_secret(value.env, tool_name=tool_name, for_child_env=for_child_env)
    where = f"the value of {key!r}" if key is not None else "a literal value"
    return _checked(value, where, tool_name, for_child_env)


def resolve_secrets(
    values: Mapping[str, SecretValue], *, tool_name: str, for_child_env: bool = False
) -> dict[str, str]:
    """Every value of ``values`` resolved, keys unchanged: headers, or with ``for_child_env`` a
    child process's environment.

    Raises:
        ToolError: a referenced variable is not set, or a value holds a character its use does
            not allow.
    """
    return {
        key: resolve_secret(value, tool_name=tool_name, key=key, for_child_env=for_child_env)
        for key, value in values.items()
    }


def _checked(value: str, where: str, tool_name: str, for_child_env: bool) -> str:
    # A header value written in the manifest is a secret by declaration, like one read from
    # the environment (SPEC 16): a tool that reflects its request headers must not hand it to
    # the model. A child process's variables are not headers: only logs lose them.
    register_secret(value, in_results=not for_child_env)
    if _CONTROL.search(value):
        raise ToolError(tool_name, f"{where} holds a control character")
    if not for_child_env and not value.isascii():
        raise ToolError(tool_name, f"{where} holds a non-ASCII character (it is an HTTP header)")
    return value
