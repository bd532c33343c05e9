"""Call ids (SPEC section 4): the layout, and the limits real providers put on tool-call ids.

OpenAI and Azure refuse a ``tool_calls[].id`` over 40 characters ("string too long. Expected a
string with maximum length 40"); Anthropic's ``tool_use.id`` must match ``^[a-zA-Z0-9_-]+$``.
Every id we can produce must pass both.
"""

import hashlib
import itertools
import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks.config import ApplicationConfig, InjectionFrequency
from agent_hooks.config.hooks import MAX_TTL_MINUTES
from agent_hooks.errors import ConfigError
from agent_hooks.injection._ids import (
    MAX_EXPIRY,
    call_id_prefix,
    is_synthetic_call_id,
    parse_call_id,
    ttl_expiry,
)
from agent_hooks.injection._pairs import PairSpec, build_pair
from agent_hooks.injection._trust import SigningKeys
from tests._support import synthetic_id

OPENAI_MAX_ID = 40
PROVIDER_ID = re.compile(r"^[a-z0-9_]{1,40}$")
ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")
SECTION_4 = re.compile(r"ah_[0-9a-f]{8}_[0-9a-f]{6}(_t[0-9a-f]{8})?(_s[0-9a-f]{10})?")


def _sha(text: str, digits: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:digits]


def test_call_id_follows_the_published_layout() -> None:
    arguments = {"b": 1, "a": "x"}
    call_id = synthetic_id("memory_server_get_memories", arguments, "hello")
    identity = "memory_server_get_memories\n" + json.dumps(arguments, sort_keys=True)
    assert call_id == f"ah_{_sha(identity, 8)}_{_sha('hello', 6)}"
    assert call_id.startswith(call_id_prefix("memory_server_get_memories", {"a": "x", "b": 1}))


def test_ttl_expiry_is_stamped_as_eight_lowercase_hex_digits_and_parsed_back() -> None:
    call_id = synthetic_id("t", {}, "c", ttl_expiry_seconds=1_800_000_000)
    assert call_id.endswith(f"_t{1_800_000_000:08x}")
    assert ttl_expiry(call_id) == 1_800_000_000


def test_an_expiry_past_2106_is_clamped_to_ffffffff() -> None:
    call_id = synthetic_id("t", {}, "c", ttl_expiry_seconds=4_000_000_000 + 10**9)
    assert call_id.endswith("_tffffffff")
    assert ttl_expiry(call_id) == MAX_EXPIRY


def test_id_without_ttl_segment_has_no_expiry() -> None:
    assert ttl_expiry(synthetic_id("t", {}, "c")) is None
    assert ttl_expiry("call_abc123") is None


@pytest.mark.parametrize(
    ("frequency", "ttl", "signed"),
    list(itertools.product(InjectionFrequency, [None, 60, MAX_TTL_MINUTES * 60], [False, True])),
)
def test_every_frequency_ttl_and_signing_combination_gives_an_id_every_provider_accepts(
    frequency: InjectionFrequency, ttl: int | None, signed: bool
) -> None:
    keys = SigningKeys(("a-signing-key",)) if signed else SigningKeys()
    tool = "t" * 64  # the longest final name
    for now in (0, 1_800_000_000, 4_000_000_000):
        spec = PairSpec(
            tool_name=tool,
            prefix=call_id_prefix(tool, {"k": "v" * 100}),
            arguments_text=json.dumps({"k": "v" * 100}),
            checks_content=frequency is InjectionFrequency.APPEND_IF_CHANGED,
            expiry=None if ttl is None else now + ttl,
        )
        pair = build_pair(spec, "c" * 1000, keys=keys)
        call_id = pair.call_id
        assert pair.tool.tool_call_id == call_id
        assert len(call_id) <= OPENAI_MAX_ID
        assert PROVIDER_ID.fullmatch(call_id)
        assert ANTHROPIC_ID.fullmatch(call_id)
        assert SECTION_4.fullmatch(call_id)
        assert ("_t" in call_id) == (ttl is not None)
        assert ("_s" in call_id) == signed
        assert is_synthetic_call_id(call_id)


@given(
    tool=st.text(min_size=1, max_size=64),
    content=st.text(max_size=200),
    expiry=st.none() | st.integers(min_value=0, max_value=2**40),
    key=st.none() | st.text(min_size=1, max_size=20).filter(str.strip),
)
def test_any_tool_content_and_expiry_give_an_id_of_at_most_40_allowed_characters(
    tool: str, content: str, expiry: int | None, key: str | None
) -> None:
    keys = SigningKeys((key,)) if key else SigningKeys()
    spec = PairSpec(tool, call_id_prefix(tool, {}), "{}", checks_content=True, expiry=expiry)
    call_id = build_pair(spec, content, keys=keys).call_id
    assert PROVIDER_ID.fullmatch(call_id)
    assert SECTION_4.fullmatch(call_id)


def test_only_ids_matching_the_pattern_whole_are_synthetic() -> None:
    good = synthetic_id("t", {}, "c", ttl_expiry_seconds=1)
    assert is_synthetic_call_id(good)
    for other in [
        "call_abc123",
        good + "0",  # an expiry of nine digits
        good[:-1],  # of seven
        good.upper(),
        good + "_s" + "0" * 12,  # a signature of the wrong length
        "synth_t_0a1b2c_a_3d4e5f_c_6a7b8c",  # the old layout is not ours any more
        " " + good,
    ]:
        assert not is_synthetic_call_id(other), other
        assert parse_call_id(other) is None


def test_a_signature_segment_is_parsed_apart_from_what_it_signs() -> None:
    unsigned = synthetic_id("t", {}, "c", ttl_expiry_seconds=255)
    parsed = parse_call_id(unsigned + "_s0123456789")
    assert parsed is not None
    assert parsed.unsigned == unsigned
    assert parsed.signature == "0123456789"
    assert parsed.expiry == 255
    assert parsed.prefix == call_id_prefix("t", {})


def test_a_ttl_over_the_cap_is_rejected_with_its_path() -> None:
    config = {"kind": "tool_call", "event": "on_request_start", "tool_name": "t"}
    too_long = {**config, "refresh_condition": {"kind": "ttl", "ttl_minutes": MAX_TTL_MINUTES + 1}}
    with pytest.raises(ConfigError) as caught:
        ApplicationConfig.from_dict({"hooks": [too_long]}, preview=True)
    assert [str(i) for i in caught.value.issues] == [
        f"hooks[0].refresh_condition.ttl_minutes: must be at most {MAX_TTL_MINUTES}"
    ]
