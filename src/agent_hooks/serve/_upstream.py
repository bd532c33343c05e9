"""The client for the model behind the proxy: credentials chosen, answers opened as streams.

Answers are opened as streams so the proxy can pass chunks on as they arrive; a body is read
whole only when the caller asks for it. How the bytes travel (aiohttp's pool, or the echo model
in process) and how failures are told apart is :mod:`._transport`'s. Credentials are chosen
here, registered for scrubbing (the key and any credentials in the URL), and never logged.
"""

from __future__ import annotations

from collections.abc import Mapping

from agent_hooks._scrub import register_secret, register_url, scrub
from agent_hooks.serve._dialects import OPENAI_CREDENTIALS, Credentials
from agent_hooks.serve._transport import (
    AiohttpTransport,
    EchoTransport,
    UpstreamAnswer,
    UpstreamTransport,
)

__all__ = ["UpstreamClient", "passthrough_headers", "scrubbed"]

_KEEPALIVE_SECONDS = 2.0
"""Idle upstream connections are dropped before the usual servers drop them (uvicorn and Node
after 5 s): a request sent on a connection the server is closing fails as a 502."""
_NOT_PASSED_BACK = frozenset(
    {
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-length",
        "content-encoding",
        "date",
        "server",
    }
)
"""Response headers that describe the upstream's connection, not the answer."""


class UpstreamClient:
    """Posts bodies to ``{base_url}{path}``, or to the echo model without a base URL.

    ``api_key`` (``AGENT_HOOKS_UPSTREAM_API_KEY``) is sent as each dialect's credentials say
    (a bearer token, Anthropic's ``x-api-key``); with ``forward_auth`` the client's own
    credential headers go instead.
    """

    def __init__(
        self,
        base_url: str | None,
        *,
        timeout_seconds: float,
        api_key: str | None = None,
        forward_auth: bool = False,
    ) -> None:
        self._transport: UpstreamTransport = (
            EchoTransport()
            if base_url is None
            else AiohttpTransport(
                base_url, timeout_seconds=timeout_seconds, keepalive_seconds=_KEEPALIVE_SECONDS
            )
        )
        self._api_key = api_key
        self._forward_auth = forward_auth
        if api_key:
            register_secret(api_key, always_whole=True)
        if base_url:
            register_url(base_url)

    async def send(
        self,
        path: str,
        body: bytes,
        client_headers: Mapping[str, str],
        credentials: Credentials = OPENAI_CREDENTIALS,
    ) -> UpstreamAnswer:
        """POST ``body`` to ``path`` and open the answer as a stream; the caller closes it.

        Raises:
            UpstreamTimeout: no answer in time.
            UpstreamUnreachable: no connection, or it broke before the status line.
        """
        headers = self._headers(client_headers, credentials)
        return await self._transport.request("POST", path, headers, body)

    async def get(
        self, path: str, client_headers: Mapping[str, str], credentials: Credentials
    ) -> UpstreamAnswer:
        """GET ``path`` (the model list) and open the answer as a stream; the caller closes it.

        Raises:
            UpstreamTimeout: no answer in time.
            UpstreamUnreachable: no connection, or it broke before the status line.
        """
        headers = self._headers(client_headers, credentials)
        return await self._transport.request("GET", path, headers, None)

    async def read(self, answer: UpstreamAnswer) -> bytes:
        """The rest of a non-streamed answer; an error status's body with every secret scrubbed.

        Raises:
            UpstreamTimeout: the body stalled for ``--upstream-timeout``.
            UpstreamBrokeOff: the connection broke before the body's end.
        """
        try:
            body = await answer.aread()
        finally:
            await answer.aclose()
        return body if answer.is_success else scrubbed(body)

    def _headers(
        self, client_headers: Mapping[str, str], credentials: Credentials
    ) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept-encoding": "identity"}
        forwarded = credentials.passthrough
        if self._forward_auth:
            forwarded += credentials.client_headers
        elif self._api_key:
            headers[credentials.key_header] = credentials.key_format.format(self._api_key)
        headers.update({name: client_headers[name] for name in forwarded if name in client_headers})
        return headers

    async def aclose(self) -> None:
        await self._transport.aclose()


def scrubbed(relayed: bytes) -> bytes:
    """``relayed`` with every secret the proxy knows replaced by ``***``: for what is relayed that
    is not a successful answer's content (an error body, a stream's events once it failed)."""
    return scrub(relayed.decode("utf-8", errors="replace")).encode()


def passthrough_headers(response: UpstreamAnswer) -> dict[str, str]:
    """The upstream's response headers that describe the answer (content type, request ids...),
    each value scrubbed: an upstream may reflect the credentials it got in a header."""
    return {
        name: scrub(value)
        for name, value in response.headers.items()
        if name.lower() not in _NOT_PASSED_BACK
    }
