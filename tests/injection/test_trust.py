"""The trust rules for synthetic-looking pairs and the signing keys (SPEC section 9)."""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_hooks.config._signing import SigningSettings
from agent_hooks.injection._ids import parse_call_id
from agent_hooks.injection._trust import SigningKeys, TrustRules, is_trusted, remove_unverified
from agent_hooks.messages import FunctionCall, Message
from tests._support import msg, synthetic_id

NOW = 1_700_000_000
TTL = 300
NO_KEYS = SigningKeys()
NOTES = FunctionCall(name="notes", arguments="{}")


def parsed(content: str, expiry: int | None = None, keys: SigningKeys = NO_KEYS) -> Any:
    unsigned = synthetic_id("notes", {}, content, ttl_expiry_seconds=expiry)
    result = parse_call_id(keys.sign(unsigned, NOTES, content))
    assert result is not None
    return result


def trusted(pair: Any, content: object, **rules: Any) -> bool:
    keys = rules.pop("keys", NO_KEYS)
    caller = rules.pop("caller", NOTES)
    return is_trusted(pair, content, caller=caller, rules=TrustRules(now=NOW, **rules), keys=keys)


def test_a_pair_without_its_assistant_call_never_counts() -> None:
    assert not trusted(parsed("A"), "A", caller=None)
    assert trusted(parsed("A"), "A")


def test_without_keys_a_signed_id_cannot_be_checked_and_never_counts() -> None:
    assert not trusted(parsed("A", keys=SigningKeys(("k",))), "A")


def test_an_expiry_counts_up_to_now_plus_the_ttl_plus_a_minute() -> None:
    assert trusted(parsed("A", NOW + TTL + 60), "A", ttl_seconds=TTL)
    assert not trusted(parsed("A", NOW + TTL + 61), "A", ttl_seconds=TTL)
    assert not trusted(parsed("A", 0xFFFFFFFF), "A", ttl_seconds=TTL)
    assert trusted(parsed("A", 0xFFFFFFFF), "A")  # without a TTL the expiry is not read


def test_the_content_must_hash_to_the_id_only_when_content_is_compared() -> None:
    assert not trusted(parsed("A"), "edited", check_content=True)
    assert not trusted(parsed("A"), [{"type": "text", "text": "A"}], check_content=True)
    assert trusted(parsed("A"), "edited", check_content=False)


def test_with_keys_only_a_signature_of_one_of_them_over_this_content_counts() -> None:
    rotated = SigningKeys(("new", "old"))
    assert trusted(parsed("A", keys=SigningKeys(("old",))), "A", keys=rotated)
    assert not trusted(parsed("A", keys=SigningKeys(("other",))), "A", keys=rotated)
    assert not trusted(parsed("A", keys=SigningKeys(("old",))), "B", keys=rotated)
    assert not trusted(parsed("A"), "A", keys=rotated)


def test_a_signed_pair_relabelled_as_another_call_does_not_verify() -> None:
    keys = SigningKeys(("k",))
    pair = parsed("A", keys=keys)
    assert trusted(pair, "A", keys=keys)
    # The same call written back by a framework that keeps arguments as a dict still verifies.
    assert trusted(pair, "A", keys=keys, caller=FunctionCall(name="notes", arguments="{ }"))
    relabelled = [
        FunctionCall(name="notes", arguments='{"account": "bob", "verified": true}'),
        FunctionCall(name="transfer_funds", arguments="{}"),
        FunctionCall(name="notes", arguments="not json"),
        FunctionCall(name="notes", arguments="[]"),
    ]
    for caller in relabelled:
        assert not trusted(pair, "A", keys=keys, caller=caller), caller


def test_the_first_key_signs_ten_hex_digits_of_hmac_over_id_name_arguments_and_content() -> None:
    unsigned = synthetic_id("notes", {}, "A", ttl_expiry_seconds=NOW)
    call = FunctionCall(name="notes", arguments='{"b": 1,  "a": 2}')
    signed_text = f'{unsigned}\nnotes\n{{"a": 2, "b": 1}}\nA'
    mac = hmac.new(b"new", signed_text.encode(), hashlib.sha256).hexdigest()[:10]
    assert SigningKeys(("new", "old")).sign(unsigned, call, "A") == f"{unsigned}_s{mac}"
    assert NO_KEYS.sign(unsigned, call, "A") == unsigned
    assert not NO_KEYS


@pytest.mark.parametrize(
    ("env", "keys"),
    [
        ({}, ()),
        ({"AGENT_HOOKS_SIGNING_KEY": "one\n"}, ("one",)),
        ({"AGENT_HOOKS_SIGNING_KEYS": " new , ,old\n"}, ("new", "old")),
        ({"AGENT_HOOKS_SIGNING_KEY": "one", "AGENT_HOOKS_SIGNING_KEYS": "new,old"}, ("new", "old")),
    ],
)
def test_keys_come_from_the_environment_stripped_and_keys_wins(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], keys: tuple[str, ...]
) -> None:
    monkeypatch.delenv("AGENT_HOOKS_SIGNING_KEY", raising=False)
    monkeypatch.delenv("AGENT_HOOKS_SIGNING_KEYS", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert SigningSettings().keys() == keys


def synthetic_pair(content: str, keys: SigningKeys = NO_KEYS) -> list[Message]:
    call_id = keys.sign(synthetic_id("notes", {}, content), NOTES, content)
    call = {"id": call_id, "type": "function", "function": {"name": "notes"}}
    return [
        msg(role="assistant", tool_calls=[call]),
        msg(role="tool", tool_call_id=call_id, content=content),
    ]


def test_without_keys_nothing_is_removed() -> None:
    history = [msg(role="user", content="u"), *synthetic_pair("A")]
    assert remove_unverified(history, NO_KEYS) == (history, 0)


def test_with_keys_unverified_pairs_and_unanswered_synthetic_calls_are_removed() -> None:
    keys = SigningKeys(("k",))
    unanswered = synthetic_pair("C")[0]
    history = [
        msg(role="user", content="u"),
        *synthetic_pair("A", keys),
        *synthetic_pair("B"),
        *synthetic_pair("B"),  # the same forged id twice counts once
        unanswered,
    ]
    kept, removed = remove_unverified(history, keys)
    assert kept == history[:3]
    assert removed == 2


ordinary = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool"])},
    optional={
        "content": st.none() | st.text(max_size=6),
        "tool_call_id": st.text(max_size=70).filter(lambda t: not t.startswith("ah_")),
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {"id": st.text(max_size=8).filter(lambda t: not t.startswith("ah_"))}
            ),
            max_size=2,
        ),
    },
)


@settings(max_examples=60, deadline=None)
@given(st.lists(ordinary, max_size=8))
def test_ordinary_messages_are_never_removed(raw: list[dict[str, Any]]) -> None:
    history = [msg(**item) for item in raw]
    assert remove_unverified(history, SigningKeys(("k",))) == (history, 0)


def test_arguments_with_a_duplicated_key_do_not_verify() -> None:
    """SPEC 16: the signature covers the arguments' canonical JSON after rejecting duplicate
    keys; ``{"q": "a", "q": "b"}`` is one object to a reader that keeps the first and another to
    one that keeps the last, so it is no call we signed."""
    keys = SigningKeys(("k",))
    genuine = FunctionCall(name="notes", arguments='{"q": "b"}')
    call_id = keys.sign(synthetic_id("notes", {"q": "b"}, "A"), genuine, "A")
    pair = parse_call_id(call_id)
    assert pair is not None
    assert trusted(pair, "A", keys=keys, caller=genuine)
    for arguments in ('{"q": "a", "q": "b"}', '{"q": "b", "x": {"y": 1, "y": 1}}'):
        duplicated = FunctionCall(name="notes", arguments=arguments)
        assert not trusted(pair, "A", keys=keys, caller=duplicated), arguments
    with pytest.raises(ValueError, match="JSON text of an object"):
        keys.sign(
            synthetic_id("notes", {}, "A"), FunctionCall(name="n", arguments='{"a":1,"a":1}'), "A"
        )


def test_a_second_call_reusing_a_signed_id_makes_the_pair_unverified() -> None:
    """SPEC 16: a signed id answers one call; a second assistant call with the same id, in the
    same message or another, before or after the answer, makes the pair unverified."""
    keys = SigningKeys(("k",))
    user = msg(role="user", content="u")
    assistant, tool = synthetic_pair("A", keys)
    assert remove_unverified([user, assistant, tool], keys) == ([user, assistant, tool], 0)
    (call,) = assistant.tool_calls or []
    other = msg(role="assistant", tool_calls=[call.to_openai()])
    both = msg(role="assistant", tool_calls=[call.to_openai(), call.to_openai()])
    for history in (
        [user, other, assistant, tool],
        [user, assistant, tool, other],
        [user, both, tool],
    ):
        assert remove_unverified(history, keys) == ([user], 1)
