"""Real servers for the toolset tests (see :mod:`tests.servers.fixtures`)."""

from tests.servers.fixtures import (  # noqa: F401 - fixtures are found by name
    _chat_process,
    _rest_process,
    chat_server,
    memory_http_url,
    rest_server,
)
