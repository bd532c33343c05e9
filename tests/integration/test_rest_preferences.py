"""The seed's REST examples: user preferences, without and with a one-hour TTL."""

from __future__ import annotations

from typing import Any

import pytest

from agent_hooks import ClockModule, open_app
from agent_hooks.clock import FixedClock
from agent_hooks.config import ApplicationConfig
from tests._support import msg
from tests._support.manifests import hook
from tests.integration._app import HISTORY, run_hooks, tool_pairs
from tests.servers.fixtures import RecordingServer

pytestmark = pytest.mark.usefixtures("preview_on")

PREFERENCES = '{"user_id":"current","language":"en-GB","units":"metric"}'
NOW = 1_800_000_000.0


def _manifest(base_url: str, **hook_fields: Any) -> ApplicationConfig:
    return ApplicationConfig.from_dict(
        {
            "toolsets": [
                {
                    "type": "rest-api",
                    "name": "user_prefs_api",
                    "base_url": base_url,
                    "headers": {"Authorization": {"env": "PREFS_API_TOKEN"}},
                    "tools": [{"name": "get_preferences", "path": "/preferences"}],
                }
            ],
            "hooks": [
                hook(
                    toolset_name="user_prefs_api",
                    tool_name="get_preferences",
                    frequency="append_if_changed",
                    **hook_fields,
                )
            ],
        }
    )


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PREFS_API_TOKEN", "Bearer prefs-token")


async def test_preferences_are_inserted_once_and_not_repeated_while_unchanged(
    rest_server: RecordingServer,
) -> None:
    async with open_app(_manifest(rest_server.url)) as injector:
        first = await run_hooks(injector, HISTORY)
        second = await run_hooks(injector, [*first, msg(role="user", content="And now?")])
    expected = [("user_prefs_api_get_preferences", "{}", PREFERENCES)]
    assert tool_pairs(first) == expected
    assert first[2].tool_calls is not None  # inserted right after the first user message
    assert tool_pairs(second) == expected  # same content: replaced in place, not appended
    assert len(second) == len(first) + 1
    received = rest_server.received()
    assert len(received) == 2
    assert {r["headers"]["authorization"] for r in received} == {"Bearer prefs-token"}


async def test_with_a_ttl_the_api_is_not_called_until_the_result_expires(
    rest_server: RecordingServer,
) -> None:
    clock = FixedClock(NOW)
    config = _manifest(rest_server.url, refresh_condition={"kind": "ttl", "ttl_minutes": 60})
    async with open_app(config, [ClockModule(clock)]) as injector:
        first = await run_hooks(injector, HISTORY)
        clock.at = NOW + 59 * 60
        fresh = await run_hooks(injector, first)
        clock.at = NOW + 61 * 60
        refreshed = await run_hooks(injector, fresh)
    assert tool_pairs(first) == [("user_prefs_api_get_preferences", "{}", PREFERENCES)]
    assert first[3].tool_call_id is not None
    assert first[3].tool_call_id.endswith(f"_t{int(NOW) + 3600:08x}")
    assert fresh == first
    assert len(refreshed) == len(first)
    assert refreshed[3].tool_call_id is not None
    assert refreshed[3].tool_call_id.endswith(f"_t{int(NOW) + 61 * 60 + 3600:08x}")
    assert len(rest_server.received()) == 2
