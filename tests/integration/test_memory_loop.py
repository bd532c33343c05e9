"""The memory app's whole loop through the runner, against the real example server over stdio:
read memories at request start, store the answer on completion, find it on the next turn."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio

from agent_hooks import HookEvent, HookOutcome, HookRunner, open_app
from agent_hooks.config import ApplicationConfig
from tests.servers.processes import REPO

MEMORY_APP = REPO / "examples" / "memory-app"
DEADLINE = 60


def example_manifest(db: Path) -> ApplicationConfig:
    manifest: dict[str, Any] = json.loads((MEMORY_APP / "manifest.json").read_text())
    server = manifest["toolsets"][0]["server"]
    server["command"] = sys.executable
    server["args"] = [str(REPO / server["args"][0])]
    server["env"] = {"MEMORY_SERVER_DB": str(db)}
    return ApplicationConfig.from_dict(manifest, preview=True)


def turn(text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}]


async def test_an_answer_stored_on_completion_is_found_by_the_next_turns_search(
    tmp_path: Path,
) -> None:
    config = example_manifest(tmp_path / "memories.sqlite3")
    request = {"user_id": "u7"}
    with anyio.fail_after(DEADLINE):
        async with open_app(config, preview=True) as injector:
            runner = injector.get(HookRunner)
            first = await runner.run(
                HookEvent.ON_REQUEST_START,
                turn("Which database suits a tiny cache?"),
                request=request,
            )
            assert [r.outcome for r in first.records] == [HookOutcome.INJECTED] * 2
            assert first.messages[3].content == "No memories for user 'u7'."
            answered = [
                *turn("Which database suits a tiny cache?"),
                {"role": "assistant", "content": "SQLite is plenty for a tiny cache."},
            ]
            stored = await runner.run(HookEvent.ON_COMPLETION, answered, request=request)
            (record,) = stored.records
            assert record.outcome == HookOutcome.COMPLETED
            assert record.call_id is None
            assert [m.to_openai() for m in stored.messages] == answered
            second = await runner.run(
                HookEvent.ON_REQUEST_START,
                turn("Remind me about that cache database"),
                request=request,
            )
    memories, search = second.messages[3], second.messages[5]
    assert memories.content == (
        "- Asked: Which database suits a tiny cache? Answered: SQLite is plenty for a tiny cache."
    )
    assert search.content == memories.content
    call = second.messages[4].tool_calls
    assert call is not None
    assert call[0].function is not None
    assert json.loads(call[0].function.arguments) == {
        "query": "Remind me about that cache database"
    }


async def test_a_completion_hook_does_not_run_without_a_final_answer(tmp_path: Path) -> None:
    config = example_manifest(tmp_path / "memories.sqlite3")
    with anyio.fail_after(DEADLINE):
        async with open_app(config, preview=True) as injector:
            run = await injector.get(HookRunner).run(HookEvent.ON_COMPLETION, turn("hello"))
    assert [r.outcome for r in run.records] == [HookOutcome.SKIPPED_CONDITION]
    assert [m.to_openai() for m in run.messages] == turn("hello")
