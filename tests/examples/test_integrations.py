"""examples/integrations: each framework's example runs end to end with its own fake model."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.examples._examples import EXAMPLES

APPS = sorted(path.parent.name for path in (EXAMPLES / "integrations").glob("*/app.py"))


@pytest.mark.parametrize("framework", APPS)
def test_the_example_shows_the_pairs_twice_and_runs_on_completion_each_turn(
    framework: str,
) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "integrations" / framework / "app.py")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("ann prefers short answers and green tea") == 2
    assert done.stdout.count("on_completion saw the answer") == 2
