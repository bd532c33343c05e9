"""The command line loads only what the command it runs uses (issue 19: start-up cost)."""

from __future__ import annotations

import subprocess
import sys

from tests.servers.processes import REPO

TIME_APP = REPO / "examples" / "time-app"

NEVER_FOR_HELP = (
    "agent_hooks.config.application",
    "agent_hooks.config.hooks",
    "agent_hooks.injection",
    "agent_hooks.messages",
    "agent_hooks.runtime",
    "agent_hooks.toolsets",
    "injector",
    "pydantic_settings",
)
"""What ``--help`` must not import: the manifest models, the settings, the DI app, the runtime."""

NEVER_FOR_VALIDATE = (
    "agent_hooks.app_factory",
    "agent_hooks.injection",
    "agent_hooks.runtime",
    "agent_hooks.toolsets",
    "httpx",
    "injector",
    "jsonschema",
    "mcp",
)
"""What ``validate`` (without ``--connect``) must not import: it only checks the manifest."""


def loaded_after(argv: list[str], watched: tuple[str, ...]) -> list[str]:
    """Which of ``watched`` a fresh interpreter has imported after ``main(argv)``."""
    script = (
        "import sys\n"
        "from agent_hooks.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(name for name in {watched!r} if name in sys.modules), file=sys.stderr)\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    return completed.stderr.splitlines()[-1:]


def test_help_loads_neither_the_manifest_models_nor_the_runtime() -> None:
    assert loaded_after(["--help"], NEVER_FOR_HELP) == ["[]"]


def test_a_subcommands_help_loads_neither_the_manifest_models_nor_the_runtime() -> None:
    assert loaded_after(["run", "--help"], NEVER_FOR_HELP) == ["[]"]


def test_validate_loads_the_manifest_models_but_not_the_runtime() -> None:
    manifest = str(TIME_APP / "manifest.json")
    assert loaded_after(["validate", manifest], NEVER_FOR_VALIDATE) == ["[]"]
    assert loaded_after(["validate", manifest], ("agent_hooks.config.application",)) == [
        "['agent_hooks.config.application']"
    ]
