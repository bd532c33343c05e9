"""REST endpoints as tools (``rest-api`` toolsets).

A tool's ``{param}`` placeholders are filled from the arguments, each percent-encoded as one path
segment (a ``/`` in a value is ``%2F``; an empty, ``.`` or ``..`` value is refused, so a templated
value can never lead the request to another endpoint with the toolset's headers); the remaining
arguments go to the query string (GET, DELETE) or a JSON body (POST, PUT, PATCH). The response
body text is the result (its start, when the body is longer than the call's byte bound). Headers
are resolved at call time, so ``{"env": "NAME"}`` values follow the environment and never sit in a
client object.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from agent_hooks._scrub import register_url
from agent_hooks.config.diagnostics._suggest import quoted_list
from agent_hooks.config.toolsets import RestApiToolsetConfig, RestToolConfig, SecretValue
from agent_hooks.errors import ToolError
from agent_hooks.tools import StagedBaseTool, sanitize_toolname
from agent_hooks.tools._call_context import current_call_context, note
from agent_hooks.toolsets._http import HttpToolset, ToolHttpClient
from agent_hooks.toolsets._secrets import resolve_secrets

__all__ = ["RestApiToolset", "RestTool", "fill_path"]

_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")
_QUERY_METHODS = frozenset({"GET", "DELETE"})
_NOT_A_SEGMENT = frozenset({"", ".", ".."})
"""Values that percent-encoding leaves as they are and that move a URL's path (RFC 3986 dot
segments) or merge two of its segments."""


class RestTool(StagedBaseTool):
    """One endpoint, under its final name ``{toolset}_{tool}`` (sanitised)."""

    def __init__(
        self,
        config: RestToolConfig,
        *,
        toolset_name: str,
        http: ToolHttpClient,
        headers: Mapping[str, SecretValue],
    ) -> None:
        super().__init__(
            name=sanitize_toolname(f"{toolset_name}_{config.name}"),
            description=config.description,
            parameters=config.parameters,
        )
        self.config = config
        self._http = http
        self._headers = headers

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        """Raises:
        ToolError: a path parameter or header variable is missing, a header value is not
            printable ASCII, the request failed, or the status is not 2xx.
        ToolTimeoutError: the API did not answer in time.
        UsageError: the toolset was closed.
        """
        path, rest = fill_path(self.config.path, arguments, tool_name=self.name)
        method = self.config.method
        in_query = method in _QUERY_METHODS
        body = await self._http.send(
            method,
            path,
            tool_name=self.name,
            headers=resolve_secrets(self._headers, tool_name=self.name),
            params={key: _as_text(value) for key, value in rest.items()} if in_query else None,
            json=None if in_query else rest,
        )
        if body.cut:  # its real length is unknown: say so, the runtime then cuts the text
            note(f"body not read past {current_call_context().max_body_bytes} bytes")
        return body.text


class RestApiToolset(HttpToolset):
    """The endpoints of one REST API, sharing one pooled HTTP client."""

    def __init__(self, config: RestApiToolsetConfig) -> None:
        register_url(config.base_url)
        super().__init__(
            config.name, timeout_seconds=config.timeout_seconds, base_url=config.base_url
        )
        self._offer(
            RestTool(tool, toolset_name=config.name, http=self.http, headers=config.headers)
            for tool in config.tools
        )


def fill_path(
    template: str, arguments: Mapping[str, Any], *, tool_name: str
) -> tuple[str, dict[str, Any]]:
    """``template`` with each ``{param}`` replaced by its argument as one percent-encoded path
    segment, and the arguments the path did not use.

    Raises:
        ToolError: an argument named by a placeholder is missing, or it is empty, ``.`` or
            ``..`` (the reason names the parameter, never the value).
    """
    names = _PLACEHOLDER.findall(template)
    missing = [name for name in names if name not in arguments]
    if missing:
        reason = f"missing path parameter {quoted_list(missing)} for {template!r}"
        raise ToolError(tool_name, reason)
    segments = {name: _as_text(arguments[name]) for name in names}
    for name, segment in segments.items():
        if segment in _NOT_A_SEGMENT:
            raise ToolError(tool_name, f"path parameter {name!r} must not be empty, '.' or '..'")
    path = _PLACEHOLDER.sub(lambda m: quote(segments[m.group(1)], safe=""), template)
    rest = {key: value for key, value in arguments.items() if key not in names}
    return path, rest


def _as_text(value: Any) -> str:
    """Strings as they are; numbers, booleans, null, arrays and objects as their JSON text
    (``true``, ``3``, ``["a", "b"]``: SPEC section 10)."""
    return value if isinstance(value, str) else json.dumps(value)
