"""A turn whose hooks are all TTL-fresh is decided from its stored pairs alone (``FreshPairs``).

What the proxy forwards and logs on such turns is pinned by the conversation tests; these pin
that the fast path is taken when it can be, and that it keeps nothing when it cannot be.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from agent_hooks import HookRunner
from agent_hooks.serve import _proxy
from agent_hooks.serve._fresh import FreshPairs
from agent_hooks.state._store import _decode, _digest
from tests.serve._in_process import in_process_proxy

HEADERS = {"authorization": "Bearer fresh-client", "x-session-id": "fresh-session"}


def _manifest(*, ttl: bool) -> dict[str, Any]:
    hook: dict[str, Any] = {
        "kind": "tool_call",
        "event": "on_request_start",
        "name": "clock",
        "tool_name": "current_time",
        "frequency": "always",
    }
    if ttl:
        hook["refresh_condition"] = {"kind": "ttl", "ttl_minutes": 10}
    return {
        "toolsets": [{"type": "internal", "name": "clock", "tools": ["current_time"]}],
        "hooks": [hook],
    }


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[FreshPairs]:
    """The ``FreshPairs`` of the proxy the test starts."""
    made: list[FreshPairs] = []

    class Seen(FreshPairs):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    monkeypatch.setattr(_proxy, "FreshPairs", Seen)
    return made


def _turns(client: Any, count: int) -> None:
    """``count`` turns of one conversation, each the last one's history and a new message."""
    history: list[dict[str, Any]] = [{"role": "user", "content": "hello"}]
    for turn in range(count):
        answer = client.post(
            "/v1/chat/completions", json={"model": "m", "messages": history}, headers=HEADERS
        )
        assert answer.status_code == 200, answer.text
        history += [
            {"role": "assistant", "content": f"answer {turn}"},
            {"role": "user", "content": f"next {turn}"},
        ]


def test_fresh_turns_run_no_hooks_and_keep_one_index(
    tmp_path: Path, seen: list[FreshPairs], monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = []
    real = HookRunner.run_hooks

    async def counted(self: HookRunner, *args: Any, **kwargs: Any) -> Any:
        runs.append(args)
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(HookRunner, "run_hooks", counted)
    with in_process_proxy(_manifest(ttl=True), tmp_path) as client:
        _turns(client, 6)
        metrics = client.get("/metrics").text
    assert len(runs) == 1  # the first turn's; the five fresh ones were decided from the store
    assert 'outcome="skipped_fresh"} 5.0' in metrics
    (fresh,) = seen
    assert len(fresh._indexed) == 1  # one conversation whose stored text never changed


def test_a_manifest_the_fast_path_cannot_decide_keeps_nothing(
    tmp_path: Path, seen: list[FreshPairs]
) -> None:
    """An ``always`` hook without a TTL is never fresh: its turns' stored pairs are neither
    validated nor indexed for nothing."""
    with in_process_proxy(_manifest(ttl=False), tmp_path) as client:
        _turns(client, 6)
    (fresh,) = seen
    assert not fresh._indexed


ROUTES: dict[str, tuple[str, Any]] = {
    "chat": ("/v1/chat/completions", lambda history: {"model": "m", "messages": history}),
    "responses": ("/v1/responses", lambda history: {"model": "m", "input": history}),
    "messages": (
        "/v1/messages",
        lambda history: {"model": "m", "max_tokens": 16, "messages": history},
    ),
}


def test_no_route_changes_the_pairs_the_store_shares_between_turns(tmp_path: Path) -> None:
    """The decoded pairs a shared load hands out are the same objects turn after turn and
    conversation after conversation: whatever each route does to write its body, they stay
    what the stored text says."""
    with in_process_proxy(_manifest(ttl=True), tmp_path) as client:
        for route, (path, body) in ROUTES.items():
            history: list[dict[str, Any]] = [{"role": "user", "content": "hello"}]
            for turn in range(4):
                headers = {**HEADERS, "x-session-id": route, "anthropic-version": "2023-06-01"}
                answer = client.post(path, json=body(history), headers=headers)
                assert answer.status_code == 200, answer.text
                history += [
                    {"role": "assistant", "content": f"answer {turn}"},
                    {"role": "user", "content": f"next {turn}"},
                ]
        store = client.app.state.proxy._store  # type: ignore[attr-defined]
        with sqlite3.connect(tmp_path / "state.db") as db:
            texts = [text for (text,) in db.execute("SELECT pairs FROM conversations")]
        shared = [store._decoded[_digest(t)][0] for t in texts if _digest(t) in store._decoded]
        assert len(shared) >= len(ROUTES)  # every conversation's text was loaded shared
        assert shared == [tuple(_decode(t)) for t in texts if _digest(t) in store._decoded]
