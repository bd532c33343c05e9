"""The malformed-manifest corpus: every case prints exactly its expected lines and exits 2.

Each ``corpus/NN-name.json`` sits next to ``NN-name.expected``, the full stdout of
``agent-hooks validate``. Cases too big or too odd to commit are generated here instead.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_hooks.cli import main
from tests._support.manifests import CLOCK, hook

CORPUS = Path(__file__).parent / "corpus"
CASES = sorted(CORPUS.glob("*.json"))
PREVIEW_WARNING = (
    "warning: hooks are a preview feature and ENABLE_PREVIEW_FEATURES is off;"
    " a host would ignore them\n"
)


@pytest.fixture(autouse=True)
def _preview_off(preview_off: None) -> None:
    """Validation checks hooks either way; off is the default a manifest author meets."""


def validate(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str, str]:
    code = main(["validate", str(path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_the_corpus_has_at_least_forty_cases_each_with_expected_lines() -> None:
    assert len(CASES) >= 40
    missing = [case.name for case in CASES if not case.with_suffix(".expected").is_file()]
    assert not missing


@pytest.mark.parametrize("case", CASES, ids=lambda path: path.stem)
def test_malformed_manifest_prints_exactly_its_expected_lines_and_exits_2(
    capsys: pytest.CaptureFixture[str], case: Path
) -> None:
    code, out, err = validate(capsys, case)
    assert out == case.with_suffix(".expected").read_text(encoding="utf-8")
    assert code == 2
    expected_err = PREVIEW_WARNING if b'"hooks"' in case.read_bytes() else ""
    assert err in ("", expected_err)


@pytest.mark.parametrize("name", ["absent.json", "."], ids=["missing file", "directory"])
def test_an_unreadable_path_is_one_error_at_the_root(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str
) -> None:
    code, out, _ = validate(capsys, tmp_path / name)
    assert code == 2
    assert out.startswith("$: cannot read file: ")
    assert out.count("\n") == 1


def test_a_five_megabyte_manifest_with_one_bad_hook_names_only_that_hook(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    hooks = [hook(arguments={"padding": "x" * 1000, "n": n}) for n in range(5000)]
    hooks[4321] = {**hooks[4321], "refresh_condition": {"kind": "ttl", "ttl_minutes": 0}}
    manifest = tmp_path / "huge.json"
    manifest.write_text(json.dumps({"toolsets": [CLOCK], "hooks": hooks}))
    assert manifest.stat().st_size > 5_000_000

    code, out, _ = validate(capsys, manifest)

    assert (code, out) == (2, "hooks[4321].refresh_condition.ttl_minutes: must be greater than 0\n")


def test_a_huge_manifest_of_bad_hooks_lists_fifty_lines_and_counts_the_rest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    hooks = [hook(tool_name=n) for n in range(20_000)]
    manifest = tmp_path / "bad-hooks.json"
    manifest.write_text(json.dumps({"hooks": hooks}))

    code, out, _ = validate(capsys, manifest)

    assert code == 2
    assert out.splitlines() == [
        *(f"hooks[{n}].tool_name: must be a string, got {n}" for n in range(50)),
        "... and 19950 more",
    ]


def test_deeply_nested_arguments_are_one_error_not_a_crash(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = tmp_path / "deep.json"
    nested = "[" * 100_000 + "]" * 100_000
    manifest.write_text(f'{{"hooks": [{{"arguments": {nested}}}]}}')

    code, out, _ = validate(capsys, manifest)

    assert (code, out) == (2, "$: invalid JSON: nested too deeply\n")


def test_an_integer_too_long_to_convert_is_one_error_not_a_crash(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    manifest = tmp_path / "digits.json"
    manifest.write_text('{"toolsets": [{"timeout_seconds": ' + "9" * 5000 + "}]}")

    code, out, _ = validate(capsys, manifest)

    assert (code, out) == (2, "$: invalid JSON: an integer of 5000 digits is too long\n")
