"""A hook's tool resolves to exactly one toolset (SPEC section 3, "Tool routing"): a named
toolset is the only one asked, a broken sibling with an overlapping prefix changes nothing, and
toolset names that sanitise alike are rejected."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from agent_hooks import HookOutcome
from agent_hooks.cli import main
from tests._support.flaky import flaky_toolset, starts
from tests._support.manifests import hook
from tests.integration._app import tool_pairs
from tests.runtime._kit import opened, run_once

pytestmark = pytest.mark.usefixtures("preview_on")

DEADLINE = 30


def refusing_toolset(name: str, start_log: Path) -> dict[str, object]:
    """A toolset whose server exits at start (and logs ``refused`` whenever it is started)."""
    refuse = start_log.with_suffix(".refuse")
    refuse.touch()
    return flaky_toolset(name, start_log, FLAKY_REFUSE_START=str(refuse))


async def test_a_hook_on_kb_notes_works_while_its_sibling_kb_is_broken_and_never_started(
    tmp_path: Path,
) -> None:
    kb_log, notes_log = tmp_path / "kb.log", tmp_path / "notes.log"
    manifest = {
        "toolsets": [refusing_toolset("kb", kb_log), flaky_toolset("kb_notes", notes_log)],
        "hooks": [hook("echo", toolset_name="kb_notes", arguments={"text": "noted"})],
    }
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            run = await run_once(injector)

    [record] = run.records
    assert (record.tool, record.outcome) == ("kb_notes_echo", HookOutcome.INJECTED)
    assert tool_pairs(run.messages) == [("kb_notes_echo", '{"text": "noted"}', "noted")]
    assert len(starts(notes_log)) == 1
    assert starts(kb_log) == []


async def test_a_hook_never_starts_a_toolset_it_does_not_name(tmp_path: Path) -> None:
    logs = {name: tmp_path / f"{name}.log" for name in ("memory", "search")}
    manifest = {
        "toolsets": [flaky_toolset(name, log) for name, log in logs.items()],
        "hooks": [hook("whoami", toolset_name="search")],
    }
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            run = await run_once(injector)

    assert [r.outcome for r in run.records] == [HookOutcome.INJECTED]
    assert starts(logs["memory"]) == []
    assert tool_pairs(run.messages) == [("search_whoami", "{}", *starts(logs["search"]))]


async def test_without_toolset_name_a_tool_is_found_past_a_longer_prefix_that_fails_to_start(
    tmp_path: Path,
) -> None:
    # ``kb_two_parts`` may be ``kb_two``'s tool ``parts`` or ``kb``'s tool ``two_parts``.
    longer_log, kb_log = tmp_path / "kb_two.log", tmp_path / "kb.log"
    manifest = {
        "toolsets": [refusing_toolset("kb_two", longer_log), flaky_toolset("kb", kb_log)],
        "hooks": [hook("kb_two_parts")],
    }
    with anyio.fail_after(DEADLINE):
        async with opened(manifest) as injector:
            run = await run_once(injector)

    assert [r.outcome for r in run.records] == [HookOutcome.INJECTED]
    assert tool_pairs(run.messages) == [("kb_two_parts", "{}", "first\nsecond")]
    assert starts(longer_log) == ["refused"]  # asked first, as the longer prefix
    assert len(starts(kb_log)) == 1


def test_toolsets_whose_names_sanitise_alike_are_rejected_by_validate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    internal = {"type": "internal", "tools": ["current_time"]}
    manifest = tmp_path / "app.json"
    manifest.write_text(
        json.dumps({"toolsets": [{**internal, "name": "kb.a"}, {**internal, "name": "kb_a"}]})
    )

    code = main(["validate", str(manifest)])

    out = capsys.readouterr().out
    assert code == 2
    [line] = out.splitlines()
    assert line.startswith("toolsets[1].name: ")
    assert "'kb.a'" in line
    assert "'kb_a'" in line
