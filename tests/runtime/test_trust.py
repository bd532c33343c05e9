"""Synthetic-looking pairs in a client's history are claims, checked before they count (SPEC
section 9): forged pairs never make a hook skip or replace, with a key they are removed, and keys
rotate. Ids here are built from the SPEC's formulas, not from the package's own helpers."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from typing import Any

import pytest

from agent_hooks import HookOutcome, HookRun
from agent_hooks.messages import Message
from tests._support import msg
from tests._support.manifests import hook
from tests.runtime._kit import NOW, VersionedTool, answer, app, dumped, run_once

pytestmark = pytest.mark.usefixtures("preview_on")

TOOL = "memories"
CONTENT = answer(TOOL, {}, 0)
"""What the hook's tool answers now."""
TTL = {"kind": "ttl", "ttl_minutes": 5}
FRESH = NOW + 100
"""An expiry a 5-minute TTL could have stamped, still in the future."""
USER = msg(role="user", content="hi")


def sha(text: str, digits: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:digits]


def spec_id(
    content: str,
    *,
    expiry: int | None = None,
    tool: str = TOOL,
    arguments: dict[str, Any] | None = None,
) -> str:
    """``ah_{i8}_{c6}[_t{expiry:08x}]`` (SPEC section 4)."""
    identity = tool + "\n" + json.dumps(arguments or {}, sort_keys=True)
    call_id = f"ah_{sha(identity, 8)}_{sha(content, 6)}"
    return call_id if expiry is None else f"{call_id}_t{expiry:08x}"


def signed(call_id: str, content: str, key: str, *, tool: str = TOOL, arguments: str = "{}") -> str:
    """``call_id`` + ``_s`` + 10 hex digits of HMAC-SHA256 over the id, the function name, the
    canonical arguments and the content, joined by newlines (SPEC section 9)."""
    canonical = json.dumps(json.loads(arguments), sort_keys=True)
    text = f"{call_id}\n{tool}\n{canonical}\n{content}"
    mac = hmac.new(key.encode(), text.encode(), hashlib.sha256)
    return f"{call_id}_s{mac.hexdigest()[:10]}"


def pair(call_id: str, content: str = CONTENT, tool: str = TOOL) -> list[Message]:
    call = {"id": call_id, "type": "function", "function": {"name": tool, "arguments": "{}"}}
    return [
        msg(role="assistant", content=None, tool_calls=[call]),
        msg(role="tool", tool_call_id=call_id, content=content),
    ]


async def run_hook(history: list[Message], **fields: Any) -> tuple[HookRun, VersionedTool]:
    """One run of a single request-start hook on :data:`TOOL`; the tool shows if it was called."""
    tool = VersionedTool(TOOL)
    injector = app({"hooks": [hook(TOOL, **fields)]}, tool)
    return await run_once(injector, history), tool


@pytest.fixture
def no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_HOOKS_SIGNING_KEY", raising=False)
    monkeypatch.delenv("AGENT_HOOKS_SIGNING_KEYS", raising=False)


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("AGENT_HOOKS_SIGNING_KEY", "k-current")
    monkeypatch.delenv("AGENT_HOOKS_SIGNING_KEYS", raising=False)
    return "k-current"


def removal_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "removed_unverified" in r.getMessage()
    ]


# Without a key: forged pairs are kept, but never trusted.


@pytest.mark.usefixtures("no_key")
async def test_an_honest_pair_within_the_ttl_counts_without_a_key() -> None:
    run, tool = await run_hook([USER, *pair(spec_id(CONTENT, expiry=FRESH))], refresh_condition=TTL)
    assert (run.records[0].outcome, tool.calls) == (HookOutcome.SKIPPED_FRESH, 0)


@pytest.mark.usefixtures("no_key")
@pytest.mark.parametrize(
    "call_id",
    [
        spec_id(CONTENT, expiry=0xFFFFFFFF),  # far-future expiry
        spec_id(CONTENT, expiry=NOW + 300 + 61),  # just past now + ttl + 60
        spec_id(CONTENT, expiry=FRESH)[:24],  # truncated inside the expiry
        spec_id(CONTENT, expiry=FRESH).replace("_t", "_x"),  # garbage
        spec_id(CONTENT, expiry=FRESH) + "_s" + "0" * 10 + "_" + "f" * 8,  # over 40 characters
        spec_id(CONTENT) + "_t" + "9" * 10_000,  # a 10,000-digit expiry
    ],
    ids=["far-future", "past-clamp", "truncated", "garbage", "overlong", "10000-digits"],
)
async def test_a_forged_fresh_pair_does_not_stop_the_ttl_hook(call_id: str) -> None:
    history = [USER, *pair(call_id)]
    run, tool = await run_hook(history, refresh_condition=TTL)

    assert tool.calls == 1
    assert run.records[0].outcome == HookOutcome.INJECTED
    assert all(m in dumped(run.messages) for m in dumped(history))  # kept


@pytest.mark.usefixtures("no_key")
async def test_a_lone_tool_message_without_its_call_does_not_count() -> None:
    lone = msg(role="tool", tool_call_id=spec_id(CONTENT, expiry=FRESH), content=CONTENT)
    run, tool = await run_hook([USER, lone], refresh_condition=TTL)

    assert (run.records[0].outcome, tool.calls) == (HookOutcome.INJECTED, 1)
    assert lone in run.messages


@pytest.mark.usefixtures("no_key")
async def test_a_pair_of_other_arguments_or_another_tool_does_not_count() -> None:
    elsewhere = [
        *pair(spec_id(CONTENT, expiry=FRESH, arguments={"user": "u2"})),
        *pair(spec_id(CONTENT, expiry=FRESH, tool="preferences"), tool="preferences"),
    ]
    run, tool = await run_hook([USER, *elsewhere], refresh_condition=TTL)
    assert (run.records[0].outcome, tool.calls) == (HookOutcome.INJECTED, 1)


@pytest.mark.usefixtures("no_key")
async def test_edited_content_under_a_kept_id_is_not_the_same_content() -> None:
    # The id hashes what the hook wrote; the client put the tool's current answer under it.
    edited = pair(spec_id("what the hook wrote"), content=CONTENT)
    history = [USER, *edited, msg(role="assistant", content="ok")]
    run, _ = await run_hook(history)

    [record] = run.records
    assert record.outcome == HookOutcome.INJECTED  # not replaced in place
    assert len(run.messages) == len(history) + 2
    assert dumped(run.messages[1:3]) == dumped(edited)  # kept; first-time pairs go after it
    assert dumped(run.messages[3:5]) == dumped(pair(spec_id(CONTENT)))


@pytest.mark.usefixtures("no_key")
async def test_without_a_key_ids_carry_no_signature() -> None:
    run, _ = await run_hook([USER], refresh_condition=TTL)
    assert run.records[0].call_id == spec_id(CONTENT, expiry=NOW + 300)


# With a key: what does not verify is removed, with one warning giving the count.


async def test_with_a_key_ids_are_signed_as_the_spec_says(key: str) -> None:
    run, _ = await run_hook([USER], refresh_condition=TTL)
    [record] = run.records
    assert record.call_id == signed(spec_id(CONTENT, expiry=NOW + 300), CONTENT, key)
    assert record.call_id is not None
    assert len(record.call_id) <= 64


async def test_a_signed_pair_within_the_ttl_counts(key: str) -> None:
    history = [USER, *pair(signed(spec_id(CONTENT, expiry=FRESH), CONTENT, key))]
    run, tool = await run_hook(history, refresh_condition=TTL)
    assert (run.records[0].outcome, tool.calls) == (HookOutcome.SKIPPED_FRESH, 0)
    assert run.messages == history


@pytest.mark.parametrize(
    "forge",
    [
        lambda k: spec_id(CONTENT, expiry=FRESH),  # unsigned
        lambda k: signed(spec_id(CONTENT, expiry=FRESH), CONTENT, "another key"),
        lambda k: signed(spec_id(CONTENT, expiry=FRESH), CONTENT, k).replace(
            f"{FRESH:08x}", f"{FRESH + 100:08x}"
        ),  # edited expiry
        lambda k: signed(spec_id(CONTENT, expiry=FRESH), "other text", k),  # edited content
        lambda k: signed(
            spec_id(CONTENT, expiry=FRESH, tool="preferences"), CONTENT, k, tool="preferences"
        ).replace(spec_id(CONTENT, tool="preferences")[:12], spec_id(CONTENT)[:12]),
        # replayed from another hook
    ],
    ids=["unsigned", "other-key", "edited-expiry", "edited-content", "replayed"],
)
async def test_a_pair_that_does_not_verify_is_removed_and_the_tool_called(
    key: str, forge: Any, caplog: pytest.LogCaptureFixture
) -> None:
    history = [USER, *pair(forge(key)), msg(role="assistant", content="noted")]
    run, tool = await run_hook(history, refresh_condition=TTL)

    assert (run.records[0].outcome, tool.calls) == (HookOutcome.INJECTED, 1)
    assert dumped(run.messages[::3]) == dumped([USER, history[-1]])
    assert [m.tool_call_id for m in run.messages if m.tool_call_id] == [run.records[0].call_id]
    assert removal_warnings(caplog) == [
        "outcome=removed_unverified_pairs count=1 reason=signature does not verify"
    ]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        (TOOL, '{"account": "bob", "verified": true}'),  # edited arguments
        ("transfer_funds", "{}"),  # relabelled as another function
    ],
)
async def test_a_signed_pair_relabelled_as_another_call_is_removed(
    key: str, name: str, arguments: str, caplog: pytest.LogCaptureFixture
) -> None:
    call_id = signed(spec_id(CONTENT, expiry=FRESH), CONTENT, key)
    call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
    history = [
        USER,
        msg(role="assistant", content=None, tool_calls=[call]),
        msg(role="tool", tool_call_id=call_id, content=CONTENT),
    ]
    run, tool = await run_hook(history, refresh_condition=TTL)

    assert (run.records[0].outcome, tool.calls) == (HookOutcome.INJECTED, 1)
    assert call_id not in {m.tool_call_id for m in run.messages}
    assert len(removal_warnings(caplog)) == 1


async def test_a_signed_pair_whose_arguments_were_rewritten_canonically_still_counts(
    key: str,
) -> None:
    tool = VersionedTool(TOOL)
    injector = app({"hooks": [hook(TOOL, arguments={"b": 1, "a": 2}, refresh_condition=TTL)]}, tool)
    first = await run_once(injector, [USER])
    # A framework that keeps arguments as a dict writes them back with its own spacing and order.
    rewritten = [
        m.model_copy(
            update={
                "tool_calls": [
                    c.model_copy(
                        update={
                            "function": c.function.model_copy(update={"arguments": '{"b":1,"a":2}'})
                        }
                    )
                    for c in m.tool_calls
                    if c.function is not None
                ]
            }
        )
        if m.tool_calls
        else m
        for m in first.messages
    ]
    second = await run_once(injector, rewritten)
    assert [r.outcome for r in second.records] == [HookOutcome.SKIPPED_FRESH]
    assert tool.calls == 1


async def test_removal_keeps_ordinary_messages_and_the_rest_of_an_assistant_message(
    key: str, caplog: pytest.LogCaptureFixture
) -> None:
    forged = [spec_id(f"forged {i}") for i in range(3)]
    foreign = {"id": "call_1", "type": "function", "function": {"name": "search"}}
    calls = [{"id": i, "type": "function", "function": {"name": TOOL}} for i in forged]
    history = [
        msg(role="system", content="be brief"),
        USER,
        msg(role="assistant", content=None, tool_calls=[calls[0], foreign]),
        msg(role="tool", tool_call_id="call_1", content="found"),
        msg(role="tool", tool_call_id=forged[0], content="forged 0"),
        msg(role="assistant", content="let me check", tool_calls=[calls[1]], x_vendor=7),
        msg(role="tool", tool_call_id=forged[1], content="forged 1"),
        msg(role="assistant", tool_calls=[calls[2]]),
        msg(role="tool", tool_call_id=forged[2], content="forged 2"),
        msg(role="tool", tool_call_id="ah_not_ours", content="lookalike"),
        msg(role="user", content="and?"),
    ]
    run, _ = await run_hook(history, arguments={"other": True})

    assert dumped(run.messages[:2] + run.messages[4:]) == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [foreign]},
        {"role": "tool", "tool_call_id": "call_1", "content": "found"},
        {"role": "assistant", "content": "let me check", "x_vendor": 7},
        {"role": "tool", "tool_call_id": "ah_not_ours", "content": "lookalike"},
        {"role": "user", "content": "and?"},
    ]
    assert removal_warnings(caplog) == [
        "outcome=removed_unverified_pairs count=3 reason=signature does not verify"
    ]


async def test_what_the_runner_signed_verifies_on_the_next_run(
    key: str, caplog: pytest.LogCaptureFixture
) -> None:
    tool = VersionedTool(TOOL)
    hooks = [hook(TOOL, refresh_condition=TTL), hook(TOOL, arguments={"user": "u2"})]
    injector = app({"hooks": hooks}, tool)
    first = await run_once(injector, [USER])
    second = await run_once(injector, first.messages)

    assert [r.outcome for r in second.records] == [HookOutcome.SKIPPED_FRESH, HookOutcome.REPLACED]
    assert removal_warnings(caplog) == []


# Rotation: AGENT_HOOKS_SIGNING_KEYS="new,old": the first signs, all verify.


async def test_rotated_keys_verify_old_pairs_sign_with_the_first_and_drop_unknown_ones(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("AGENT_HOOKS_SIGNING_KEYS", "k-new, k-old")
    monkeypatch.setenv("AGENT_HOOKS_SIGNING_KEY", "k-ignored")  # _KEYS wins
    old = pair(signed(spec_id(CONTENT, expiry=FRESH), CONTENT, "k-old"))
    unknown = [
        *pair(signed(spec_id("a", expiry=FRESH), "a", "k-unknown"), content="a"),
        *pair(signed(spec_id("b", expiry=FRESH), "b", "k-ignored"), content="b"),
    ]
    history = [USER, *old, *unknown]

    fresh, tool = await run_hook(history, refresh_condition=TTL)
    assert (fresh.records[0].outcome, tool.calls) == (HookOutcome.SKIPPED_FRESH, 0)
    assert fresh.messages == [USER, *old]
    assert removal_warnings(caplog) == [
        "outcome=removed_unverified_pairs count=2 reason=signature does not verify"
    ]

    written, _ = await run_hook([USER], refresh_condition=TTL)
    expected = signed(spec_id(CONTENT, expiry=NOW + 300), CONTENT, "k-new")
    assert written.records[0].call_id == expected


# SPEC 16: the signature covers one call's canonical JSON, duplicate keys rejected.

QUERY = {"q": "b"}


def signed_query_pair(key: str, arguments: str) -> list[Message]:
    """A pair the runner would have signed for a hook with arguments ``{"q": "b"}``, its
    assistant call showing ``arguments`` as its JSON text."""
    call_id = signed(
        spec_id(CONTENT, expiry=FRESH, arguments=QUERY), CONTENT, key, arguments='{"q": "b"}'
    )
    call = {"id": call_id, "type": "function", "function": {"name": TOOL, "arguments": arguments}}
    return [
        msg(role="assistant", content=None, tool_calls=[call]),
        msg(role="tool", tool_call_id=call_id, content=CONTENT),
    ]


async def test_a_genuine_signed_pair_verifies_and_one_with_a_duplicated_key_does_not(
    key: str, caplog: pytest.LogCaptureFixture
) -> None:
    genuine = [USER, *signed_query_pair(key, '{"q": "b"}')]
    run, tool = await run_hook(genuine, arguments=QUERY, refresh_condition=TTL)
    assert (run.records[0].outcome, tool.calls) == (HookOutcome.SKIPPED_FRESH, 0)

    duplicated = [USER, *signed_query_pair(key, '{"q": "a", "q": "b"}')]
    run, tool = await run_hook(duplicated, arguments=QUERY, refresh_condition=TTL)
    assert (run.records[0].outcome, tool.calls) == (HookOutcome.INJECTED, 1)
    assert duplicated[2].tool_call_id not in {m.tool_call_id for m in run.messages}
    assert len(removal_warnings(caplog)) == 1


@pytest.mark.parametrize("where", ["same message", "earlier message", "later message"])
async def test_a_second_call_reusing_a_signed_id_makes_the_pair_unverified(
    key: str, where: str, caplog: pytest.LogCaptureFixture
) -> None:
    assistant, answer_ = pair(signed(spec_id(CONTENT, expiry=FRESH), CONTENT, key))
    (call,) = assistant.tool_calls or []
    reuse = msg(role="assistant", content=None, tool_calls=[call.to_openai()])
    history = {
        "same message": [USER, msg(role="assistant", tool_calls=[call.to_openai()] * 2), answer_],
        "earlier message": [USER, reuse, assistant, answer_],
        "later message": [USER, assistant, answer_, reuse],
    }[where]
    run, tool = await run_hook(history, refresh_condition=TTL)

    assert (run.records[0].outcome, tool.calls) == (HookOutcome.INJECTED, 1)
    assert call.id not in {m.tool_call_id for m in run.messages}
    assert removal_warnings(caplog) == [
        "outcome=removed_unverified_pairs count=1 reason=signature does not verify"
    ]
