"""A real Redis for the store tests."""

from tests.servers.fixtures import redis_url  # noqa: F401 - fixtures are found by name
