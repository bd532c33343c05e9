import hashlib
import json

import pytest

from agent_hooks.config import ApplicationConfig
from agent_hooks.config.hooks import MAX_TTL_MINUTES
from agent_hooks.errors import ConfigError
from agent_hooks.injection import call_id_prefix, make_call_id, ttl_expiry


def _h6(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:6]


def test_call_id_follows_the_published_layout() -> None:
    arguments = {"b": 1, "a": "x"}
    call_id = make_call_id("memory_server_get_memories", arguments, "hello")
    expected = (
        f"synth_t_{_h6('memory_server_get_memories')}"
        f"_a_{_h6(json.dumps(arguments, sort_keys=True))}_c_{_h6('hello')}"
    )
    assert call_id == expected
    assert call_id.startswith(call_id_prefix("memory_server_get_memories", {"a": "x", "b": 1}))


def test_ttl_expiry_is_stamped_in_lowercase_hex_and_parsed_back() -> None:
    call_id = make_call_id("t", {}, "c", ttl_expiry_seconds=1_800_000_000)
    assert call_id.endswith(f"_ttl_{1_800_000_000:08x}")
    assert ttl_expiry(call_id) == 1_800_000_000
    assert len(call_id) < 64


def test_id_without_ttl_segment_has_no_expiry() -> None:
    assert ttl_expiry(make_call_id("t", {}, "c")) is None
    assert ttl_expiry("call_abc123") is None


def test_the_longest_allowed_ttl_still_gives_an_id_under_64_characters() -> None:
    expiry = 4_000_000_000 + MAX_TTL_MINUTES * 60
    call_id = make_call_id("t" * 64, {"k": "v" * 100}, "c" * 1000, ttl_expiry_seconds=expiry)
    assert len(call_id) < 64
    assert ttl_expiry(call_id) == expiry


def test_a_ttl_over_the_cap_is_rejected_with_its_path() -> None:
    config = {"kind": "tool_call", "event": "on_request_start", "tool_name": "t"}
    too_long = {**config, "refresh_condition": {"kind": "ttl", "ttl_minutes": MAX_TTL_MINUTES + 1}}
    with pytest.raises(ConfigError) as caught:
        ApplicationConfig.from_dict({"hooks": [too_long]}, preview=True)
    assert [str(i) for i in caught.value.issues] == [
        f"hooks[0].refresh_condition.ttl_minutes: must be at most {MAX_TTL_MINUTES}"
    ]
