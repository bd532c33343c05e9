"""Chat-completion deployments as tools (``deployment`` toolsets), in DIAL's request shape.

A call is ``POST {endpoint}/openai/deployments/{deployment}/chat/completions`` with one user
message whose content is the JSON text of the arguments; the answer's
``choices[0].message.content`` is the result. The key is read from ``api_key_env`` at call time
and sent as the ``api-key`` header; it is registered for scrubbing, so it is never logged or
quoted in an error, even when the endpoint echoes it. An answer longer than the call's byte bound
is an error (``answer too large``): the start of a JSON document is not an answer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from agent_hooks._scrub import register_url
from agent_hooks.config.toolsets import DeploymentToolConfig, DeploymentToolsetConfig
from agent_hooks.errors import ToolError
from agent_hooks.tools import StagedBaseTool
from agent_hooks.toolsets._http import HttpToolset, ToolHttpClient, excerpt
from agent_hooks.toolsets._secrets import read_env_secret

__all__ = ["DeploymentTool", "DeploymentToolset", "answer_content"]


class DeploymentTool(StagedBaseTool):
    """One deployment, under its declared name verbatim (deployment tools are not prefixed)."""

    def __init__(
        self,
        config: DeploymentToolConfig,
        *,
        endpoint: str,
        api_key_env: str | None,
        http: ToolHttpClient,
    ) -> None:
        super().__init__(name=config.name, description=config.description)
        self.url = (
            f"{endpoint.rstrip('/')}/openai/deployments/"
            f"{quote(config.deployment, safe='')}/chat/completions"
        )
        self._api_key_env = api_key_env
        self._http = http

    async def execute(self, arguments: Mapping[str, Any]) -> str:
        """Raises:
        ToolError: the key variable is not set or not printable ASCII, the request failed, the
            status is not 2xx, the answer is larger than the call's byte bound, or it is not a
            chat completion with text content.
        ToolTimeoutError: the deployment did not answer in time.
        UsageError: the toolset was closed.
        """
        headers = {}
        if self._api_key_env is not None:
            headers["api-key"] = read_env_secret(self._api_key_env, tool_name=self.name)
        body = {"messages": [{"role": "user", "content": json.dumps(dict(arguments))}]}
        answer = await self._http.send(
            "POST", self.url, tool_name=self.name, headers=headers, json=body
        )
        if answer.cut:
            raise ToolError(self.name, "answer too large")
        return answer_content(answer.text, tool_name=self.name)


class DeploymentToolset(HttpToolset):
    """Deployments behind one OpenAI-compatible endpoint, sharing one pooled HTTP client."""

    def __init__(self, config: DeploymentToolsetConfig) -> None:
        register_url(config.endpoint)
        super().__init__(config.name, timeout_seconds=config.timeout_seconds)
        self._offer(
            DeploymentTool(
                tool, endpoint=config.endpoint, api_key_env=config.api_key_env, http=self.http
            )
            for tool in config.tools
        )


def answer_content(text: str, *, tool_name: str) -> str:
    """``choices[0].message.content`` of a chat-completion answer (the body ``text``).

    Raises:
        ToolError: the body is not JSON, or has no text at that place.
    """
    try:
        answer: Any = json.loads(text)
    except ValueError as exc:
        reason = f"the deployment's answer is not JSON: {excerpt(text)}"
        raise ToolError(tool_name, reason) from exc
    try:
        content = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError) as exc:
        reason = f"the answer has no choices[0].message.content: {excerpt(text)}"
        raise ToolError(tool_name, reason) from exc
    if not isinstance(content, str):
        reason = f"the deployment's message content is {type(content).__name__}, not text"
        raise ToolError(tool_name, reason)
    return content
