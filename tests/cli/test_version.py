"""The distribution's version, one value everywhere (SPEC 17): the installed metadata (named
``agent-hooks-injector`` on the index), ``agent_hooks.__version__`` and
``agent-hooks --version``."""

from __future__ import annotations

import importlib.metadata
import subprocess
import sys

import agent_hooks

DISTRIBUTION = "agent-hooks-injector"


def test_the_package_version_is_the_installed_distributions() -> None:
    assert agent_hooks.__version__ == importlib.metadata.version(DISTRIBUTION)


def test_the_command_prints_its_version() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "agent_hooks", "--version"], capture_output=True, text=True
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == f"{DISTRIBUTION} {agent_hooks.__version__}"


def test_the_distribution_installs_the_agent_hooks_command_and_a_license() -> None:
    dist = importlib.metadata.distribution(DISTRIBUTION)
    assert [ep.value for ep in dist.entry_points if ep.name == "agent-hooks"] == [
        "agent_hooks.cli:main"
    ]
    assert dist.metadata["License-Expression"] == "MIT"
