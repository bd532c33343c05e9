import hashlib
import json

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
