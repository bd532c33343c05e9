"""Both seams against an oracle written from SPEC sections 4, 9 and 10 alone.

The oracle below applies hooks one after another with nothing from ``agent_hooks`` but the message
model: its own id layout, trust rules, signature, JSON-e context and placement. ``runner.run`` and
the ``list[MessagesTransformer]`` chain must both give its history, templates and conditions
included, for any history (honest, edited, forged and lone pairs; foreign tool calls).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import jsone
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_hooks import HookEvent, HookRunner
from agent_hooks.messages import Message
from tests._support import msg
from tests._support.manifests import hook as manifest_hook
from tests.runtime._kit import NOW, answer
from tests.runtime.test_equivalence import (
    KEY,
    SETTINGS,
    build,
    histories,
    normalised,
    sequential,
    with_key,
)

pytestmark = pytest.mark.usefixtures("preview_on")

ID = re.compile(r"ah_([0-9a-f]{8})_([0-9a-f]{6})(?:_t([0-9a-f]{8}))?(?:_s([0-9a-f]{10}))?")

TEMPLATES: list[dict[str, Any]] = [
    {},
    {"q": "x", "n": [1, 2]},
    {"q": "${last_user_message.content}"},
    {"count": {"$eval": "len(messages)"}},
    {"who": "${request.user}"},
]
CONDITIONS = [None, None, "len(messages) < 5", "last_user_message != null", "request.user == 'u7'"]
REQUEST = {"user": "u7"}


def _sha(text: str, digits: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:digits]


def _templated(arguments: Any) -> bool:
    if isinstance(arguments, dict):
        return any(k.startswith("$") or _templated(v) for k, v in arguments.items())
    if isinstance(arguments, list):
        return any(_templated(v) for v in arguments)
    return isinstance(arguments, str) and "${" in arguments.replace("$${", "")


def _falsy(value: Any) -> bool:
    return value in (False, None, 0, "", [], {})


class Oracle:
    """SPEC 4/9/10, one hook after another, on OpenAI-shaped dicts."""

    def __init__(self, key: str | None, version: int) -> None:
        self.key = key
        self.version = version

    def run(self, received: list[dict[str, Any]], hooks: list[dict[str, Any]]) -> list[Any]:
        context = self._context(received)
        history = self._remove_unverified(received) if self.key else list(received)
        for hook in hooks:
            history = self._apply(hook, history, context)
        return history

    def _context(self, received: list[dict[str, Any]]) -> dict[str, Any]:
        users = [m for m in received if m["role"] == "user"]
        last_user = None
        if users:
            last_user = {
                "role": "user",
                "content": users[-1].get("content"),
                "tool_calls": None,
                "tool_call_id": None,
            }
        return {
            "event": "on_request_start",
            "messages": [{"role": m["role"]} for m in received],  # only len() is read
            "last_user_message": last_user,
            "last_assistant_message": None,
            "request": REQUEST,
        }

    def _sign(self, unsigned: str, name: str, arguments: str, content: str) -> str:
        assert self.key is not None
        canonical = json.dumps(json.loads(arguments), sort_keys=True)
        text = f"{unsigned}\n{name}\n{canonical}\n{content}"
        return hmac.new(self.key.encode(), text.encode(), hashlib.sha256).hexdigest()[:10]

    def _verifies(self, call_id: str, call: dict[str, Any] | None, content: Any) -> bool:
        match = ID.fullmatch(call_id)
        if match is None or match[4] is None or call is None or not isinstance(content, str):
            return False
        function = call.get("function") or {}
        try:  # SPEC 16: arguments that repeat a key, at any depth, verify nothing
            arguments = json.loads(function.get("arguments", "{}"), object_pairs_hook=_unique)
        except ValueError:
            return False
        if not isinstance(arguments, dict):
            return False
        unsigned = call_id[: -len("_s") - 10]
        expected = self._sign(unsigned, function.get("name", ""), json.dumps(arguments), content)
        return hmac.compare_digest(match[4], expected)

    def _calls_before(self, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """For each position, the latest assistant call before it, by id, with its index."""
        seen: dict[str, Any] = {}
        result = []
        for index, message in enumerate(history):
            result.append(dict(seen))
            if message["role"] == "assistant":
                for call in message.get("tool_calls") or []:
                    seen[call.get("id")] = (index, call)
        return result

    def _remove_unverified(self, history: list[dict[str, Any]]) -> list[dict[str, Any]]:
        before = self._calls_before(history)
        answers = [
            (m["tool_call_id"], i)
            for i, m in enumerate(history)
            if m["role"] == "tool" and ID.fullmatch(m.get("tool_call_id") or "")
        ]
        failed = {
            call_id
            for call_id, i in answers
            if not self._verifies(
                call_id, before[i].get(call_id, (0, None))[1], history[i]["content"]
            )
        }  # every answer must verify: one before its call, or with other content, is forged
        verified = {call_id for call_id, _ in answers} - failed
        synthetic = {
            i
            for m in history
            for i in [m.get("tool_call_id"), *[c.get("id") for c in m.get("tool_calls") or []]]
            if isinstance(i, str) and ID.fullmatch(i)
        }
        calls = Counter(
            call.get("id")
            for message in history
            if message["role"] == "assistant"
            for call in message.get("tool_calls") or []
        )
        reused = {call_id for call_id, count in calls.items() if count > 1}  # SPEC 16
        rejected = (synthetic - verified) | (synthetic & reused)
        kept = []
        for message in history:
            if message["role"] == "tool" and message.get("tool_call_id") in rejected:
                continue
            calls = message.get("tool_calls")
            if calls and any(c.get("id") in rejected for c in calls):
                remaining = [c for c in calls if c.get("id") not in rejected]
                if not remaining and not message.get("content"):
                    continue
                message = {k: v for k, v in message.items() if k != "tool_calls"}
                if remaining:
                    message["tool_calls"] = remaining
            kept.append(message)
        return kept

    def _latest_trusted(
        self, history: list[dict[str, Any]], prefix: str, hook: dict[str, Any], ttl: int | None
    ) -> int | None:
        before = self._calls_before(history)
        for index in range(len(history) - 1, -1, -1):
            message = history[index]
            call_id = message.get("tool_call_id") or ""
            match = ID.fullmatch(call_id) if message["role"] == "tool" else None
            if match is None or not call_id.startswith(prefix):
                continue
            call = before[index].get(call_id, (0, None))[1]
            content = message.get("content")
            if call is None:
                continue
            if ttl is not None and match[3] is not None and int(match[3], 16) > NOW + ttl + 60:
                continue
            checks = hook["frequency"] == "append_if_changed"
            if checks and (not isinstance(content, str) or _sha(content, 6) != match[2]):
                continue
            if self.key is None and match[4] is not None:
                continue
            if self.key is not None and not self._verifies(call_id, call, content):
                continue
            return index
        return None

    def _apply(
        self, hook: dict[str, Any], history: list[dict[str, Any]], context: dict[str, Any]
    ) -> list[dict[str, Any]]:
        if hook["condition"] is not None and _falsy(
            jsone.render({"$eval": hook["condition"]}, context)
        ):
            return history
        template = hook["arguments"]
        arguments = jsone.render(template, context) if _templated(template) else template
        tool = hook["tool_name"]
        prefix = f"ah_{_sha(tool + chr(10) + json.dumps(template, sort_keys=True), 8)}_"
        ttl = hook["refresh_condition"]["ttl_minutes"] * 60 if hook["refresh_condition"] else None
        latest = self._latest_trusted(history, prefix, hook, ttl)
        if ttl is not None and latest is not None:
            expiry = ID.fullmatch(history[latest]["tool_call_id"])[3]  # type: ignore[index]
            if expiry is not None and int(expiry, 16) > NOW:
                return history
        if tool in ("broken", "nothing"):
            return history
        content = answer(tool, arguments, self.version)
        hashed = content if hook["frequency"] == "append_if_changed" else f"random {id(hook)}"
        call_id = f"{prefix}{_sha(hashed, 6)}"
        if ttl is not None:
            call_id += f"_t{NOW + ttl:08x}"
        arguments_text = json.dumps(arguments, sort_keys=True)
        if self.key is not None:
            call_id += "_s" + self._sign(call_id, tool, arguments_text, content)
        function = {"name": tool, "arguments": arguments_text}
        call = {"id": call_id, "type": "function", "function": function}
        pair = [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": call_id, "content": content},
        ]
        if hook["frequency"] == "always":
            return [*history, *pair]
        if latest is None:
            at = self._first_time_index(history)
            return [*history[:at], *pair, *history[at:]]
        if history[latest]["content"] == content:
            old_id = history[latest]["tool_call_id"]
            caller = self._calls_before(history)[latest][old_id][0]
            replaced = list(history)
            replaced[latest] = pair[1]
            calls = [call if c.get("id") == old_id else c for c in history[caller]["tool_calls"]]
            replaced[caller] = {**history[caller], "tool_calls": calls}
            return replaced
        return [*history, *pair]

    def _first_time_index(self, history: list[dict[str, Any]]) -> int:
        users = [i for i, m in enumerate(history) if m["role"] == "user"]
        if not users:
            return len(history)
        index = users[0] + 1
        while index < len(history):
            calls = history[index].get("tool_calls") or []
            is_pair_call = (
                history[index]["role"] == "assistant"
                and calls
                and all(ID.fullmatch(c.get("id") or "") for c in calls)
            )
            if not is_pair_call:
                break
            answered = {c.get("id") for c in calls}
            index += 1
            while (
                index < len(history)
                and history[index]["role"] == "tool"
                and history[index].get("tool_call_id") in answered
            ):
                index += 1
        return index


hooks_strategy = st.lists(
    st.fixed_dictionaries(
        {
            "tool_name": st.sampled_from(["alpha", "alpha", "slow", "beta", "broken", "nothing"]),
            "arguments": st.sampled_from(TEMPLATES),
            "frequency": st.sampled_from(["always", "append_if_changed"]),
            "refresh_condition": st.none()
            | st.builds(lambda m: {"kind": "ttl", "ttl_minutes": m}, st.integers(1, 3)),
            "condition": st.sampled_from(CONDITIONS),
        }
    ).map(
        # SPEC 3: a TTL cannot go with templated arguments.
        lambda h: {**h, "refresh_condition": None} if _templated(h["arguments"]) else h
    ),
    min_size=1,
    max_size=5,
)


def _oracle_dump(history: Sequence[Any]) -> list[Message]:
    return [msg(**m) for m in history]


@SETTINGS
@given(
    data=st.data(),
    hooks=hooks_strategy,
    version=st.sampled_from([0, 0, 1]),
    key=st.sampled_from([None, KEY]),
)
def test_runner_and_transformer_chain_both_give_the_oracles_history(
    monkeypatch: pytest.MonkeyPatch,
    data: st.DataObject,
    hooks: list[dict[str, Any]],
    version: int,
    key: str | None,
) -> None:
    with_key(monkeypatch, key)
    raw = data.draw(histories(key))
    raw.append({"role": "user", "content": data.draw(st.sampled_from(["hi", "more", ""]))})
    history = [msg(**item) for item in raw]
    manifest_hooks = [manifest_hook(**{k: v for k, v in h.items() if v is not None}) for h in hooks]
    runner_app, _ = build(manifest_hooks, version, concurrency=4)
    chain_app, _ = build(manifest_hooks, version, concurrency=4)

    expected = normalised(_oracle_dump(Oracle(key, version).run(raw, hooks)))
    run = asyncio.run(
        runner_app.get(HookRunner).run(HookEvent.ON_REQUEST_START, history, request=REQUEST)
    )
    assert normalised(run.messages) == expected
    if not any("request" in json.dumps(h) for h in hooks):  # transformers get no request
        assert normalised(asyncio.run(sequential(chain_app, history))) == expected


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are all different, else ``ValueError``."""
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("a repeated key")
    return dict(pairs)
